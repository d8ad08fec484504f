// `warden admin plan update --paddle-price` and `warden admin paddle connect|reconcile|disconnect` as a
// vendor moving to Paddle runs them, live included: link the price per environment,
// connect, reconcile against a local stand-in of Paddle's API; on both engines.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { planThroughCli, runWarden, seedThroughCli, wardenJson } from "../test-support/cli.js";
import { DIALECTS, privateDatabaseEnv } from "../test-support/harness.js";
import { PADDLE_PRICES, paddleId, startPaddleApi, transactionObject } from "../test-support/paddle.js";

const API_KEY = "pdl_live_apikey_cliPaddle0123456789";

for (const dialect of DIALECTS) {
  describe(`warden admin paddle (${dialect})`, () => {
    test("link a Paddle price to a plan in live, connect live Paddle, reconcile: each purchase not taken is listed with its reason (no signed-in buyer; a price linked to no plan)", async () => {
      const paddleApi = await startPaddleApi(API_KEY);
      const env = { ...(await privateDatabaseEnv(dialect)), WARDEN_SECRET_KEY: "paddle-cli-test-key-0123456789abcdef", WARDEN_PADDLE_API_URL: paddleApi.url };
      const { slug } = await seedThroughCli(env, "Acme");
      await planThroughCli(env, { slug, tool: "tabmaster" }, { id: "lifetime", name: "Lifetime", billing: "one_time" });
      const plan = ["admin", "plan", "update", "--workspace", slug, "--tool", "tabmaster", "--id", "lifetime"];
      const price = PADDLE_PRICES.lifetime?.id as string;
      const linked = await wardenJson(env, ...plan, "--env", "live", "--paddle-price", price);
      assert.deepEqual([linked.env, linked.paddle], ["live", [price]]);
      const malformed = await runWarden(env, ...plan, "--env", "live", "--paddle-price", "price_1Q2w3E");
      assert.equal(malformed.code, 1);
      assert.match(malformed.stderr, /paddle-price must be a Paddle id such as pri_/);
      const noEnv = await runWarden(env, ...plan, "--paddle-price", price);
      assert.equal(noEnv.code, 1);

      const reconcile = ["admin", "paddle", "reconcile", "--workspace", slug, "--env", "live"];
      await wardenJson(
        env,
        "admin",
        "paddle",
        "connect",
        "--workspace",
        slug,
        "--env",
        "live",
        "--webhook-secret",
        "pdl_ntfset_cliPaddle0123456789",
        "--api-key",
        API_KEY,
      );
      const person = (await wardenJson<{ id: string }[]>(env, "admin", "licence", "list", "--workspace", slug, "--env", "live")).length;
      assert.equal(person, 0);
      const at = Date.parse("2026-11-01T12:00:00Z");
      const taken = transactionObject({ customData: { warden_tool: "tabmaster", warden_plan: "lifetime" }, total: 4900, billedAt: at });
      const other = transactionObject({
        customData: { warden_tool: "tabmaster", warden_plan: "lifetime" },
        priceId: paddleId("pri"),
        total: 100,
        billedAt: at,
      });
      paddleApi.lists.set("/transactions", [taken, other]);
      const run = await runWarden(env, ...reconcile);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /read 0 subscriptions, 2 completed transactions, 0 adjustments/);
      // Neither names a signed-in buyer (Paddle names its customer by id only); the first passes the price check, the second's price is no plan's.
      assert.match(run.stdout, new RegExp(`Not taken: transaction ${taken.id}: checkout without the buyer's address`));
      assert.match(run.stdout, new RegExp(`Not taken: transaction ${other.id}: price pri_\\w+ \\(product pro_\\w+\\) is linked to no plan in live`));
      assert.deepEqual(
        paddleApi.calls.map((c) => `${c.method} ${c.path}`),
        ["GET /subscriptions?per_page=200", "GET /transactions?status=completed&per_page=200", "GET /adjustments?per_page=200"],
      );

      // Disconnected, the environment's Paddle secrets are forgotten; a second time says there was nothing to forget.
      const scope = ["--workspace", slug, "--env", "live"];
      assert.deepEqual(await wardenJson(env, "admin", "paddle", "disconnect", ...scope), { disconnected: true });
      assert.equal((await wardenJson(env, "admin", "paddle", "status", ...scope)).connected, false);
      assert.match((await runWarden(env, "admin", "paddle", "disconnect", ...scope)).stdout, /was not connected to Paddle/);
    });
  });
}
