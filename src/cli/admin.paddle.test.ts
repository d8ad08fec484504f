// `warden admin paddle connect|status` end to end, as an operator runs them, with a
// notification signed as Paddle signs it (a stand-in from Paddle's public reference,
// test-support/paddle.ts) over a real socket to `warden serve`, on both engines.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { runWarden, wardenJson } from "../test-support/cli.js";
import { DIALECTS, privateDatabaseEnv, unique } from "../test-support/harness.js";
import { paddleEvent, paddleSignature, transactionObject } from "../test-support/paddle.js";
import { startWarden } from "../test-support/serve.js";

for (const dialect of DIALECTS) {
  describe(`warden admin paddle (${dialect})`, () => {
    test("connect, status before and after a signed notification; a bad secret and Stripe on the same environment are refused", async () => {
      const env = { ...(await privateDatabaseEnv(dialect)), WARDEN_SECRET_KEY: "paddle-cli-test-key-0123456789abcdef" };
      const owner = `${unique("o")}@example.com`;
      const slug = unique("ws");
      await wardenJson(env, "admin", "owner", "create", "--email", owner);
      await wardenJson(env, "admin", "workspace", "create", "--slug", slug, "--name", "Acme", "--owner", owner, "--plan", "pro");

      const badSecret = await runWarden(env, "admin", "paddle", "connect", "--workspace", slug, "--env", "test", "--webhook-secret", "whsec_abcdefghijkl");
      assert.equal(badSecret.code, 1);
      assert.match(badSecret.stderr, /pdl_ntfset_/);

      const secret = "pdl_ntfset_01cliteststandin_Secret0123456789wxyz";
      const connected = await wardenJson(env, "admin", "paddle", "connect", "--workspace", slug, "--env", "test", "--webhook-secret", secret);
      assert.deepEqual(connected, {
        workspace: slug,
        env: "test",
        webhook_path: `/processor/paddle/${slug}`,
        api_key: false,
        webhook_url: `http://127.0.0.1:8080/processor/paddle/${slug}`,
      });
      assert.deepEqual(await wardenJson(env, "admin", "paddle", "status", "--workspace", slug, "--env", "test"), {
        workspace: slug,
        env: "test",
        webhook_path: `/processor/paddle/${slug}`,
        connected: true,
        webhook_secret: "pdl_ntfset_…wxyz",
        api_key: null,
        last_event: null,
      });
      const stripe = await runWarden(
        env,
        "admin",
        "stripe",
        "connect",
        "--workspace",
        slug,
        "--env",
        "test",
        "--webhook-secret",
        "whsec_cliTestSecret0123456789",
      );
      assert.equal(stripe.code, 1);
      assert.match(stripe.stderr, /connected to Paddle: one processor per environment/);

      const warden = await startWarden(env);
      const event = paddleEvent("transaction.completed", transactionObject({ customData: null, total: 900, billedAt: Date.now() }), { now: Date.now() });
      const payload = JSON.stringify(event);
      const response = await fetch(`${warden.baseUrl}/processor/paddle/${slug}`, {
        method: "POST",
        headers: { "content-type": "application/json", "paddle-signature": paddleSignature(payload, secret, Date.now()) },
        body: payload,
      });
      assert.equal(response.status, 200);
      assert.deepEqual(await response.json(), { received: true, outcome: "ignored" });
      const status = await wardenJson<{ last_event: Record<string, unknown> }>(env, "admin", "paddle", "status", "--workspace", slug, "--env", "test");
      assert.deepEqual(
        { ...status.last_event, received_at: typeof status.last_event.received_at },
        {
          id: event.event_id,
          type: "transaction.completed",
          received_at: "string",
          outcome: "ignored",
          reason: "no warden_tool or warden_bundle metadata (not a checkout Warden created)",
        },
      );
      const text = await runWarden(env, "admin", "paddle", "status", "--workspace", slug, "--env", "test");
      assert.match(text.stdout, new RegExp(`is connected to Paddle at /processor/paddle/${slug}`));
    });
  });
}
