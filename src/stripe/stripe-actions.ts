// The vendor's refund and cancellation made at Stripe too, when the workspace
// environment has a secret key: the money moves and the subscription stops billing, and
// Stripe's own report of it afterwards derives the same event id, so it changes nothing
// more. Without a key the vendor does it in Stripe's dashboard; Warden records it alone.
// The buyer's own cancellation, its undo and Stripe's billing portal (the hosted Manage
// page, the client API) exist only through Stripe: without a key they are the vendor's.

import Stripe from "stripe";
import type { Env } from "../db/schema.js";
import { ApiError, invalidParameter } from "../errors/errors.js";
import type { Services } from "../services.js";
import { findStripeAccount } from "./stripe-account.store.js";
import { stripeClient } from "./stripe-client.js";
import { isTestPurchasePayment } from "./test-purchase.types.js";

async function clientFor(services: Services, scope: { workspaceId: string; env: Env }): Promise<Stripe | null> {
  const account = await findStripeAccount(services.db, scope.workspaceId, scope.env);
  if (!account?.secretKeySealed) return null;
  return stripeClient(services.secretBox.open(account.secretKeySealed), services.config.stripeApiUrl);
}

const firstLine = (message: string) => message.split("\n")[0] ?? message;

// The refusal keeps Stripe's error as its cause, so a page can say it in its own words (stripeFailureOf).
const refused = (error: unknown) =>
  error instanceof Stripe.errors.StripeInvalidRequestError
    ? Object.assign(invalidParameter("id", `Stripe refused: ${firstLine(error.message)}`), { cause: error })
    : error;

/** What Stripe answered a call that failed: its code (else the kind of failure) and its message. */
export interface StripeFailure {
  code: string | null;
  message: string;
}

/**
 * Stripe's answer behind a failed refund or cancellation (a refusal of the request, a key
 * Stripe does not accept, Stripe unreachable), or null when the failure is not Stripe's.
 */
export function stripeFailureOf(error: unknown): StripeFailure | null {
  const cause = error instanceof ApiError ? error.cause : error;
  if (!(cause instanceof Stripe.errors.StripeError)) return null;
  return { code: cause.code ?? cause.type, message: firstLine(cause.message) };
}

/** Refunds the payment in full at Stripe; answers whether Stripe was asked (a key is connected). */
export async function refundAtStripe(
  services: Services,
  scope: { workspaceId: string; env: Env },
  payment: { paymentIntent: string; licenceId: string },
): Promise<boolean> {
  // A test purchase made up by `warden admin stripe trigger purchase`: Stripe never saw it, and would refuse it.
  if (isTestPurchasePayment(payment.paymentIntent)) return false;
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

const isMissing = (error: unknown) => error instanceof Stripe.errors.StripeInvalidRequestError && error.code === "resource_missing";

/**
 * Cancels at Stripe: at once, or at the period's end. Answers whether Stripe holds the
 * subscription; one it does not know (imported from another provider) is Warden's alone.
 */
export async function cancelAtStripe(services: Services, scope: { workspaceId: string; env: Env }, subscriptionId: string, now: boolean): Promise<boolean> {
  if (!now) return setCancelAtPeriodEndAtStripe(services, scope, subscriptionId, true);
  const stripe = await clientFor(services, scope);
  if (!stripe) return false;
  try {
    await stripe.subscriptions.cancel(subscriptionId);
  } catch (error) {
    if (isMissing(error)) return false;
    throw refused(error);
  }
  return true;
}

/** Sets the subscription to end at its period's end at Stripe, or takes that back; answers whether Stripe holds it. */
export async function setCancelAtPeriodEndAtStripe(
  services: Services,
  scope: { workspaceId: string; env: Env },
  subscriptionId: string,
  cancelAtPeriodEnd: boolean,
): Promise<boolean> {
  const stripe = await clientFor(services, scope);
  if (!stripe) return false;
  try {
    await stripe.subscriptions.update(subscriptionId, { cancel_at_period_end: cancelAtPeriodEnd });
  } catch (error) {
    if (isMissing(error)) return false;
    throw refused(error);
  }
  return true;
}

/** Whether the workspace environment has a Stripe secret key, so that Warden can act at Stripe. */
export async function canActAtStripe(services: Services, scope: { workspaceId: string; env: Env }): Promise<boolean> {
  const account = await findStripeAccount(services.db, scope.workspaceId, scope.env);
  return Boolean(account?.secretKeySealed);
}

/**
 * A session of Stripe's billing portal (payment method, invoices) for the Stripe customer
 * who pays the subscription, returning to `returnUrl`: its address, or null when there is
 * no secret key or Stripe does not hold the subscription. The customer is asked of Stripe
 * each time rather than stored: it is Stripe's to change, and one call more per visit costs nothing.
 */
export async function billingPortalAtStripe(
  services: Services,
  scope: { workspaceId: string; env: Env },
  subscriptionId: string,
  returnUrl: string,
): Promise<string | null> {
  const stripe = await clientFor(services, scope);
  if (!stripe) return null;
  try {
    const subscription = await stripe.subscriptions.retrieve(subscriptionId);
    const customer = typeof subscription.customer === "string" ? subscription.customer : subscription.customer.id;
    return (await stripe.billingPortal.sessions.create({ customer, return_url: returnUrl })).url;
  } catch (error) {
    if (isMissing(error)) return null;
    throw refused(error);
  }
}
