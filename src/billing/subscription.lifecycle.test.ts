// The specification's Subscription table, row by row, driven by Stripe events signed as
// Stripe signs them (in order and out of it) and by the vendor's cancellation: stored
// state, the API's answers and the emitted events' bodies, on both engines.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DAY_MS, MINUTE_MS } from "../clock.js";
import { ensurePerson } from "../customers/person.store.js";
import { derivedId } from "../ids.js";
import { revenueInsights, subscriptionInsights } from "../insights/insights.service.js";
import type { InsightsQuery, Series } from "../insights/insights.types.js";
import { insertPlanLink } from "../stripe/stripe-plan-link.store.js";
import { DIALECTS } from "../test-support/harness.js";
import {
  chargeObject,
  invoiceObject,
  type Metadata,
  ofType,
  paymentsTestbed,
  type SubscriptionShape,
  stripeId,
  subscriptionObject,
  subscriptionSession,
} from "../test-support/stripe.js";
import { createPlan } from "../workspaces/workspace.service.js";
import { utcDay } from "./billing.events.js";
import { cancelSubscription } from "./subscription.service.js";

const MONTHLY = { id: "monthly", name: "Monthly", billing: "subscription", amountCents: 500, currency: "eur", interval: "month" };
const METADATA: Metadata = { warden_tool: "tabmaster", warden_plan: "monthly" };

type Testbed = Awaited<ReturnType<typeof paymentsTestbed>>;

/** A subscription of Stripe's that began now, for a month, and its objects at later moments. */
function stripeSubscription(t: Testbed, shape: Partial<SubscriptionShape> = {}) {
  const start = t.clock.now();
  const base: SubscriptionShape = {
    id: stripeId("sub"),
    status: "active",
    metadata: METADATA,
    startedAt: start,
    periodStart: start,
    periodEnd: start + 30 * DAY_MS,
    ...shape,
  };
  return { ...base, object: (changes: Partial<SubscriptionShape> = {}) => subscriptionObject({ ...base, ...changes }) };
}

/** The buyer signs out, pays: the checkout and the subscription's creation, in that order. */
async function subscribe(t: Testbed, email = "linus@example.com", shape: Partial<SubscriptionShape> = {}) {
  const sub = stripeSubscription(t, shape);
  assert.equal(
    await t.send("checkout.session.completed", subscriptionSession({ email, subscription: sub.id, metadata: sub.metadata, now: t.clock.now() })),
    "applied",
  );
  assert.equal(await t.send("customer.subscription.created", sub.object()), "applied");
  return sub;
}

const factId = (t: Testbed, type: string, fact: string) => derivedId("evt", `${t.ws.workspaceId}|test|${type}|${fact}`);

/** Insights of tabmaster from `from` to today. */
const insightsQuery = (t: Testbed, from: string): InsightsQuery => ({
  workspaceId: t.ws.workspaceId,
  env: "test",
  toolId: "tabmaster",
  from,
  to: utcDay(t.clock.now()),
  grain: "day",
});
/** A series' days that moved, with their values. */
const moved = (s: Series | undefined) => Object.fromEntries((s?.points ?? []).filter((p) => p.value !== 0).map((p) => [p.date, p.value]));

/** The reason recorded for the last Stripe event received. */
async function lastReason(t: Testbed): Promise<string | null> {
  const row = await t.services.db
    .selectFrom("stripe_events")
    .select("reason")
    .where("workspace_id", "=", t.ws.workspaceId)
    .orderBy("received_at", "desc")
    .orderBy("stripe_created", "desc")
    .executeTakeFirstOrThrow();
  return row.reason;
}

for (const dialect of DIALECTS) {
  describe(`subscription life cycle (${dialect})`, () => {
    test("(none) → active: checkout paid sends purchase.completed and subscription.started together, once", async () => {
      const t = await paymentsTestbed(dialect);
      const sub = await subscribe(t);
      // Stripe's usual follow-up (the first invoice paid moves nothing) and a repeat of the creation.
      assert.equal(await t.send("customer.subscription.updated", sub.object(), { previousAttributes: { latest_invoice: "in_old" } }), "applied");
      assert.equal(await t.send("customer.subscription.created", sub.object()), "applied");

      const events = await t.events();
      assert.deepEqual(events.map((e) => e.type).sort(), ["purchase.completed", "subscription.started"]);
      const facts = {
        tool: "tabmaster",
        subscription: sub.id,
        plan: "tabmaster:monthly",
        status: "active",
        period_end: "2026-12-21T12:00:00.000Z", // a month's period from 21 November
        user_id: null,
      };
      assert.deepEqual(ofType(events, "purchase.completed")[0], {
        id: factId(t, "purchase.completed", sub.id),
        type: "purchase.completed",
        created: 1795262400, // 21 Nov 2026 12:00 UTC, in Unix seconds
        livemode: false,
        data: {
          tool: "tabmaster",
          kind: "subscription",
          plan: "tabmaster:monthly",
          email: null,
          amount: null,
          currency: null,
          payment_intent: null,
          checkout_session: null,
          account: "none",
          subscription: sub.id,
          status: "active",
          period_end: facts.period_end,
          user_id: null,
        },
      });
      assert.deepEqual(ofType(events, "subscription.started")[0], {
        id: factId(t, "subscription.started", sub.id),
        type: "subscription.started",
        created: 1795262400,
        livemode: false,
        data: facts,
      });

      const stored = await t.subscription(sub.id);
      assert.equal(stored?.status, "active");
      assert.deepEqual(await t.customer("linus@example.com"), {
        status: 200,
        body: {
          email: "linus@example.com",
          account: false,
          entitled: true,
          via: "subscription",
          paid_at: "2026-11-21T12:00:00.000Z",
          plan: MONTHLY,
          subscription: { status: "active", periodEnd: facts.period_end, cancelAtPeriodEnd: false, cancelAt: null },
          trial: null,
          features: [],
        },
      });
      assert.deepEqual(await t.list(), [
        {
          email: "linus@example.com",
          account: false,
          entitled: true,
          via: "subscription",
          since: "2026-11-21T12:00:00.000Z",
          last_active_at: null,
          devices: 0,
        },
      ]);
    });

    test("bought signed in: the subscription is the account's at once, linked, with user_id, whatever the checkout's address", async () => {
      const t = await paymentsTestbed(dialect);
      const account = await ensurePerson(t.services.db, t.ws.workspaceId, "test", "grace@example.com", t.clock.now());
      const sub = stripeSubscription(t, { status: "trialing", metadata: { ...METADATA, warden_account: account.id } });
      assert.equal(await t.send("customer.subscription.created", sub.object()), "applied");
      const events = await t.events();
      const started = ofType(events, "subscription.started")[0];
      assert.deepEqual([started?.data.status, started?.data.user_id], ["trialing", account.id]);
      const purchase = ofType(events, "purchase.completed")[0];
      assert.deepEqual([purchase?.data.account, purchase?.data.user_id], ["linked", account.id]);
      // The checkout comes later, naming another address: nothing changes.
      await t.send(
        "checkout.session.completed",
        subscriptionSession({ email: "other@example.com", subscription: sub.id, metadata: sub.metadata, now: t.clock.now() }),
      );
      assert.equal((await t.customer("grace@example.com")).body.via, "subscription");
      assert.equal((await t.customer("other@example.com")).status, 404);
      assert.equal((await t.events()).length, 2);
    });

    test("out of order: the subscription's events before its checkout wait for the buyer, then apply in Stripe's order", async () => {
      const t = await paymentsTestbed(dialect);
      const sub = stripeSubscription(t, { status: "incomplete" });
      const created = t.clock.now();
      t.clock.advance(5_000);
      // The update (paid: active) arrives first, then the creation (incomplete), then the checkout.
      assert.equal(
        await t.send("customer.subscription.updated", sub.object({ status: "active" }), { previousAttributes: { status: "incomplete" } }),
        "deferred",
      );
      assert.equal(await t.send("customer.subscription.created", sub.object(), { created }), "deferred");
      assert.deepEqual(await t.events(), []);
      assert.equal((await t.customer("linus@example.com")).status, 404);

      assert.equal(
        await t.send(
          "checkout.session.completed",
          subscriptionSession({ email: "linus@example.com", subscription: sub.id, metadata: sub.metadata, now: t.clock.now() }),
        ),
        "applied",
      );
      const stored = await t.subscription(sub.id);
      assert.equal(stored?.status, "active");
      const events = await t.events();
      assert.equal(ofType(events, "subscription.started").length, 1);
      assert.equal(ofType(events, "subscription.started")[0]?.data.status, "active");
      assert.equal(ofType(events, "purchase.completed").length, 1);
      assert.equal((await t.customer("linus@example.com")).body.via, "subscription");
      const outcomes = await t.services.db
        .selectFrom("stripe_events")
        .select(["type", "outcome", "payload"])
        .where("workspace_id", "=", t.ws.workspaceId)
        .execute();
      assert.ok(outcomes.every((o) => o.outcome === "applied" && o.payload === null));
    });

    test("out of order: an update that arrives before its creation wins, and the late creation changes nothing", async () => {
      const t = await paymentsTestbed(dialect);
      const account = await ensurePerson(t.services.db, t.ws.workspaceId, "test", "ada@example.com", t.clock.now());
      const sub = stripeSubscription(t, { status: "incomplete", metadata: { ...METADATA, warden_account: account.id } });
      const created = t.clock.now();
      const later = created + 10_000;
      assert.equal(
        await t.send("customer.subscription.updated", sub.object({ status: "active" }), { created: later, previousAttributes: { status: "incomplete" } }),
        "applied",
      );
      assert.equal(await t.send("customer.subscription.created", sub.object(), { created }), "applied");
      const stored = await t.subscription(sub.id);
      assert.deepEqual(
        [stored?.status, Number(stored?.current_period_end), Number(stored?.processor_at)],
        ["active", Date.parse("2026-12-21T12:00:00.000Z"), Date.parse("2026-11-21T12:00:10.000Z")],
      );
      assert.equal(ofType(await t.events(), "subscription.started").length, 1);
      assert.equal((await t.customer("ada@example.com")).body.entitled, true);
    });

    test("incomplete → active: subscription.started waits until the first payment succeeds", async () => {
      const t = await paymentsTestbed(dialect);
      const sub = await subscribe(t, "linus@example.com", { status: "incomplete" });
      assert.deepEqual(await t.events(), []);
      assert.equal((await t.customer("linus@example.com")).body.entitled, false);
      t.clock.advance(MINUTE_MS);
      await t.send("customer.subscription.updated", sub.object({ status: "active" }), { previousAttributes: { status: "incomplete" } });
      const started = ofType(await t.events(), "subscription.started");
      assert.equal(started.length, 1);
      assert.equal(started[0]?.created, 1795262460, "21 Nov 2026 12:01 UTC: the payment's minute, not the creation's");
      assert.equal((await t.customer("linus@example.com")).body.entitled, true);
    });

    test("running → set to cancel: subscription.cancelled with immediately false; still entitled until the period ends", async () => {
      const t = await paymentsTestbed(dialect);
      const sub = await subscribe(t);
      t.clock.advance(2 * DAY_MS);
      assert.equal(
        await t.send("customer.subscription.updated", sub.object({ cancelAtPeriodEnd: true, cancelAt: sub.periodEnd, canceledAt: t.clock.now() }), {
          previousAttributes: { cancel_at_period_end: false, cancel_at: null, canceled_at: null },
        }),
        "applied",
      );
      const [cancelled, ...more] = ofType(await t.events(), "subscription.cancelled");
      assert.equal(more.length, 0);
      assert.deepEqual(cancelled, {
        id: factId(t, "subscription.cancelled", `${sub.id}|2026-11-23`),
        type: "subscription.cancelled",
        created: 1795435200, // 23 Nov 2026 12:00 UTC, two days in
        livemode: false,
        data: {
          tool: "tabmaster",
          subscription: sub.id,
          plan: "tabmaster:monthly",
          status: "active",
          period_end: "2026-12-21T12:00:00.000Z",
          user_id: null,
          ends_at: "2026-12-21T12:00:00.000Z",
          immediately: false,
        },
      });
      const answer = await t.customer("linus@example.com");
      assert.equal(answer.body.entitled, true);
      assert.deepEqual(answer.body.subscription, {
        status: "active",
        periodEnd: "2026-12-21T12:00:00.000Z",
        cancelAtPeriodEnd: true,
        cancelAt: "2026-12-21T12:00:00.000Z",
      });
      assert.equal((await t.subscription(sub.id))?.cancel_notified_day, "2026-11-23");
    });

    test("the cancellation is sent at most once per UTC day: set, unset and set again the same day is one event; again after midnight is another", async () => {
      const t = await paymentsTestbed(dialect);
      t.clock.set(Date.parse("2026-11-21T23:40:00.000Z"));
      const sub = await subscribe(t);
      const set = () =>
        t.send("customer.subscription.updated", sub.object({ cancelAtPeriodEnd: true }), { previousAttributes: { cancel_at_period_end: false } });
      const unset = () =>
        t.send("customer.subscription.updated", sub.object({ cancelAtPeriodEnd: false }), { previousAttributes: { cancel_at_period_end: true } });
      const cancellations = async () => ofType(await t.events(), "subscription.cancelled");

      t.clock.set(Date.parse("2026-11-21T23:50:00.000Z"));
      await set();
      t.clock.set(Date.parse("2026-11-21T23:55:00.000Z"));
      await unset();
      assert.equal((await t.customer("linus@example.com")).body.subscription.cancelAtPeriodEnd, false);
      t.clock.set(Date.parse("2026-11-21T23:59:59.000Z"));
      await set();
      assert.equal((await cancellations()).length, 1);

      t.clock.set(Date.parse("2026-11-22T00:00:01.000Z"));
      await unset();
      await set();
      t.clock.set(Date.parse("2026-11-22T18:00:00.000Z"));
      await unset();
      await set();
      const sent = await cancellations();
      assert.deepEqual(
        sent.map((e) => [e.id, e.created, e.data.immediately]),
        [
          [factId(t, "subscription.cancelled", `${sub.id}|2026-11-21`), Date.parse("2026-11-21T23:50:00.000Z") / 1000, false],
          [factId(t, "subscription.cancelled", `${sub.id}|2026-11-22`), Date.parse("2026-11-22T00:00:01.000Z") / 1000, false],
        ],
      );
      assert.equal((await t.subscription(sub.id))?.cancel_notified_day, "2026-11-22");
      // An update that changes something else while it is set to cancel is no new cancellation.
      t.clock.set(Date.parse("2026-11-23T09:00:00.000Z"));
      await t.send("customer.subscription.updated", sub.object({ cancelAtPeriodEnd: true }), { previousAttributes: { default_payment_method: "pm_old" } });
      assert.equal((await cancellations()).length, 2);
    });

    test("running → ended: customer.subscription.deleted sends subscription.cancelled with immediately true, once, even delivered twice", async () => {
      const t = await paymentsTestbed(dialect);
      const sub = await subscribe(t);
      t.clock.advance(30 * DAY_MS);
      const ended = t.clock.now();
      const deleted = sub.object({ status: "canceled", canceledAt: ended, endedAt: ended });
      assert.equal(await t.send("customer.subscription.deleted", deleted), "applied");
      assert.equal(await t.send("customer.subscription.deleted", deleted), "applied");
      // A stale update delivered late does not bring it back.
      assert.equal(
        await t.send("customer.subscription.updated", sub.object(), { created: ended - DAY_MS, previousAttributes: { status: "trialing" } }),
        "applied",
      );
      const [cancelled, ...more] = ofType(await t.events(), "subscription.cancelled");
      assert.equal(more.length, 0);
      assert.deepEqual(cancelled, {
        id: factId(t, "subscription.cancelled", `${sub.id}|ended`),
        type: "subscription.cancelled",
        created: 1797854400, // 21 Dec 2026 12:00 UTC, when it ended
        livemode: false,
        data: {
          tool: "tabmaster",
          subscription: sub.id,
          plan: "tabmaster:monthly",
          status: "canceled",
          period_end: "2026-12-21T12:00:00.000Z",
          user_id: null,
          ends_at: "2026-12-21T12:00:00.000Z",
          immediately: true,
        },
      });
      const stored = await t.subscription(sub.id);
      assert.deepEqual([stored?.status, Number(stored?.ended_at)], ["canceled", Date.parse("2026-12-21T12:00:00.000Z")]);
      const answer = await t.customer("linus@example.com");
      assert.deepEqual([answer.body.entitled, answer.body.via], [false, null]);
      // Present whatever the status, so the lapse can be explained.
      assert.equal(answer.body.subscription.status, "canceled");
      assert.deepEqual(await t.list(), []);
    });

    test("running → ended by failed payments: a status that ends it sends subscription.cancelled with immediately true", async () => {
      const t = await paymentsTestbed(dialect);
      const sub = await subscribe(t);
      t.clock.advance(31 * DAY_MS);
      await t.send("customer.subscription.updated", sub.object({ status: "past_due" }), { previousAttributes: { status: "active" } });
      assert.equal((await t.customer("linus@example.com")).body.entitled, true);
      assert.equal(ofType(await t.events(), "subscription.cancelled").length, 0);
      t.clock.advance(14 * DAY_MS);
      await t.send("customer.subscription.updated", sub.object({ status: "unpaid" }), { previousAttributes: { status: "past_due" } });
      const [cancelled] = ofType(await t.events(), "subscription.cancelled");
      assert.deepEqual(
        [cancelled?.data.immediately, cancelled?.data.status, cancelled?.data.ends_at],
        [true, "unpaid", "2027-01-05T12:00:00.000Z"],
        "ends when it turns unpaid, 45 days in",
      );
      assert.equal((await t.customer("linus@example.com")).body.entitled, false);
    });

    test("vendor cancellation: without --now it is set to end (once a day); with --now it ends, and Stripe's later report sends nothing more", async () => {
      const t = await paymentsTestbed(dialect);
      const sub = await subscribe(t);
      t.clock.advance(DAY_MS);
      const scheduled = await cancelSubscription(t.services, { id: sub.id, now: false });
      assert.deepEqual(scheduled, {
        id: sub.id,
        workspaceId: t.ws.workspaceId,
        env: "test",
        status: "active",
        cancel_at_period_end: true,
        ends_at: "2026-12-21T12:00:00.000Z",
        ended: false,
        at_processor: null,
      });
      // Stripe confirms the same day: the same fact, no second event.
      await t.send("customer.subscription.updated", sub.object({ cancelAtPeriodEnd: true }), { previousAttributes: { cancel_at_period_end: false } });
      assert.equal(ofType(await t.events(), "subscription.cancelled").length, 1);
      assert.equal((await t.customer("linus@example.com")).body.entitled, true);

      t.clock.advance(DAY_MS);
      const ended = await cancelSubscription(t.services, { id: sub.id, now: true });
      assert.deepEqual([ended.status, ended.ended, ended.ends_at], ["canceled", true, "2026-11-23T12:00:00.000Z"]);
      assert.equal((await t.customer("linus@example.com")).body.entitled, false);
      t.clock.advance(MINUTE_MS);
      await t.send("customer.subscription.deleted", sub.object({ status: "canceled", canceledAt: t.clock.now(), endedAt: t.clock.now() }));
      const cancellations = ofType(await t.events(), "subscription.cancelled");
      assert.deepEqual(
        cancellations.map((e) => e.data.immediately),
        [false, true],
      );
      await assert.rejects(cancelSubscription(t.services, { id: sub.id, now: true }), /ended at/);
      await assert.rejects(cancelSubscription(t.services, { id: "sub_nope", now: true }), /No subscription/);
    });

    test("a team subscription entitles its buyer to nothing; its seat holders lose access when it ends", async () => {
      const t = await paymentsTestbed(dialect);
      const { assignSeat } = await import("./seat.service.js");
      const sub = await subscribe(t, "it@example.org", { metadata: { ...METADATA, warden_seats: "2" } });
      const started = ofType(await t.events(), "subscription.started")[0];
      assert.equal(started?.data.seats, 2);
      assert.equal(ofType(await t.events(), "purchase.completed")[0]?.data.seats, 2);
      assert.equal((await t.customer("it@example.org")).body.entitled, false);

      await assignSeat(t.services, { team: sub.id, email: "alan@example.org" });
      await assignSeat(t.services, { team: sub.id, email: "barbara@example.org" });
      await assert.rejects(assignSeat(t.services, { team: sub.id, email: "carol@example.org" }), /all in use/);
      assert.equal((await t.customer("alan@example.org")).body.via, "licence");
      assert.equal((await t.list("tabmaster", "?entitled=true")).length, 2);

      t.clock.advance(10 * DAY_MS);
      await t.send("customer.subscription.deleted", sub.object({ status: "canceled", canceledAt: t.clock.now(), endedAt: t.clock.now() }));
      for (const email of ["alan@example.org", "barbara@example.org"]) assert.equal((await t.customer(email)).body.entitled, false, email);
      assert.deepEqual(await t.list("tabmaster", "?entitled=true"), []);
      const [ended] = ofType(await t.events(), "subscription.cancelled");
      assert.deepEqual([ended?.data.immediately, ended?.data.seats], [true, 2]);
      await assert.rejects(assignSeat(t.services, { team: sub.id, email: "carol@example.org" }), /not running/);
    });

    test("a team subscription's quantity at Stripe: seats follow it (fewer: the newest handed out go), MRR moves by expansion and contraction that day", async () => {
      const t = await paymentsTestbed(dialect);
      const { assignSeat } = await import("./seat.service.js");
      const bought = "2026-11-21";
      const sub = await subscribe(t, "it@example.org", { metadata: { ...METADATA, warden_seats: "2" } });
      // Handed out a second apart: which was first decides which seat goes (in the same millisecond, the ids would).
      for (const email of ["alan@example.org", "barbara@example.org"]) {
        await assignSeat(t.services, { team: sub.id, email });
        t.clock.advance(1000);
      }

      t.clock.advance(DAY_MS);
      const raised = "2026-11-22";
      assert.equal(await t.send("customer.subscription.updated", sub.object({ quantity: 4 }), { previousAttributes: { quantity: 2 } }), "applied");
      assert.equal((await t.subscription(sub.id))?.seats, 4);
      await assignSeat(t.services, { team: sub.id, email: "carol@example.org" });
      assert.equal((await t.customer("carol@example.org")).body.entitled, true);

      t.clock.advance(DAY_MS);
      const lowered = "2026-11-23";
      assert.equal(await t.send("customer.subscription.updated", sub.object({ quantity: 1 })), "applied");
      assert.equal((await t.subscription(sub.id))?.seats, 1);
      // The first handed out keeps the one seat paid for; the later ones lose access at once.
      assert.equal((await t.customer("alan@example.org")).body.via, "licence");
      for (const email of ["barbara@example.org", "carol@example.org"]) assert.equal((await t.customer(email)).body.entitled, false, email);
      await assert.rejects(assignSeat(t.services, { team: sub.id, email: "dave@example.org" }), /all in use/);
      assert.equal((await t.customer("it@example.org")).body.entitled, false, "the buyer of a team still holds nothing by it");

      // Stripe's late delivery of an older state (4 seats) changes nothing.
      assert.equal(await t.send("customer.subscription.updated", sub.object({ quantity: 4 }), { created: t.clock.now() - DAY_MS / 2 }), "applied");
      assert.equal((await t.subscription(sub.id))?.seats, 1);

      const { currencies, active } = await subscriptionInsights(t.services.db, insightsQuery(t, bought));
      const eur = currencies.find((c) => c.currency === "eur");
      assert.deepEqual(moved(eur?.movements.new), { [bought]: 1000 });
      assert.deepEqual(moved(eur?.movements.expansion), { [raised]: 1000 });
      assert.deepEqual(moved(eur?.movements.contraction), { [lowered]: 1500 });
      assert.deepEqual(moved(eur?.movements.churn), {});
      assert.equal(eur?.mrr.points.at(-1)?.value, 500);
      assert.equal(active.points.at(-1)?.value, 1);
      assert.deepEqual((await t.events()).map((e) => e.type).sort(), ["purchase.completed", "subscription.started"], "a change of seats sends no event");
    });

    test("a subscription bought for one person stays one whatever quantity Stripe bills, and a quantity of 0 leaves a team's seats", async () => {
      const t = await paymentsTestbed(dialect);
      const bought = "2026-11-21";
      const own = await subscribe(t);
      const team = await subscribe(t, "it@example.org", { metadata: { ...METADATA, warden_seats: "3" } });
      t.clock.advance(DAY_MS);
      assert.equal(await t.send("customer.subscription.updated", own.object({ quantity: 3 })), "applied");
      assert.equal(await t.send("customer.subscription.updated", team.object({ quantity: 0 })), "applied");
      assert.equal((await t.subscription(own.id))?.seats, null);
      assert.equal((await t.subscription(team.id))?.seats, 3);
      assert.equal((await t.customer("linus@example.com")).body.entitled, true);
      const { currencies } = await subscriptionInsights(t.services.db, insightsQuery(t, bought));
      const eur = currencies.find((c) => c.currency === "eur");
      assert.deepEqual([moved(eur?.movements.expansion), moved(eur?.movements.contraction)], [{}, {}]);
      assert.equal(eur?.mrr.points.at(-1)?.value, 500 + 1500);
    });

    test("the quantity is read from an older API version's subscription (its own quantity, no items); several items tell no one count", async () => {
      const t = await paymentsTestbed(dialect);
      const sub = await subscribe(t, "it@example.org", { metadata: { ...METADATA, warden_seats: "2" } });
      t.clock.advance(MINUTE_MS);
      const { items, ...older } = sub.object();
      const seconds = (ms: number) => Math.floor(ms / 1000);
      const period = { current_period_start: seconds(sub.periodStart), current_period_end: seconds(sub.periodEnd) };
      assert.equal(await t.send("customer.subscription.updated", { ...older, ...period, quantity: 5 }), "applied");
      assert.equal((await t.subscription(sub.id))?.seats, 5);
      t.clock.advance(MINUTE_MS);
      const [item] = items.data;
      const twoItems = { ...sub.object(), items: { ...items, data: [item, { ...item, id: stripeId("si"), quantity: 1 }] } };
      assert.equal(await t.send("customer.subscription.updated", twoItems), "applied");
      assert.equal((await t.subscription(sub.id))?.seats, 5);
    });

    test("a price linked to another subscription plan of the product changes the plan, and MRR with it; another product's or a one-time plan's does not", async () => {
      const t = await paymentsTestbed(dialect);
      const bought = "2026-11-21";
      await createPlan(t.services.db, t.clock, {
        workspace: t.ws.slug,
        tool: "tabmaster",
        id: "yearly",
        name: "Yearly",
        billing: "subscription",
        amountCents: 12_000,
        interval: "year",
        currency: "eur",
      });
      const link = (stripeId: string, productKind: "tool" | "bundle", productId: string, planId: string) =>
        insertPlanLink(t.services.db, t.ws.workspaceId, { stripeId, productKind, productId, planId }, t.clock.now());
      await link("price_yearly", "tool", "tabmaster", "yearly");
      await link("price_suite", "bundle", "suite", "suite-lifetime");
      await link("price_lifetime", "tool", "tabmaster", "lifetime");
      const sub = await subscribe(t);

      t.clock.advance(DAY_MS);
      assert.equal(await t.send("customer.subscription.updated", sub.object({ price: "price_suite" })), "applied");
      assert.match(String(await lastReason(t)), /plan of bundle "suite": the subscription keeps its product and plan$/);
      t.clock.advance(MINUTE_MS);
      assert.equal(await t.send("customer.subscription.updated", sub.object({ price: "price_lifetime" })), "applied");
      assert.match(String(await lastReason(t)), /is billed one_time, not subscription: the plan stays$/);
      assert.equal((await t.subscription(sub.id))?.plan_id, "monthly");

      t.clock.advance(DAY_MS);
      const changed = "2026-11-23"; // two days and a minute after the purchase
      assert.equal(await t.send("customer.subscription.updated", sub.object({ price: "price_yearly" })), "applied");
      assert.equal((await t.subscription(sub.id))?.plan_id, "yearly");
      assert.equal((await t.customer("linus@example.com")).body.plan?.id, "yearly", "the customer's plan follows");
      const { currencies } = await subscriptionInsights(t.services.db, insightsQuery(t, bought));
      const eur = currencies.find((c) => c.currency === "eur");
      assert.deepEqual(moved(eur?.movements.expansion), { [changed]: 500 }, "500 a month to 12,000 a year");
      assert.equal(eur?.mrr.points.at(-1)?.value, 1000);
    });

    test("a subscription payment's refund counts in Insights' refunds on its day, parts as they add up, once; access and events are unchanged", async () => {
      const t = await paymentsTestbed(dialect);
      const bought = "2026-11-21";
      const sub = await subscribe(t);
      const paymentIntent = stripeId("pi");
      assert.equal(await t.send("invoice.paid", invoiceObject({ subscription: sub.id, paymentIntent, amountPaid: 500 })), "applied");
      const refund = (amountRefunded: number) => t.send("charge.refunded", chargeObject({ paymentIntent, amount: 500, amountRefunded }));

      t.clock.advance(DAY_MS);
      const partly = "2026-11-22";
      assert.equal(await refund(200), "applied");
      t.clock.advance(MINUTE_MS);
      assert.equal(await refund(200), "applied", "Stripe's second report of the same refund");
      assert.equal(await lastReason(t), "refunded already");
      t.clock.advance(DAY_MS);
      const fully = "2026-11-23";
      assert.equal(await refund(500), "applied");
      assert.equal(await refund(300), "applied", "an older report counts nothing back");

      const [eur] = (await revenueInsights(t.services.db, insightsQuery(t, bought))).currencies;
      assert.deepEqual(moved(eur?.refunds), { [partly]: 200, [fully]: 300 });
      assert.deepEqual(moved(eur?.subscription), { [bought]: 500 });
      assert.equal(eur?.net.total, 0);
      assert.deepEqual(
        eur?.byPlan.map((p) => [p.planId, p.gross, p.refunds]),
        [["monthly", 500, 500]],
      );
      assert.equal((await t.customer("linus@example.com")).body.entitled, true, "the subscription's own events decide access");
      assert.deepEqual((await t.events()).map((e) => e.type).sort(), ["purchase.completed", "subscription.started"]);
      t.clock.advance(MINUTE_MS);
      assert.equal(await t.send("charge.refunded", chargeObject({ paymentIntent: stripeId("pi"), amount: 900, amountRefunded: 900 })), "ignored");
      assert.equal(await lastReason(t), "no licence or subscription invoice was paid with this payment");
    });

    test("a refund reported before its subscription is stored counts, on the refund's day, when the subscription is", async () => {
      const t = await paymentsTestbed(dialect);
      const paid = "2026-11-21";
      const id = stripeId("sub");
      const paymentIntent = stripeId("pi");
      await t.send("invoice.paid", invoiceObject({ subscription: id, paymentIntent, amountPaid: 500 }));
      t.clock.advance(DAY_MS);
      const refunded = "2026-11-22";
      assert.equal(await t.send("charge.refunded", chargeObject({ paymentIntent, amount: 500, amountRefunded: 500 })), "applied");
      t.clock.advance(DAY_MS);
      await subscribe(t, "late@example.org", { id });
      const [eur] = (await revenueInsights(t.services.db, insightsQuery(t, paid))).currencies;
      assert.deepEqual([moved(eur?.subscription), moved(eur?.refunds)], [{ [paid]: 500 }, { [refunded]: 500 }]);
    });

    test("since keeps the first time the tool was held, through an ended subscription and a later one", async () => {
      const t = await paymentsTestbed(dialect);
      const first = await subscribe(t);
      t.clock.advance(40 * DAY_MS);
      await t.send("customer.subscription.deleted", first.object({ status: "canceled", endedAt: t.clock.now() }));
      t.clock.advance(40 * DAY_MS);
      await subscribe(t);
      const [row] = await t.list();
      assert.deepEqual([row?.entitled, row?.since], [true, "2026-11-21T12:00:00.000Z"]);
    });
  });
}
