// The vendor's refund and cancellation made at Stripe too, when the workspace
// environment has a secret key: the money moves and the subscription stops billing, and
// Stripe's own report of it afterwards derives the same event id, so it changes nothing
// more. Without a key the vendor does it in Stripe's dashboard; Warden records it alone.
import Stripe from "stripe";
import type { Env } from "../db/schema.js";
import { invalidParameter } from "../errors/errors.js";
import type { Services } from "../services.js";
import { findStripeAccount } from "./stripe-account.store.js";
import { stripeClient } from "./stripe-client.js";

async function clientFor(services: Services, scope: { workspaceId: string; env: Env }): Promise<Stripe | null> {
  const account = await findStripeAccount(services.db, scope.workspaceId, scope.env);
  if (!account?.secretKeySealed) return null;
  return stripeClient(services.secretBox.open(account.secretKeySealed), services.config.stripeApiUrl);
}

const refused = (error: unknown) =>
  error instanceof Stripe.errors.StripeInvalidRequestError ? invalidParameter("id", `Stripe refused: ${error.message.split("\n")[0]}`) : error;

/** Refunds the payment in full at Stripe; answers whether Stripe was asked (a key is connected). */
export async function refundAtStripe(
  services: Services,
  scope: { workspaceId: string; env: Env },
  payment: { paymentIntent: string; licenceId: string },
): Promise<boolean> {
  const stripe = await clientFor(services, scope);
  if (!stripe) return false;
  try {
    // One refund per licence, however often the command is repeated.
    await stripe.refunds.create({ payment_intent: payment.paymentIntent }, { idempotencyKey: `warden-refund-${payment.licenceId}` });
  } catch (error) {
    if (error instanceof Stripe.errors.StripeInvalidRequestError && error.code === "charge_already_refunded") return true;
    throw refused(error);
  }
  return true;
}

/**
 * Cancels at Stripe: at once, or at the period's end. Answers whether Stripe holds the
 * subscription; one it does not know (imported from another provider) is Warden's alone.
 */
export async function cancelAtStripe(services: Services, scope: { workspaceId: string; env: Env }, subscriptionId: string, now: boolean): Promise<boolean> {
  const stripe = await clientFor(services, scope);
  if (!stripe) return false;
  try {
    if (now) await stripe.subscriptions.cancel(subscriptionId);
    else await stripe.subscriptions.update(subscriptionId, { cancel_at_period_end: true });
  } catch (error) {
    if (error instanceof Stripe.errors.StripeInvalidRequestError && error.code === "resource_missing") return false;
    throw refused(error);
  }
  return true;
}
