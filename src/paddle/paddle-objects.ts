// Reading Paddle Billing's notifications into the facts Warden acts on (payments/
// payment-facts.ts). Pure functions over the parsed JSON, read field by field like
// Stripe's (payments/fields.ts), from the shapes of Paddle's public API reference
// (Paddle API version 1): an event is `{event_id, event_type, occurred_at,
// notification_id, data}`; amounts are strings of whole minor units ("4900"); times are
// RFC 3339 texts with up to microseconds; currencies upper case ("USD").
import type { Earnings } from "../billing/licence.store.js";
import type { SubscriptionReport } from "../billing/subscription.service.js";
import type { PaddleAdjustmentAction } from "../db/schema.js";
import { guarded, isObj, isProblem, MalformedField, type Obj, obj, type Problem, readWardenMetadata, shown, str } from "../payments/fields.js";
import type { BoughtItem, PaymentFact } from "../payments/payment-facts.js";

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
const MINOR_UNITS = /^(0|[1-9]\d{0,14})$/;

/** An RFC 3339 time as epoch milliseconds. */
const time = (o: Obj, key: string): number | null => {
  const v = str(o, key);
  if (v === null) return null;
  const at = RFC3339.test(v) ? Date.parse(v) : Number.NaN;
  if (!Number.isFinite(at)) throw new MalformedField(`${key} ${shown(v)} is not an RFC 3339 time`);
  return at;
};
/** An amount in the currency's smallest unit, which Paddle sends as a string of digits. */
const minor = (o: Obj, key: string): number | null => {
  const v = str(o, key);
  if (v === null) return null;
  if (!MINOR_UNITS.test(v)) throw new MalformedField(`${key} ${shown(v)} is not a whole, non-negative amount`);
  return Number(v);
};
const currencyOf = (o: Obj) => str(o, "currency_code")?.toLowerCase() ?? null;

export interface PaddleEvent {
  id: string;
  type: string;
  /** Paddle's `occurred_at`, epoch milliseconds. */
  occurredAt: number;
  data: Obj;
}

/** The envelope of a verified notification, or why it is not one (Paddle never sends such a body). */
export function readPaddleEvent(value: unknown): PaddleEvent | Problem {
  if (!isObj(value)) return { problem: "not a JSON object" };
  return guarded(() => {
    const id = str(value, "event_id");
    const type = str(value, "event_type");
    const occurredAt = time(value, "occurred_at");
    const data = obj(value, "data");
    if (id === null || type === null || occurredAt === null || data === null) return { problem: "no event_id, event_type, occurred_at or data" };
    return { id, type, occurredAt, data };
  });
}

/** What a transaction or subscription bills: each item's price and product. */
export const paddleItemsOf = (o: Obj): BoughtItem[] =>
  (Array.isArray(o.items) ? o.items.filter(isObj) : []).map((item) => {
    const price = obj(item, "price");
    return { price: price ? str(price, "id") : str(item, "price_id"), product: price ? str(price, "product_id") : null };
  });

/**
 * `subscription.*`: the subscription's state. Paddle's statuses are Stripe's words
 * (active, trialing, past_due, paused, canceled), so billing's rules read them as they
 * are. A cancel at the period's end is Paddle's `scheduled_change` of action `cancel`;
 * Paddle lists no earlier values, so whether this event set it is left to the stored state.
 */
function readSubscription(event: PaddleEvent): PaymentFact {
  const o = event.data;
  const id = str(o, "id");
  const status = str(o, "status");
  if (id === null || status === null) return { fact: "nothing", reason: "subscription without an id or status" };
  const period = obj(o, "current_billing_period");
  const startedAt = time(o, "started_at") ?? time(o, "created_at");
  if (startedAt === null) return { fact: "nothing", reason: `subscription ${id} without a start date` };
  const periodStart = (period ? time(period, "starts_at") : null) ?? startedAt;
  const periodEnd = (period ? time(period, "ends_at") : null) ?? periodStart;
  const change = obj(o, "scheduled_change");
  const cancelling = change !== null && str(change, "action") === "cancel";
  const items = Array.isArray(o.items) ? o.items.filter(isObj) : [];
  const quantity = items.length === 1 ? (items[0] as Obj).quantity : null;
  if (quantity !== null && (typeof quantity !== "number" || !Number.isSafeInteger(quantity) || quantity < 0)) {
    throw new MalformedField(`quantity ${shown(quantity)} is not a whole quantity`);
  }
  const report: SubscriptionReport = {
    id,
    kind: event.type === "subscription.created" ? "created" : "updated",
    at: event.occurredAt,
    status,
    periodStart,
    periodEnd,
    cancelAtPeriodEnd: cancelling,
    cancelAt: cancelling && change ? time(change, "effective_at") : null,
    endedAt: status === "canceled" ? (time(o, "canceled_at") ?? event.occurredAt) : null,
    startedAt,
    setToCancel: null,
    quantity: quantity as number | null,
  };
  return { fact: "subscription_reported", report, metadata: readWardenMetadata(o.custom_data), items: paddleItemsOf(o) };
}

/**
 * What the vendor earns of a transaction, from its `details.totals`: `earnings` (the total
 * less tax and Paddle's fee), `fee` and `tax`, in the buyer's currency, as the amount is.
 * Not `details.payout_totals`: those are in the vendor's payout currency, converted at
 * Paddle's rate, where every other amount Warden counts is the buyer's. Null while Paddle
 * has not processed the fee (its `earnings` is null until then), or when a figure of the
 * three is not a whole, non-negative amount.
 */
function earningsOf(totals: Obj | null): Earnings | null {
  if (totals === null) return null;
  // A figure that is no whole, non-negative amount leaves the earnings unknown: the sale itself still counts.
  const read = guarded(() => {
    const earningsCents = minor(totals, "earnings");
    return earningsCents === null ? null : { earningsCents, feeCents: minor(totals, "fee"), taxCents: minor(totals, "tax") };
  });
  return read === null || isProblem(read) ? null : read;
}

/**
 * `transaction.completed`: a one-time purchase (no `subscription_id`), or a subscription's
 * payment, its first or a renewal. The transaction's id is both the payment (what an
 * adjustment names) and the invoice (counted once). The amount is what the buyer paid,
 * `details.totals.grand_total` (else `total`), in the buyer's currency, with what the
 * vendor earns of it (earningsOf); dated by `billed_at`, else the event's `occurred_at`.
 * Paddle's notification names the buyer by customer id only: the buyer is Warden's
 * `warden_account` in `custom_data`.
 */
function readTransaction(event: PaddleEvent): PaymentFact {
  const o = event.data;
  const id = str(o, "id");
  if (id === null) return { fact: "nothing", reason: "transaction without an id" };
  const details = obj(o, "details");
  const totals = details ? obj(details, "totals") : null;
  const amountCents = totals ? (minor(totals, "grand_total") ?? minor(totals, "total")) : null;
  const earnings = earningsOf(totals);
  const currency = currencyOf(o);
  const paidAt = time(o, "billed_at") ?? event.occurredAt;
  const subscriptionId = str(o, "subscription_id");
  if (subscriptionId !== null) {
    return { fact: "subscription_paid", invoiceId: id, subscriptionId, payments: [id], amountCents, currency, earnings, paidAt };
  }
  return {
    fact: "purchase_completed",
    checkoutId: id,
    email: null,
    metadata: readWardenMetadata(o.custom_data),
    amountCents,
    currency,
    earnings,
    payment: id,
    purchasedAt: paidAt,
  };
}

/**
 * An approved adjustment that moves money back, for the ingest to record once and read
 * into a fact (paddle-ingest.service.ts): a refund (summed with the transaction's earlier
 * ones), a chargeback or its reversal.
 */
export interface PaddleAdjustment {
  adjustmentId: string;
  transactionId: string;
  action: PaddleAdjustmentAction;
  amountCents: number;
  /** Paddle's `type` full: the whole transaction refunded. */
  full: boolean;
  currency: string;
  /** What it takes back of the vendor's earnings, Paddle's `totals.earnings` (in the transaction's currency, as `totals.total`); null when Paddle gives none. */
  earningsCents: number | null;
  reason: string;
  at: number;
}

/**
 * What an adjustment takes of the vendor's earnings (`totals.earnings`), read as leniently
 * as a sale's (earningsOf): Paddle documents negative earnings on an adjustment (a tax
 * adjustment), so the amount is signed, and one that is no whole amount at all leaves the
 * earnings unknown while the refund or chargeback itself still counts.
 */
function adjustmentEarnings(totals: Obj): number | null {
  const v = guarded(() => str(totals, "earnings"));
  if (typeof v !== "string") return null;
  const negative = v.startsWith("-");
  const digits = negative ? v.slice(1) : v;
  if (!MINOR_UNITS.test(digits)) return null;
  return negative ? -Number(digits) : Number(digits);
}

/**
 * `adjustment.created|updated`: Paddle's refunds and chargebacks. Only an `approved`
 * adjustment has happened (a refund waits in `pending_approval` first). A refund is
 * summed per transaction by the ingest; a `chargeback` opens a dispute on the transaction
 * (its id is the dispute's: one chargeback per transaction), and a `chargeback_reverse`
 * closes it won. Paddle settles chargebacks itself, so no dispute closes lost here: the
 * licence stays suspended until a reversal. Credits and chargeback warnings change nothing.
 */
function readAdjustment(event: PaddleEvent): PaymentFact | PaddleAdjustment {
  const o = event.data;
  const id = str(o, "id");
  const action = str(o, "action");
  const transactionId = str(o, "transaction_id");
  const status = str(o, "status");
  if (id === null || action === null || transactionId === null) return { fact: "nothing", reason: "adjustment without id, action or transaction_id" };
  if (status !== "approved") return { fact: "nothing", reason: `adjustment ${action} is ${status ?? "of no status"}, not approved` };
  if (action !== "refund" && action !== "chargeback" && action !== "chargeback_reverse") {
    return { fact: "nothing", reason: `adjustment ${action} changes no access` };
  }
  const totals = obj(o, "totals");
  const amountCents = totals ? minor(totals, "total") : null;
  const currency = currencyOf(o) ?? (totals ? currencyOf(totals) : null);
  if (amountCents === null || currency === null) return { fact: "nothing", reason: "adjustment without totals.total or currency_code" };
  const at = time(o, "updated_at") ?? time(o, "created_at") ?? event.occurredAt;
  return {
    adjustmentId: id,
    transactionId,
    action,
    amountCents,
    full: str(o, "type") === "full",
    currency,
    earningsCents: totals ? adjustmentEarnings(totals) : null,
    reason: str(o, "reason") ?? "general",
    at,
  };
}

/** What a Paddle event reports: a fact, or an approved adjustment for the ingest to record. */
export function paddleFactOf(event: PaddleEvent): PaymentFact | PaddleAdjustment {
  const read = guarded((): PaymentFact | PaddleAdjustment => {
    if (event.type.startsWith("subscription.") && PADDLE_EVENT_TYPES.includes(event.type as PaddleEventType)) return readSubscription(event);
    if (event.type === "transaction.completed") return readTransaction(event);
    if (event.type === "adjustment.created" || event.type === "adjustment.updated") return readAdjustment(event);
    return { fact: "nothing", reason: `Warden does not use ${event.type} events` };
  });
  return isProblem(read) ? { fact: "nothing", reason: read.problem } : read;
}

/** The events to choose on Paddle's notification destination; anything else is acknowledged and ignored. */
export const PADDLE_EVENT_TYPES = [
  "transaction.completed",
  "subscription.created",
  "subscription.activated",
  "subscription.updated",
  "subscription.canceled",
  "subscription.past_due",
  "subscription.paused",
  "subscription.resumed",
  "adjustment.created",
  "adjustment.updated",
] as const;
type PaddleEventType = (typeof PADDLE_EVENT_TYPES)[number];
