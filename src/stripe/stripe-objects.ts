// Reading Stripe's events into the facts Warden acts on. Pure functions over the parsed
// JSON, read field by field rather than trusted to a type: a webhook endpoint's payloads
// follow that endpoint's API version, so both the older shapes (a subscription's own
// current_period_*, an invoice's payment_intent and subscription) and the current ones
// (periods on the subscription items, invoice.parent and invoice.payments, the
// invoice_payment object) are read.
import type { DisputeReport } from "../billing/dispute.service.js";
import type { SubscriptionReport } from "../billing/subscription.service.js";
import { guarded, isObj, isProblem, type Obj, obj, type Problem, readWardenMetadata, shown, str, text, whole } from "../payments/fields.js";
import type { BoughtItem, PaymentFact } from "../payments/payment-facts.js";

// Year 9999: later is no time Stripe sends, and its milliseconds stay exact in a double.
const MAX_SECONDS = 253_402_300_799;

/** An amount in the currency's smallest unit. */
const amount = (o: Obj, key: string) => whole(o, key, Number.MAX_SAFE_INTEGER, "a whole, non-negative amount");
/** A Unix time in seconds. */
const seconds = (o: Obj, key: string) => whole(o, key, MAX_SECONDS, "a Unix time in seconds");
/** An id field that Stripe may have expanded into the object it names. */
const idOf = (o: Obj, key: string): string | null => {
  const v = o[key];
  return isObj(v) ? text(`${key}.id`, v.id) : text(key, v);
};
const listData = (o: Obj | null, key: string): Obj[] => {
  const list = o ? obj(o, key) : null;
  return Array.isArray(list?.data) ? list.data.filter(isObj) : [];
};
const ms = (seconds: number) => seconds * 1000;

export interface StripeEvent {
  id: string;
  type: string;
  /** Stripe's `created`, epoch milliseconds. */
  created: number;
  livemode: boolean;
  object: Obj;
  /** The changed fields' earlier values, on *.updated events. */
  previousAttributes: Obj | null;
  /**
   * Read from Stripe's API by the reconcile, not delivered: the object's state now, with
   * no list of what changed, so a subscription set to cancel counts as set by this
   * reading (the once-a-day event's id keeps a second reading from sending it again),
   * on the day its `canceled_at` says.
   */
  fromApi?: boolean;
}

/**
 * The envelope of a verified event, or why it is not one: without a clean id, type and
 * time there is nothing to record it under (Stripe never sends such a body).
 */
export function readEvent(value: unknown): StripeEvent | Problem {
  if (!isObj(value)) return { problem: "not a JSON object" };
  return guarded(() => {
    const id = str(value, "id");
    const type = str(value, "type");
    const created = seconds(value, "created");
    const data = obj(value, "data");
    const object = data ? obj(data, "object") : null;
    if (id === null || type === null || created === null || object === null || !data) return { problem: "no id, type, created or data.object" };
    return { id, type, created: ms(created), livemode: value.livemode === true, object, previousAttributes: obj(data, "previous_attributes") };
  });
}

/**
 * Which Stripe time dates each fact Warden keeps and counts (docs/decisions.md, Payments,
 * "Times stored"), in one place: the time Stripe gives the fact itself, else the event's
 * `created` (when Stripe reported it), never the time a delivery arrived. Stripe retries a
 * delivery for three days and an endpoint that was down receives its backlog at once, so
 * arrival can be days late; the reconcile's events carry the object's own `created`
 * (stripe-reconcile.service.ts), so what it finds is dated as its webhook would have been.
 * - `invoice` (a subscription invoice paid): its `status_transitions.paid_at`, else its
 *   `created`, else the event's.
 * - `refund`: the newest of the charge's refunds (`refunds.data`: sent by API versions
 *   before 2022-11-15, or expanded), else the event's `created`; what is new of the
 *   charge's `amount_refunded` since the last report is that refund's.
 * - `purchase`, `subscription`, `dispute`: the event's `created`. A Checkout Session
 *   carries no time of completion, a dispute none of closing, and a subscription's state
 *   is the one as of its event (a reconcile's reading: when it was read).
 */
type DatedFact = "invoice" | "refund" | "purchase" | "subscription" | "dispute";

function stripeTimeOf(fact: DatedFact, event: StripeEvent): number {
  const o = event.object;
  switch (fact) {
    case "invoice": {
      const transitions = obj(o, "status_transitions");
      const paid = (transitions ? seconds(transitions, "paid_at") : null) ?? seconds(o, "created");
      return paid === null ? event.created : ms(paid);
    }
    case "refund": {
      const times = listData(o, "refunds")
        .map((r) => seconds(r, "created"))
        .filter((t): t is number => t !== null);
      return times.length > 0 ? ms(Math.max(...times)) : event.created;
    }
    default:
      return event.created;
  }
}

export interface CheckoutSession {
  id: string;
  mode: string | null;
  paymentStatus: string | null;
  email: string | null;
  amountTotal: number | null;
  currency: string | null;
  paymentIntent: string | null;
  subscription: string | null;
  metadata: unknown;
  /** When it was bought (stripeTimeOf). */
  purchasedAt: number;
}

export function readCheckoutSession(event: StripeEvent): CheckoutSession | Problem {
  const o = event.object;
  return guarded(() => {
    const id = str(o, "id");
    if (id === null) return { problem: "checkout session without an id" };
    const details = obj(o, "customer_details");
    return {
      id,
      mode: str(o, "mode"),
      paymentStatus: str(o, "payment_status"),
      email: (details ? str(details, "email") : null) ?? str(o, "customer_email"),
      amountTotal: amount(o, "amount_total"),
      currency: str(o, "currency")?.toLowerCase() ?? null,
      paymentIntent: idOf(o, "payment_intent"),
      subscription: idOf(o, "subscription"),
      metadata: o.metadata,
      purchasedAt: stripeTimeOf("purchase", event),
    };
  });
}

/** Statuses after which a subscription gives no more access: it has ended. */
const ENDING_STATUSES = new Set(["canceled", "incomplete_expired", "unpaid"]);

const scheduled = (o: Obj) => o.cancel_at_period_end === true || seconds(o, "cancel_at") !== null;

export interface SubscriptionObject {
  report: SubscriptionReport;
  metadata: unknown;
  /** Each item's price and product: a price linked to another plan is a change of plan. */
  items: BoughtItem[];
}

/**
 * The quantity billed: the one item's (current API versions), else the subscription's own
 * (older ones set it while there is one item). Several items are not one count of seats: null.
 */
const quantityOf = (o: Obj, items: readonly Obj[]): number | null => {
  if (items.length > 1) return null;
  const item = items[0];
  return (
    (item ? whole(item, "quantity", Number.MAX_SAFE_INTEGER, "a whole quantity") : null) ?? whole(o, "quantity", Number.MAX_SAFE_INTEGER, "a whole quantity")
  );
};

export function readSubscription(event: StripeEvent): SubscriptionObject | Problem {
  return guarded(() => {
    const o = event.object;
    const id = str(o, "id");
    const status = str(o, "status");
    if (id === null || status === null) return { problem: "subscription without an id or status" };
    const items = listData(o, "items");
    const starts = [seconds(o, "current_period_start"), ...items.map((i) => seconds(i, "current_period_start"))].filter((t): t is number => t !== null);
    const ends = [seconds(o, "current_period_end"), ...items.map((i) => seconds(i, "current_period_end"))].filter((t): t is number => t !== null);
    const startedAt = seconds(o, "start_date") ?? seconds(o, "created");
    if (startedAt === null) return { problem: `subscription ${id} without a start date` };
    const periodStart = starts.length > 0 ? Math.min(...starts) : startedAt;
    const periodEnd = ends.length > 0 ? Math.max(...ends) : periodStart;
    const cancelAt = seconds(o, "cancel_at");

    // Whether this event set it to cancel: Stripe lists the changed fields' earlier values.
    let setToCancel: boolean | null = null;
    const previous = event.previousAttributes;
    if (previous) {
      const touched = "cancel_at_period_end" in previous || "cancel_at" in previous;
      setToCancel = touched && scheduled(o) && !scheduled({ ...o, ...previous });
    }
    let cancelRequestedAt: number | undefined;
    const canceledAt = seconds(o, "canceled_at");
    // Without canceled_at the day is unknown: the stored state decides, as for an event without its changes.
    if (event.fromApi === true && canceledAt !== null) {
      setToCancel = scheduled(o);
      cancelRequestedAt = ms(canceledAt);
    }
    const kind = event.type === "customer.subscription.created" ? "created" : event.type === "customer.subscription.deleted" ? "deleted" : "updated";
    const ended = kind === "deleted" || ENDING_STATUSES.has(status);
    return {
      report: {
        id,
        kind,
        at: stripeTimeOf("subscription", event),
        status,
        periodStart: ms(periodStart),
        periodEnd: ms(periodEnd),
        cancelAtPeriodEnd: o.cancel_at_period_end === true,
        cancelAt: cancelAt === null ? null : ms(cancelAt),
        endedAt: ended ? (seconds(o, "ended_at") ?? seconds(o, "canceled_at") ?? event.created / 1000) * 1000 : null,
        startedAt: ms(startedAt),
        setToCancel,
        ...(cancelRequestedAt === undefined ? {} : { cancelRequestedAt }),
        quantity: quantityOf(o, items),
      },
      metadata: o.metadata,
      items: items.map((i) => {
        const price = obj(i, "price");
        return { price: idOf(i, "price"), product: price ? idOf(price, "product") : null };
      }),
    };
  });
}

export interface Charge {
  paymentIntent: string | null;
  amount: number;
  amountRefunded: number;
  refundedInFull: boolean;
  currency: string;
  /** When Stripe made the refund reported (stripeTimeOf). */
  refundedAt: number;
}

export function readCharge(event: StripeEvent): Charge | Problem {
  const o = event.object;
  return guarded(() => {
    const charged = amount(o, "amount");
    const amountRefunded = amount(o, "amount_refunded");
    const currency = str(o, "currency");
    if (charged === null || amountRefunded === null || currency === null) return { problem: "charge without amount, amount_refunded or currency" };
    return {
      paymentIntent: idOf(o, "payment_intent"),
      amount: charged,
      amountRefunded,
      refundedInFull: o.refunded === true || amountRefunded >= charged,
      currency: currency.toLowerCase(),
      refundedAt: stripeTimeOf("refund", event),
    };
  });
}

/** A dispute as reported, and when the change reported (its opening or close) happened (stripeTimeOf). */
export function readDispute(event: StripeEvent): (DisputeReport & { at: number }) | Problem {
  const o = event.object;
  return guarded(() => {
    const id = str(o, "id");
    const paymentIntent = idOf(o, "payment_intent");
    const disputed = amount(o, "amount");
    const currency = str(o, "currency");
    if (id === null || paymentIntent === null || disputed === null || currency === null)
      return { problem: "dispute without id, payment_intent, amount or currency" };
    const evidence = obj(o, "evidence_details");
    const dueBy = evidence ? seconds(evidence, "due_by") : null;
    return {
      id,
      paymentIntent,
      amountCents: disputed,
      currency: currency.toLowerCase(),
      reason: str(o, "reason") ?? "general",
      status: str(o, "status") ?? "needs_response",
      respondBy: dueBy === null ? null : ms(dueBy),
      at: stripeTimeOf("dispute", event),
    };
  });
}

export interface PaidInvoice {
  id: string;
  subscriptionId: string;
  /** None in a webhook of current API versions (invoice_payment.paid names them). */
  paymentIntents: string[];
  amountPaid: number | null;
  currency: string | null;
  /** When Stripe was paid (stripeTimeOf). */
  paidAt: number;
}

/**
 * A paid invoice: the subscription it bills, the payment intents that paid it, and when.
 * Older API versions name its subscription and payment intent on the invoice; current ones
 * (2025-03-31 on) under `parent.subscription_details` and `payments`, which Stripe leaves
 * out of webhooks unless expanded (the reconcile expands it): then it names none.
 */
export function readInvoice(event: StripeEvent): PaidInvoice | Problem {
  const o = event.object;
  return guarded(() => {
    const id = str(o, "id");
    if (id === null) return { problem: "invoice without an id" };
    const parent = obj(o, "parent");
    const details = parent ? obj(parent, "subscription_details") : null;
    const subscriptionId = idOf(o, "subscription") ?? (details ? idOf(details, "subscription") : null);
    if (subscriptionId === null) return { problem: "invoice of no subscription" };
    const intents = [
      idOf(o, "payment_intent"),
      ...listData(o, "payments").map((p) => (obj(p, "payment") ? idOf(obj(p, "payment") as Obj, "payment_intent") : null)),
    ];
    const paymentIntents = [...new Set(intents.filter((p): p is string => p !== null))];
    const currency = str(o, "currency");
    return {
      id,
      subscriptionId,
      paymentIntents,
      amountPaid: amount(o, "amount_paid"),
      currency: currency?.toLowerCase() ?? null,
      paidAt: stripeTimeOf("invoice", event),
    };
  });
}

/** An invoice payment (current API versions, `invoice_payment.paid`): the invoice and the payment intent that paid it. */
export function readInvoicePayment(event: StripeEvent): { invoiceId: string; paymentIntent: string } | Problem {
  const o = event.object;
  return guarded(() => {
    const invoiceId = idOf(o, "invoice");
    if (invoiceId === null) return { problem: "invoice payment without an invoice" };
    const payment = obj(o, "payment");
    // A payment made out of band (a payment record) or by a charge without an intent: nothing a refund or dispute names.
    const paymentIntent = payment && str(payment, "type") === "payment_intent" ? idOf(payment, "payment_intent") : null;
    if (paymentIntent === null) return { problem: `invoice payment names no payment intent (type ${payment ? shown(payment.type) : "absent"})` };
    return { invoiceId, paymentIntent };
  });
}

/**
 * What a Stripe event reports, as the processor-neutral fact apply-fact.service.ts applies
 * (the table of this folder's README). A field Warden cannot use is the fact "nothing",
 * with its reason.
 */
export function stripeFactOf(event: StripeEvent): PaymentFact {
  const nothing = (reason: string): PaymentFact => ({ fact: "nothing", reason });
  switch (event.type) {
    case "checkout.session.completed":
    case "checkout.session.async_payment_succeeded": {
      const session = readCheckoutSession(event);
      if (isProblem(session)) return nothing(session.problem);
      const metadata = readWardenMetadata(session.metadata);
      if (session.mode === "subscription") {
        if (session.subscription === null) return nothing("subscription checkout without a subscription");
        return { fact: "subscription_bought", subscriptionId: session.subscription, checkoutId: session.id, email: session.email, metadata };
      }
      if (session.mode !== "payment") return nothing(`checkout in ${session.mode ?? "unknown"} mode buys nothing`);
      if (session.paymentStatus !== "paid" && session.paymentStatus !== "no_payment_required") {
        return nothing(`payment is ${session.paymentStatus ?? "not complete"}; the licence follows checkout.session.async_payment_succeeded`);
      }
      return {
        fact: "purchase_completed",
        checkoutId: session.id,
        email: session.email,
        metadata,
        amountCents: session.amountTotal,
        currency: session.currency,
        // Stripe's fee is on the balance transaction, not the session: what the vendor earns is not reported here.
        earnings: null,
        payment: session.paymentIntent,
        purchasedAt: session.purchasedAt,
      };
    }
    case "customer.subscription.created":
    case "customer.subscription.updated":
    case "customer.subscription.deleted":
    case "customer.subscription.paused":
    case "customer.subscription.resumed": {
      const read = readSubscription(event);
      if (isProblem(read)) return nothing(read.problem);
      return { fact: "subscription_reported", report: read.report, metadata: readWardenMetadata(read.metadata), items: read.items };
    }
    case "charge.refunded": {
      const charge = readCharge(event);
      if (isProblem(charge)) return nothing(charge.problem);
      return {
        fact: "payment_refunded",
        payment: charge.paymentIntent,
        amountCents: charge.amount,
        refundedCents: charge.amountRefunded,
        inFull: charge.refundedInFull,
        currency: charge.currency,
        refundedAt: charge.refundedAt,
        earningsTakenCents: null,
      };
    }
    case "charge.dispute.created":
    case "charge.dispute.closed": {
      const dispute = readDispute(event);
      if (isProblem(dispute)) return nothing(dispute.problem);
      return { fact: event.type === "charge.dispute.created" ? "dispute_opened" : "dispute_closed", dispute, earningsTakenCents: null };
    }
    case "invoice.paid":
    case "invoice.payment_succeeded": {
      const invoice = readInvoice(event);
      if (isProblem(invoice)) return nothing(invoice.problem);
      return {
        fact: "subscription_paid",
        invoiceId: invoice.id,
        subscriptionId: invoice.subscriptionId,
        payments: invoice.paymentIntents,
        amountCents: invoice.amountPaid,
        currency: invoice.currency,
        earnings: null,
        paidAt: invoice.paidAt,
      };
    }
    case "invoice_payment.paid": {
      const payment = readInvoicePayment(event);
      if (isProblem(payment)) return nothing(payment.problem);
      return { fact: "invoice_payment", invoiceId: payment.invoiceId, payment: payment.paymentIntent };
    }
    default:
      return nothing(`Warden does not use ${event.type} events`);
  }
}
