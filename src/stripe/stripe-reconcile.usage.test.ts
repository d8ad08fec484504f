// Issue 46, point 6: after a reconcile a subscription's and a purchase's plan terms apply
// exactly as after the webhooks. Twin workspaces sell usage (test-support/usage.ts): one
// hears Stripe's webhooks, the other only reconciles; both answer the same features,
// allowances and credits. A pack's credits are added once, whether the reconcile finds
// the purchase first, again, or after its webhook (and the webhook after it), on both engines.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Dialect } from "../db/database.js";
import { DIALECTS, testApi, testServices, type Workspace } from "../test-support/harness.js";
import { connectTestStripe, deliver, paymentSession, stripeEvent, stripeId, subscriptionObject, subscriptionSession } from "../test-support/stripe.js";
import { startStripeApi } from "../test-support/stripe-api.js";
import { seedUsageCatalogue } from "../test-support/usage.js";
import { updatePlanStripeLinks } from "./stripe-plan-link.service.js";
import { reconcileStripe } from "./stripe-reconcile.service.js";

const DAY_MS = 86_400_000;
const SECRET_KEY = "sk_test_reconcileUsage01234";

async function setUp(dialect: Dialect) {
  const stripeApi = await startStripeApi();
  const { services, clock } = await testServices(dialect, { WARDEN_STRIPE_API_URL: stripeApi.url });
  const api = await testApi(services);
  const webhooks = await seedUsageCatalogue(services);
  const reconciled = await seedUsageCatalogue(services);
  const secrets = new Map<Workspace, string>();
  for (const ws of [webhooks, reconciled]) secrets.set(ws, await connectTestStripe(services, ws, "test", SECRET_KEY));
  const send = (ws: Workspace, type: string, object: Record<string, unknown>) =>
    deliver(api, ws, secrets.get(ws) ?? "", stripeEvent(type, object, { now: clock.now() }), clock.now());
  const reconcile = () =>
    reconcileStripe(services, { workspace: reconciled.slug, env: "test", dryRun: false, trigger: "cli" }, { sleep: async (ms) => clock.advance(ms) });
  /** What the person holds of Tab Master, as the vendor API answers it, without the sources' own ids (a licence's is each workspace's). */
  const terms = async (ws: Workspace, email: string) => {
    const who = encodeURIComponent(email);
    const customer = await api.request({ url: `/api/v1/tools/tabmaster/customers/${who}`, key: ws.testKey });
    const usage = await api.request({ url: `/api/v1/tools/tabmaster/customers/${who}/usage`, key: ws.testKey });
    assert.equal(usage.statusCode, 200, usage.body);
    const [meter] = usage.json().data;
    return {
      features: customer.statusCode === 200 ? customer.json().features : null,
      meter: { ...meter, buckets: meter.buckets.map((b: Record<string, unknown>) => ({ ...b, source: b.via === "licence" ? "lic" : b.source })) },
    };
  };
  const creditRows = (ws: Workspace) =>
    services.db.selectFrom("meter_credits").select(["person_id", "licence_id", "amount"]).where("workspace_id", "=", ws.workspaceId).execute();
  return { services, clock, stripeApi, webhooks, reconciled, send, reconcile, terms, creditRows };
}

for (const dialect of DIALECTS) {
  describe(`reconcile: plan terms and credit packs (${dialect})`, () => {
    test("a subscription's and a pack's terms apply after a reconcile as after the webhooks; a pack's credits are added once, whichever arrives first", async () => {
      const t = await setUp(dialect);
      const now = t.clock.now();
      // Cy buys the pack through ExtensionPay: no Warden metadata, its price linked to the pack.
      await updatePlanStripeLinks(t.services, { workspace: t.reconciled.slug, tool: "tabmaster", id: "pack-1000", prices: ["price_extPack"] });
      const pack = { warden_tool: "tabmaster", warden_plan: "pack-1000" };
      const ada = paymentSession({ email: "ada@example.com", metadata: pack, amount: 900, now });
      const bob = paymentSession({ email: "bob@example.com", metadata: pack, amount: 900, now });
      const cy = paymentSession({ email: "cy@example.com", metadata: {}, amount: 900, now });
      const eveSub = stripeId("sub");
      const eveCheckout = subscriptionSession({ email: "eve@example.com", subscription: eveSub, metadata: {}, now });
      const eve = subscriptionObject({
        id: eveSub,
        status: "active",
        metadata: { warden_tool: "tabmaster", warden_plan: "monthly" },
        startedAt: now,
        periodStart: now,
        periodEnd: now + 30 * DAY_MS,
      });

      // The twin hears everything as webhooks (Cy's as Warden's own checkout of the pack would say it).
      const w = t.webhooks;
      for (const session of [ada, bob]) assert.equal(await t.send(w, "checkout.session.completed", session), "applied");
      assert.equal(await t.send(w, "checkout.session.completed", { ...cy, metadata: pack }), "applied");
      await t.send(w, "checkout.session.completed", eveCheckout);
      assert.equal(await t.send(w, "customer.subscription.created", eve), "applied");

      // The other hears only Bob's purchase; the reconcile finds the rest.
      assert.equal(await t.send(t.reconciled, "checkout.session.completed", bob), "applied");
      t.stripeApi.lists.set("/v1/checkout/sessions", [eveCheckout, cy, bob, ada]);
      t.stripeApi.lists.set(`/v1/checkout/sessions/${cy.id}/line_items`, [
        { id: stripeId("li"), object: "item", price: { id: "price_extPack", product: "prod_extPack" }, quantity: 1 },
      ]);
      t.stripeApi.lists.set("/v1/subscriptions", [eve]);
      const first = await t.reconcile();
      assert.equal(first.status, "done", first.error ?? "");

      for (const email of ["ada@example.com", "bob@example.com", "cy@example.com", "eve@example.com"]) {
        assert.deepEqual(await t.terms(t.reconciled, email), await t.terms(t.webhooks, email), email);
      }
      const eveHolds = await t.terms(t.reconciled, "eve@example.com");
      assert.deepEqual([eveHolds.features, eveHolds.meter.allowance, eveHolds.meter.buckets[0]?.via], [["export", "sync"], 500, "subscription"]);
      for (const email of ["ada@example.com", "bob@example.com", "cy@example.com"]) {
        assert.equal((await t.terms(t.reconciled, email)).meter.credits, 1000, email);
      }
      assert.equal((await t.creditRows(t.reconciled)).length, 3);

      // Reconciled again, then Ada's webhook arrives late: nothing is added.
      assert.equal((await t.reconcile()).applied, 0);
      await t.send(t.reconciled, "checkout.session.completed", ada);
      const rows = await t.creditRows(t.reconciled);
      assert.equal(rows.length, 3);
      assert.equal(new Set(rows.map((r) => r.licence_id)).size, 3);
      assert.equal((await t.terms(t.reconciled, "ada@example.com")).meter.credits, 1000);
    });
  });
}
