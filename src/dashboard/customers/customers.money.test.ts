// A customer's money on their page: a history written by hand as Stripe reports it (a
// licence bought in euros, disputed and won, then refunded in full; a team subscription
// in dollars, renewed, partly refunded, moved to another plan and to more seats): every
// line with its amount, date and link to Stripe's test dashboard, the subscription's
// history, the lifetime value per currency; another workspace's owner sees none of it.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DAY_MS, MINUTE_MS } from "../../clock.js";
import { insertPlanLink } from "../../stripe/stripe-plan-link.store.js";
import { dashboardApp, dashboardServices, TestBrowser } from "../../test-support/dashboard.js";
import { apiOver, DIALECTS, seedCatalogue } from "../../test-support/harness.js";
import {
  chargeObject,
  connectTestStripe,
  deliver,
  disputeObject,
  invoiceObject,
  paymentSession,
  stripeEvent,
  subscriptionObject,
  subscriptionSession,
} from "../../test-support/stripe.js";
import { createPlan } from "../../workspaces/workspace.service.js";

const ADA = "ada@example.com";

/** Cells of the money table's rows, tags dropped and spaces folded, newest first. */
function moneyRows(body: string): string[][] {
  const table = /aria-label="Payments, refunds and disputes"><table>([\s\S]*?)<\/table>/.exec(body)?.[1] ?? "";
  return [...table.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].slice(1).map((row) =>
    [...(row[1] ?? "").matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((cell) =>
      (cell[1] ?? "")
        .replace(/<[^>]+>/g, "")
        .replace(/\s+/g, " ")
        .trim(),
    ),
  );
}

async function setUp(dialect: (typeof DIALECTS)[number]) {
  const env = await dashboardServices(dialect);
  const app = await dashboardApp(env);
  const ws = await seedCatalogue(env.services);
  const { clock, services } = env;
  await createPlan(services.db, clock, {
    workspace: ws.slug,
    tool: "tabmaster",
    id: "yearly",
    name: "Yearly",
    billing: "subscription",
    amountCents: 12_000,
    interval: "year",
  });
  await insertPlanLink(services.db, ws.workspaceId, { stripeId: "price_yearly", productKind: "tool", productId: "tabmaster", planId: "yearly" }, clock.now());
  const api = apiOver(app);
  const secret = await connectTestStripe(services, ws);
  const send = (type: string, object: Record<string, unknown>) => deliver(api, ws, secret, stripeEvent(type, object, { now: clock.now() }), clock.now());
  const t0 = clock.now(); // 21 Nov 2026, 12:00 UTC

  // The licence: bought in euros, disputed and won, then refunded in full.
  const licencePayment = "pi_licence0000000000000000";
  assert.equal(
    await send(
      "checkout.session.completed",
      paymentSession({
        email: ADA,
        metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" },
        amount: 4900,
        currency: "eur",
        paymentIntent: licencePayment,
        now: t0,
      }),
    ),
    "applied",
  );

  // Bob's only licence, bought then and refunded in full an hour later.
  const bobPayment = "pi_bob000000000000000000000";
  assert.equal(
    await send(
      "checkout.session.completed",
      paymentSession({
        email: "bob@example.com",
        metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" },
        amount: 4900,
        currency: "eur",
        paymentIntent: bobPayment,
        now: t0,
      }),
    ),
    "applied",
  );

  // The subscription: a team of 3 in dollars, an hour later.
  clock.advance(60 * MINUTE_MS);
  assert.equal(await send("charge.refunded", chargeObject({ paymentIntent: bobPayment, amount: 4900, amountRefunded: 4900, currency: "eur" })), "applied");
  const sub = {
    id: "sub_team000000000000000000",
    status: "active",
    metadata: { warden_tool: "tabmaster", warden_plan: "monthly", warden_seats: "3" },
    startedAt: clock.now(),
    periodStart: clock.now(),
    periodEnd: clock.now() + 30 * DAY_MS,
    quantity: 3,
  };
  assert.equal(
    await send("checkout.session.completed", subscriptionSession({ email: ADA, subscription: sub.id, metadata: sub.metadata, now: clock.now() })),
    "applied",
  );
  assert.equal(await send("customer.subscription.created", subscriptionObject(sub)), "applied");
  const first = { id: "in_first00000000000000000", pi: "pi_first00000000000000000" };
  assert.equal(
    await send(
      "invoice.paid",
      invoiceObject({ subscription: sub.id, id: first.id, paymentIntent: first.pi, amountPaid: 1500, currency: "usd", paidAt: clock.now() }),
    ),
    "applied",
  );

  // 21 Dec: the renewal; 22 Dec: $5.00 of it refunded.
  clock.advance(30 * DAY_MS);
  const renewal = { id: "in_second0000000000000000", pi: "pi_second0000000000000000" };
  assert.equal(
    await send(
      "invoice.paid",
      invoiceObject({ subscription: sub.id, id: renewal.id, paymentIntent: renewal.pi, amountPaid: 1500, currency: "usd", paidAt: clock.now() }),
    ),
    "applied",
  );
  clock.advance(DAY_MS);
  assert.equal(await send("charge.refunded", chargeObject({ paymentIntent: renewal.pi, amount: 1500, amountRefunded: 500, currency: "usd" })), "applied");

  // 23 Dec: to the yearly plan; 24 Dec: 5 seats.
  clock.advance(DAY_MS);
  const later = { ...sub, periodStart: sub.periodStart + 30 * DAY_MS, periodEnd: sub.periodEnd + 30 * DAY_MS };
  assert.equal(await send("customer.subscription.updated", subscriptionObject({ ...later, price: "price_yearly" })), "applied");
  clock.advance(DAY_MS);
  assert.equal(await send("customer.subscription.updated", subscriptionObject({ ...later, price: "price_yearly", quantity: 5 })), "applied");

  // 25 Dec: the licence's payment disputed; 31 Dec: won; 5 Jan: refunded in full.
  clock.advance(DAY_MS);
  const dispute = { id: "du_dispute0000000000000000", paymentIntent: licencePayment, amount: 4900, currency: "eur", created: clock.now() };
  assert.equal(await send("charge.dispute.created", disputeObject({ ...dispute, status: "needs_response" })), "applied");
  clock.advance(6 * DAY_MS);
  assert.equal(await send("charge.dispute.closed", disputeObject({ ...dispute, status: "won" })), "applied");
  clock.advance(5 * DAY_MS);
  assert.equal(await send("charge.refunded", chargeObject({ paymentIntent: licencePayment, amount: 4900, amountRefunded: 4900, currency: "eur" })), "applied");
  assert.equal(t0, Date.parse("2026-11-21T12:00:00.000Z"));

  const browser = new TestBrowser(app);
  await browser.signIn(env.dataDir, ws.ownerEmail);
  return { env, app, ws, browser, page: `/dashboard/w/${ws.slug}/test/customers/tabmaster/ada%40example.com` };
}

for (const dialect of DIALECTS) {
  describe(`a customer's money on their page (${dialect})`, () => {
    test("every payment, refund and dispute with its amount, date and Stripe link; the subscription's history; the lifetime value per currency", async () => {
      const { browser, page } = await setUp(dialect);
      const shown = await browser.get(page);
      assert.equal(shown.statusCode, 200);
      const body = shown.body;
      assert.deepEqual(moneyRows(body), [
        ["5 Jan 2027, 13:00 UTC", "Refund in full Lifetime", "−€49.00", "pi_licence0000000000000000"],
        ["25 Dec 2026, 13:00 UTC", "Dispute won closed 31 Dec 2026, 13:00 UTC Lifetime", "€49.00", "du_dispute0000000000000000"],
        ["22 Dec 2026, 13:00 UTC", "Refund Monthly", "−$5.00", "pi_second0000000000000000"],
        ["21 Dec 2026, 13:00 UTC", "Payment Monthly", "$15.00", "in_second0000000000000000"],
        ["21 Nov 2026, 13:00 UTC", "Payment Monthly", "$15.00", "in_first00000000000000000"],
        ["21 Nov 2026, 12:00 UTC", "Refunded 5 Jan 2027, 13:00 UTC Payment Lifetime", "€49.00", "pi_licence0000000000000000"],
      ]);
      // Each processor id opens its page in Stripe's test dashboard.
      for (const link of [
        "https://dashboard.stripe.com/test/payments/pi_licence0000000000000000",
        "https://dashboard.stripe.com/test/disputes/du_dispute0000000000000000",
        "https://dashboard.stripe.com/test/payments/pi_second0000000000000000",
        "https://dashboard.stripe.com/test/invoices/in_second0000000000000000",
        "https://dashboard.stripe.com/test/invoices/in_first00000000000000000",
        "https://dashboard.stripe.com/test/subscriptions/sub_team000000000000000000",
      ]) {
        assert.ok(body.includes(`href="${link}"`), link);
      }
      // Lifetime value: payments minus refunds, per currency.
      assert.match(
        body,
        /<dt>Lifetime value <span class="muted">EUR<\/span><\/dt><dd><strong>€0\.00<\/strong> <span class="state-note">paid €49\.00, refunded €49\.00<\/span>/,
      );
      assert.match(
        body,
        /<dt>Lifetime value <span class="muted">USD<\/span><\/dt><dd><strong>\$25\.00<\/strong> <span class="state-note">paid \$30\.00, refunded \$5\.00<\/span>/,
      );
      // The subscription's start, plan change and seat change, in order.
      const timeline = (/<h3>Subscription history<\/h3>([\s\S]*?)<\/section>/.exec(body)?.[1] ?? "")
        .replace(/<[^>]+>/g, "")
        .replace(/\s+/g, " ")
        .trim();
      assert.equal(
        timeline,
        "Yearly sub_team000000000000000000 21 Nov 2026, 13:00 UTC: started on Monthly, 3 seats 23 Dec 2026, 13:00 UTC: plan Monthly → Yearly 24 Dec 2026, 13:00 UTC: seats 3 → 5",
      );
      // The licence refunded says so first, in its row and in the facts.
      assert.match(body, /<td[^>]*><span class="badge badge-off">Refunded<\/span> <span class="state-note"><time datetime="2027-01-05T13:00:00.000Z">/);
    });

    test("a customer whose payment was refunded in full is told so first", async () => {
      const { browser, page } = await setUp(dialect);
      const body = (await browser.get(page.replace("ada%40", "bob%40"))).body;
      assert.match(
        body,
        /<dt>Paid<\/dt><dd>Refunded <time datetime="2026-11-21T13:00:00.000Z">21 Nov 2026, 13:00 UTC<\/time> <span class="state-note">paid <time datetime="2026-11-21T12:00:00.000Z">/,
      );
      assert.deepEqual(moneyRows(body), [
        ["21 Nov 2026, 13:00 UTC", "Refund in full Lifetime", "−€49.00", "pi_bob000000000000000000000"],
        ["21 Nov 2026, 12:00 UTC", "Refunded 21 Nov 2026, 13:00 UTC Payment Lifetime", "€49.00", "pi_bob000000000000000000000"],
      ]);
    });

    test("another workspace's owner opens no money of this customer; a customer with none is told so", async () => {
      const { env, app, page, ws } = await setUp(dialect);
      const other = await seedCatalogue(env.services);
      const stranger = new TestBrowser(app);
      await stranger.signIn(env.dataDir, other.ownerEmail);
      const foreign = await stranger.get(page);
      assert.equal(foreign.statusCode, 404);
      assert.ok(!foreign.body.includes("pi_licence"));
      // The same address in the stranger's own workspace has paid nothing there.
      const own = await stranger.get(`/dashboard/w/${other.slug}/test/customers/tabmaster/ada%40example.com`);
      assert.equal(own.statusCode, 200);
      assert.match(own.body, /No payments/);
      assert.ok(!own.body.includes("pi_licence") && !own.body.includes("in_first"));
      // The live environment of the same workspace holds none of the test environment's money.
      const owner = new TestBrowser(app);
      await owner.signIn(env.dataDir, ws.ownerEmail);
      const live = await owner.get(page.replace("/test/", "/live/"));
      assert.equal(live.statusCode, 200);
      assert.match(live.body, /No payments/);
    });
  });
}
