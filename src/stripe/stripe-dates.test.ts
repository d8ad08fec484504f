// Issue 44, point 1: Insights dates what Stripe reports by Stripe's own times (the day it
// was paid, refunded, the dispute closed), never by the day the webhook arrived: Stripe
// retries a delivery for days, and an endpoint down for a while receives its backlog at once.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "kysely";
import { refundLicence } from "../billing/licence.service.js";
import { DAY_MS } from "../clock.js";
import { type Dialect, migrateToLatest } from "../db/database.js";
import { revenueInsights } from "../insights/insights.service.js";
import type { Grain } from "../insights/insights.types.js";
import { insertSubscriptionInvoice, listSubscriptionInvoices } from "../payments/payment-link.store.js";
import { DIALECTS } from "../test-support/harness.js";
import { emptyStorage, migrateThrough } from "../test-support/migrations.js";
import {
  chargeObject,
  disputeObject,
  invoiceObject,
  paymentSession,
  paymentsTestbed,
  stripeId,
  subscriptionObject,
  subscriptionSession,
} from "../test-support/stripe.js";

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const monthly = { warden_tool: "tabmaster", warden_plan: "monthly" };
const lifetime = { warden_tool: "tabmaster", warden_plan: "lifetime" };

async function bed(dialect: Dialect) {
  const t = await paymentsTestbed(dialect);
  const today = t.clock.now();
  const ago = (days: number) => today - days * DAY_MS;
  /** The EUR revenue over `from`…today: its points by day (or month) that are not 0, and the totals. */
  const revenue = async (from: string, grain: Grain = "day") => {
    const r = await revenueInsights(t.services.db, { workspaceId: t.ws.workspaceId, env: "test", toolId: null, from, to: dayOf(today), grain });
    const eur = r.currencies.find((c) => c.currency === "eur");
    const points = (s: { points: { date: string; value: number }[] } | undefined) =>
      Object.fromEntries((s?.points ?? []).filter((p) => p.value !== 0).map((p) => [p.date, p.value]));
    return { gross: eur?.gross.total ?? 0, refunds: eur?.refunds.total ?? 0, grossBy: points(eur?.gross), refundsBy: points(eur?.refunds) };
  };
  /** A monthly subscription bought (checkout and creation delivered on time) `days` ago. */
  const subscribe = async (email: string, days: number) => {
    const id = stripeId("sub");
    await t.send("checkout.session.completed", subscriptionSession({ email, subscription: id, metadata: monthly, now: ago(days) }), { created: ago(days) });
    const created = subscriptionObject({ id, status: "active", metadata: monthly, startedAt: ago(days), periodStart: ago(days), periodEnd: ago(days - 30) });
    assert.equal(await t.send("customer.subscription.created", created, { created: ago(days) }), "applied");
    return id;
  };
  return { ...t, today, ago, revenue, subscribe };
}

for (const dialect of DIALECTS) {
  describe(`Stripe's times date the figures (${dialect})`, () => {
    test("a subscription's payment counts on the day Stripe was paid, however late its invoice.paid arrives", async () => {
      const t = await bed(dialect);
      const sub = await t.subscribe("sub@example.com", 60);
      // In the last 30 days: a licence (€49.00) ten days ago, an invoice (€39.00) paid five days ago, each delivered on time.
      await t.send("checkout.session.completed", paymentSession({ email: "buyer@example.com", metadata: lifetime, amount: 4900, now: t.ago(10) }), {
        created: t.ago(10),
      });
      const onTime = invoiceObject({ subscription: sub, paymentIntent: stripeId("pi"), amountPaid: 3900, paidAt: t.ago(5) });
      assert.equal(await t.send("invoice.paid", onTime, { created: t.ago(5) }), "applied");
      // An invoice paid 50 days ago (€135.00) whose invoice.paid Warden receives only today, in an event made today.
      const late = invoiceObject({ subscription: sub, paymentIntent: stripeId("pi"), amountPaid: 13500, paidAt: t.ago(50) });
      assert.equal(await t.send("invoice.paid", late), "applied");

      // Before the fix the 30 days showed €223.00, today €135.00 of it, and October nothing.
      const days = await t.revenue(dayOf(t.ago(29)));
      assert.equal(days.gross, 8800, "the payments of the last 30 days");
      assert.deepEqual(days.grossBy, { "2026-11-11": 4900, "2026-11-16": 3900 });
      const months = await t.revenue(dayOf(t.ago(80)), "month");
      assert.deepEqual(months.grossBy, { "2026-10": 13500, "2026-11": 8800 });
    });

    test("an invoice without Stripe's paid time counts on its created, else on its event's", async () => {
      const t = await bed(dialect);
      const sub = await t.subscribe("sub@example.com", 60);
      const made = invoiceObject({ subscription: sub, paymentIntent: stripeId("pi"), amountPaid: 500, paidAt: t.ago(20) });
      await t.send("invoice.paid", { ...made, status_transitions: { finalized_at: null, paid_at: null, voided_at: null } });
      // Made an hour before it was paid, 20 days ago: the same day here (the clock is at noon).
      const bare = invoiceObject({ subscription: sub, paymentIntent: stripeId("pi"), amountPaid: 700 });
      await t.send("invoice.paid", bare, { created: t.ago(12) });
      assert.deepEqual((await t.revenue(dayOf(t.ago(59)))).grossBy, { "2026-11-01": 500, "2026-11-09": 700 });
    });

    test("an invoice that arrives before its subscription counts, when the subscription is stored, on the day it was paid", async () => {
      const t = await bed(dialect);
      const id = stripeId("sub");
      const paymentIntent = stripeId("pi");
      await t.send("checkout.session.completed", subscriptionSession({ email: "early@example.com", subscription: id, metadata: monthly, now: t.ago(40) }));
      assert.equal(await t.send("invoice.paid", invoiceObject({ subscription: id, paymentIntent, amountPaid: 500, paidAt: t.ago(40) })), "applied");
      // Refunded in part 30 days ago (the charge lists its refund), still before Warden stores the subscription.
      const charge = chargeObject({ paymentIntent, amount: 500, amountRefunded: 200, refunds: [{ amount: 200, at: t.ago(30) }] });
      assert.equal(await t.send("charge.refunded", charge), "applied");
      assert.equal((await t.revenue(dayOf(t.ago(59)))).gross, 0, "not counted before its subscription is stored");

      const created = subscriptionObject({ id, status: "active", metadata: monthly, startedAt: t.ago(40), periodStart: t.ago(40), periodEnd: t.ago(10) });
      assert.equal(await t.send("customer.subscription.created", created), "applied");
      const r = await t.revenue(dayOf(t.ago(59)));
      assert.deepEqual(r.grossBy, { "2026-10-12": 500 });
      assert.deepEqual(r.refundsBy, { "2026-10-22": 200 });
    });

    test("refunds count on the day Stripe refunded and a lost dispute on the day it closed; the vendor's own refund today", async () => {
      const t = await bed(dialect);
      const licence = async (email: string, days: number) => {
        const paymentIntent = stripeId("pi");
        await t.send("checkout.session.completed", paymentSession({ email, metadata: lifetime, amount: 4900, paymentIntent, now: t.ago(days) }), {
          created: t.ago(days),
        });
        return paymentIntent;
      };
      // A licence refunded in full three days ago: charge.refunded (no list of refunds, as current versions send it) arrives today.
      const full = await licence("full@example.com", 10);
      const fullCharge = chargeObject({ paymentIntent: full, amount: 4900, amountRefunded: 4900 });
      assert.equal(await t.send("charge.refunded", fullCharge, { created: t.ago(3) }), "applied");
      // A licence refunded in part six days ago, reported today by an event that lists the charge's refunds.
      const part = await licence("part@example.com", 10);
      const partCharge = chargeObject({ paymentIntent: part, amount: 4900, amountRefunded: 1000, refunds: [{ amount: 1000, at: t.ago(6) }] });
      assert.equal(await t.send("charge.refunded", partCharge), "applied");
      // A subscription's payment refunded two days ago, reported today.
      const sub = await t.subscribe("sub@example.com", 20);
      const subPayment = stripeId("pi");
      await t.send("invoice.paid", invoiceObject({ subscription: sub, paymentIntent: subPayment, amountPaid: 500, paidAt: t.ago(20) }), { created: t.ago(20) });
      assert.equal(
        await t.send("charge.refunded", chargeObject({ paymentIntent: subPayment, amount: 500, amountRefunded: 500 }), { created: t.ago(2) }),
        "applied",
      );
      // A dispute lost four days ago, its close reported today.
      const disputed = await licence("disputed@example.com", 10);
      const dispute = { id: stripeId("du"), paymentIntent: disputed, amount: 4900, created: t.ago(8) };
      assert.equal(await t.send("charge.dispute.created", disputeObject({ ...dispute, status: "needs_response" }), { created: t.ago(8) }), "applied");
      assert.equal(await t.send("charge.dispute.closed", disputeObject({ ...dispute, status: "lost" }), { created: t.ago(4) }), "applied");
      // The vendor refunds a licence from the dashboard today: its own time.
      await licence("vendor@example.com", 10);
      const vendors = (await t.licences()).find((l) => l.payment_intent !== full && l.payment_intent !== part && l.payment_intent !== disputed);
      assert.ok(vendors);
      await refundLicence(t.services, { id: vendors.id });

      const r = await t.revenue(dayOf(t.ago(29)));
      assert.deepEqual(r.refundsBy, {
        "2026-11-15": 1000,
        "2026-11-17": 4900,
        "2026-11-18": 4900,
        "2026-11-19": 500,
        "2026-11-21": 4900,
      });
      const licences = await t.licences();
      assert.equal(Number(licences.find((l) => l.payment_intent === full)?.refunded_at), t.ago(3), "the licence's refund keeps Stripe's time");
      const closed = await t.services.db.selectFrom("disputes").select("closed_at").where("id", "=", dispute.id).executeTakeFirstOrThrow();
      assert.equal(Number(closed.closed_at), t.ago(4));
    });

    test("migration 040 keeps the invoices counted before it, under their payment intent: naming one again counts nothing", async (t) => {
      const storage = await emptyStorage(dialect);
      t.after(() => storage.close());
      const { db } = storage;
      await migrateThrough(db, "039-customer-counts-per-statement");
      const at = Date.parse("2026-10-02T09:00:00.000Z");
      // The invoice's amount on its first payment intent's row, as onInvoicePaid wrote it from migration 031 to 039.
      await sql`insert into subscription_payments (workspace_id, env, payment_intent, subscription_id, created_at, amount_cents, currency)
        values ('ws_m', 'live', 'pi_first', 'sub_m', ${at}, 500, 'eur'), ('ws_m', 'live', 'pi_second', 'sub_m', ${at}, null, null)`.execute(db);
      await migrateToLatest(db, dialect);
      const scope = { workspaceId: "ws_m", env: "live" as const };
      assert.deepEqual(await listSubscriptionInvoices(db, scope, "sub_m"), [{ amountCents: 500, currency: "eur", paidAt: at, earningsCents: null }]);
      const reading = { subscriptionId: "sub_m", amountCents: 500, currency: "eur", earnings: null, paidAt: at };
      assert.equal(await insertSubscriptionInvoice(db, scope, { ...reading, invoiceId: "in_old", paymentIntents: ["pi_first"] }, at), false);
      assert.equal(await insertSubscriptionInvoice(db, scope, { ...reading, invoiceId: "in_new", paymentIntents: ["pi_third"] }, at), true);
      assert.equal(await insertSubscriptionInvoice(db, scope, { ...reading, invoiceId: "in_new", paymentIntents: [] }, at), false);
      const payments = await db.selectFrom("subscription_payments").select(["payment_intent", "currency"]).orderBy("payment_intent").execute();
      assert.deepEqual(payments, [
        { payment_intent: "pi_first", currency: "eur" },
        { payment_intent: "pi_second", currency: null },
      ]);
    });
  });
}
