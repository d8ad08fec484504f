import { type Static, type TProperties, Type } from "@sinclair/typebox";
import { Nullable } from "../http/common.schema.js";

// The six webhook events of the specification (Events part), field for field, and
// usage.allowance_ran_out (issue 46). What we send is exactly these fields, so the
// schemas refuse extra ones; receivers are told new fields may appear within v1
// (decisions.md), never that one is removed or retyped.

// A pattern rather than `format: "date-time"`: TypeBox's Value.Check refuses unregistered
// formats, and the pattern also pins the decided form (UTC, milliseconds).
const EventDate = Type.String({ pattern: "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$", examples: ["2026-11-21T12:00:00.000Z"] });
const Money = Type.Integer({ minimum: 0, description: "Minor units of the currency" });
const Currency = Type.String({ pattern: "^[a-z]{3}$", description: "ISO 4217 code in lower case, as the payment processor gives it", examples: ["eur"] });
const Tool = Type.String({ description: "The tool's id" });
const Plan = Type.String({ description: "<tool>:<plan id>, or the bare plan id for the default plan", examples: ["tabmaster:pro", "pro"] });
const UserId = Nullable(Type.String({ description: "The buyer's id in the workspace; null for a purchase made without an account" }));
const Seats = Type.Integer({ minimum: 1, description: "Team purchase: number of seats" });
const SubscriptionStatus = Type.String({ description: "The payment processor's status", examples: ["active", "trialing"] });
const DisputeStatus = Type.String({ description: "The payment processor's status", examples: ["needs_response", "under_review"] });

const Subscription = {
  tool: Tool,
  subscription: Type.String({ description: "The payment processor's subscription id" }),
  plan: Plan,
  status: SubscriptionStatus,
  period_end: Nullable(EventDate),
  user_id: UserId,
};

const Dispute = {
  tool: Tool,
  email: Nullable(Type.String({ description: "null when the disputed payment was a subscription's" })),
  licence: Nullable(Type.String({ description: "The licence's id; null when the disputed payment was a subscription's" })),
  payment_intent: Type.String(),
  dispute: Type.String({ description: "The payment processor's dispute id" }),
};

function envelope<T extends string, D extends TProperties>(type: T, description: string, data: D) {
  const schema = Type.Object(
    {
      id: Type.String({ pattern: "^evt_[0-9A-Za-z]{24}$", description: "One per fact; the same fact reported twice keeps its id" }),
      type: Type.Literal(type),
      created: Type.Integer({ minimum: 0, description: "Epoch seconds" }),
      livemode: Type.Boolean({ description: "false when from the test environment" }),
      data: Type.Object(data, { additionalProperties: false }),
    },
    { title: type, additionalProperties: false },
  );
  // Set here rather than in the options so its type says it is always there.
  return Object.assign(schema, { description });
}

/** Every event: a union on `type`, in the specification's order. */
export const EventEnvelope = Type.Union([
  envelope("purchase.completed", "A checkout was paid: a licence was created or a subscription began", {
    tool: Tool,
    kind: Type.Union([Type.Literal("licence"), Type.Literal("subscription")]),
    plan: Plan,
    email: Nullable(Type.String({ description: "Address at checkout; null for a subscription" })),
    amount: Nullable(Money),
    currency: Nullable(Currency),
    payment_intent: Nullable(Type.String({ description: "The payment processor's id, for a licence" })),
    checkout_session: Nullable(Type.String({ description: "The payment processor's id, for a licence" })),
    account: Type.Union([Type.Literal("linked"), Type.Literal("none")], { description: "Bought signed in or not" }),
    seats: Type.Optional(Seats),
    // The same facts as subscription.started, so the same nullability: the table names
    // them "string", but period_end and user_id are nullable there.
    subscription: Type.Optional(Subscription.subscription),
    status: Type.Optional(SubscriptionStatus),
    period_end: Type.Optional(Subscription.period_end),
    user_id: Type.Optional(UserId),
  }),
  envelope("subscription.started", "A subscription began; sent alongside purchase.completed", {
    ...Subscription,
    seats: Type.Optional(Seats),
  }),
  envelope("subscription.cancelled", "A subscription was set to end, or ended", {
    ...Subscription,
    ends_at: Nullable(EventDate),
    immediately: Type.Boolean({ description: "It has already ended" }),
    seats: Type.Optional(Seats),
  }),
  envelope("payment.refunded", "A payment was refunded in full; the licence is revoked", {
    tool: Tool,
    email: Type.String(),
    licence: Type.String({ description: "The licence's id, as the Customers page shows it" }),
    payment_intent: Type.String(),
    amount: Money,
    currency: Currency,
  }),
  envelope("payment.disputed", "A buyer disputed a payment; the licence is suspended while the dispute is open", {
    ...Dispute,
    reason: Type.String({ description: "The payment processor's reason", examples: ["fraudulent", "product_not_received"] }),
    status: DisputeStatus,
    respond_by: Nullable(EventDate),
    amount: Money,
    currency: Currency,
  }),
  envelope("dispute.closed", "A dispute closed: won, the licence is active again; lost, it is revoked", {
    ...Dispute,
    status: Type.Union([Type.Literal("won"), Type.Literal("lost"), Type.Literal("warning_closed")]),
    amount: Money,
    currency: Currency,
  }),
  envelope("usage.allowance_ran_out", "A spend used the last unit of a person's allowance of a meter: once per person, meter and period", {
    tool: Tool,
    meter: Type.String({ description: "The meter's id" }),
    email: Type.String(),
    user_id: Type.String({ description: "The person's id (psn_…)" }),
    allowance: Type.Integer({ minimum: 1, description: "The period's allowance, every source's summed; all of it is used" }),
    credits: Type.Integer({ minimum: 0, description: "Credits the person has left for the meter after the spend" }),
    resets_at: EventDate,
  }),
]);

export type EventEnvelope = Static<typeof EventEnvelope>;
export type EventType = EventEnvelope["type"];

const schemas = EventEnvelope.anyOf;

export const EVENT_TYPES: readonly EventType[] = schemas.map((schema) => schema.properties.type.const);

/** The envelope schema of one event type. */
export function eventSchema<T extends EventType>(type: T): Extract<(typeof schemas)[number], { static: { type: T } }> {
  // Each type has exactly one schema in the union, so the find cannot miss.
  return schemas.find((schema) => schema.properties.type.const === type) as Extract<(typeof schemas)[number], { static: { type: T } }>;
}

/** For `warden events list`. */
export function describeEventTypes(): { type: EventType; description: string }[] {
  return schemas.map((schema) => ({ type: schema.properties.type.const, description: schema.description }));
}

export function isEventType(value: string): value is EventType {
  return (EVENT_TYPES as readonly string[]).includes(value);
}

/**
 * The exact JSON text that is stored, signed and sent: envelope keys in the order id,
 * type, created, livemode, data, and data keys in the specification's table order
 * whatever order the caller built them in, so the same fact reported from the payment
 * processor and from the dashboard makes the same bytes.
 */
export function serializeEvent(event: { id: string; type: EventType; created: number; livemode: boolean; data: Readonly<Record<string, unknown>> }): string {
  const order = Object.keys(eventSchema(event.type).properties.data.properties);
  const keys = [...order.filter((key) => key in event.data), ...Object.keys(event.data).filter((key) => !order.includes(key))];
  const data = Object.fromEntries(keys.map((key) => [key, event.data[key]]));
  return JSON.stringify({ id: event.id, type: event.type, created: event.created, livemode: event.livemode, data });
}
