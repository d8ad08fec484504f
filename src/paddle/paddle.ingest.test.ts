// Paddle Billing's notifications in (issue 47, points 2 and 4), against a stand-in written
// from Paddle's public API reference (test-support/paddle.ts), on both engines: the
// signature (a wrong secret, a tampered body, a stale or future timestamp, a replay), and
// a buyer's life through webhooks ending in the same licence and subscription states and
// the same Warden events as Stripe's twin tests (billing/*.lifecycle.test.ts).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Environment, Paddle } from "@paddle/paddle-node-sdk";
import { sql } from "kysely";
import { DAY_MS, MINUTE_MS } from "../clock.js";
import { ensurePerson } from "../customers/person.store.js";
import { derivedId } from "../ids.js";
import { connectStripe } from "../stripe/stripe-account.service.js";
import { DIALECTS } from "../test-support/harness.js";
import {
  adjustmentObject,
  connectTestPaddle,
  paddleEvent,
  paddleId,
  paddleSignature,
  paddleTestbed,
  sendPaddleEvent,
  subscriptionObject,
  transactionObject,
} from "../test-support/paddle.js";
import { ofType } from "../test-support/stripe.js";
import { connectPaddle } from "./paddle-account.service.js";

type Testbed = Awaited<ReturnType<typeof paddleTestbed>>;

/** Ada, signed in: Warden's checkout carries her person id as warden_account. */
async function ada(t: Testbed) {
  return ensurePerson(t.services.db, t.ws.workspaceId, "test", "ada@example.com", t.clock.now());
}

const eventId = (t: Testbed, type: string, fact: string) => derivedId("evt", `${t.ws.workspaceId}|test|${type}|${fact}`);

for (const dialect of DIALECTS) {
  describe(`Paddle ingest (${dialect})`, () => {
    test("a signed notification is applied; a wrong secret, a tampered body, no or a malformed header, a stale or future timestamp answer 400 and change nothing", async () => {
      const t = await paddleTestbed(dialect);
      const person = await ada(t);
      const now = t.clock.now();
      const event = paddleEvent(
        "transaction.completed",
        transactionObject({ customData: { warden_tool: "tabmaster", warden_plan: "lifetime", warden_account: person.id }, total: 4900, billedAt: now }),
        { now },
      );
      const payload = JSON.stringify(event);
      const refusals: [string, { signedAt?: number; signatureSecret?: string; header?: string }, RegExp][] = [
        ["wrong secret", { signatureSecret: `pdl_ntfset_${"x".repeat(40)}` }, /does not match/],
        ["stale by 61 s", { signedAt: now - 61_000 }, /tolerance/],
        ["61 s in the future", { signedAt: now + 61_000 }, /tolerance/],
        ["no header", { header: "" }, /missing/],
        ["no h1", { header: `ts=${Math.floor(now / 1000)}` }, /malformed/],
        ["h1 not hex", { header: `ts=${Math.floor(now / 1000)};h1=${"z".repeat(64)}` }, /malformed/],
        ["two ts", { header: `ts=1;ts=2;h1=${"a".repeat(64)}` }, /malformed/],
      ];
      for (const [what, options, message] of refusals) {
        const response = await sendPaddleEvent(t.api, t.ws, t.secret, event, { now, ...options });
        assert.equal(response.statusCode, 400, `${what}: ${response.body}`);
        assert.equal(response.json().error.type, "invalid_request_error", what);
        assert.equal(response.json().error.param, "Paddle-Signature", what);
        assert.match(response.json().error.message, message, what);
      }
      // Signed over one text, another sent: the raw bytes are what is verified.
      const tampered = await sendPaddleEvent(t.api, t.ws, t.secret, payload.replace('"grand_total":"4900"', '"grand_total":"1"'), {
        now,
        header: paddleSignature(payload, t.secret, now),
      });
      assert.equal(tampered.statusCode, 400, tampered.body);
      assert.deepEqual(await t.events(), []);
      assert.deepEqual(await t.licences(), []);
      assert.deepEqual(await t.reasons(), []);

      // Signed 59 s ago by the injected clock: within the tolerance, applied.
      const fine = await sendPaddleEvent(t.api, t.ws, t.secret, event, { now, signedAt: now - 59_000 });
      assert.equal(fine.statusCode, 200, fine.body);
      assert.deepEqual(fine.json(), { received: true, outcome: "applied" });
      assert.equal((await t.licences()).length, 1);
    });

    test("Paddle's own SDK accepts the stand-in's signature: the scheme is Paddle's", async () => {
      const secret = `pdl_ntfset_${"k".repeat(40)}`;
      const body = JSON.stringify({ event_id: "evt_1", event_type: "transaction.completed", occurred_at: new Date().toISOString(), data: {} });
      // Through a client, as Paddle documents it: the bare Webhooks class has no crypto and answers false to everything.
      const { webhooks } = new Paddle("pdl_sdbx_apikey_stand_in", { environment: Environment.sandbox });
      // The SDK measures its 5 s against the machine's clock, so this one is signed by it.
      assert.equal(await webhooks.isSignatureValid(body, secret, paddleSignature(body, secret, Date.now())), true);
      assert.equal(await webhooks.isSignatureValid(body, secret, paddleSignature(`${body} `, secret, Date.now())), false);
    });

    test("a replay of an event already handled answers duplicate and changes nothing, even signed anew later", async () => {
      const t = await paddleTestbed(dialect);
      const person = await ada(t);
      const event = paddleEvent(
        "transaction.completed",
        transactionObject({
          customData: { warden_tool: "tabmaster", warden_plan: "lifetime", warden_account: person.id },
          total: 4900,
          billedAt: t.clock.now(),
        }),
        { now: t.clock.now() },
      );
      const first = await sendPaddleEvent(t.api, t.ws, t.secret, event, { now: t.clock.now() });
      assert.deepEqual(first.json(), { received: true, outcome: "applied" });
      t.clock.advance(DAY_MS);
      const replay = await sendPaddleEvent(t.api, t.ws, t.secret, event, { now: t.clock.now() });
      assert.equal(replay.statusCode, 200, replay.body);
      assert.deepEqual(replay.json(), { received: true, outcome: "duplicate" });
      // The same transaction told again under another event id (Paddle's retry of a new event) makes no second licence.
      const again = await sendPaddleEvent(t.api, t.ws, t.secret, { ...event, event_id: paddleId("evt") }, { now: t.clock.now() });
      assert.deepEqual(again.json(), { received: true, outcome: "applied" });
      assert.equal((await t.licences()).length, 1);
      assert.equal(ofType(await t.events(), "purchase.completed").length, 1);
    });

    test("an environment not connected to Paddle, an unknown workspace, or a body that is no Paddle event is refused", async () => {
      const t = await paddleTestbed(dialect);
      const other = paddleEvent("transaction.completed", {}, { now: t.clock.now() });
      const unknown = await t.api.request({ method: "POST", url: "/processor/paddle/nobody", headers: { "content-type": "application/json" }, payload: "{}" });
      assert.equal(unknown.statusCode, 404, unknown.body);
      const notEvent = await sendPaddleEvent(t.api, t.ws, t.secret, JSON.stringify({ hello: "world" }), { now: t.clock.now() });
      assert.equal(notEvent.statusCode, 400, notEvent.body);
      assert.match(notEvent.json().error.message, /not a Paddle event: no event_id/);
      const badTime = await sendPaddleEvent(t.api, t.ws, t.secret, { ...other, occurred_at: "yesterday" }, { now: t.clock.now() });
      assert.equal(badTime.statusCode, 400, badTime.body);
      assert.match(badTime.json().error.message, /occurred_at "yesterday" is not an RFC 3339 time/);
      // The live environment is not connected: a body signed with some other secret is refused by the test one's.
      const live = await sendPaddleEvent(t.api, t.ws, t.secret, other, { now: t.clock.now(), signatureSecret: `pdl_ntfset_${"l".repeat(40)}` });
      assert.equal(live.statusCode, 400, live.body);
      assert.deepEqual(await t.reasons(), []);
    });

    test("one processor per environment: Paddle is refused where Stripe is connected, and Stripe where Paddle is", async () => {
      const t = await paddleTestbed(dialect);
      await assert.rejects(connectStripe(t.services, { workspace: t.ws.slug, env: "test", webhookSecret: `whsec_${"s".repeat(32)}` }), /connected to Paddle/);
      await connectStripe(t.services, { workspace: t.ws.slug, env: "live", webhookSecret: `whsec_${"s".repeat(32)}` });
      await assert.rejects(connectTestPaddle(t.services, t.ws, "live"), /connected to Stripe: one processor per environment/);
      await sql`delete from stripe_accounts where env = 'live'`.execute(t.services.db);
      // The price paid is checked against the plan named (migration 050): live is connected.
      await connectTestPaddle(t.services, t.ws, "live");
      await assert.rejects(connectStripe(t.services, { workspace: t.ws.slug, env: "live", webhookSecret: `whsec_${"s".repeat(32)}` }), /connected to Paddle/);
      await assert.rejects(connectPaddle(t.services, { workspace: t.ws.slug, env: "test", webhookSecret: "whsec_abcdefghijkl" }), /pdl_ntfset_/);
      await assert.rejects(
        connectPaddle(t.services, {
          workspace: t.ws.slug,
          env: "test",
          webhookSecret: `pdl_ntfset_${"k".repeat(20)}`,
          apiKey: `pdl_live_apikey_${"a".repeat(20)}`,
        }),
        /live key; the test environment needs a sandbox key/,
      );
    });

    test("a one-time purchase, a partial refund, then the rest: the licence stands, then is revoked with payment.refunded", async () => {
      const t = await paddleTestbed(dialect);
      const person = await ada(t);
      const transaction = transactionObject({
        customData: { warden_tool: "tabmaster", warden_plan: "lifetime", warden_account: person.id },
        total: 4900,
        currency: "EUR",
        billedAt: t.clock.now(),
      });
      assert.equal(await t.send("transaction.completed", transaction), "applied");
      const [licence] = await t.licences();
      const [purchase, ...more] = ofType(await t.events(), "purchase.completed");
      assert.equal(more.length, 0);
      assert.deepEqual(purchase, {
        id: eventId(t, "purchase.completed", transaction.id),
        type: "purchase.completed",
        created: 1795262400, // 21 Nov 2026 12:00 UTC
        livemode: false,
        data: {
          tool: "tabmaster",
          kind: "licence",
          plan: "tabmaster:lifetime",
          email: "ada@example.com",
          amount: 4900,
          currency: "eur",
          payment_intent: transaction.id,
          checkout_session: transaction.id,
          account: "linked",
          user_id: person.id,
        },
      });
      assert.equal((await t.customer("ada@example.com")).body.entitled, true);

      t.clock.advance(DAY_MS);
      // A refund waits for Paddle's approval: nothing changes until it is approved.
      const adjustmentId = paddleId("adj");
      const pending = { id: adjustmentId, action: "refund" as const, transactionId: transaction.id, total: 1000, currency: "EUR", at: t.clock.now() };
      assert.equal(await t.send("adjustment.created", adjustmentObject({ ...pending, status: "pending_approval" })), "ignored");
      assert.equal(await t.send("adjustment.updated", adjustmentObject(pending)), "applied");
      // The same approval reported again (another event id) counts once.
      assert.equal(await t.send("adjustment.updated", adjustmentObject(pending)), "ignored");
      const [partly] = await t.licences();
      assert.deepEqual([partly?.status, Number(partly?.refunded_cents)], ["active", 1000]);

      t.clock.advance(DAY_MS);
      assert.equal(
        await t.send(
          "adjustment.created",
          adjustmentObject({ action: "refund", transactionId: transaction.id, total: 3900, currency: "EUR", at: t.clock.now() }),
        ),
        "applied",
      );
      const [revoked] = await t.licences();
      assert.equal(revoked?.status, "revoked");
      const [refund, ...others] = ofType(await t.events(), "payment.refunded");
      assert.equal(others.length, 0);
      assert.deepEqual(refund?.data, {
        tool: "tabmaster",
        email: "ada@example.com",
        licence: licence?.id,
        payment_intent: transaction.id,
        amount: 4900,
        currency: "eur",
      });
      assert.equal((await t.customer("ada@example.com")).body.entitled, false);
    });

    test("a chargeback suspends the licence with payment.disputed; its reversal makes it active again with dispute.closed", async () => {
      const t = await paddleTestbed(dialect);
      const person = await ada(t);
      const transaction = transactionObject({
        customData: { warden_tool: "tabmaster", warden_plan: "lifetime", warden_account: person.id },
        total: 4900,
        billedAt: t.clock.now(),
      });
      await t.send("transaction.completed", transaction);
      t.clock.advance(DAY_MS);
      assert.equal(
        await t.send("adjustment.created", adjustmentObject({ action: "chargeback", transactionId: transaction.id, total: 4900, at: t.clock.now() })),
        "applied",
      );
      assert.equal((await t.licences())[0]?.status, "suspended");
      const [disputed] = ofType(await t.events(), "payment.disputed");
      assert.deepEqual(disputed, {
        id: eventId(t, "payment.disputed", transaction.id),
        type: "payment.disputed",
        created: 1795348800, // 22 Nov 2026 12:00 UTC
        livemode: false,
        data: {
          tool: "tabmaster",
          email: "ada@example.com",
          licence: (await t.licences())[0]?.id,
          payment_intent: transaction.id,
          dispute: transaction.id,
          reason: "fraudulent",
          status: "needs_response",
          respond_by: null,
          amount: 4900,
          currency: "usd",
        },
      });
      assert.equal((await t.customer("ada@example.com")).body.entitled, false);
      // A chargeback warning changes nothing.
      assert.equal(
        await t.send("adjustment.created", adjustmentObject({ action: "chargeback_warning", transactionId: transaction.id, total: 4900, at: t.clock.now() })),
        "ignored",
      );
      t.clock.advance(10 * DAY_MS);
      assert.equal(
        await t.send("adjustment.created", adjustmentObject({ action: "chargeback_reverse", transactionId: transaction.id, total: 4900, at: t.clock.now() })),
        "applied",
      );
      assert.equal((await t.licences())[0]?.status, "active");
      const [closed] = ofType(await t.events(), "dispute.closed");
      assert.equal(closed?.data.status, "won");
      assert.equal((await t.customer("ada@example.com")).body.entitled, true);
    });

    test("a subscription's life: started, paid, seats changed, set to cancel, resumed, past due, cancelled; the same events as Stripe's", async () => {
      const t = await paddleTestbed(dialect);
      const person = await ada(t);
      const start = t.clock.now();
      const sub = paddleId("sub");
      const customData = { warden_tool: "tabmaster", warden_plan: "monthly", warden_account: person.id, warden_seats: "3" };
      const state = (o: Partial<Parameters<typeof subscriptionObject>[0]> = {}) =>
        subscriptionObject({ id: sub, status: "active", customData, startedAt: start, periodEnd: start + 30 * DAY_MS, quantity: 3, ...o });

      assert.equal(await t.send("subscription.created", state()), "applied");
      assert.equal(await t.send("subscription.activated", state()), "applied");
      assert.equal(
        await t.send("transaction.completed", transactionObject({ customData, subscriptionId: sub, total: 1500, billedAt: start, origin: "web" })),
        "applied",
      );
      const stored = await t.subscription(sub);
      assert.deepEqual([stored?.status, stored?.seats, stored?.person_id], ["active", 3, person.id]);
      assert.deepEqual(
        ofType(await t.events(), "subscription.started").map((e) => [e.id, e.data.subscription, e.data.seats]),
        [[eventId(t, "subscription.started", sub), sub, 3]],
      );
      assert.equal(ofType(await t.events(), "purchase.completed").length, 1);

      t.clock.advance(DAY_MS);
      assert.equal(await t.send("subscription.updated", state({ quantity: 5 })), "applied");
      assert.equal((await t.subscription(sub))?.seats, 5);

      t.clock.advance(DAY_MS);
      assert.equal(await t.send("subscription.updated", state({ quantity: 5, cancelAt: start + 30 * DAY_MS })), "applied");
      assert.equal(Number((await t.subscription(sub))?.cancel_at_period_end), 1);
      const [scheduled] = ofType(await t.events(), "subscription.cancelled");
      assert.deepEqual(
        [scheduled?.id, scheduled?.data.immediately, scheduled?.data.ends_at],
        [eventId(t, "subscription.cancelled", `${sub}|2026-11-23`), false, "2026-12-21T12:00:00.000Z"],
      );

      t.clock.advance(DAY_MS);
      assert.equal(await t.send("subscription.resumed", state({ quantity: 5 })), "applied");
      assert.equal(Number((await t.subscription(sub))?.cancel_at_period_end), 0);

      t.clock.set(start + 30 * DAY_MS + MINUTE_MS);
      assert.equal(await t.send("subscription.past_due", state({ quantity: 5, status: "past_due" })), "applied");
      assert.equal((await t.subscription(sub))?.status, "past_due");

      t.clock.advance(DAY_MS);
      assert.equal(await t.send("subscription.canceled", state({ quantity: 5, status: "canceled", canceledAt: t.clock.now() })), "applied");
      const ended = await t.subscription(sub);
      assert.deepEqual([ended?.status, Number(ended?.ended_at)], ["canceled", t.clock.now()]);
      const cancellations = ofType(await t.events(), "subscription.cancelled");
      assert.deepEqual(
        cancellations.map((e) => [e.id, e.data.immediately]),
        [
          [eventId(t, "subscription.cancelled", `${sub}|2026-11-23`), false],
          [eventId(t, "subscription.cancelled", `${sub}|ended`), true],
        ],
      );
    });

    test("an unknown plan, no Warden custom_data, or no signed-in buyer: acknowledged, recorded as ignored with the reason, nothing made", async () => {
      const t = await paddleTestbed(dialect);
      const person = await ada(t);
      const at = t.clock.now();
      assert.equal(
        await t.send(
          "transaction.completed",
          transactionObject({ customData: { warden_tool: "tabmaster", warden_plan: "gold", warden_account: person.id }, total: 100, billedAt: at }),
        ),
        "ignored",
      );
      assert.equal(await t.send("transaction.completed", transactionObject({ customData: null, total: 100, billedAt: at })), "ignored");
      assert.equal(
        await t.send(
          "subscription.created",
          subscriptionObject({
            id: paddleId("sub"),
            status: "active",
            customData: { warden_tool: "tabmaster", warden_plan: "monthly" },
            startedAt: at,
            periodEnd: at + 30 * DAY_MS,
          }),
        ),
        "ignored",
      );
      assert.equal(await t.send("customer.created", { id: paddleId("ctm"), email: "ada@example.com" }), "ignored");
      const reasons = await t.reasons();
      assert.deepEqual(
        reasons.map((r) => [r.type, r.outcome]),
        [
          ["transaction.completed", "ignored"],
          ["transaction.completed", "ignored"],
          ["subscription.created", "ignored"],
          ["customer.created", "ignored"],
        ],
      );
      assert.match(reasons[0]?.reason ?? "", /gold/);
      assert.match(reasons[1]?.reason ?? "", /no warden_tool or warden_bundle/);
      assert.match(reasons[2]?.reason ?? "", /no signed-in buyer/);
      assert.equal(reasons[3]?.reason, "Warden does not use customer.created events");
      assert.deepEqual(await t.licences(), []);
      assert.deepEqual(await t.events(), []);
    });
  });
}
