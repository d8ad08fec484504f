// Stripe's side of a checkout (payments/checkout.service.ts checks the request): a
// Checkout Session made with the workspace environment's secret key, carrying Warden's
// metadata on itself and on the payment intent or subscription it creates, which the
// webhook side reads back (stripe-objects.ts).
import Stripe from "stripe";
import { invalidParameter } from "../errors/errors.js";
import type { CheckedCheckout, CreatedCheckout } from "../payments/payment-processor.js";
import type { Services } from "../services.js";
import type { Plan } from "../workspaces/workspace.types.js";
import { findStripeAccount } from "./stripe-account.store.js";
import { stripeClient } from "./stripe-client.js";
import { listPlanLinks } from "./stripe-plan-link.store.js";

export async function startStripeCheckout(services: Services, checked: CheckedCheckout): Promise<CreatedCheckout> {
  const { db, config, secretBox } = services;
  const { request, plan, productName, email, metadata } = checked;
  const { workspace, env } = request;
  const account = await findStripeAccount(db, workspace.id, env);
  if (!account?.secretKeySealed) throw invalidParameter("livemode", `This workspace takes no payments in ${env} mode yet.`, { reason: "payments_off" });
  const subscription = plan.billing === "subscription";
  const stripe = stripeClient(secretBox.open(account.secretKeySealed), config.stripeApiUrl);
  const linked = await sellablePrice(
    stripe,
    await listPlanLinks(services.db, workspace.id, { productKind: plan.productKind, productId: plan.productId, planId: plan.id }),
    plan,
  );
  const params: Stripe.Checkout.SessionCreateParams = {
    mode: subscription ? "subscription" : "payment",
    line_items: [
      linked !== null
        ? { quantity: request.seats ?? 1, price: linked }
        : {
            quantity: request.seats ?? 1,
            price_data: {
              currency: plan.currency,
              unit_amount: plan.amountCents,
              product_data: { name: `${productName} (${plan.name})` },
              ...(subscription ? { recurring: { interval: plan.interval ?? "month" } } : {}),
            },
          },
    ],
    success_url: request.successUrl,
    ...(request.cancelUrl === undefined ? {} : { cancel_url: request.cancelUrl }),
    ...(email === undefined ? {} : { customer_email: email }),
    ...(request.locale === undefined ? {} : { locale: request.locale as Stripe.Checkout.SessionCreateParams.Locale }),
    metadata,
    // The subscription and the payment carry the metadata too: their own events name no session.
    ...(subscription ? { subscription_data: { metadata } } : { payment_intent_data: { metadata } }),
  };
  let session: Stripe.Checkout.Session;
  try {
    session = await stripe.checkout.sessions.create(params);
  } catch (error) {
    // Stripe refusing what was asked (a success_url it does not take) is the caller's to fix; anything else is ours.
    if (error instanceof Stripe.errors.StripeInvalidRequestError)
      throw invalidParameter(error.param ?? "plan", `Stripe refused the checkout: ${error.message}`, { reason: "checkout_refused" });
    throw error;
  }
  if (!session.url) throw new Error(`Stripe created checkout session ${session.id} without a URL`);
  return { url: session.url, checkout_session: session.id };
}

/**
 * Whether a Price bills as the plan says, so that what Insights counts from the plan
 * (its currency, its interval for MRR) is what Stripe charges: the plan's currency; for a
 * subscription plan, recurring every one of its intervals and billed per seat (licensed,
 * not metered); for a one-time plan, one-time.
 */
function sellsAsPlan(price: Stripe.Price, plan: Plan): boolean {
  if (price.currency.toLowerCase() !== plan.currency) return false;
  if (plan.billing !== "subscription") return price.type === "one_time";
  const recurring = price.recurring;
  return recurring !== null && recurring.interval === (plan.interval ?? "month") && recurring.interval_count === 1 && recurring.usage_type === "licensed";
}

/**
 * The Stripe Price linked to the plan that this environment's account sells: the first
 * linked `price_…` (in the order linked) that Stripe finds with this key (a test-mode
 * price is not found with a live key, and the other way round), active, and billing as
 * the plan says (sellsAsPlan); null when there is none, and the
 * checkout prices the plan inline. The vendor's own Price carries their tax settings,
 * coupons and reports; its amount is Stripe's, which the buyer sees before paying.
 */
async function sellablePrice(stripe: Stripe, linkedIds: readonly string[], plan: Plan): Promise<string | null> {
  for (const id of linkedIds) {
    if (!id.startsWith("price_")) continue;
    let price: Stripe.Price;
    try {
      price = await stripe.prices.retrieve(id);
    } catch (error) {
      // Not in this mode's account (or deleted): the next linked price may be.
      if (error instanceof Stripe.errors.StripeInvalidRequestError && error.statusCode === 404) continue;
      throw error;
    }
    if (price.active && sellsAsPlan(price, plan)) return price.id;
  }
  return null;
}
