// Issue 44, point 2: a subscription's invoices in Stripe's current API shape. Since
// 2025-03-31 an invoice names its payment intents only under `payments`, which webhooks
// leave out unless expanded; `invoice_payment.paid` names them. A webhook-only Warden
// counts the invoice's revenue from invoice.paid (once per invoice) and links its payment
// from invoice_payment.paid, in either order, as the reconcile (which expands `payments`)
// does; the older shape (invoice.subscription, invoice.payment_intent) keeps working.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DAY_MS } from "../clock.js";
import type { Dialect } from "../db/database.js";
import { revenueInsights } from "../insights/insights.service.js";
import { DIALECTS } from "../test-support/harness.js";
import {
  chargeObject,
  disputeObject,
  type InvoiceShape,
  invoiceObject,
  invoicePaymentObject,
  ofType,
  paymentsTestbed,
  stripeId,
  subscriptionObject,
  subscriptionSession,
} from "../test-support/stripe.js";
import { startStripeApi } from "../test-support/stripe-api.js";
import { STRIPE_EVENT_TYPES } from "./stripe-ingest.service.js";
import { reconcileStripe } from "./stripe-reconcile.service.js";

const SECRET_KEY = "sk_test_invoiceShapes0123456";
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const monthly = { warden_tool: "tabmaster", warden_plan: "monthly" };

async function bed(dialect: Dialect, options: { stripeApiUrl?: string } = {}) {
  const t = await paymentsTestbed(dialect, options.stripeApiUrl ? { env: { WARDEN_STRIPE_API_URL: options.stripeApiUrl }, secretKey: SECRET_KEY } : {});
  const today = t.clock.now();
  const ago = (days: number) => today - days * DAY_MS;
  const subscription = stripeId("sub");
  await t.send("checkout.session.completed", subscriptionSession({ email: "sub@example.com", subscription, metadata: monthly, now: ago(40) }), {
    created: ago(40),
  });
  const created = subscriptionObject({ id: subscription, status: "active", metadata: monthly, startedAt: ago(40), periodStart: ago(10), periodEnd: ago(-20) });
  assert.equal(await t.send("customer.subscription.created", created, { created: ago(40) }), "applied");
  /** An invoice of the subscription paid `days` ago, in `shape`, and its invoice payment. */
  const invoice = (days: number, amountPaid: number, shape: InvoiceShape) => {
    const paymentIntent = stripeId("pi");
    const object = invoiceObject({ subscription, paymentIntent, amountPaid, paidAt: ago(days), shape });
    return { paymentIntent, object, payment: invoicePaymentObject({ invoice: object.id, paymentIntent, amountPaid, paidAt: ago(days) }) };
  };
  /** EUR gross and refunds over the last 60 days, by day. */
  const revenue = async () => {
    const r = await revenueInsights(t.services.db, {
      workspaceId: t.ws.workspaceId,
      env: "test",
      toolId: null,
      from: dayOf(ago(59)),
      to: dayOf(today),
      grain: "day",
    });
    const eur = r.currencies.find((c) => c.currency === "eur");
    const by = (s: { points: { date: string; value: number }[] } | undefined) =>
      Object.fromEntries((s?.points ?? []).filter((p) => p.value !== 0).map((p) => [p.date, p.value]));
    return { gross: by(eur?.gross), refunds: by(eur?.refunds) };
  };
  const payments = async () =>
    (
      await t.services.db
        .selectFrom("subscription_payments")
        .select("payment_intent")
        .where("workspace_id", "=", t.ws.workspaceId)
        .where("subscription_id", "=", subscription)
        .orderBy("payment_intent")
        .execute()
    ).map((r) => r.payment_intent);
  return { ...t, today, ago, subscription, invoice, revenue, payments };
}

for (const dialect of DIALECTS) {
  describe(`a subscription's invoices in each Stripe API shape (${dialect})`, () => {
    test("current shape by webhook: invoice.paid counts once without a payment intent, invoice_payment.paid links the payment, in either order", async () => {
      const t = await bed(dialect);
      const first = t.invoice(20, 500, "webhook");
      const second = t.invoice(5, 700, "webhook");
      assert.ok(!("payments" in first.object) && !("payment_intent" in first.object), "a webhook of current versions names no payment intent");
      // The first invoice before its payment, the second after it.
      assert.equal(await t.send("invoice.paid", first.object, { created: t.ago(20) }), "applied");
      assert.equal(await t.send("invoice_payment.paid", first.payment, { created: t.ago(20) }), "applied");
      assert.equal(await t.send("invoice_payment.paid", second.payment, { created: t.ago(5) }), "applied");
      assert.equal(await t.send("invoice.paid", second.object, { created: t.ago(5) }), "applied");
      // The same invoice again, as invoice.payment_succeeded and as a repeat of its payment: nothing more.
      assert.equal(await t.send("invoice.payment_succeeded", second.object, { created: t.ago(5) }), "applied");
      assert.equal(await t.send("invoice_payment.paid", second.payment, { created: t.ago(5) }), "applied");

      assert.deepEqual((await t.revenue()).gross, { "2026-11-01": 500, "2026-11-16": 700 });
      assert.deepEqual(await t.payments(), [first.paymentIntent, second.paymentIntent].sort());
      const waiting = await t.services.db.selectFrom("invoice_payment_links").selectAll().where("workspace_id", "=", t.ws.workspaceId).execute();
      assert.deepEqual(waiting, [], "a payment that waited for its invoice is linked once it arrived");

      // So the subscription's payments are placed: a refund counts, a dispute names the subscription's tool.
      assert.equal(await t.send("charge.refunded", chargeObject({ paymentIntent: first.paymentIntent, amount: 500, amountRefunded: 500 })), "applied");
      const dispute = disputeObject({ id: stripeId("du"), paymentIntent: second.paymentIntent, amount: 700, status: "needs_response", created: t.today });
      assert.equal(await t.send("charge.dispute.created", dispute), "applied");
      assert.deepEqual((await t.revenue()).refunds, { "2026-11-21": 500 });
      const [disputed] = ofType(await t.events(), "payment.disputed");
      assert.equal(disputed?.data.tool, "tabmaster");
      assert.equal(disputed?.data.payment_intent, second.paymentIntent);
    });

    test("the older shape (2024-era: invoice.subscription and invoice.payment_intent) counts and links as before", async () => {
      const t = await bed(dialect);
      const old = t.invoice(12, 500, "2024");
      assert.equal((old.object as Record<string, unknown>).subscription, t.subscription);
      assert.equal(await t.send("invoice.paid", old.object, { created: t.ago(12), apiVersion: "2024-06-20" }), "applied");
      assert.equal(await t.send("invoice.paid", old.object, { created: t.ago(12), apiVersion: "2024-06-20" }), "applied");
      assert.deepEqual((await t.revenue()).gross, { "2026-11-09": 500 });
      assert.deepEqual(await t.payments(), [old.paymentIntent]);
      const refund = chargeObject({ paymentIntent: old.paymentIntent, amount: 500, amountRefunded: 200 });
      assert.equal(await t.send("charge.refunded", refund, { apiVersion: "2024-06-20" }), "applied");
      assert.deepEqual((await t.revenue()).refunds, { "2026-11-21": 200 });
    });

    test("what Warden cannot use is acknowledged with its reason: an invoice of no subscription, a payment without a payment intent", async () => {
      const t = await bed(dialect);
      const inv = t.invoice(3, 500, "webhook");
      const { parent: _parent, ...noSubscription } = inv.object as Record<string, unknown>;
      assert.equal(await t.send("invoice.paid", noSubscription), "ignored");
      const outOfBand = { ...inv.payment, payment: { type: "payment_record", payment_record: "pr_1" } };
      assert.equal(await t.send("invoice_payment.paid", outOfBand), "ignored");
      const noInvoice = { ...inv.payment, invoice: null };
      assert.equal(await t.send("invoice_payment.paid", noInvoice), "ignored");
      const reasons = await t.services.db
        .selectFrom("stripe_events")
        .select("reason")
        .where("workspace_id", "=", t.ws.workspaceId)
        .where("outcome", "=", "ignored")
        .orderBy("received_at")
        .orderBy("reason")
        .execute();
      assert.deepEqual(reasons.map((r) => r.reason).sort(), [
        "invoice of no subscription",
        'invoice payment names no payment intent (type "payment_record")',
        "invoice payment without an invoice",
      ]);
      assert.deepEqual((await t.revenue()).gross, {});
      assert.ok(STRIPE_EVENT_TYPES.includes("invoice_payment.paid"), "listed on the Stripe page among the types to choose");
    });

    test("a webhook-only Warden and the reconcile find the same facts; an invoice seen by both counts once", async () => {
      const stripeApi = await startStripeApi();
      const t = await bed(dialect, { stripeApiUrl: stripeApi.url });
      const heard = t.invoice(25, 500, "webhook");
      const missed = t.invoice(2, 700, "webhook");
      await t.send("invoice_payment.paid", heard.payment, { created: t.ago(25) });
      await t.send("invoice.paid", heard.object, { created: t.ago(25) });
      // Stripe's API lists both invoices with their payments expanded, as the reconcile asks.
      const expanded = (i: typeof heard, days: number, amountPaid: number) =>
        invoiceObject({ id: i.object.id, subscription: t.subscription, paymentIntent: i.paymentIntent, amountPaid, paidAt: t.ago(days), shape: "expanded" });
      stripeApi.lists.set("/v1/invoices", [expanded(missed, 2, 700), expanded(heard, 25, 500)]);
      for (let run = 0; run < 2; run++) {
        const result = await reconcileStripe(t.services, { workspace: t.ws.slug, env: "test", dryRun: false, trigger: "cli" });
        assert.equal(result.status, "done");
      }
      const listed = stripeApi.calls.find((c) => c.path.startsWith("/v1/invoices"));
      assert.match(decodeURIComponent(listed?.path ?? ""), /expand\[0\]=data\.payments/);
      assert.deepEqual((await t.revenue()).gross, { "2026-10-27": 500, "2026-11-19": 700 });
      assert.deepEqual(await t.payments(), [heard.paymentIntent, missed.paymentIntent].sort());
    });
  });
}
