// Disputes (the specification's Licence table): opened, the licence is suspended and
// payment.disputed sent; closed won or warning_closed, it is active again; lost, it is
// revoked; dispute.closed sent either way. A pack's credits are held while its licence is
// suspended (spending draws only from an active licence's rows), spendable again when it
// is won, taken back (what is left of them) when it is lost. A dispute of a subscription's payment has no
// licence: its events carry email and licence null and nothing is suspended.
import { DAY_MS, toIso } from "../clock.js";
import type { Env } from "../db/schema.js";
import { invalidParameter, notFound } from "../errors/errors.js";
import { newId } from "../ids.js";
import type { Services } from "../services.js";
import { zeroLicenceCredits } from "../usage/credits.store.js";
import { type BillingTx, holdHoldersSpends, inBillingTransaction, syncHolders } from "./billing.context.js";
import { emitDisputeClosed, emitPaymentDisputed } from "./billing.events.js";
import { closeDisputeRow, type Dispute, findDispute, findDisputesById, insertDispute } from "./dispute.store.js";
import { countRefund, holdersOfLicence } from "./licence.service.js";
import { findLicenceById, type StoredLicence, setLicenceStatus } from "./licence.store.js";
import { findSubscription, type StoredSubscription } from "./subscription.store.js";

export type DisputeOutcome = "won" | "lost" | "warning_closed";
export const DISPUTE_OUTCOMES: readonly DisputeOutcome[] = ["won", "lost", "warning_closed"];

/** What the processor says about a dispute when it opens. */
export interface DisputeReport {
  id: string;
  paymentIntent: string;
  amountCents: number;
  currency: string;
  reason: string;
  status: string;
  respondBy: number | null;
}

export type DisputedPayment = { licence: StoredLicence } | { subscription: StoredSubscription };

/**
 * Records a dispute and, while it is open, suspends the licence it is about; sends
 * payment.disputed (once per dispute). A dispute known already changes nothing.
 */
export async function openDisputeIn(tx: BillingTx, report: DisputeReport, payment: DisputedPayment): Promise<Dispute> {
  const existing = await findDispute(tx.trx, tx, report.id);
  if (existing) return existing;
  const licence = "licence" in payment ? payment.licence : null;
  const product = "licence" in payment ? payment.licence : payment.subscription;
  const dispute: Dispute = {
    workspaceId: tx.workspaceId,
    env: tx.env,
    id: report.id,
    licenceId: licence?.id ?? null,
    subscriptionId: "subscription" in payment ? payment.subscription.id : null,
    productKind: product.productKind,
    productId: product.productId,
    paymentIntent: report.paymentIntent,
    amountCents: report.amountCents,
    currency: report.currency,
    reason: report.reason,
    status: report.status,
    respondBy: report.respondBy,
    openedAt: tx.now,
    closedAt: null,
  };
  await insertDispute(tx.trx, dispute);
  await emitPaymentDisputed(tx, dispute, licence, dispute);
  if (licence && licence.status === "active") {
    const holders = await holdersOfLicence(tx, licence);
    // A spend already drawing on the licence's allowance or credits commits first; none after.
    await holdHoldersSpends(tx, licence, holders);
    await setLicenceStatus(tx.trx, licence.id, "suspended");
    await syncHolders(tx, licence, holders);
  }
  return dispute;
}

/**
 * Closes a dispute at `at` (Stripe's time of the close it reports, or the test command's):
 * won or warning_closed make a suspended licence active again, lost revokes it and counts
 * as a refund on that day; dispute.closed is sent once. Closing a closed dispute changes nothing.
 */
export async function closeDisputeIn(tx: BillingTx, dispute: Dispute, outcome: DisputeOutcome, at: number): Promise<void> {
  const licence = dispute.licenceId ? await findLicenceById(tx.trx, dispute.licenceId) : null;
  if (dispute.closedAt !== null) return;
  await closeDisputeRow(tx.trx, tx, dispute.id, outcome, at);
  if (outcome === "lost") {
    // The bank took the money back: to the vendor, a refund.
    const sub = licence || dispute.subscriptionId === null ? null : await findSubscription(tx.trx, tx, dispute.subscriptionId);
    const planId = licence?.planId ?? sub?.planId ?? null;
    await countRefund(tx, { productKind: dispute.productKind, productId: dispute.productId, planId }, dispute.amountCents, dispute.currency, at);
  }
  await emitDisputeClosed(tx, dispute, licence, outcome);
  if (!licence) return;
  const next = outcome === "lost" ? (licence.status === "revoked" ? null : "revoked") : licence.status === "suspended" ? "active" : null;
  if (next === null) return;
  await setLicenceStatus(tx.trx, licence.id, next);
  // Lost: what is left of a pack's credits is taken back, as by a full refund.
  if (next === "revoked") await zeroLicenceCredits(tx.trx, licence.id);
  await syncHolders(tx, licence, await holdersOfLicence(tx, licence));
}

export interface TestDispute {
  id: string;
  workspaceId: string;
  env: Env;
  licence: string | null;
  status: string;
  respond_by: string | null;
  closed_at: string | null;
}

const present = (d: Dispute, closedAt: number | null = d.closedAt, status = d.status): TestDispute => ({
  id: d.id,
  workspaceId: d.workspaceId,
  env: d.env,
  licence: d.licenceId,
  status,
  respond_by: d.respondBy === null ? null : toIso(d.respondBy),
  closed_at: closedAt === null ? null : toIso(closedAt),
});

function requireTestEnvironment(env: Env, param: string): void {
  if (env !== "test") {
    throw invalidParameter(param, "Disputes can be opened and closed by command only in the test environment; live disputes come from Stripe.");
  }
}

/** Test environment only: a dispute of a licence's payment, as a buyer's bank would open it, to try an integration end to end. */
export async function openTestDispute(services: Services, input: { licence: string }): Promise<TestDispute> {
  const licence = await findLicenceById(services.db, input.licence);
  if (!licence) throw notFound(`No licence "${input.licence}".`);
  requireTestEnvironment(licence.env, "licence");
  const { paymentIntent, amountCents, currency } = licence;
  if (licence.teamLicenceId !== null || licence.teamSubscriptionId !== null || paymentIntent === null || amountCents === null || currency === null) {
    throw invalidParameter("licence", `Licence ${licence.id} has no recorded payment (payment intent, amount and currency) to dispute.`);
  }
  return inBillingTransaction(services, licence, async (tx) => {
    const current = (await findLicenceById(tx.trx, licence.id)) ?? licence;
    if (current.status !== "active")
      throw invalidParameter("licence", `Licence ${current.id} is ${current.status}; only an active licence's payment can be disputed.`);
    const report: DisputeReport = {
      id: newId("du"),
      paymentIntent,
      amountCents,
      currency,
      reason: "fraudulent",
      status: "needs_response",
      respondBy: tx.now + 7 * DAY_MS,
    };
    return present(await openDisputeIn(tx, report, { licence: current }));
  });
}

/** Test environment only: closes a dispute as the bank would decide it. */
export async function closeTestDispute(services: Services, input: { id: string; status: string }): Promise<TestDispute> {
  const outcome = DISPUTE_OUTCOMES.find((o) => o === input.status);
  if (!outcome) throw invalidParameter("status", "status must be won, lost or warning_closed.");
  const [found, ...others] = await findDisputesById(services.db, input.id);
  if (!found) throw notFound(`No dispute "${input.id}".`);
  if (others.length > 0) throw invalidParameter("id", `Dispute id ${input.id} is not unique; it cannot be closed by command.`);
  requireTestEnvironment(found.env, "id");
  return inBillingTransaction(services, found, async (tx) => {
    const dispute = (await findDispute(tx.trx, tx, found.id)) ?? found;
    if (dispute.closedAt !== null) throw invalidParameter("id", `Dispute ${dispute.id} is closed already (${dispute.status}).`);
    await closeDisputeIn(tx, dispute, outcome, tx.now);
    return present(dispute, tx.now, outcome);
  });
}
