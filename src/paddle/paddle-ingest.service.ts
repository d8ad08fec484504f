// Paddle's notifications in: verified over the raw bytes against each connected
// environment's secret key (paddle-signature.ts) before anything parses them, then applied
// once per Paddle event_id in one transaction, under the workspace environment's payment
// lock, with the events they cause. Each is read into a processor-neutral fact
// (paddle-objects.ts) that payments/apply-fact.service.ts applies, as Stripe's are; which
// event is which fact is in this folder's README.
import { type BillingTx, inBillingTransaction } from "../billing/billing.context.js";
import { findLicenceByPaymentIntent } from "../billing/licence.store.js";
import { findSubscription } from "../billing/subscription.store.js";
import type { Env } from "../db/schema.js";
import { invalidParameter, notFound } from "../errors/errors.js";
import { applyPaymentFact, type Handled, ignored, type ProcessorRecords, takePaymentEarnings } from "../payments/apply-fact.service.js";
import { isObj, isProblem } from "../payments/fields.js";
import type { BoughtItem, PaymentFact } from "../payments/payment-facts.js";
import { invoiceHasEarnings } from "../payments/payment-link.store.js";
import type { Services } from "../services.js";
import { findPlan, findWorkspaceBySlug } from "../workspaces/workspace.store.js";
import { findPaddleAccount } from "./paddle-account.store.js";
import { addPaddleAdjustment, claimPaddleEvent, listPaddleAdjustmentEarnings, setPaddleEventOutcome } from "./paddle-event.store.js";
import { type PaddleAdjustment, type PaddleEvent, paddleFactOf, paddleItemsOf, readPaddleEvent } from "./paddle-objects.js";
import { paddlePlanOfItems } from "./paddle-plan-link.service.js";
import { verifyPaddleSignature } from "./paddle-signature.js";

export interface PaddleIngestResult {
  event: string;
  type: string;
  /** duplicate: handled before (Paddle's retry, or a replay). */
  outcome: "applied" | "ignored" | "duplicate";
  reason: string | null;
}

/**
 * Paddle's records for the facts applied: its plan links in the environment (a stored
 * subscription moved to another plan's price takes that plan), and nothing held back, as
 * Paddle names a subscription's buyer only in its own custom_data (no later checkout
 * fact could name it).
 */
const paddleRecords = (env: Env): ProcessorRecords => ({
  planOfItems: (ex, workspaceId, items) => paddlePlanOfItems(ex, { workspaceId, env }, items),
  heldBack: async () => [],
  settle: async () => {},
});

/**
 * Verifies and applies one notification. The environment is the one whose secret key
 * verifies (Paddle's body says nothing of sandbox or live). A missing, malformed, stale or
 * non-matching signature, a verified body that is not an event, or a workspace not
 * connected to Paddle is refused (400/404) and changes nothing. An event Warden cannot
 * use, malformed data in it included, is acknowledged with its reason, to be logged.
 */
export async function ingestPaddleEvent(
  services: Services,
  input: { slug: string; rawBody: Buffer; signature: string | undefined },
): Promise<PaddleIngestResult> {
  const workspace = await findWorkspaceBySlug(services.db, input.slug);
  if (!workspace) throw notFound(`No workspace "${input.slug}".`);
  const connected: { env: Env; secret: string }[] = [];
  for (const env of ["test", "live"] as const) {
    const account = await findPaddleAccount(services.db, workspace.id, env);
    if (account) connected.push({ env, secret: services.secretBox.open(account.webhookSecretSealed) });
  }
  if (connected.length === 0) throw invalidParameter("env", "Paddle is not connected for this workspace (warden admin paddle connect).");
  const { env } = verifyPaddleSignature(input.rawBody, input.signature, connected, services.clock.now());
  let parsed: unknown;
  try {
    parsed = JSON.parse(input.rawBody.toString("utf8"));
  } catch {
    throw invalidParameter("body", "The body is not a Paddle event (not JSON).");
  }
  const event = readPaddleEvent(parsed);
  if (isProblem(event)) throw invalidParameter("body", `The body is not a Paddle event: ${event.problem}.`);

  return inBillingTransaction(services, { workspaceId: workspace.id, env }, async (tx): Promise<PaddleIngestResult> => {
    const claimed = await claimPaddleEvent(tx.trx, tx, { id: event.id, type: event.type, occurredAt: event.occurredAt, receivedAt: tx.now });
    if (!claimed) return { event: event.id, type: event.type, outcome: "duplicate", reason: null };
    const handled = await applyPaddleEvent(tx, event);
    const settled: Handled =
      handled.outcome === "deferred" ? ignored("no signed-in buyer (warden_account in custom_data): Paddle names the customer by id only") : handled;
    if (settled.outcome !== "applied" || settled.reason !== null) {
      await setPaddleEventOutcome(tx.trx, tx, event.id, { outcome: settled.outcome === "applied" ? "applied" : "ignored", reason: settled.reason });
    }
    return { event: event.id, type: event.type, outcome: settled.outcome === "applied" ? "applied" : "ignored", reason: settled.reason };
  });
}

/**
 * One Paddle event (a notification, or an object the reconcile read) applied in the
 * transaction: the price paid checked against the plan named, then the fact applied.
 */
export async function applyPaddleEvent(tx: BillingTx, event: PaddleEvent): Promise<Handled> {
  const read = paddleFactOf(event);
  const fact = "fact" in read ? read : await adjustmentFact(tx, read);
  const refusal = await priceRefusal(tx, fact, paddleItemsOf(event.data), quantityOf(event.data));
  if (refusal !== null) return ignored(refusal);
  const paid = paidTransaction(fact);
  const counted = paid !== null && (await earningsCounted(tx, paid.id));
  const handled = await applyPaymentFact(tx, fact, paddleRecords(tx.env));
  if (paid !== null && !counted && (await earningsCounted(tx, paid.id))) await takeEarlierAdjustments(tx, paid);
  return handled;
}

/** The transaction a purchase or an invoice paid, with its currency: what an adjustment names. */
function paidTransaction(fact: PaymentFact): { id: string; currency: string } | null {
  if (fact.fact === "purchase_completed" && fact.payment !== null && fact.currency !== null && fact.earnings !== null) {
    return { id: fact.payment, currency: fact.currency };
  }
  if (fact.fact === "subscription_paid" && fact.currency !== null && fact.earnings !== null) return { id: fact.invoiceId, currency: fact.currency };
  return null;
}

/** Whether the transaction's earnings are counted: its licence's, or its subscription invoice's. */
async function earningsCounted(tx: BillingTx, transactionId: string): Promise<boolean> {
  const licence = await findLicenceByPaymentIntent(tx.trx, tx, transactionId);
  return licence ? licence.earnings != null : invoiceHasEarnings(tx.trx, tx, transactionId);
}

/**
 * Adjustments Paddle approved before the transaction they name arrived (Paddle does not
 * promise the order): they took nothing of the earnings then (adjustmentFact), so the
 * payment whose earnings are counted now takes back what each said, on its own day, once,
 * as applySubscriptionReport counts a subscription's refunds that came before it.
 */
async function takeEarlierAdjustments(tx: BillingTx, paid: { id: string; currency: string }): Promise<void> {
  for (const adjustment of await listPaddleAdjustmentEarnings(tx.trx, tx, paid.id)) {
    const cents = adjustment.action === "chargeback_reverse" ? -adjustment.earningsCents : adjustment.earningsCents;
    await takePaymentEarnings(tx, paid.id, { cents, currency: paid.currency, at: adjustment.at });
  }
}

/**
 * Why a purchase is not taken: its items' quantity is not the seats its custom_data names,
 * or what Paddle charged (each item's price, else product) is not linked in this
 * environment to the plan its custom_data names (the product's default
 * plan when none is named). custom_data can be set in the buyer's browser, the price is
 * what Paddle charged, so a cheap price naming a dear plan buys nothing. Checked for a
 * one-time purchase and for a subscription not stored yet; a stored subscription moved to
 * another price follows billing's change of plan (paddleRecords' planOfItems).
 */
async function priceRefusal(tx: BillingTx, fact: PaymentFact, items: BoughtItem[], quantity: number): Promise<string | null> {
  if (fact.fact !== "purchase_completed" && fact.fact !== "subscription_reported") return null;
  if (isProblem(fact.metadata)) return null;
  if (fact.fact === "subscription_reported" && (await findSubscription(tx.trx, tx, fact.report.id))) return null;
  const { productKind, productId, planId, seats } = fact.metadata;
  // Seats are paid for as the items' quantity: a team of 50 is not one price paid once.
  if (quantity !== (seats ?? 1)) return `custom_data names ${seats ?? 1} seat(s), but the items' quantity paid for is ${quantity}`;
  const named = await findPlan(tx.trx, tx.workspaceId, productKind, productId, planId);
  // A plan named that does not exist, billing refuses with its reason. None named: billing
  // takes the default plan only while it is offered and billed this way (billing/catalogue.ts),
  // and otherwise gives the product without a plan, which holds the top terms, whatever was
  // paid: so a default that billing would not take is no plan to check the price against.
  const billing = fact.fact === "purchase_completed" ? "one_time" : "subscription";
  const usable = named !== null && (planId !== null || (named.retiredAt === null && named.billing === billing));
  if (!named || !usable) {
    return planId === null ? "custom_data names no plan, and the product has no default plan offered for this billing: the price paid cannot be checked" : null;
  }
  const paid = await paddlePlanOfItems(tx.trx, tx, items);
  if (isProblem(paid)) return `${paid.problem} in ${tx.env}: not checked against plan "${named.id}" named in custom_data`;
  if (paid.productKind !== named.productKind || paid.productId !== named.productId || paid.planId !== named.id) {
    return `the price paid is linked to plan "${paid.planId}" of ${paid.productKind} "${paid.productId}", not plan "${named.id}" of ${productKind} "${productId}" named in custom_data`;
  }
  return null;
}

/** What a transaction or subscription bills for in all: its items' quantities summed (a malformed one counts none). */
const quantityOf = (data: Record<string, unknown>): number =>
  (Array.isArray(data.items) ? data.items : []).reduce<number>((sum, item) => {
    const q = isObj(item) ? item.quantity : null;
    return sum + (typeof q === "number" && Number.isSafeInteger(q) && q > 0 ? q : 0);
  }, 0);

/**
 * An approved adjustment as billing takes it, recorded once by its id. A refund: the
 * transaction's refunds so far, summed, in full when Paddle says `full` or when they reach
 * the licence's amount. A chargeback opens a dispute on the transaction (its id is the
 * dispute's: one chargeback per transaction); its reversal closes it won. Each takes back
 * what Paddle says it takes of the vendor's earnings (`totals.earnings`; a reversal gives
 * it back), the first time Warden applies it (a repeat takes nothing more), and only from a
 * payment whose earnings Warden counted (the transaction's licence or invoice).
 */
async function adjustmentFact(tx: BillingTx, adjustment: PaddleAdjustment): Promise<PaymentFact> {
  const { added, refundedCents } = await addPaddleAdjustment(tx.trx, tx, adjustment, tx.now);
  const licence = await findLicenceByPaymentIntent(tx.trx, tx, adjustment.transactionId);
  // Only from a payment whose earnings were counted: a sale before migration 053 has none, and taking from it would count less than nothing.
  const earned = licence ? licence.earnings != null : await invoiceHasEarnings(tx.trx, tx, adjustment.transactionId);
  const taken = added && earned ? adjustment.earningsCents : null;
  if (adjustment.action !== "refund") {
    const reversed = adjustment.action === "chargeback_reverse";
    const dispute = {
      id: adjustment.transactionId,
      paymentIntent: adjustment.transactionId,
      amountCents: adjustment.amountCents,
      currency: adjustment.currency,
      reason: adjustment.reason,
      status: reversed ? "won" : "needs_response",
      respondBy: null,
      at: adjustment.at,
    };
    return { fact: reversed ? "dispute_closed" : "dispute_opened", dispute, earningsTakenCents: taken === null ? null : reversed ? -taken : taken };
  }
  const paid = licence?.amountCents ?? null;
  return {
    fact: "payment_refunded",
    payment: adjustment.transactionId,
    amountCents: paid ?? refundedCents,
    refundedCents,
    inFull: adjustment.full || (paid !== null && refundedCents >= paid),
    currency: adjustment.currency,
    refundedAt: adjustment.at,
    earningsTakenCents: taken,
  };
}
