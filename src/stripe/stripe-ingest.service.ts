// Stripe's events in: verified over the raw bytes against the workspace environment's
// signing secret (stripe-signature.ts) before anything parses them, then applied once per
// Stripe event id in one transaction (under the payment lock, with the events they
// cause), whatever order they arrive in.
// The mapping from Stripe's events to Warden's changes is in this folder's README.
import { type BillingTx, inBillingTransaction } from "../billing/billing.context.js";
import { resolvePurchase } from "../billing/catalogue.js";
import { closeDisputeIn, DISPUTE_OUTCOMES, type DisputedPayment, type DisputeReport, openDisputeIn } from "../billing/dispute.service.js";
import { findDispute } from "../billing/dispute.store.js";
import { recordLicencePurchase, refundLicenceIn, refundLicencePartlyIn } from "../billing/licence.service.js";
import { findLicenceByPaymentIntent } from "../billing/licence.store.js";
import { applySubscriptionReport, type NewSubscription } from "../billing/subscription.service.js";
import { findSubscription, type StoredSubscription } from "../billing/subscription.store.js";
import { ensurePerson, findPersonById, type Person } from "../customers/person.store.js";
import type { Env, StripeEventOutcome } from "../db/schema.js";
import { invalidParameter, notFound } from "../errors/errors.js";
import { countSubscriptionRefunds, countSubscriptionRevenue } from "../insights/rollup.store.js";
import type { Services } from "../services.js";
import { findWorkspaceBySlug } from "../workspaces/workspace.store.js";
import { findStripeAccount } from "./stripe-account.store.js";
import { claimStripeEvent, listDeferredEvents, setStripeEventOutcome } from "./stripe-event.store.js";
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
} from "./stripe-link.store.js";
import {
  type Charge,
  isProblem,
  readCharge,
  readCheckoutSession,
  readDispute,
  readEvent,
  readInvoice,
  readInvoicePayment,
  readSubscription,
  readWardenMetadata,
  type StripeEvent,
} from "./stripe-objects.js";
import { type BoughtItem, planOfItems } from "./stripe-plan-link.service.js";
import { verifyStripeSignature } from "./stripe-signature.js";

export interface IngestResult {
  event: string;
  type: string;
  /** duplicate: handled before (a retry); deferred: held until its subscription's buyer is known. */
  outcome: StripeEventOutcome | "duplicate";
  reason: string | null;
}

export interface Handled {
  outcome: StripeEventOutcome;
  reason: string | null;
  /** For a deferred event: the subscription it waits for. */
  subscriptionId?: string;
}

const applied = (reason: string | null = null): Handled => ({ outcome: "applied", reason });
const ignored = (reason: string): Handled => ({ outcome: "ignored", reason });

/**
 * Verifies and applies one delivery. The signature is checked over the raw bytes before
 * they are parsed, against each connected environment's secret; the one that verifies is
 * the event's environment, and its `livemode` must agree. A bad or stale signature, a
 * verified body that is not an event, or a workspace not connected to Stripe is refused
 * (400/404) and changes nothing. An event Warden cannot use, malformed data in it
 * included, is acknowledged with its reason, to be logged.
 */
export async function ingestStripeEvent(services: Services, input: { slug: string; rawBody: Buffer; signature: string | undefined }): Promise<IngestResult> {
  const workspace = await findWorkspaceBySlug(services.db, input.slug);
  if (!workspace) throw notFound(`No workspace "${input.slug}".`);
  const connected: { env: Env; secret: string }[] = [];
  for (const env of ["test", "live"] as const) {
    const account = await findStripeAccount(services.db, workspace.id, env);
    if (account) connected.push({ env, secret: services.secretBox.open(account.webhookSecretSealed) });
  }
  if (connected.length === 0) throw invalidParameter("livemode", "Stripe is not connected for this workspace (warden admin stripe connect).");
  const { env } = verifyStripeSignature(input.rawBody, input.signature, connected, services.clock.now());
  const rawBody = input.rawBody.toString("utf8");
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawBody);
  } catch {
    throw invalidParameter("body", "The body is not a Stripe event (not JSON).");
  }
  const event = readEvent(parsed);
  if (isProblem(event)) throw invalidParameter("body", `The body is not a Stripe event: ${event.problem}.`);
  const eventEnv: Env = event.livemode ? "live" : "test";
  if (eventEnv !== env) {
    const other = connected.some((c) => c.env === eventEnv);
    throw invalidParameter(
      "livemode",
      other
        ? `A ${eventEnv} event signed with the ${env} environment's secret: each environment's events are signed with its own.`
        : `Stripe is not connected for the ${eventEnv} environment of this workspace (warden admin stripe connect).`,
    );
  }

  const result = await inBillingTransaction(services, { workspaceId: workspace.id, env }, async (tx): Promise<IngestResult> => {
    const claimed = await claimStripeEvent(tx.trx, tx, { id: event.id, type: event.type, stripeCreated: event.created, receivedAt: tx.now });
    if (!claimed) return { event: event.id, type: event.type, outcome: "duplicate", reason: null };
    const handled = await applyStripeEvent(tx, event);
    if (handled.outcome !== "applied" || handled.reason !== null) {
      await setStripeEventOutcome(tx.trx, tx, event.id, {
        ...handled,
        ...(handled.outcome === "deferred" ? { payload: rawBody } : {}),
      });
    }
    return { event: event.id, type: event.type, outcome: handled.outcome, reason: handled.reason };
  }).catch((error: unknown) => {
    services.metrics.countStripeEvent(event.type, "error");
    throw error;
  });
  // Only verified events are counted: their types are Stripe's, a closed set.
  services.metrics.countStripeEvent(result.type, result.outcome);
  return result;
}

/**
 * The event types to choose on the Stripe endpoint (the dashboard's Stripe page lists
 * them): those applyStripeEvent() acts on, with invoice.paid alone of the two invoice types that
 * say the same thing. invoice_payment.paid names a subscription invoice's payment intents
 * in current API versions, whose invoice.paid does not. Stripe sends anything else only
 * if chosen, and it is ignored.
 */
export const STRIPE_EVENT_TYPES = [
  "checkout.session.completed",
  "checkout.session.async_payment_succeeded",
  "customer.subscription.created",
  "customer.subscription.updated",
  "customer.subscription.deleted",
  "customer.subscription.paused",
  "customer.subscription.resumed",
  "invoice.paid",
  "invoice_payment.paid",
  "charge.refunded",
  "charge.dispute.created",
  "charge.dispute.closed",
] as const;

/**
 * Applies one Stripe event inside an open payment transaction: the webhook's deliveries
 * and the reconcile's reading of Stripe's objects (stripe-reconcile.service.ts) both come
 * through here, so the same fact makes the same change and derives the same event ids.
 */
export async function applyStripeEvent(tx: BillingTx, event: StripeEvent): Promise<Handled> {
  switch (event.type) {
    case "checkout.session.completed":
    case "checkout.session.async_payment_succeeded":
      return onCheckoutCompleted(tx, event);
    case "customer.subscription.created":
    case "customer.subscription.updated":
    case "customer.subscription.deleted":
    case "customer.subscription.paused":
    case "customer.subscription.resumed":
      return onSubscription(tx, event);
    case "charge.refunded":
      return onChargeRefunded(tx, event);
    case "charge.dispute.created":
      return onDisputeCreated(tx, event);
    case "charge.dispute.closed":
      return onDisputeClosed(tx, event);
    case "invoice.paid":
    case "invoice.payment_succeeded":
      return onInvoicePaid(tx, event);
    case "invoice_payment.paid":
      return onInvoicePaymentPaid(tx, event);
    default:
      return ignored(`Warden does not use ${event.type} events`);
  }
}

/** The signed-in buyer named by `warden_account`, when that person exists in this environment. */
async function accountOf(tx: BillingTx, personId: string | null): Promise<Person | null> {
  return personId === null ? null : findPersonById(tx.trx, tx.workspaceId, tx.env, personId);
}

async function onCheckoutCompleted(tx: BillingTx, event: StripeEvent): Promise<Handled> {
  const session = readCheckoutSession(event);
  if (isProblem(session)) return ignored(session.problem);
  const metadata = readWardenMetadata(session.metadata);

  if (session.mode === "subscription") {
    if (session.subscription === null) return ignored("subscription checkout without a subscription");
    const account = isProblem(metadata) ? null : await accountOf(tx, metadata.accountPersonId);
    await insertSubscriptionBuyer(
      tx.trx,
      tx,
      { subscriptionId: session.subscription, email: session.email, accountPersonId: account?.id ?? null, checkoutSession: session.id },
      tx.now,
    );
    // The subscription's own events may have come first and waited for their buyer.
    const replayed = await replayDeferred(tx, session.subscription);
    return applied(replayed > 0 ? `applied ${replayed} held-back subscription event${replayed === 1 ? "" : "s"}` : null);
  }
  if (session.mode !== "payment") return ignored(`checkout in ${session.mode ?? "unknown"} mode buys nothing`);
  if (session.paymentStatus !== "paid" && session.paymentStatus !== "no_payment_required") {
    return ignored(`payment is ${session.paymentStatus ?? "not complete"}; the licence follows checkout.session.async_payment_succeeded`);
  }
  if (isProblem(metadata)) return ignored(metadata.problem);
  const terms = await resolvePurchase(tx, metadata, "one_time");
  if (isProblem(terms)) return ignored(terms.problem);
  const account = await accountOf(tx, metadata.accountPersonId);
  const email = session.email ?? account?.email ?? null;
  if (email === null) return ignored("checkout without the buyer's address");
  const person = account ?? (await ensurePerson(tx.trx, tx.workspaceId, tx.env, email, tx.now));
  const { created } = await recordLicencePurchase(tx, {
    terms,
    personId: person.id,
    email,
    accountPersonId: account?.id ?? null,
    purchasedAt: session.purchasedAt,
    amountCents: session.amountTotal,
    currency: session.currency,
    paymentIntent: session.paymentIntent,
    checkoutSession: session.id,
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

async function onSubscription(tx: BillingTx, event: StripeEvent): Promise<Handled> {
  const read = readSubscription(event);
  if (isProblem(read)) return ignored(read.problem);
  const { report } = read;
  const stored = await findSubscription(tx.trx, tx, report.id);
  if (stored) {
    const plan = await planBilled(tx, stored, read.items);
    const result = await applySubscriptionReport(tx, plan.planId === undefined ? report : { ...report, planId: plan.planId }, null);
    return applied(result === "stale" ? "older than the stored state" : plan.reason);
  }
  const metadata = readWardenMetadata(read.metadata);
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
 * linked to another subscription plan of its product: a change of plan made at Stripe.
 * Items linked to no plan (Warden's own checkouts price inline) leave the plan as it is;
 * a plan of another product is not taken (that would change what it gives access to).
 */
async function planBilled(tx: BillingTx, sub: StoredSubscription, items: readonly BoughtItem[]): Promise<{ planId?: string; reason: string | null }> {
  const linked = await planOfItems(tx.trx, tx.workspaceId, items);
  if (isProblem(linked) || linked.planId === sub.planId) return { reason: null };
  if (linked.productKind !== sub.productKind || linked.productId !== sub.productId) {
    return { reason: `its price is linked to a plan of ${linked.productKind} "${linked.productId}": the subscription keeps its product and plan` };
  }
  const terms = await resolvePurchase(tx, { ...linked, seats: null }, "subscription");
  if (isProblem(terms) || terms.planId === null)
    return { reason: `its price is linked to plan "${linked.planId}", ${isProblem(terms) ? terms.problem : "not found"}: the plan stays` };
  return { planId: terms.planId, reason: null };
}

/** Applies a subscription's held-back events in Stripe's order, now that its buyer is known. */
async function replayDeferred(tx: BillingTx, subscriptionId: string): Promise<number> {
  let count = 0;
  for (const held of await listDeferredEvents(tx.trx, tx, subscriptionId)) {
    const event = readEvent(JSON.parse(held.payload));
    const handled = isProblem(event) ? ignored("held-back event no longer reads as an event") : await onSubscription(tx, event);
    if (handled.outcome === "deferred") continue;
    await setStripeEventOutcome(tx.trx, tx, held.id, handled);
    if (handled.outcome === "applied") count += 1;
  }
  return count;
}

async function onChargeRefunded(tx: BillingTx, event: StripeEvent): Promise<Handled> {
  const charge = readCharge(event);
  if (isProblem(charge)) return ignored(charge.problem);
  const { paymentIntent } = charge;
  if (paymentIntent === null) return ignored("refunded charge without a payment intent");
  const licence = await findLicenceByPaymentIntent(tx.trx, tx, paymentIntent);
  if (!licence) return onSubscriptionRefunded(tx, { ...charge, paymentIntent });
  if (!charge.refundedInFull) {
    // Access is unchanged; what is new of the amount refunded counts in Insights' refunds.
    const reason = `partial refund (${charge.amountRefunded} of ${charge.amount}): the licence stands`;
    return (await refundLicencePartlyIn(tx, licence, charge.amountRefunded, charge.refundedAt)) > 0 ? applied(reason) : ignored(reason);
  }
  const outcome = await refundLicenceIn(tx, licence, { paymentIntent, amountCents: charge.amountRefunded, currency: charge.currency }, charge.refundedAt);
  return applied(outcome === "refunded" ? null : outcome === "already_refunded" ? "refunded already" : "revoked by a lost dispute already");
}

/**
 * A refund of a subscription's payment, in full or in part: access is unchanged (the
 * subscription's own events say whether it goes on) and no event is sent; what is new of
 * the refunded amount counts in Insights' refunds on the day Stripe refunded it, now, or
 * when the subscription is stored.
 */
async function onSubscriptionRefunded(tx: BillingTx, charge: Charge & { paymentIntent: string }): Promise<Handled> {
  const refund = await recordSubscriptionRefund(tx.trx, tx, {
    paymentIntent: charge.paymentIntent,
    refundedCents: charge.amountRefunded,
    currency: charge.currency,
    refundedAt: charge.refundedAt,
  });
  if (!refund) return ignored("no licence or subscription invoice was paid with this payment");
  if (refund.added === 0) return applied("refunded already");
  const subscription = await findSubscription(tx.trx, tx, refund.subscriptionId);
  if (subscription) {
    await countSubscriptionRefunds(tx.trx, subscription, [{ amountCents: refund.added, currency: charge.currency, at: charge.refundedAt }]);
  }
  return applied();
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

async function onDisputeCreated(tx: BillingTx, event: StripeEvent): Promise<Handled> {
  const report = readDispute(event);
  if (isProblem(report)) return ignored(report.problem);
  const dispute = await openReported(tx, report);
  return dispute ? applied() : ignored("the disputed payment is neither a licence's nor a known subscription's");
}

async function onDisputeClosed(tx: BillingTx, event: StripeEvent): Promise<Handled> {
  const report = readDispute(event);
  if (isProblem(report)) return ignored(report.problem);
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
 * the day Stripe was paid, whatever names it again (a repeat, invoice.payment_succeeded,
 * the reconcile's reading); its payment intents become the subscription's payments,
 * those it names (older API versions, or `payments` expanded) and those its
 * invoice_payment.paid events named before it arrived.
 */
async function onInvoicePaid(tx: BillingTx, event: StripeEvent): Promise<Handled> {
  const invoice = readInvoice(event);
  if (isProblem(invoice)) return ignored(invoice.problem);
  const { subscriptionId, paidAt } = invoice;
  const paid = { amountCents: invoice.amountPaid, currency: invoice.currency };
  const counted = await insertSubscriptionInvoice(
    tx.trx,
    tx,
    { invoiceId: invoice.id, subscriptionId, ...paid, paidAt, paymentIntents: invoice.paymentIntents },
    tx.now,
  );
  const waited = await takeInvoicePaymentLinks(tx.trx, tx, invoice.id);
  for (const paymentIntent of new Set([...invoice.paymentIntents, ...waited])) {
    await insertSubscriptionPayment(tx.trx, tx, { paymentIntent, subscriptionId }, tx.now);
  }
  const subscription = counted ? await findSubscription(tx.trx, tx, subscriptionId) : null;
  // A subscription not stored yet counts its invoices when it is (applySubscriptionReport), on the day each was paid.
  if (subscription && paid.amountCents !== null && paid.currency !== null) {
    await countSubscriptionRevenue(tx.trx, subscription, [{ amountCents: paid.amountCents, currency: paid.currency, paidAt }]);
  }
  return applied();
}

/**
 * A payment intent paid an invoice (current API versions): once the invoice is known paid,
 * it is its subscription's payment (for its refunds and disputes); before, it waits for
 * the invoice's invoice.paid, which names the subscription. The amount is the invoice's,
 * counted by invoice.paid.
 */
async function onInvoicePaymentPaid(tx: BillingTx, event: StripeEvent): Promise<Handled> {
  const payment = readInvoicePayment(event);
  if (isProblem(payment)) return ignored(payment.problem);
  const subscriptionId = await findInvoiceSubscription(tx.trx, tx, payment.invoiceId);
  if (subscriptionId === null) {
    await insertInvoicePaymentLink(tx.trx, tx, payment, tx.now);
    return applied("its invoice's invoice.paid has not arrived: the payment is linked to its subscription when it does");
  }
  await insertSubscriptionPayment(tx.trx, tx, { paymentIntent: payment.paymentIntent, subscriptionId }, tx.now);
  return applied();
}
