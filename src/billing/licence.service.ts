// Licence life cycle (the specification's Licence table): bought (purchase.completed),
// refunded in full (revoked, payment.refunded). Disputes are in dispute.service.ts. A
// licence whose plan gives credits adds them when bought; a full refund takes back what
// is left of them.
// The `…In` functions run inside a payment transaction (billing.context.ts) and are
// shared by Stripe's reports and the vendor's actions, so both apply the same change.
import { type Actor, recordAction } from "../audit/audit.service.js";
import { toIso, utcDayOf } from "../clock.js";
import { findPersonByEmail } from "../customers/person.store.js";
import type { Env } from "../db/schema.js";
import { invalidParameter, notFound } from "../errors/errors.js";
import { newId } from "../ids.js";
import { bump, productScope } from "../insights/rollup.store.js";
import type { ProcessorName } from "../payments/payment-processor.js";
import { processorOf } from "../payments/processors.js";
import type { Services } from "../services.js";
import { addPackCreditsIn } from "../usage/credits.service.js";
import { zeroLicenceCredits } from "../usage/credits.store.js";
import { findTool, listBundles } from "../workspaces/workspace.store.js";
import { requireEnv, requireWorkspace } from "../workspaces/workspace-lookup.service.js";
import { type BillingTx, holdHoldersSpends, inBillingTransaction, syncHolders } from "./billing.context.js";
import { emitLicencePurchased, emitLicenceRefunded } from "./billing.events.js";
import type { PurchaseTerms } from "./catalogue.js";
import {
  type Earnings,
  findLicenceByCheckoutSession,
  findLicenceById,
  insertLicence,
  listLicences,
  listSeats,
  recordLicenceRefund,
  type StoredLicence,
  setLicenceStatus,
} from "./licence.store.js";

export interface LicencePurchase {
  terms: PurchaseTerms;
  /** Who holds it: the signed-in buyer's account, else the person of the address at checkout. */
  personId: string;
  /** Address at checkout. */
  email: string;
  /** The buyer's account when bought signed in. */
  accountPersonId: string | null;
  purchasedAt: number;
  amountCents: number | null;
  currency: string | null;
  /** What the vendor earns of it after the processor's fee and tax, where the processor says so (Paddle); null otherwise. */
  earnings: Earnings | null;
  paymentIntent: string | null;
  checkoutSession: string;
}

/** A paid checkout becomes a licence (a team licence with seats) and purchase.completed, once per checkout. */
export async function recordLicencePurchase(tx: BillingTx, purchase: LicencePurchase): Promise<{ licence: StoredLicence; created: boolean }> {
  const existing = await findLicenceByCheckoutSession(tx.trx, tx, purchase.checkoutSession);
  if (existing) return { licence: existing, created: false };
  const licence: StoredLicence = {
    id: newId("lic"),
    workspaceId: tx.workspaceId,
    env: tx.env,
    personId: purchase.personId,
    productKind: purchase.terms.productKind,
    productId: purchase.terms.productId,
    planId: purchase.terms.planId,
    status: "active",
    purchasedAt: purchase.purchasedAt,
    amountCents: purchase.amountCents,
    currency: purchase.currency,
    earnings: purchase.earnings,
    paymentIntent: purchase.paymentIntent,
    checkoutSession: purchase.checkoutSession,
    seats: purchase.terms.seats,
    teamLicenceId: null,
    teamSubscriptionId: null,
    createdAt: tx.now,
    refundedAt: null,
  };
  await insertLicence(tx.trx, licence);
  // A credit pack (or a plan that also gives credits): its credits, to the buyer, with the licence.
  await addPackCreditsIn(tx.trx, licence, tx.now);
  await emitLicencePurchased(tx, licence, { email: purchase.email, accountPersonId: purchase.accountPersonId });
  await syncHolders(tx, licence, [licence.personId]);
  return { licence, created: true };
}

/** The licence's holder and, for a team licence, every seat holder: whose access a change of it moves. */
export async function holdersOfLicence(tx: BillingTx, licence: StoredLicence): Promise<string[]> {
  const seats = licence.seats !== null && licence.seats > 0 ? await listSeats(tx.trx, tx, { teamLicenceId: licence.id }) : [];
  return [licence.personId, ...seats.map((s) => s.personId)];
}

export type RefundOutcome = "refunded" | "already_refunded" | "revoked_by_dispute";

/**
 * A full refund, made at `at` (Stripe's time of the refund it reports, or the vendor's
 * action's): the licence is revoked and payment.refunded sent. A licence refunded
 * already changes nothing and sends nothing new (the event's id is the payment's, so
 * the second report of the same refund would be a no-op anyway).
 */
export async function refundLicenceIn(
  tx: BillingTx,
  licence: StoredLicence,
  refund: { paymentIntent: string; amountCents: number; currency: string },
  at: number,
): Promise<RefundOutcome> {
  if (licence.refundedAt !== null) return "already_refunded";
  if (licence.status === "revoked") return "revoked_by_dispute";
  const holders = await holdersOfLicence(tx, licence);
  // A spend already drawing on the licence commits first (before its credits are taken below: the spend locks them too).
  await holdHoldersSpends(tx, licence, holders);
  await setLicenceStatus(tx.trx, licence.id, "revoked", at);
  // What is left of a pack's credits goes with it; what was spent is not clawed back.
  await zeroLicenceCredits(tx.trx, licence.id);
  // What partial refunds before it counted already is not counted again.
  await countRefund(tx, licence, await recordLicenceRefund(tx.trx, licence.id, licence.amountCents ?? 0, at), licence.currency, at);
  await emitLicenceRefunded(tx, licence, refund);
  await syncHolders(tx, licence, holders);
  return "refunded";
}

/**
 * A refund of part of a licence's payment: the licence stands and nothing is sent; what is
 * new of the amount refunded (`refundedCents` adds up every partial refund, as Stripe's
 * `amount_refunded` does) counts in Insights' refunds on the day of `at`, Stripe's time of
 * the refund. Answers that amount. A revoked licence (refunded in full, or by a lost
 * dispute) has counted its money already.
 */
export async function refundLicencePartlyIn(tx: BillingTx, licence: StoredLicence, refundedCents: number, at: number): Promise<number> {
  if (licence.status === "revoked") return 0;
  const added = await recordLicenceRefund(tx.trx, licence.id, refundedCents, at);
  await countRefund(tx, licence, added, licence.currency, at);
  return added;
}

export interface RefundResult {
  id: string;
  workspaceId: string;
  env: Env;
  status: "revoked";
  refunded_at: string;
  /** False when it had been refunded before (by Stripe or an earlier command). */
  refunded_now: boolean;
  /** The processor asked to refund the payment (the environment's, when it has an API key), or null when none was. */
  at_processor: ProcessorName | null;
}

/**
 * The vendor's refund (the specification's dashboard source): made at the environment's
 * processor (Stripe, Paddle) when it has an API key, then the licence is revoked and
 * payment.refunded sent with the id the processor's own report of the refund will also derive. An owner's refund from
 * the dashboard names them as `actor`: recorded in the audit log with the change.
 */
export async function refundLicence(services: Services, input: { id: string; actor?: Actor }): Promise<RefundResult> {
  const found = await findLicenceById(services.db, input.id);
  if (!found) throw notFound(`No licence "${input.id}".`);
  if (found.teamLicenceId !== null || found.teamSubscriptionId !== null) {
    throw invalidParameter("id", `Licence ${found.id} is a seat of a team purchase and carries no payment; refund the team purchase, or unassign the seat.`);
  }
  const { paymentIntent, amountCents, currency } = found;
  if (paymentIntent === null || amountCents === null || currency === null) {
    throw invalidParameter("id", `Licence ${found.id} has no recorded payment (payment intent, amount and currency) to refund.`);
  }
  // The money first: if the processor refuses, nothing changes here.
  const processor = await processorOf(services, found);
  const asked =
    found.refundedAt === null && found.status !== "revoked" ? await processor.refund(services, found, { payment: paymentIntent, licenceId: found.id }) : false;
  return inBillingTransaction(services, found, async (tx) => {
    const licence = (await findLicenceById(tx.trx, found.id)) ?? found;
    // The vendor's own refund is made now, at the processor and here.
    const outcome = await refundLicenceIn(tx, licence, { paymentIntent, amountCents, currency }, tx.now);
    if (outcome === "revoked_by_dispute") throw invalidParameter("id", `Licence ${licence.id} was revoked by a lost dispute; there is nothing to refund.`);
    if (outcome === "refunded" && input.actor !== undefined) {
      await recordAction(tx.trx, input.actor, { action: "licence.refunded", workspaceId: licence.workspaceId, env: licence.env, subject: licence.id }, tx.now);
    }
    const refundedAt = outcome === "refunded" ? tx.now : (licence.refundedAt ?? tx.now);
    return {
      id: licence.id,
      workspaceId: licence.workspaceId,
      env: licence.env,
      status: "revoked",
      refunded_at: toIso(refundedAt),
      refunded_now: outcome === "refunded",
      at_processor: asked ? processor.name : null,
    };
  });
}

/** Money given back (a refund, a lost dispute) at `at`: Insights' refunds on that day. */
export async function countRefund(
  tx: BillingTx,
  product: Pick<StoredLicence, "productKind" | "productId" | "planId">,
  amountCents: number | null,
  currency: string | null,
  at: number,
): Promise<void> {
  if (amountCents === null || currency === null) return;
  await bump(tx.trx, [
    {
      workspaceId: tx.workspaceId,
      env: tx.env,
      metric: "refunds",
      day: utcDayOf(at),
      scope: productScope(product.productKind, product.productId),
      currency,
      planId: product.planId,
      value: amountCents,
    },
  ]);
}

/** What `warden admin licence list` shows of a licence: its id is what `admin licence refund` and `admin dispute open` take. */
export interface ListedLicence {
  id: string;
  email: string;
  tool: string | null;
  bundle: string | null;
  plan: string | null;
  status: StoredLicence["status"];
  seats: number | null;
  team: string | null;
  amount_cents: number | null;
  currency: string | null;
  purchased_at: string;
}

const LICENCE_LIST_LIMIT = 100;

/**
 * `warden admin licence list`: a workspace environment's licences, newest first (the
 * latest 100): of one address, of the licences that give one tool (its own and its
 * bundles'), or both.
 */
export async function listLicencesByCommand(
  services: Services,
  input: { workspace: string; env: string; email?: string; tool?: string },
): Promise<ListedLicence[]> {
  const workspace = await requireWorkspace(services.db, input.workspace);
  const env = requireEnv(input.env);
  const scope = { workspaceId: workspace.id, env };
  let personId: string | undefined;
  if (input.email !== undefined) {
    const person = await findPersonByEmail(services.db, workspace.id, env, input.email);
    if (person === null) return [];
    personId = person.id;
  }
  let products: { kind: "tool" | "bundle"; id: string }[] | undefined;
  if (input.tool !== undefined) {
    const tool = input.tool;
    if (!(await findTool(services.db, workspace.id, tool))) throw notFound(`No tool "${tool}" in workspace "${workspace.slug}".`);
    const bundles = (await listBundles(services.db, workspace.id)).filter((b) => b.toolIds.includes(tool));
    products = [{ kind: "tool", id: tool }, ...bundles.map((b) => ({ kind: "bundle" as const, id: b.id }))];
  }
  const licences = await listLicences(services.db, scope, {
    ...(personId !== undefined ? { personId } : {}),
    ...(products !== undefined ? { products } : {}),
    limit: LICENCE_LIST_LIMIT,
  });
  return licences.map((l) => ({
    id: l.id,
    email: l.email,
    tool: l.productKind === "tool" ? l.productId : null,
    bundle: l.productKind === "bundle" ? l.productId : null,
    plan: l.planId,
    status: l.status,
    seats: l.seats,
    team: l.teamLicenceId ?? l.teamSubscriptionId,
    amount_cents: l.amountCents,
    currency: l.currency,
    purchased_at: toIso(l.purchasedAt),
  }));
}
