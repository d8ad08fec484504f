// Applying a processor's facts (payment-facts.ts) to billing/, inside the payment
// transaction its adapter opened: the one place that decides what a purchase, a
// subscription's state, a refund or a dispute changes in Warden, whichever processor
// reported it and whether a webhook or a reconcile brought it. So the same fact makes the
// same change and derives the same event ids (the table of stripe/README.md, "Which
// Stripe event does what", and paddle/README.md say which of each processor's events is
// which fact).
import type { BillingTx } from "../billing/billing.context.js";
import { resolvePurchase } from "../billing/catalogue.js";
import { closeDisputeIn, DISPUTE_OUTCOMES, type DisputedPayment, type DisputeReport, openDisputeIn } from "../billing/dispute.service.js";
import { findDispute } from "../billing/dispute.store.js";
import { recordLicencePurchase, refundLicenceIn, refundLicencePartlyIn } from "../billing/licence.service.js";
import { findLicenceByPaymentIntent } from "../billing/licence.store.js";
import { applySubscriptionReport, type NewSubscription } from "../billing/subscription.service.js";
import { findSubscription, type StoredSubscription } from "../billing/subscription.store.js";
import { ensurePerson, findPersonById, type Person } from "../customers/person.store.js";
import type { Executor } from "../db/database.js";
import type { StripeEventOutcome } from "../db/schema.js";
import { countEarningsTaken, countSubscriptionRefunds, countSubscriptionRevenue } from "../insights/rollup.store.js";
import { isProblem, type Problem } from "./fields.js";
import type { BoughtItem, LinkedPlan, PaymentFact } from "./payment-facts.js";
import {
  findInvoiceSubscription,
  findSubscriptionBuyer,
  findSubscriptionOfPayment,
  insertInvoicePaymentLink,
  insertSubscriptionBuyer,
  insertSubscriptionInvoice,
  insertSubscriptionPayment,
  recordSubscriptionRefund,
  takeInvoicePaymentLinks,
} from "./payment-link.store.js";

/** How a processor's event ended: the outcomes its event table records. */
export interface Handled {
  outcome: StripeEventOutcome;
  reason: string | null;
  /** For a deferred event: the subscription it waits for. */
  subscriptionId?: string;
}

export const applied = (reason: string | null = null): Handled => ({ outcome: "applied", reason });
export const ignored = (reason: string): Handled => ({ outcome: "ignored", reason });

/**
 * What applying a fact asks of the processor that reported it: its own plan links, and
 * its own record of the events it held back until a subscription's buyer was known.
 */
export interface ProcessorRecords {
  /** The one plan every item's price (else product) is linked to, or why there is none. */
  planOfItems(ex: Executor, workspaceId: string, items: readonly BoughtItem[]): Promise<LinkedPlan | Problem>;
  /** A subscription's held-back reports, in the processor's order, read back into facts. */
  heldBack(tx: BillingTx, subscriptionId: string): Promise<{ id: string; fact: PaymentFact }[]>;
  /** Records how a held-back event ended once applied. */
  settle(tx: BillingTx, id: string, handled: Handled): Promise<void>;
}

/** Applies one fact inside an open payment transaction. */
export async function applyPaymentFact(tx: BillingTx, fact: PaymentFact, records: ProcessorRecords): Promise<Handled> {
  switch (fact.fact) {
    case "purchase_completed":
      return onPurchase(tx, fact);
    case "subscription_bought":
      return onSubscriptionBought(tx, fact, records);
    case "subscription_reported":
      return onSubscription(tx, fact, records);
    case "subscription_paid":
      return onInvoicePaid(tx, fact);
    case "invoice_payment":
      return onInvoicePaymentPaid(tx, fact);
    case "payment_refunded": {
      const handled = await onRefunded(tx, fact);
      return takeEarnings(tx, fact.payment, { cents: fact.earningsTakenCents, currency: fact.currency, at: fact.refundedAt }, handled);
    }
    case "dispute_opened":
    case "dispute_closed": {
      const { dispute } = fact;
      const handled = fact.fact === "dispute_opened" ? await onDisputeCreated(tx, dispute) : await onDisputeClosed(tx, dispute);
      return takeEarnings(tx, dispute.paymentIntent, { cents: fact.earningsTakenCents, currency: dispute.currency, at: dispute.at }, handled);
    }
    case "nothing":
      return ignored(fact.reason);
  }
}

type FactOf<K extends PaymentFact["fact"]> = Extract<PaymentFact, { fact: K }>;

/** The signed-in buyer named by `warden_account`, when that person exists in this environment. */
async function accountOf(tx: BillingTx, personId: string | null): Promise<Person | null> {
  return personId === null ? null : findPersonById(tx.trx, tx.workspaceId, tx.env, personId);
}

async function onSubscriptionBought(tx: BillingTx, fact: FactOf<"subscription_bought">, records: ProcessorRecords): Promise<Handled> {
  const account = isProblem(fact.metadata) ? null : await accountOf(tx, fact.metadata.accountPersonId);
  await insertSubscriptionBuyer(
    tx.trx,
    tx,
    { subscriptionId: fact.subscriptionId, email: fact.email, accountPersonId: account?.id ?? null, checkoutSession: fact.checkoutId },
    tx.now,
  );
  // The subscription's own events may have come first and waited for their buyer.
  const replayed = await replayDeferred(tx, fact.subscriptionId, records);
  return applied(replayed > 0 ? `applied ${replayed} held-back subscription event${replayed === 1 ? "" : "s"}` : null);
}

async function onPurchase(tx: BillingTx, fact: FactOf<"purchase_completed">): Promise<Handled> {
  const { metadata } = fact;
  if (isProblem(metadata)) return ignored(metadata.problem);
  const terms = await resolvePurchase(tx, metadata, "one_time");
  if (isProblem(terms)) return ignored(terms.problem);
  const account = await accountOf(tx, metadata.accountPersonId);
  const email = fact.email ?? account?.email ?? null;
  if (email === null) return ignored("checkout without the buyer's address");
  const person = account ?? (await ensurePerson(tx.trx, tx.workspaceId, tx.env, email, tx.now));
  const { created } = await recordLicencePurchase(tx, {
    terms,
    personId: person.id,
    email,
    accountPersonId: account?.id ?? null,
    purchasedAt: fact.purchasedAt,
    amountCents: fact.amountCents,
    currency: fact.currency,
    earnings: fact.earnings,
    paymentIntent: fact.payment,
    checkoutSession: fact.checkoutId,
  });
  return applied(created ? null : "licence of this checkout exists already");
}

/** Who bought a subscription: its `warden_account`, else the checkout's account or address. */
async function buyerOf(tx: BillingTx, subscriptionId: string, accountPersonId: string | null): Promise<Omit<NewSubscription, "terms"> | null> {
  const account = await accountOf(tx, accountPersonId);
  if (account) return { personId: account.id, accountPersonId: account.id };
  const link = await findSubscriptionBuyer(tx.trx, tx, subscriptionId);
  if (!link) return null;
  const linked = await accountOf(tx, link.accountPersonId);
  if (linked) return { personId: linked.id, accountPersonId: linked.id };
  if (link.email === null) return null;
  return { personId: (await ensurePerson(tx.trx, tx.workspaceId, tx.env, link.email, tx.now)).id, accountPersonId: null };
}

async function onSubscription(tx: BillingTx, fact: FactOf<"subscription_reported">, records: ProcessorRecords): Promise<Handled> {
  const { report } = fact;
  const stored = await findSubscription(tx.trx, tx, report.id);
  if (stored) {
    const plan = await planBilled(tx, stored, fact.items, records);
    const result = await applySubscriptionReport(tx, plan.planId === undefined ? report : { ...report, planId: plan.planId }, null);
    return applied(result === "stale" ? "older than the stored state" : plan.reason);
  }
  const { metadata } = fact;
  if (isProblem(metadata)) return ignored(metadata.problem);
  const terms = await resolvePurchase(tx, metadata, "subscription");
  if (isProblem(terms)) return ignored(terms.problem);
  const buyer = await buyerOf(tx, report.id, metadata.accountPersonId);
  if (!buyer) return { outcome: "deferred", reason: "waiting for the checkout that names the buyer", subscriptionId: report.id };
  await applySubscriptionReport(tx, report, { terms, ...buyer });
  return applied();
}

/**
 * The plan a stored subscription's items are billed at, when their price (or product) is
 * linked to another subscription plan of its product: a change of plan made at the
 * processor. Items linked to no plan (Warden's own checkouts price inline) leave the plan
 * as it is; a plan of another product is not taken (that would change what it gives access to).
 */
async function planBilled(
  tx: BillingTx,
  sub: StoredSubscription,
  items: readonly BoughtItem[],
  records: ProcessorRecords,
): Promise<{ planId?: string; reason: string | null }> {
  const linked = await records.planOfItems(tx.trx, tx.workspaceId, items);
  if (isProblem(linked) || linked.planId === sub.planId) return { reason: null };
  if (linked.productKind !== sub.productKind || linked.productId !== sub.productId) {
    return { reason: `its price is linked to a plan of ${linked.productKind} "${linked.productId}": the subscription keeps its product and plan` };
  }
  const terms = await resolvePurchase(tx, { ...linked, seats: null }, "subscription");
  if (isProblem(terms) || terms.planId === null)
    return { reason: `its price is linked to plan "${linked.planId}", ${isProblem(terms) ? terms.problem : "not found"}: the plan stays` };
  return { planId: terms.planId, reason: null };
}

/** Applies a subscription's held-back events in the processor's order, now that its buyer is known. */
async function replayDeferred(tx: BillingTx, subscriptionId: string, records: ProcessorRecords): Promise<number> {
  let count = 0;
  for (const held of await records.heldBack(tx, subscriptionId)) {
    const handled = await applyPaymentFact(tx, held.fact, records);
    if (handled.outcome === "deferred") continue;
    await records.settle(tx, held.id, handled);
    if (handled.outcome === "applied") count += 1;
  }
  return count;
}

async function onRefunded(tx: BillingTx, fact: FactOf<"payment_refunded">): Promise<Handled> {
  const { payment } = fact;
  if (payment === null) return ignored("refunded charge without a payment intent");
  const licence = await findLicenceByPaymentIntent(tx.trx, tx, payment);
  if (!licence) return onSubscriptionRefunded(tx, { ...fact, payment });
  if (!fact.inFull) {
    // Access is unchanged; what is new of the amount refunded counts in Insights' refunds.
    const reason = `partial refund (${fact.refundedCents} of ${fact.amountCents}): the licence stands`;
    return (await refundLicencePartlyIn(tx, licence, fact.refundedCents, fact.refundedAt)) > 0 ? applied(reason) : ignored(reason);
  }
  const outcome = await refundLicenceIn(tx, licence, { paymentIntent: payment, amountCents: fact.refundedCents, currency: fact.currency }, fact.refundedAt);
  return applied(outcome === "refunded" ? null : outcome === "already_refunded" ? "refunded already" : "revoked by a lost dispute already");
}

/**
 * A refund of a subscription's payment, in full or in part: access is unchanged (the
 * subscription's own events say whether it goes on) and no event is sent; what is new of
 * the refunded amount counts in Insights' refunds on the day the processor refunded it,
 * now, or when the subscription is stored.
 */
async function onSubscriptionRefunded(tx: BillingTx, fact: FactOf<"payment_refunded"> & { payment: string }): Promise<Handled> {
  const refund = await recordSubscriptionRefund(tx.trx, tx, {
    paymentIntent: fact.payment,
    refundedCents: fact.refundedCents,
    currency: fact.currency,
    refundedAt: fact.refundedAt,
  });
  if (!refund) return ignored("no licence or subscription invoice was paid with this payment");
  if (refund.added === 0) return applied("refunded already");
  const subscription = await findSubscription(tx.trx, tx, refund.subscriptionId);
  if (subscription) {
    await countSubscriptionRefunds(tx.trx, subscription, [{ amountCents: refund.added, currency: fact.currency, at: fact.refundedAt }]);
  }
  return applied();
}

/**
 * What a refund or a chargeback took back of the vendor's earnings, where the processor
 * said it (Paddle's adjustment, given once): counted in Insights' earnings on the day the
 * processor made it, under the product of the payment, a licence's or a stored
 * subscription's (a payment Warden does not hold takes nothing back), whatever the refund
 * or dispute changed of access (a licence refunded by the vendor in Warden first, revoked
 * then, still has its earnings taken back when Paddle approves the refund).
 */
/** What a payment's earlier adjustment took of its earnings, counted once the payment's own earnings are (paddle-ingest.service.ts). */
export async function takePaymentEarnings(tx: BillingTx, payment: string, taken: { cents: number; currency: string; at: number }): Promise<void> {
  await takeEarnings(tx, payment, taken, applied());
}

async function takeEarnings(
  tx: BillingTx,
  payment: string | null,
  taken: { cents: number | null; currency: string; at: number },
  handled: Handled,
): Promise<Handled> {
  if (taken.cents === null || taken.cents === 0 || payment === null) return handled;
  const paid = await paymentOf(tx, payment);
  const product = paid === null ? null : "licence" in paid ? paid.licence : paid.subscription;
  if (product) await countEarningsTaken(tx.trx, product, { amountCents: taken.cents, currency: taken.currency, at: taken.at });
  return handled;
}

/** The licence or subscription a payment was for. */
async function paymentOf(tx: BillingTx, paymentIntent: string): Promise<DisputedPayment | null> {
  const licence = await findLicenceByPaymentIntent(tx.trx, tx, paymentIntent);
  if (licence) return { licence };
  const subscriptionId = await findSubscriptionOfPayment(tx.trx, tx, paymentIntent);
  const subscription = subscriptionId === null ? null : await findSubscription(tx.trx, tx, subscriptionId);
  return subscription ? { subscription } : null;
}

async function openReported(tx: BillingTx, report: DisputeReport) {
  const known = await findDispute(tx.trx, tx, report.id);
  if (known) return known;
  const payment = await paymentOf(tx, report.paymentIntent);
  return payment ? openDisputeIn(tx, report, payment) : null;
}

async function onDisputeCreated(tx: BillingTx, report: DisputeReport): Promise<Handled> {
  const dispute = await openReported(tx, report);
  return dispute ? applied() : ignored("the disputed payment is neither a licence's nor a known subscription's");
}

async function onDisputeClosed(tx: BillingTx, report: DisputeReport & { at: number }): Promise<Handled> {
  const outcome = DISPUTE_OUTCOMES.find((o) => o === report.status);
  if (!outcome) return ignored(`dispute closed with status ${report.status}`);
  // Closed before Warden heard it open (reordered): it opens and closes in one go.
  const dispute = await openReported(tx, report);
  if (!dispute) return ignored("the disputed payment is neither a licence's nor a known subscription's");
  await closeDisputeIn(tx, dispute, outcome, report.at);
  return applied();
}

/**
 * A subscription's invoice paid: its amount counts once per invoice, keyed by its id, on
 * the day the processor was paid, whatever names it again (a repeat, Stripe's
 * invoice.payment_succeeded, the reconcile's reading); its payments become the
 * subscription's payments, those it names and those told apart from it before it arrived
 * (Stripe's invoice_payment.paid).
 */
async function onInvoicePaid(tx: BillingTx, invoice: FactOf<"subscription_paid">): Promise<Handled> {
  const { subscriptionId, paidAt } = invoice;
  const paid = { amountCents: invoice.amountCents, currency: invoice.currency, earnings: invoice.earnings };
  const counted = await insertSubscriptionInvoice(
    tx.trx,
    tx,
    { invoiceId: invoice.invoiceId, subscriptionId, ...paid, paidAt, paymentIntents: invoice.payments },
    tx.now,
  );
  const waited = await takeInvoicePaymentLinks(tx.trx, tx, invoice.invoiceId);
  for (const paymentIntent of new Set([...invoice.payments, ...waited])) {
    await insertSubscriptionPayment(tx.trx, tx, { paymentIntent, subscriptionId }, tx.now);
  }
  const subscription = counted ? await findSubscription(tx.trx, tx, subscriptionId) : null;
  // A subscription not stored yet counts its invoices when it is (applySubscriptionReport), on the day each was paid.
  if (subscription && paid.amountCents !== null && paid.currency !== null) {
    const earningsCents = paid.earnings?.earningsCents ?? null;
    await countSubscriptionRevenue(tx.trx, subscription, [{ amountCents: paid.amountCents, currency: paid.currency, paidAt, earningsCents }]);
  }
  return applied();
}

/**
 * A payment paid an invoice (Stripe's current API versions): once the invoice is known
 * paid, it is its subscription's payment (for its refunds and disputes); before, it waits
 * for the invoice's payment fact, which names the subscription. The amount is the
 * invoice's, counted with it.
 */
async function onInvoicePaymentPaid(tx: BillingTx, fact: FactOf<"invoice_payment">): Promise<Handled> {
  const subscriptionId = await findInvoiceSubscription(tx.trx, tx, fact.invoiceId);
  if (subscriptionId === null) {
    await insertInvoicePaymentLink(tx.trx, tx, { invoiceId: fact.invoiceId, paymentIntent: fact.payment }, tx.now);
    return applied("its invoice's invoice.paid has not arrived: the payment is linked to its subscription when it does");
  }
  await insertSubscriptionPayment(tx.trx, tx, { paymentIntent: fact.payment, subscriptionId }, tx.now);
  return applied();
}
