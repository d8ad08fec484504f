// The specification's Subscription table, row by row, driven by Stripe events signed as
// Stripe signs them (in order and out of it) and by the vendor's cancellation: stored
// state, the API's answers and the emitted events' bodies, on both engines.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DAY_MS, MINUTE_MS, toIso } from "../clock.js";
import { ensurePerson } from "../customers/person.store.js";
import { derivedId } from "../ids.js";
import { DIALECTS } from "../test-support/harness.js";
import { type Metadata, ofType, paymentsTestbed, type SubscriptionShape, stripeId, subscriptionObject, subscriptionSession } from "../test-support/stripe.js";
import { cancelSubscription } from "./subscription.service.js";

const MONTHLY = { id: "monthly", name: "Monthly", billing: "subscription", amountCents: 500, currency: "eur", interval: "month" };
const METADATA: Metadata = { warden_tool: "tabmaster", warden_plan: "monthly" };
const sec = (ms: number) => Math.floor(ms / 1000) * 1000;

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
        period_end: toIso(sec(sub.periodEnd)),
        user_id: null,
      };
      assert.deepEqual(ofType(events, "purchase.completed")[0], {
        id: factId(t, "purchase.completed", sub.id),
        type: "purchase.completed",
        created: Math.floor(t.clock.now() / 1000),
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
        created: Math.floor(t.clock.now() / 1000),
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
          paid_at: toIso(sec(sub.periodStart)),
          plan: MONTHLY,
          subscription: { status: "active", periodEnd: facts.period_end, cancelAtPeriodEnd: false, cancelAt: null },
          trial: null,
        },
      });
      assert.deepEqual(await t.list(), [
        { email: "linus@example.com", account: false, entitled: true, via: "subscription", since: toIso(sec(sub.startedAt)), last_active_at: null, devices: 0 },
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
      const renewedEnd = sub.periodEnd;
      assert.equal(
        await t.send("customer.subscription.updated", sub.object({ status: "active" }), { created: later, previousAttributes: { status: "incomplete" } }),
        "applied",
      );
      assert.equal(await t.send("customer.subscription.created", sub.object(), { created }), "applied");
      const stored = await t.subscription(sub.id);
      assert.deepEqual([stored?.status, Number(stored?.current_period_end), Number(stored?.processor_at)], ["active", sec(renewedEnd), sec(later)]);
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
      assert.equal(started[0]?.created, Math.floor(t.clock.now() / 1000));
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
        id: factId(t, "subscription.cancelled", `${sub.id}|${toIso(t.clock.now()).slice(0, 10)}`),
        type: "subscription.cancelled",
        created: Math.floor(t.clock.now() / 1000),
        livemode: false,
        data: {
          tool: "tabmaster",
          subscription: sub.id,
          plan: "tabmaster:monthly",
          status: "active",
          period_end: toIso(sec(sub.periodEnd)),
          user_id: null,
          ends_at: toIso(sec(sub.periodEnd)),
          immediately: false,
        },
      });
      const answer = await t.customer("linus@example.com");
      assert.equal(answer.body.entitled, true);
      assert.deepEqual(answer.body.subscription, {
        status: "active",
        periodEnd: toIso(sec(sub.periodEnd)),
        cancelAtPeriodEnd: true,
        cancelAt: toIso(sec(sub.periodEnd)),
      });
      assert.equal((await t.subscription(sub.id))?.cancel_notified_day, toIso(t.clock.now()).slice(0, 10));
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
        created: Math.floor(ended / 1000),
        livemode: false,
        data: {
          tool: "tabmaster",
          subscription: sub.id,
          plan: "tabmaster:monthly",
          status: "canceled",
          period_end: toIso(sec(sub.periodEnd)),
          user_id: null,
          ends_at: toIso(sec(ended)),
          immediately: true,
        },
      });
      const stored = await t.subscription(sub.id);
      assert.deepEqual([stored?.status, Number(stored?.ended_at)], ["canceled", sec(ended)]);
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
      assert.deepEqual([cancelled?.data.immediately, cancelled?.data.status, cancelled?.data.ends_at], [true, "unpaid", toIso(sec(t.clock.now()))]);
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
        ends_at: toIso(sec(sub.periodEnd)),
        ended: false,
        at_stripe: false,
      });
      // Stripe confirms the same day: the same fact, no second event.
      await t.send("customer.subscription.updated", sub.object({ cancelAtPeriodEnd: true }), { previousAttributes: { cancel_at_period_end: false } });
      assert.equal(ofType(await t.events(), "subscription.cancelled").length, 1);
      assert.equal((await t.customer("linus@example.com")).body.entitled, true);

      t.clock.advance(DAY_MS);
      const ended = await cancelSubscription(t.services, { id: sub.id, now: true });
      assert.deepEqual([ended.status, ended.ended, ended.ends_at], ["canceled", true, toIso(t.clock.now())]);
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

    test("since keeps the first time the tool was held, through an ended subscription and a later one", async () => {
      const t = await paymentsTestbed(dialect);
      const first = await subscribe(t);
      const firstHeld = sec(t.clock.now());
      t.clock.advance(40 * DAY_MS);
      await t.send("customer.subscription.deleted", first.object({ status: "canceled", endedAt: t.clock.now() }));
      t.clock.advance(40 * DAY_MS);
      await subscribe(t);
      const [row] = await t.list();
      assert.deepEqual([row?.entitled, row?.since], [true, toIso(firstHeld)]);
    });
  });
}
