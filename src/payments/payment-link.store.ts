// What a processor tells about subscriptions beyond the subscription object: who bought it
// (from the checkout, which may arrive before or after the subscription's own events) and
// which payments are its invoices' (so a refund or a dispute can name its tool). The
// columns keep Stripe's names (payment_intent, invoice_id, checkout_session): Paddle's
// transaction id fills the first two, as it is both its payment and its invoice.
import type { Earnings } from "../billing/licence.store.js";
import type { Executor } from "../db/database.js";
import type { Env } from "../db/schema.js";

type Scope = { workspaceId: string; env: Env };

export interface SubscriptionBuyer {
  subscriptionId: string;
  email: string | null;
  accountPersonId: string | null;
  checkoutSession: string;
}

/** The first checkout that names a subscription is kept; a repeat changes nothing. */
export async function insertSubscriptionBuyer(ex: Executor, scope: Scope, buyer: SubscriptionBuyer, now: number): Promise<void> {
  await ex
    .insertInto("subscription_buyers")
    .values({
      workspace_id: scope.workspaceId,
      env: scope.env,
      subscription_id: buyer.subscriptionId,
      email: buyer.email,
      account_person_id: buyer.accountPersonId,
      checkout_session: buyer.checkoutSession,
      created_at: now,
    })
    .onConflict((oc) => oc.columns(["workspace_id", "env", "subscription_id"]).doNothing())
    .execute();
}

export async function findSubscriptionBuyer(ex: Executor, scope: Scope, subscriptionId: string): Promise<SubscriptionBuyer | null> {
  const r = await ex
    .selectFrom("subscription_buyers")
    .selectAll()
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("subscription_id", "=", subscriptionId)
    .executeTakeFirst();
  return r ? { subscriptionId: r.subscription_id, email: r.email, accountPersonId: r.account_person_id, checkoutSession: r.checkout_session } : null;
}

/** Remembers that a payment intent paid one of the subscription's invoices (for its refunds and disputes); a repeat changes nothing. */
export async function insertSubscriptionPayment(
  ex: Executor,
  scope: Scope,
  payment: { paymentIntent: string; subscriptionId: string },
  now: number,
): Promise<void> {
  await ex
    .insertInto("subscription_payments")
    .values({
      workspace_id: scope.workspaceId,
      env: scope.env,
      payment_intent: payment.paymentIntent,
      subscription_id: payment.subscriptionId,
      created_at: now,
      currency: null,
    })
    .onConflict((oc) => oc.columns(["workspace_id", "env", "payment_intent"]).doNothing())
    .execute();
}

export interface SubscriptionInvoice {
  invoiceId: string;
  subscriptionId: string;
  amountCents: number | null;
  currency: string | null;
  /** Where the processor reports it (Paddle); null otherwise. */
  earnings: Earnings | null;
  /** When Stripe was paid. */
  paidAt: number;
}

/**
 * Keeps a subscription's paid invoice, once: answers true when it is new, so that its
 * revenue is counted once however often it is reported (Stripe's repeats, the reconcile's
 * readings, invoice.paid and invoice.payment_succeeded). An invoice counted before
 * migration 040 is kept under its first payment intent's id: one naming such a payment
 * intent is not new either.
 */
export async function insertSubscriptionInvoice(
  ex: Executor,
  scope: Scope,
  invoice: SubscriptionInvoice & { paymentIntents: readonly string[] },
  now: number,
): Promise<boolean> {
  const known = await ex
    .selectFrom("subscription_invoices")
    .select("invoice_id")
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("invoice_id", "in", [invoice.invoiceId, ...invoice.paymentIntents])
    .executeTakeFirst();
  if (known) return false;
  const r = await ex
    .insertInto("subscription_invoices")
    .values({
      workspace_id: scope.workspaceId,
      env: scope.env,
      invoice_id: invoice.invoiceId,
      subscription_id: invoice.subscriptionId,
      amount_cents: invoice.amountCents,
      currency: invoice.currency,
      earnings_cents: invoice.earnings?.earningsCents ?? null,
      fee_cents: invoice.earnings?.feeCents ?? null,
      tax_cents: invoice.earnings?.taxCents ?? null,
      paid_at: invoice.paidAt,
      created_at: now,
    })
    .onConflict((oc) => oc.columns(["workspace_id", "env", "invoice_id"]).doNothing())
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** What a subscription's invoices paid (and earned, where the processor says), each when Stripe was paid (its invoices may arrive before the subscription's events; index of migration 040). */
export async function listSubscriptionInvoices(
  ex: Executor,
  scope: Scope,
  subscriptionId: string,
): Promise<{ amountCents: number; currency: string; paidAt: number; earningsCents: number | null }[]> {
  const rows = await ex
    .selectFrom("subscription_invoices")
    .select(["amount_cents", "currency", "paid_at", "earnings_cents"])
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("subscription_id", "=", subscriptionId)
    .where("amount_cents", "is not", null)
    .execute();
  return rows.flatMap((r) =>
    r.amount_cents === null || r.currency === null
      ? []
      : [
          {
            amountCents: Number(r.amount_cents),
            currency: r.currency,
            paidAt: Number(r.paid_at),
            earningsCents: r.earnings_cents === null ? null : Number(r.earnings_cents),
          },
        ],
  );
}

/** Whether an invoice Warden holds has what the vendor earned of it (the processor reported it: Paddle's, from migration 053). */
export async function invoiceHasEarnings(ex: Executor, scope: Scope, invoiceId: string): Promise<boolean> {
  const r = await ex
    .selectFrom("subscription_invoices")
    .select("earnings_cents")
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("invoice_id", "=", invoiceId)
    .executeTakeFirst();
  return r !== undefined && r.earnings_cents !== null;
}

/** The subscription of an invoice Warden has seen paid (`invoice.paid`); null before. */
export async function findInvoiceSubscription(ex: Executor, scope: Scope, invoiceId: string): Promise<string | null> {
  const r = await ex
    .selectFrom("subscription_invoices")
    .select("subscription_id")
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("invoice_id", "=", invoiceId)
    .executeTakeFirst();
  return r?.subscription_id ?? null;
}

/** A payment intent that paid an invoice not seen paid yet: kept until its invoice.paid names the subscription. */
export async function insertInvoicePaymentLink(ex: Executor, scope: Scope, link: { paymentIntent: string; invoiceId: string }, now: number): Promise<void> {
  await ex
    .insertInto("invoice_payment_links")
    .values({ workspace_id: scope.workspaceId, env: scope.env, payment_intent: link.paymentIntent, invoice_id: link.invoiceId, created_at: now })
    .onConflict((oc) => oc.columns(["workspace_id", "env", "payment_intent"]).doNothing())
    .execute();
}

/** The payment intents that waited for this invoice, taken (their rows deleted; index of migration 041). */
export async function takeInvoicePaymentLinks(ex: Executor, scope: Scope, invoiceId: string): Promise<string[]> {
  const rows = await ex
    .deleteFrom("invoice_payment_links")
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("invoice_id", "=", invoiceId)
    .returning("payment_intent")
    .execute();
  return rows.map((r) => r.payment_intent).sort();
}

/**
 * Keeps what a subscription payment's charge has had refunded in all (Stripe's
 * `amount_refunded`, every partial refund together) and when Stripe made the refund that
 * brought it there, and answers what is new since the last report (0 for a repeat or an
 * older report), with the subscription it paid; null when no subscription's invoice was
 * paid with this payment intent.
 */
export async function recordSubscriptionRefund(
  ex: Executor,
  scope: Scope,
  refund: { paymentIntent: string; refundedCents: number; currency: string; refundedAt: number },
): Promise<{ subscriptionId: string; added: number } | null> {
  const r = await ex
    .selectFrom("subscription_payments")
    .select(["subscription_id", "refunded_cents"])
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("payment_intent", "=", refund.paymentIntent)
    .executeTakeFirst();
  if (!r) return null;
  const added = refund.refundedCents - Number(r.refunded_cents);
  if (added <= 0) return { subscriptionId: r.subscription_id, added: 0 };
  await ex
    .updateTable("subscription_payments")
    // The charge's currency: the invoice's amount (and so its currency) is kept on the invoice (migration 040).
    .set({ refunded_cents: refund.refundedCents, refunded_at: refund.refundedAt, currency: refund.currency })
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("payment_intent", "=", refund.paymentIntent)
    .execute();
  return { subscriptionId: r.subscription_id, added };
}

/** What was refunded of a subscription's payments before it was stored, each at its last refund's time. */
export async function listSubscriptionRefunds(
  ex: Executor,
  scope: Scope,
  subscriptionId: string,
): Promise<{ amountCents: number; currency: string; at: number }[]> {
  const rows = await ex
    .selectFrom("subscription_payments")
    .select(["refunded_cents", "currency", "refunded_at"])
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("subscription_id", "=", subscriptionId)
    .where("refunded_cents", ">", 0)
    .execute();
  return rows.flatMap((r) =>
    r.currency === null || r.refunded_at === null ? [] : [{ amountCents: Number(r.refunded_cents), currency: r.currency, at: Number(r.refunded_at) }],
  );
}

export async function findSubscriptionOfPayment(ex: Executor, scope: Scope, paymentIntent: string): Promise<string | null> {
  const r = await ex
    .selectFrom("subscription_payments")
    .select("subscription_id")
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("payment_intent", "=", paymentIntent)
    .executeTakeFirst();
  return r?.subscription_id ?? null;
}

/** The subscription a Checkout Session bought, once its `checkout.session.completed` arrived (index of migration 024). */
export async function findSubscriptionIdByCheckoutSession(ex: Executor, scope: Scope, checkoutSession: string): Promise<string | null> {
  const r = await ex
    .selectFrom("subscription_buyers")
    .select("subscription_id")
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("checkout_session", "=", checkoutSession)
    .executeTakeFirst();
  return r?.subscription_id ?? null;
}
