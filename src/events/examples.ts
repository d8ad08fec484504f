import { newId, randomBase62 } from "../ids.js";
import type { EventEnvelope, EventType } from "./event-types.js";

// Example events for `warden events send` and the dashboard's test event: realistic
// enough that a vendor's handler written against them works on real ones. Processor ids
// are shaped like Stripe's; every example is a new fact, so it gets a fresh random id.

interface ExampleOptions {
  livemode: boolean;
  /** Epoch milliseconds. */
  now: number;
  /**
   * What was bought: purchase.completed's kind, and whether a dispute is about a
   * licence's payment or a subscription's (email and licence null). Licence by default;
   * the other types have one shape only.
   */
  kind?: "licence" | "subscription";
}

type Example<T extends EventType> = Extract<EventEnvelope, { type: T }>;

const DAY_MS = 86_400_000;
const TOOL = "tabmaster";
const EMAIL = "ada@example.com";
// A one-off licence on the tool's default plan (bare id), a subscription on a named one.
const LICENCE_PLAN = "lifetime";
const SUBSCRIPTION_PLAN = "tabmaster:pro";
const LICENCE_PRICE = 2900;
const SUBSCRIPTION_PRICE = 900;
const CURRENCY = "eur";

const processorId = (prefix: "pi" | "sub" | "du") => `${prefix}_${randomBase62(24)}`;

/** Processor periods are whole seconds, so their dates end in .000Z. */
const isoAfter = (now: number, days: number) => new Date(Math.floor(now / 1000) * 1000 + days * DAY_MS).toISOString();

function subscriptionFacts(now: number) {
  return {
    tool: TOOL,
    subscription: processorId("sub"),
    plan: SUBSCRIPTION_PLAN,
    status: "active",
    period_end: isoAfter(now, 30),
    user_id: newId("psn"),
  };
}

function disputeFacts(kind: "licence" | "subscription") {
  const licence = kind === "licence";
  return {
    tool: TOOL,
    email: licence ? EMAIL : null,
    licence: licence ? newId("lic") : null,
    payment_intent: processorId("pi"),
    dispute: processorId("du"),
  };
}

const builders: { [T in EventType]: (options: Required<ExampleOptions>) => Example<T>["data"] } = {
  "purchase.completed": ({ livemode, now, kind }) => {
    if (kind === "subscription") {
      const { subscription, status, period_end, user_id } = subscriptionFacts(now);
      return {
        tool: TOOL,
        kind,
        plan: SUBSCRIPTION_PLAN,
        email: null,
        amount: null,
        currency: null,
        payment_intent: null,
        checkout_session: null,
        account: "linked",
        subscription,
        status,
        period_end,
        user_id,
      };
    }
    return {
      tool: TOOL,
      kind,
      plan: LICENCE_PLAN,
      email: EMAIL,
      amount: LICENCE_PRICE,
      currency: CURRENCY,
      payment_intent: processorId("pi"),
      checkout_session: `cs_${livemode ? "live" : "test"}_${randomBase62(58)}`,
      // Bought signed out: the licence attaches to whoever later verifies the address.
      account: "none",
      user_id: null,
    };
  },
  "subscription.started": ({ now }) => subscriptionFacts(now),
  "subscription.cancelled": ({ now }) => {
    const facts = subscriptionFacts(now);
    // Cancelled by the buyer: still active, access runs until the period ends.
    return { ...facts, ends_at: facts.period_end, immediately: false };
  },
  "payment.refunded": () => ({
    tool: TOOL,
    email: EMAIL,
    licence: newId("lic"),
    payment_intent: processorId("pi"),
    amount: LICENCE_PRICE,
    currency: CURRENCY,
  }),
  "payment.disputed": ({ now, kind }) => ({
    ...disputeFacts(kind),
    reason: "product_not_received",
    status: "needs_response",
    respond_by: isoAfter(now, 7),
    amount: kind === "licence" ? LICENCE_PRICE : SUBSCRIPTION_PRICE,
    currency: CURRENCY,
  }),
  "dispute.closed": ({ kind }) => ({
    ...disputeFacts(kind),
    status: "won",
    amount: kind === "licence" ? LICENCE_PRICE : SUBSCRIPTION_PRICE,
    currency: CURRENCY,
  }),
  // A monthly allowance used up mid-month, with a pack's credits still to spend.
  "usage.allowance_ran_out": ({ now }) => ({
    tool: TOOL,
    meter: "summaries",
    email: EMAIL,
    user_id: newId("psn"),
    allowance: 500,
    credits: 1000,
    resets_at: isoAfter(now, 12),
  }),
};

export function exampleEvent<T extends EventType>(type: T, options: ExampleOptions): Example<T> {
  const data = builders[type]({ ...options, kind: options.kind ?? "licence" });
  // TypeScript cannot tie `type` to `data` through the generic; the builders' table does.
  return { id: newId("evt"), type, created: Math.floor(options.now / 1000), livemode: options.livemode, data } as Example<T>;
}
