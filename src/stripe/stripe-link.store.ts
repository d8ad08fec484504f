// What Stripe tells about subscriptions beyond the subscription object: who bought it
// (from the Checkout Session, which may arrive before or after the subscription's own
// events) and which payments are its invoices' (so a dispute can name its tool).
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

export async function insertSubscriptionPayment(
  ex: Executor,
  scope: Scope,
  payment: { paymentIntent: string; subscriptionId: string; amountCents: number | null; currency: string | null },
  now: number,
): Promise<boolean> {
  const r = await ex
    .insertInto("subscription_payments")
    .values({
      workspace_id: scope.workspaceId,
      env: scope.env,
      payment_intent: payment.paymentIntent,
      subscription_id: payment.subscriptionId,
      created_at: now,
      amount_cents: payment.amountCents,
      currency: payment.currency,
    })
    .onConflict((oc) => oc.columns(["workspace_id", "env", "payment_intent"]).doNothing())
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** What a subscription's invoices paid before it was stored (its events may come after the invoice's). */
export async function listSubscriptionPaymentAmounts(
  ex: Executor,
  scope: Scope,
  subscriptionId: string,
): Promise<{ amountCents: number; currency: string; createdAt: number }[]> {
  const rows = await ex
    .selectFrom("subscription_payments")
    .select(["amount_cents", "currency", "created_at"])
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("subscription_id", "=", subscriptionId)
    .where("amount_cents", "is not", null)
    .execute();
  return rows.flatMap((r) =>
    r.amount_cents === null || r.currency === null ? [] : [{ amountCents: Number(r.amount_cents), currency: r.currency, createdAt: Number(r.created_at) }],
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
