// The six events as payments emit them: their data built from stored licences,
// subscriptions and disputes, and their ids derived from the fact each reports, so that
// the same fact reported by Stripe and by the vendor's action (or by Stripe twice, or
// by a retried delivery) is emitted once with one id (decisions.md).
import { toIso } from "../clock.js";
import { findPeopleByIds } from "../customers/person.store.js";
import { emitEvent } from "../events/event.service.js";
import type { EventEnvelope, EventType } from "../events/event-types.js";
import { derivedId } from "../ids.js";
import { findPlan } from "../workspaces/workspace.store.js";
import type { Plan } from "../workspaces/workspace.types.js";
import type { BillingTx } from "./billing.context.js";
import type { Dispute } from "./dispute.store.js";
import type { StoredLicence } from "./licence.store.js";
import { findSubscription, type StoredSubscription } from "./subscription.store.js";

type DataOf<T extends EventType> = Extract<EventEnvelope, { type: T }>["data"];

/** `<tool>:<plan id>`, or the bare id for the default plan; a purchase with no plan at all names its product. */
function planLabel(productId: string, plan: Plan | null): string {
  if (!plan) return productId;
  return plan.isDefault ? plan.id : `${productId}:${plan.id}`;
}

/** The plan a purchase names, or the product's default plan when it names none and that plan is still offered (as catalogue.ts decides). */
async function planOf(tx: BillingTx, purchase: { productKind: StoredLicence["productKind"]; productId: string; planId: string | null }): Promise<string> {
  const plan = await findPlan(tx.trx, tx.workspaceId, purchase.productKind, purchase.productId, purchase.planId);
  return planLabel(purchase.productId, plan !== null && (purchase.planId !== null || plan.retiredAt === null) ? plan : null);
}

const teamSeats = (seats: number | null) => (seats !== null && seats > 0 ? { seats } : {});

async function emailOf(tx: BillingTx, personId: string): Promise<string> {
  const person = (await findPeopleByIds(tx.trx, [personId])).get(personId);
  if (!person) throw new Error(`person ${personId} vanished`);
  return person.email;
}

/** Emits an event whose id is derived from the fact; answers false when that fact was emitted already. */
async function emitFact<T extends EventType>(tx: BillingTx, type: T, fact: string, personId: string | null, data: DataOf<T>): Promise<boolean> {
  const id = derivedId("evt", `${tx.workspaceId}|${tx.env}|${type}|${fact}`);
  return emitEvent(tx.trx, { workspaceId: tx.workspaceId, env: tx.env, id, type, data: data as Record<string, unknown>, createdAt: tx.now, personId });
}

export async function emitLicencePurchased(tx: BillingTx, licence: StoredLicence, buyer: { email: string; accountPersonId: string | null }): Promise<void> {
  await emitFact(tx, "purchase.completed", licence.checkoutSession ?? licence.id, licence.personId, {
    tool: licence.productId,
    kind: "licence",
    plan: await planOf(tx, licence),
    email: buyer.email,
    amount: licence.amountCents,
    currency: licence.currency,
    payment_intent: licence.paymentIntent,
    checkout_session: licence.checkoutSession,
    account: buyer.accountPersonId === null ? "none" : "linked",
    ...teamSeats(licence.seats),
    user_id: buyer.accountPersonId,
  });
}

async function subscriptionFacts(tx: BillingTx, sub: StoredSubscription) {
  return {
    tool: sub.productId,
    subscription: sub.id,
    plan: await planOf(tx, sub),
    status: sub.status,
    period_end: toIso(sub.currentPeriodEnd),
    user_id: sub.accountPersonId,
  };
}

/** purchase.completed and subscription.started, together, once per subscription. */
export async function emitSubscriptionStarted(tx: BillingTx, sub: StoredSubscription): Promise<void> {
  const facts = await subscriptionFacts(tx, sub);
  await emitFact(tx, "purchase.completed", sub.id, sub.personId, {
    tool: facts.tool,
    kind: "subscription",
    plan: facts.plan,
    email: null,
    amount: null,
    currency: null,
    payment_intent: null,
    checkout_session: null,
    account: sub.accountPersonId === null ? "none" : "linked",
    ...teamSeats(sub.seats),
    subscription: facts.subscription,
    status: facts.status,
    period_end: facts.period_end,
    user_id: facts.user_id,
  });
  await emitFact(tx, "subscription.started", sub.id, sub.personId, { ...facts, ...teamSeats(sub.seats) });
}

/** The UTC day of a time, as the once-a-day rule of subscription.cancelled counts days. */
export const utcDay = (ms: number) => toIso(ms).slice(0, 10);

/**
 * subscription.cancelled with immediately false: set to end. At most once per UTC day
 * (the specification's rule): the day is part of the fact, so a second cancellation on
 * the same day derives the same id and emits nothing. Answers whether it was emitted.
 */
export async function emitSubscriptionSetToCancel(tx: BillingTx, sub: StoredSubscription, day: string): Promise<boolean> {
  return emitFact(tx, "subscription.cancelled", `${sub.id}|${day}`, sub.personId, {
    ...(await subscriptionFacts(tx, sub)),
    ends_at: toIso(sub.cancelAt ?? sub.currentPeriodEnd),
    immediately: false,
    ...teamSeats(sub.seats),
  });
}

/** subscription.cancelled with immediately true: it has ended. Once per subscription. */
export async function emitSubscriptionEnded(tx: BillingTx, sub: StoredSubscription): Promise<void> {
  await emitFact(tx, "subscription.cancelled", `${sub.id}|ended`, sub.personId, {
    ...(await subscriptionFacts(tx, sub)),
    ends_at: toIso(sub.endedAt ?? tx.now),
    immediately: true,
    ...teamSeats(sub.seats),
  });
}

/**
 * payment.refunded. The fact is the refunded payment (its payment intent), which both
 * Stripe's charge.refunded and the vendor's refund name.
 */
export async function emitLicenceRefunded(
  tx: BillingTx,
  licence: StoredLicence,
  refund: { paymentIntent: string; amountCents: number; currency: string },
): Promise<void> {
  await emitFact(tx, "payment.refunded", refund.paymentIntent, licence.personId, {
    tool: licence.productId,
    email: await emailOf(tx, licence.personId),
    licence: licence.id,
    payment_intent: refund.paymentIntent,
    amount: refund.amountCents,
    currency: refund.currency,
  });
}

/** Whose payment is disputed: the licence's buyer, or the subscription's (null when it is not stored). */
async function disputantOf(tx: BillingTx, dispute: Dispute, licence: StoredLicence | null): Promise<string | null> {
  if (licence) return licence.personId;
  if (dispute.subscriptionId === null) return null;
  return (await findSubscription(tx.trx, tx, dispute.subscriptionId))?.personId ?? null;
}

async function disputeFacts(tx: BillingTx, dispute: Dispute, licence: StoredLicence | null) {
  return {
    tool: dispute.productId,
    email: licence ? await emailOf(tx, licence.personId) : null,
    licence: licence?.id ?? null,
    payment_intent: dispute.paymentIntent,
    dispute: dispute.id,
  };
}

export async function emitPaymentDisputed(
  tx: BillingTx,
  dispute: Dispute,
  licence: StoredLicence | null,
  opened: { reason: string; status: string },
): Promise<void> {
  await emitFact(tx, "payment.disputed", dispute.id, await disputantOf(tx, dispute, licence), {
    ...(await disputeFacts(tx, dispute, licence)),
    reason: opened.reason,
    status: opened.status,
    respond_by: dispute.respondBy === null ? null : toIso(dispute.respondBy),
    amount: dispute.amountCents,
    currency: dispute.currency,
  });
}

export async function emitDisputeClosed(
  tx: BillingTx,
  dispute: Dispute,
  licence: StoredLicence | null,
  status: "won" | "lost" | "warning_closed",
): Promise<void> {
  await emitFact(tx, "dispute.closed", dispute.id, await disputantOf(tx, dispute, licence), {
    ...(await disputeFacts(tx, dispute, licence)),
    status,
    amount: dispute.amountCents,
    currency: dispute.currency,
  });
}
