import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Value } from "@sinclair/typebox/value";
import { isId } from "../ids.js";
import { describeEventTypes, EVENT_TYPES, EventEnvelope, eventSchema, isEventType, serializeEvent } from "./event-types.js";
import { exampleEvent } from "./examples.js";

const NOW = Date.UTC(2026, 10, 21, 12, 0, 0, 250);
const KINDS = ["licence", "subscription"] as const;

function assertValid(schema: Parameters<typeof Value.Check>[0], value: unknown) {
  const errors = [...Value.Errors(schema, value)].map((e) => `${e.path}: ${e.message}`);
  assert.deepEqual(errors, []);
}

describe("event catalogue", () => {
  test("the six types of the specification, in its order, then usage's, each described on one line", () => {
    assert.deepEqual(EVENT_TYPES, [
      "purchase.completed",
      "subscription.started",
      "subscription.cancelled",
      "payment.refunded",
      "payment.disputed",
      "dispute.closed",
      "usage.allowance_ran_out",
    ]);
    const described = describeEventTypes();
    assert.deepEqual(
      described.map((d) => d.type),
      EVENT_TYPES,
    );
    for (const { description } of described) assert.match(description, /^[^\n]{10,100}$/);
  });

  test("the seven types are event types, and nothing else is", () => {
    for (const type of EVENT_TYPES) assert.equal(isEventType(type), true);
    for (const other of ["", "purchase", "payment.refunded ", "PAYMENT.REFUNDED", "constructor", "toString"]) assert.equal(isEventType(other), false);
  });

  test("the envelope union ties data to its type and refuses extra fields", () => {
    const refund = exampleEvent("payment.refunded", { livemode: false, now: NOW });
    assertValid(EventEnvelope, refund);
    assert.equal(Value.Check(EventEnvelope, { ...refund, type: "payment.disputed" }), false);
    assert.equal(Value.Check(EventEnvelope, { ...refund, extra: 1 }), false);
    assert.equal(Value.Check(EventEnvelope, { ...refund, data: { ...refund.data, extra: 1 } }), false);
    assert.equal(Value.Check(EventEnvelope, { ...refund, created: 1.5 }), false);
    assert.equal(Value.Check(EventEnvelope, { ...refund, id: "evt_short" }), false);
  });
});

describe("example events", () => {
  for (const type of EVENT_TYPES) {
    for (const kind of KINDS) {
      for (const livemode of [false, true]) {
        test(`${type} (${kind}, livemode ${livemode}) validates against its schema`, () => {
          const event = exampleEvent(type, { livemode, now: NOW, kind });
          assertValid(eventSchema(type), event);
          assert.equal(event.type, type);
          assert.equal(event.livemode, livemode);
          assert.equal(event.created, Math.floor(NOW / 1000));
          assert.ok(isId("evt", event.id), event.id);
        });
      }
    }
  }

  test("every example is a new fact with its own id", () => {
    const ids = new Set(EVENT_TYPES.map((type) => exampleEvent(type, { livemode: false, now: NOW }).id));
    assert.equal(ids.size, EVENT_TYPES.length);
  });

  test("a licence purchase: bought signed out, paid in minor units, processor ids shaped like Stripe's", () => {
    for (const livemode of [false, true]) {
      const { data } = exampleEvent("purchase.completed", { livemode, now: NOW });
      assert.equal(data.kind, "licence");
      assert.equal(data.account, "none");
      assert.equal(data.user_id, null);
      assert.equal(typeof data.email, "string");
      assert.ok(Number.isInteger(data.amount) && (data.amount ?? 0) > 0);
      assert.match(String(data.payment_intent), /^pi_[0-9A-Za-z]{24}$/);
      assert.match(String(data.checkout_session), livemode ? /^cs_live_[0-9A-Za-z]{58}$/ : /^cs_test_[0-9A-Za-z]{58}$/);
      assert.equal(data.subscription, undefined);
    }
  });

  test("a subscription purchase: email, amount, currency and the licence's processor ids are null; the subscription's facts are there", () => {
    const { data } = exampleEvent("purchase.completed", { livemode: false, now: NOW, kind: "subscription" });
    assert.equal(data.kind, "subscription");
    assert.equal(data.email, null);
    assert.equal(data.amount, null);
    assert.equal(data.currency, null);
    assert.equal(data.payment_intent, null);
    assert.equal(data.checkout_session, null);
    assert.equal(data.account, "linked");
    assert.match(String(data.subscription), /^sub_[0-9A-Za-z]{24}$/);
    assert.equal(data.status, "active");
    assert.ok(isId("psn", String(data.user_id)));
  });

  test("subscription events: processor id, ISO dates in UTC with milliseconds, a cancellation running out", () => {
    const started = exampleEvent("subscription.started", { livemode: false, now: NOW }).data;
    assert.match(started.subscription, /^sub_[0-9A-Za-z]{24}$/);
    assert.equal(started.period_end, "2026-12-21T12:00:00.000Z");

    const cancelled = exampleEvent("subscription.cancelled", { livemode: false, now: NOW }).data;
    assert.equal(cancelled.status, "active");
    assert.equal(cancelled.immediately, false);
    assert.equal(cancelled.ends_at, cancelled.period_end);
  });

  test("refunds and disputes name the licence; a subscription's disputed payment has no email or licence", () => {
    const refund = exampleEvent("payment.refunded", { livemode: false, now: NOW }).data;
    assert.ok(isId("lic", refund.licence), refund.licence);
    for (const type of ["payment.disputed", "dispute.closed"] as const) {
      const licence = exampleEvent(type, { livemode: false, now: NOW }).data;
      assert.ok(isId("lic", String(licence.licence)));
      assert.match(licence.dispute, /^du_[0-9A-Za-z]{24}$/);
      const subscription = exampleEvent(type, { livemode: false, now: NOW, kind: "subscription" }).data;
      assert.equal(subscription.email, null);
      assert.equal(subscription.licence, null);
    }
  });
});

describe("an event's body as sent", () => {
  for (const type of EVENT_TYPES) {
    for (const kind of KINDS) {
      test(`${type} (${kind}) parses back to the same event, envelope keys in order`, () => {
        const event = exampleEvent(type, { livemode: true, now: NOW, kind });
        const body = serializeEvent(event);
        assert.deepEqual(JSON.parse(body), event);
        assert.deepEqual(Object.keys(JSON.parse(body)), ["id", "type", "created", "livemode", "data"]);
      });
    }
  }

  test("data keys follow the schema whatever order they were built in, so one fact makes one body", () => {
    const event = exampleEvent("payment.refunded", { livemode: false, now: NOW });
    const reversed = { ...event, data: Object.fromEntries(Object.entries(event.data).reverse()) };
    assert.equal(serializeEvent(reversed), serializeEvent(event));
    assert.deepEqual(Object.keys(JSON.parse(serializeEvent(reversed)).data), ["tool", "email", "licence", "payment_intent", "amount", "currency"]);
  });
});
