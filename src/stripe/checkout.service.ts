// The extension's buy button: a Stripe Checkout Session for a tool's plan, created with
// the workspace environment's secret key and carrying the metadata the webhook side
// reads back (stripe-objects.ts), so the purchase that follows is tied to the tool,
// plan and seats. A signed-in buyer (a device token) is named by `warden_account`, so
// the purchase is theirs whatever address they type at Stripe.
import Stripe from "stripe";
import { resolveWorkspaceTool } from "../client/client.service.js";
import type { DeviceSession } from "../client/device-session.store.js";
import { isEmailShape } from "../customers/email.js";
import { findPersonById } from "../customers/person.store.js";
import { invalidParameter } from "../errors/errors.js";
import type { Services } from "../services.js";
import { findPlan } from "../workspaces/workspace.store.js";
import type { CheckoutBody } from "./checkout.schema.js";
import { findStripeAccount } from "./stripe-account.store.js";
import { stripeClient } from "./stripe-client.js";

export interface CreatedCheckout {
  url: string;
  checkout_session: string;
}

export async function createCheckout(
  services: Services,
  input: { hostname: string; toolId: string; body: CheckoutBody; buyer: DeviceSession | null },
): Promise<CreatedCheckout> {
  const { db, config, secretBox } = services;
  const { body, toolId, buyer } = input;
  const { workspace, tool } = await resolveWorkspaceTool(services, input.hostname, body.workspace, toolId);
  const plan = await findPlan(db, workspace.id, "tool", toolId, body.plan);
  if (!plan) throw invalidParameter("plan", `No plan "${body.plan}" for tool "${toolId}".`);
  // Retired: kept for what was bought with it, offered no more.
  if (plan.retiredAt !== null) throw invalidParameter("plan", `Plan "${plan.id}" of tool "${toolId}" is no longer offered.`);
  if (plan.amountCents === null) throw invalidParameter("plan", `Plan "${plan.id}" has no price to pay at checkout.`);
  if (body.email !== undefined && !isEmailShape(body.email)) throw invalidParameter("email", "email must be an email address such as person@example.com.");
  const env = body.livemode ? "live" : "test";
  if (buyer && (buyer.workspaceId !== workspace.id || buyer.env !== env)) {
    throw invalidParameter("livemode", `This device is signed in to another workspace or to the ${buyer.env} environment; buy there, or signed out.`);
  }
  const account = await findStripeAccount(db, workspace.id, env);
  if (!account?.secretKeySealed) throw invalidParameter("livemode", `This workspace takes no payments in ${env} mode yet.`);
  const person = buyer ? await findPersonById(db, buyer.workspaceId, buyer.env, buyer.personId) : null;
  const email = body.email ?? person?.email;

  const metadata: Record<string, string> = { warden_tool: toolId, warden_plan: plan.id };
  if (body.seats !== undefined) metadata.warden_seats = String(body.seats);
  if (person) metadata.warden_account = person.id;
  const subscription = plan.billing === "subscription";
  const params: Stripe.Checkout.SessionCreateParams = {
    mode: subscription ? "subscription" : "payment",
    line_items: [
      {
        quantity: body.seats ?? 1,
        price_data: {
          currency: plan.currency,
          unit_amount: plan.amountCents,
          product_data: { name: `${tool.name} (${plan.name})` },
          ...(subscription ? { recurring: { interval: plan.interval ?? "month" } } : {}),
        },
      },
    ],
    success_url: body.success_url,
    ...(body.cancel_url === undefined ? {} : { cancel_url: body.cancel_url }),
    ...(email === undefined ? {} : { customer_email: email }),
    metadata,
    // The subscription and the payment carry the metadata too: their own events name no session.
    ...(subscription ? { subscription_data: { metadata } } : { payment_intent_data: { metadata } }),
  };
  let session: Stripe.Checkout.Session;
  try {
    session = await stripeClient(secretBox.open(account.secretKeySealed), config.stripeApiUrl).checkout.sessions.create(params);
  } catch (error) {
    // Stripe refusing what was asked (a success_url it does not take) is the caller's to fix; anything else is ours.
    if (error instanceof Stripe.errors.StripeInvalidRequestError)
      throw invalidParameter(error.param ?? "plan", `Stripe refused the checkout: ${error.message}`);
    throw error;
  }
  if (!session.url) throw new Error(`Stripe created checkout session ${session.id} without a URL`);
  return { url: session.url, checkout_session: session.id };
}
