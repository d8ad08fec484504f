// The specification's Licence table, row by row, driven by Stripe events signed as Stripe
// signs them and by the vendor's commands: stored state, the API's answers and the
// emitted events' bodies, on both engines.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DAY_MS } from "../clock.js";
import { ensurePerson } from "../customers/person.store.js";
import { derivedId } from "../ids.js";
import { foldFigures } from "../insights/rollup.store.js";
import { DIALECTS } from "../test-support/harness.js";
import {
  chargeObject,
  disputeObject,
  invoiceObject,
  ofType,
  paymentSession,
  paymentsTestbed,
  stripeId,
  subscriptionObject,
  subscriptionSession,
} from "../test-support/stripe.js";
import { createPlan } from "../workspaces/workspace.service.js";
import { closeTestDispute, openTestDispute } from "./dispute.service.js";
import { refundLicence } from "./licence.service.js";
import { findLicenceById, insertLicence } from "./licence.store.js";

const LIFETIME = { id: "lifetime", name: "Lifetime", billing: "one_time", amountCents: 4900, currency: "eur", interval: null };

type Testbed = Awaited<ReturnType<typeof paymentsTestbed>>;

/** Ada buys the lifetime licence signed out; answers the ids Stripe gave. */
async function buyLicence(t: Testbed, email = "ada@example.com") {
  const paymentIntent = stripeId("pi");
  const session = paymentSession({ email, metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" }, paymentIntent, now: t.clock.now() });
  assert.equal(await t.send("checkout.session.completed", session), "applied");
  const licence = (await t.licences()).find((l) => l.checkout_session === session.id);
  assert.ok(licence);
  return { paymentIntent, checkoutSession: session.id, licence: licence.id, boughtAt: t.clock.now() };
}

const dispute = (id: string, paymentIntent: string, status: string, dueBy: number | null = null) =>
  disputeObject({ id, paymentIntent, amount: 4900, status, dueBy });

for (const dialect of DIALECTS) {
  describe(`licence life cycle (${dialect})`, () => {
    test("(none) → active: a paid checkout in payment mode makes a licence and purchase.completed with kind licence", async () => {
      const t = await paymentsTestbed(dialect);
      const bought = await buyLicence(t, "Ada.Lovelace@gmail.com");
      const [licence] = await t.licences();
      assert.equal(licence?.status, "active");
      assert.equal(Number(licence?.purchased_at), Math.floor(t.clock.now() / 1000) * 1000);

      const [event, ...others] = await t.events();
      assert.equal(others.length, 0);
      assert.deepEqual(event, {
        id: derivedId("evt", `${t.ws.workspaceId}|test|purchase.completed|${bought.checkoutSession}`),
        type: "purchase.completed",
        created: Math.floor(t.clock.now() / 1000),
        livemode: false,
        data: {
          tool: "tabmaster",
          kind: "licence",
          plan: "tabmaster:lifetime",
          email: "Ada.Lovelace@gmail.com",
          amount: 4900,
          currency: "eur",
          payment_intent: bought.paymentIntent,
          checkout_session: bought.checkoutSession,
          account: "none",
          user_id: null,
        },
      });
      const paidAt = "2026-11-21T12:00:00.000Z";
      assert.deepEqual(await t.customer("adalovelace@gmail.com"), {
        status: 200,
        body: {
          email: "Ada.Lovelace@gmail.com",
          account: false,
          entitled: true,
          via: "licence",
          paid_at: paidAt,
          plan: LIFETIME,
          subscription: null,
          trial: null,
          features: [],
        },
      });
      assert.deepEqual(await t.list(), [
        { email: "Ada.Lovelace@gmail.com", account: false, entitled: true, via: "licence", since: paidAt, last_active_at: null, devices: 0 },
      ]);
    });

    test("a signed-in buyer's licence is their account's, linked, with user_id; the default plan is named by its bare id; a bundle names itself", async () => {
      const t = await paymentsTestbed(dialect);
      const { db, clock } = t.services;
      await createPlan(db, clock, {
        workspace: t.ws.slug,
        tool: "linkkeeper",
        id: "forever",
        name: "Forever",
        billing: "one_time",
        amountCents: 900,
        isDefault: true,
      });
      const account = await ensurePerson(db, t.ws.workspaceId, "test", "grace@example.com", clock.now());
      // Paid with another address at checkout: the licence is still the account's.
      const session = paymentSession({
        email: "billing@grace.example",
        metadata: { warden_tool: "linkkeeper", warden_account: account.id },
        amount: 900,
        now: clock.now(),
      });
      assert.equal(await t.send("checkout.session.completed", session), "applied");
      const suite = paymentSession({
        email: "grace@example.com",
        metadata: { warden_bundle: "suite", warden_plan: "suite-lifetime" },
        amount: 9900,
        now: clock.now(),
      });
      assert.equal(await t.send("checkout.session.completed", suite), "applied");

      const purchases = ofType(await t.events(), "purchase.completed");
      const single = purchases.find((e) => e.data.checkout_session === session.id);
      assert.deepEqual(single?.data, {
        tool: "linkkeeper",
        kind: "licence",
        plan: "forever",
        email: "billing@grace.example",
        amount: 900,
        currency: "eur",
        payment_intent: session.payment_intent,
        checkout_session: session.id,
        account: "linked",
        user_id: account.id,
      });
      assert.equal(purchases.find((e) => e.data.checkout_session === suite.id)?.data.plan, "suite:suite-lifetime");
      assert.equal(purchases.find((e) => e.data.checkout_session === suite.id)?.data.tool, "suite");
      assert.equal((await t.customer("grace@example.com", "linkkeeper")).body.via, "licence");
      assert.equal((await t.customer("grace@example.com", "tabmaster")).body.via, "licence");
      assert.equal((await t.customer("billing@grace.example", "linkkeeper")).status, 404);
    });

    test("a delayed payment method: the licence waits for checkout.session.async_payment_succeeded", async () => {
      const t = await paymentsTestbed(dialect);
      const session = paymentSession({
        email: "ada@example.com",
        metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" },
        paymentStatus: "unpaid",
        now: t.clock.now(),
      });
      assert.equal(await t.send("checkout.session.completed", session), "ignored");
      assert.equal((await t.licences()).length, 0);
      assert.equal(await t.send("checkout.session.async_payment_succeeded", { ...session, payment_status: "paid" }), "applied");
      assert.equal((await t.licences()).length, 1);
      assert.equal(ofType(await t.events(), "purchase.completed").length, 1);
    });

    test("active → revoked: a full refund from Stripe revokes it and sends payment.refunded; since keeps the purchase time", async () => {
      const t = await paymentsTestbed(dialect);
      const bought = await buyLicence(t);
      t.clock.advance(3 * DAY_MS);
      assert.equal(await t.send("charge.refunded", chargeObject({ paymentIntent: bought.paymentIntent, amount: 4900, amountRefunded: 4900 })), "applied");
      const [licence] = await t.licences();
      assert.equal(licence?.status, "revoked");
      assert.equal(Number(licence?.refunded_at), Date.parse("2026-11-24T12:00:00.000Z"), "three days after the purchase");
      const [refund, ...more] = ofType(await t.events(), "payment.refunded");
      assert.equal(more.length, 0);
      assert.deepEqual(refund, {
        id: derivedId("evt", `${t.ws.workspaceId}|test|payment.refunded|${bought.paymentIntent}`),
        type: "payment.refunded",
        created: 1795521600, // 24 Nov 2026 12:00 UTC, in Unix seconds
        livemode: false,
        data: { tool: "tabmaster", email: "ada@example.com", licence: bought.licence, payment_intent: bought.paymentIntent, amount: 4900, currency: "eur" },
      });
      const answer = await t.customer("ada@example.com");
      assert.equal(answer.body.entitled, false);
      assert.equal(answer.body.via, null);
      // The lapsed purchase is still explained.
      assert.deepEqual(answer.body.plan, LIFETIME);
      assert.deepEqual(await t.list(), []);
      assert.deepEqual(await t.list("tabmaster", "?entitled=false"), []);
      // Bought again later: since is still the first time the tool was held.
      await buyLicence(t);
      const [row] = await t.list();
      assert.equal(row?.since, "2026-11-21T12:00:00.000Z", "the first purchase's time");
    });

    test("a partial refund sends nothing and the licence stands; its amount counts in the refunds once, and the full refund after it counts the rest", async () => {
      const t = await paymentsTestbed(dialect);
      const bought = await buyLicence(t);
      const refunded = async () => {
        await foldFigures(t.services.db);
        return (
          await t.services.db
            .selectFrom("insight_days")
            .select(["day", "value"])
            .where("workspace_id", "=", t.ws.workspaceId)
            .where("metric", "=", "refunds")
            .orderBy("day")
            .execute()
        ).map((r) => [r.day, Number(r.value)]);
      };
      const partly = chargeObject({ paymentIntent: bought.paymentIntent, amount: 4900, amountRefunded: 1000 });
      assert.equal(await t.send("charge.refunded", partly), "applied");
      assert.equal((await t.licences())[0]?.status, "active");
      assert.equal(ofType(await t.events(), "payment.refunded").length, 0);
      assert.equal((await t.customer("ada@example.com")).body.entitled, true);
      assert.deepEqual(await refunded(), [["2026-11-21", 1000]]);
      // The same report again, as Stripe may send it: nothing new.
      assert.equal(await t.send("charge.refunded", partly), "ignored");
      assert.deepEqual(await refunded(), [["2026-11-21", 1000]]);
      t.clock.advance(DAY_MS);
      assert.equal(await t.send("charge.refunded", chargeObject({ paymentIntent: bought.paymentIntent, amount: 4900, amountRefunded: 2500 })), "applied");
      assert.deepEqual(await refunded(), [
        ["2026-11-21", 1000],
        ["2026-11-22", 1500],
      ]);
      // Refunded in full by the vendor: the licence is revoked and only what was left counts.
      await refundLicence(t.services, { id: bought.licence });
      assert.deepEqual(await refunded(), [
        ["2026-11-21", 1000],
        ["2026-11-22", 3900],
      ]);
      assert.equal((await t.licences())[0]?.status, "revoked");
      assert.equal(ofType(await t.events(), "payment.refunded").length, 1);
    });

    test("a refund reported by the vendor and then by Stripe sends one event with one id", async () => {
      const t = await paymentsTestbed(dialect);
      const bought = await buyLicence(t);
      const result = await refundLicence(t.services, { id: bought.licence });
      assert.deepEqual(result, {
        id: bought.licence,
        workspaceId: t.ws.workspaceId,
        env: "test",
        status: "revoked",
        refunded_at: "2026-11-21T12:00:00.000Z",
        refunded_now: true,
        at_processor: null,
      });
      const afterVendor = ofType(await t.events(), "payment.refunded");
      assert.equal(afterVendor.length, 1);
      t.clock.advance(60_000);
      assert.equal(await t.send("charge.refunded", chargeObject({ paymentIntent: bought.paymentIntent, amount: 4900, amountRefunded: 4900 })), "applied");
      assert.deepEqual(ofType(await t.events(), "payment.refunded"), afterVendor);
      assert.equal((await t.customer("ada@example.com")).body.entitled, false);
    });

    test("a refund reported by Stripe and then by the vendor sends one event; the vendor is told it was refunded already", async () => {
      const t = await paymentsTestbed(dialect);
      const bought = await buyLicence(t);
      assert.equal(await t.send("charge.refunded", chargeObject({ paymentIntent: bought.paymentIntent, amount: 4900, amountRefunded: 4900 })), "applied");
      t.clock.advance(60_000);
      const again = await refundLicence(t.services, { id: bought.licence });
      assert.equal(again.refunded_now, false);
      assert.equal(again.refunded_at, "2026-11-21T12:00:00.000Z", "when Stripe reported it, a minute before");
      const refunds = ofType(await t.events(), "payment.refunded");
      assert.equal(refunds.length, 1);
      assert.equal(refunds[0]?.id, derivedId("evt", `${t.ws.workspaceId}|test|payment.refunded|${bought.paymentIntent}`));
    });

    test("active → suspended: charge.dispute.created suspends it and sends payment.disputed", async () => {
      const t = await paymentsTestbed(dialect);
      const bought = await buyLicence(t);
      const disputeId = stripeId("du");
      const dueBy = t.clock.now() + 10 * DAY_MS;
      assert.equal(await t.send("charge.dispute.created", dispute(disputeId, bought.paymentIntent, "needs_response", dueBy)), "applied");
      assert.equal((await t.licences())[0]?.status, "suspended");
      const [disputed] = ofType(await t.events(), "payment.disputed");
      assert.deepEqual(disputed, {
        id: derivedId("evt", `${t.ws.workspaceId}|test|payment.disputed|${disputeId}`),
        type: "payment.disputed",
        created: 1795262400, // 21 Nov 2026 12:00 UTC, in Unix seconds
        livemode: false,
        data: {
          tool: "tabmaster",
          email: "ada@example.com",
          licence: bought.licence,
          payment_intent: bought.paymentIntent,
          dispute: disputeId,
          reason: "fraudulent",
          status: "needs_response",
          respond_by: "2026-12-01T12:00:00.000Z",
          amount: 4900,
          currency: "eur",
        },
      });
      const answer = await t.customer("ada@example.com");
      assert.deepEqual([answer.body.entitled, answer.body.via], [false, null]);
      assert.deepEqual(await t.list("tabmaster", "?entitled=true"), []);
      // A retried delivery of the same dispute (another Stripe event id) sends nothing more.
      assert.equal(await t.send("charge.dispute.created", dispute(disputeId, bought.paymentIntent, "needs_response", dueBy)), "applied");
      assert.equal(ofType(await t.events(), "payment.disputed").length, 1);
    });

    for (const [status, next, entitled] of [
      ["won", "active", true],
      ["warning_closed", "active", true],
      ["lost", "revoked", false],
    ] as const) {
      test(`suspended → ${next}: charge.dispute.closed with status ${status} sends dispute.closed`, async () => {
        const t = await paymentsTestbed(dialect);
        const bought = await buyLicence(t);
        const disputeId = stripeId("du");
        await t.send("charge.dispute.created", dispute(disputeId, bought.paymentIntent, "needs_response"));
        t.clock.advance(5 * DAY_MS);
        assert.equal(await t.send("charge.dispute.closed", dispute(disputeId, bought.paymentIntent, status)), "applied");
        assert.equal((await t.licences())[0]?.status, next);
        const [closed, ...more] = ofType(await t.events(), "dispute.closed");
        assert.equal(more.length, 0);
        assert.deepEqual(closed, {
          id: derivedId("evt", `${t.ws.workspaceId}|test|dispute.closed|${disputeId}`),
          type: "dispute.closed",
          created: Math.floor(t.clock.now() / 1000),
          livemode: false,
          data: {
            tool: "tabmaster",
            email: "ada@example.com",
            licence: bought.licence,
            payment_intent: bought.paymentIntent,
            dispute: disputeId,
            status,
            amount: 4900,
            currency: "eur",
          },
        });
        const answer = await t.customer("ada@example.com");
        assert.equal(answer.body.entitled, entitled);
        assert.equal((await t.list("tabmaster", "?entitled=true")).length, entitled ? 1 : 0);
      });
    }

    test("a dispute's close arriving before its creation leaves the right state and sends both events once", async () => {
      const t = await paymentsTestbed(dialect);
      const bought = await buyLicence(t);
      const disputeId = stripeId("du");
      const opened = t.clock.now();
      t.clock.advance(DAY_MS);
      assert.equal(await t.send("charge.dispute.closed", dispute(disputeId, bought.paymentIntent, "lost")), "applied");
      assert.equal(await t.send("charge.dispute.created", dispute(disputeId, bought.paymentIntent, "needs_response"), { created: opened }), "applied");
      assert.equal((await t.licences())[0]?.status, "revoked");
      const events = await t.events();
      assert.equal(ofType(events, "payment.disputed").length, 1);
      assert.deepEqual(
        ofType(events, "dispute.closed").map((e) => e.data.status),
        ["lost"],
      );
      assert.equal((await t.customer("ada@example.com")).body.entitled, false);
    });

    test("a dispute of a subscription's payment sends payment.disputed and dispute.closed with email and licence null", async () => {
      const t = await paymentsTestbed(dialect);
      const now = t.clock.now();
      const subId = stripeId("sub");
      const metadata = { warden_tool: "tabmaster", warden_plan: "monthly" };
      await t.send("checkout.session.completed", subscriptionSession({ email: "linus@example.com", subscription: subId, metadata, now }));
      await t.send(
        "customer.subscription.created",
        subscriptionObject({ id: subId, status: "active", metadata, startedAt: now, periodStart: now, periodEnd: now + 30 * DAY_MS }),
      );
      const paymentIntent = stripeId("pi");
      assert.equal(await t.send("invoice.paid", invoiceObject({ subscription: subId, paymentIntent })), "applied");
      const disputeId = stripeId("du");
      assert.equal(await t.send("charge.dispute.created", disputeObject({ id: disputeId, paymentIntent, amount: 500, status: "needs_response" })), "applied");
      assert.equal(await t.send("charge.dispute.closed", disputeObject({ id: disputeId, paymentIntent, amount: 500, status: "won" })), "applied");
      const events = await t.events();
      const [disputed] = ofType(events, "payment.disputed");
      assert.deepEqual(disputed?.data, {
        tool: "tabmaster",
        email: null,
        licence: null,
        payment_intent: paymentIntent,
        dispute: disputeId,
        reason: "fraudulent",
        status: "needs_response",
        respond_by: null,
        amount: 500,
        currency: "eur",
      });
      const [closed] = ofType(events, "dispute.closed");
      assert.deepEqual(closed?.data, {
        tool: "tabmaster",
        email: null,
        licence: null,
        payment_intent: paymentIntent,
        dispute: disputeId,
        status: "won",
        amount: 500,
        currency: "eur",
      });
      // Nothing is suspended: the subscription still entitles.
      assert.equal((await t.customer("linus@example.com")).body.via, "subscription");
      // A payment Warden cannot place is acknowledged, not applied.
      assert.equal(
        await t.send("charge.dispute.created", disputeObject({ id: stripeId("du"), paymentIntent: stripeId("pi"), amount: 500, status: "needs_response" })),
        "ignored",
      );
    });

    test("vendor test disputes: open suspends, close decides; both refused in the live environment", async () => {
      const t = await paymentsTestbed(dialect);
      const bought = await buyLicence(t);
      const opened = await openTestDispute(t.services, { licence: bought.licence });
      assert.match(opened.id, /^du_[0-9A-Za-z]{24}$/);
      assert.deepEqual(
        { ...opened, id: "" },
        {
          id: "",
          workspaceId: t.ws.workspaceId,
          env: "test",
          licence: bought.licence,
          status: "needs_response",
          respond_by: "2026-11-28T12:00:00.000Z", // 7 days to answer
          closed_at: null,
        },
      );
      assert.equal((await t.licences())[0]?.status, "suspended");
      await assert.rejects(openTestDispute(t.services, { licence: bought.licence }), /is suspended/);
      const closed = await closeTestDispute(t.services, { id: opened.id, status: "won" });
      assert.equal(closed.status, "won");
      assert.equal((await t.licences())[0]?.status, "active");
      await assert.rejects(closeTestDispute(t.services, { id: opened.id, status: "lost" }), /closed already/);
      await assert.rejects(closeTestDispute(t.services, { id: opened.id, status: "maybe" }), /won, lost or warning_closed/);
      const events = await t.events();
      assert.equal(ofType(events, "payment.disputed")[0]?.data.dispute, opened.id);
      assert.equal(ofType(events, "dispute.closed")[0]?.data.status, "won");

      const stored = await findLicenceById(t.services.db, bought.licence);
      assert.ok(stored);
      const livePerson = await ensurePerson(t.services.db, t.ws.workspaceId, "live", "ada@example.com", t.clock.now());
      await insertLicence(t.services.db, { ...stored, id: "lic_Live00000000000000000001", env: "live", personId: livePerson.id });
      await assert.rejects(openTestDispute(t.services, { licence: "lic_Live00000000000000000001" }), /only in the test environment/);
    });

    test("refusals: a licence revoked by a lost dispute, a licence that does not exist", async () => {
      const t = await paymentsTestbed(dialect);
      const bought = await buyLicence(t);
      await t.send("charge.dispute.closed", dispute(stripeId("du"), bought.paymentIntent, "lost"));
      await assert.rejects(refundLicence(t.services, { id: bought.licence }), /lost dispute/);
      await assert.rejects(refundLicence(t.services, { id: "lic_Nope0000000000000000000" }), /No licence/);
    });
  });
}
