// `warden admin plan update --stripe-price` and `warden admin stripe reconcile` as an
// operator moving from ExtensionPay runs them: link the price, look with --dry-run,
// reconcile, reconcile again; against a local stand-in of Stripe's API, on both engines.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { planThroughCli, runWarden, seedThroughCli, wardenJson } from "../test-support/cli.js";
import { DIALECTS, privateDatabaseEnv } from "../test-support/harness.js";
import { paymentSession, stripeId } from "../test-support/stripe.js";
import { startStripeApi } from "../test-support/stripe-api.js";

for (const dialect of DIALECTS) {
  describe(`warden admin stripe reconcile (${dialect})`, () => {
    test("link a price to a plan, dry-run, reconcile once, and a second run finds nothing", async () => {
      const stripeApi = await startStripeApi();
      const env = {
        ...(await privateDatabaseEnv(dialect)),
        WARDEN_SECRET_KEY: "reconcile-cli-test-key-0123456789abcdef",
        WARDEN_STRIPE_API_URL: stripeApi.url,
      };
      const { slug } = await seedThroughCli(env, "Acme", { id: "tabs", name: "Tabs" });
      for (const id of ["life", "pro"]) await planThroughCli(env, { slug, tool: "tabs" }, { id, name: id, billing: "one_time" });
      const plan = ["admin", "plan", "update", "--workspace", slug, "--tool", "tabs"];
      const linked = await wardenJson(env, ...plan, "--id", "life", "--stripe-price", "price_extLife", "--stripe-product", "prod_ext");
      assert.deepEqual(linked.stripe, ["price_extLife", "prod_ext"]);
      // One Stripe id names one plan; a malformed id is refused in the command's words.
      const taken = await runWarden(env, ...plan, "--id", "pro", "--stripe-price", "price_extLife");
      assert.equal(taken.code, 1);
      assert.match(taken.stderr, /linked to plan life of tool tabs already/);
      const malformed = await runWarden(env, ...plan, "--id", "pro", "--stripe-price", "prod_x");
      assert.equal(malformed.code, 1);
      assert.match(malformed.stderr, /stripe-price must be a Stripe id/);

      const reconcile = ["admin", "stripe", "reconcile", "--workspace", slug, "--env", "test"];
      const notConnected = await runWarden(env, ...reconcile);
      assert.equal(notConnected.code, 1);
      assert.match(notConnected.stderr, /not connected/);
      await wardenJson(
        env,
        "admin",
        "stripe",
        "connect",
        "--workspace",
        slug,
        "--env",
        "test",
        "--webhook-secret",
        "whsec_cliReconcile0123456",
        "--secret-key",
        "sk_test_cliReconcile0123",
      );

      const now = Date.now();
      const bought = paymentSession({ email: "cy@example.com", metadata: {}, now });
      const unknown = paymentSession({ email: "dee@example.com", metadata: {}, now });
      stripeApi.lists.set("/v1/checkout/sessions", [unknown, bought]);
      stripeApi.lists.set(`/v1/checkout/sessions/${bought.id}/line_items`, [{ id: stripeId("li"), price: { id: "price_extLife", product: "prod_ext" } }]);
      stripeApi.lists.set(`/v1/checkout/sessions/${unknown.id}/line_items`, [{ id: stripeId("li"), price: { id: "price_other", product: "prod_other" } }]);

      const dry = await wardenJson(env, ...reconcile, "--dry-run");
      assert.deepEqual([dry.dry_run, dry.applied, dry.unmapped], [true, 1, 1]);
      const text = await runWarden(env, ...reconcile, "--dry-run");
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, /would apply 1, 1 purchase mapped to no plan/);
      assert.match(text.stdout, /checkout .* by dee@example\.com: price price_other \(product prod_other\) is linked to no plan/);
      assert.match(text.stdout, /Dry run: nothing was changed\./);

      const first = await wardenJson<{ applied: number; changes: { events: { type: string }[] }[] }>(env, ...reconcile);
      assert.equal(first.applied, 1);
      assert.deepEqual(
        first.changes.flatMap((c) => c.events.map((e) => e.type)),
        ["purchase.completed"],
      );
      const again = await wardenJson(env, ...reconcile, "--since", new Date(now - 86_400_000).toISOString().slice(0, 10));
      assert.equal(again.applied, 0);
      const sinceCall = stripeApi.calls.findLast((c) => c.path.startsWith("/v1/checkout/sessions?"));
      assert.equal(
        new URL(sinceCall?.path ?? "", "http://x").searchParams.get("created[gte]"),
        String(Math.floor(Date.parse(new Date(now - 86_400_000).toISOString().slice(0, 10)) / 1000)),
      );
    });
  });
}
