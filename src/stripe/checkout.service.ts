// The buy button and the hosted Plans page: a Stripe Checkout Session for a plan of a
// tool, or of a bundle that gives the tool, created with the workspace environment's
// secret key and carrying the metadata the webhook side reads back (stripe-objects.ts),
// so the purchase that follows is tied to the product, plan and seats. A signed-in buyer
// (a device token, or a hosted page's web session) is named by `warden_account`, so the
// purchase is theirs whatever address they type at Stripe.
import Stripe from "stripe";
import { findLicenceByCheckoutSession } from "../billing/licence.store.js";
import { findSubscription } from "../billing/subscription.store.js";
import { resolveWorkspaceTool } from "../client/client.service.js";
import { isEmailShape } from "../customers/email.js";
import { findPersonById } from "../customers/person.store.js";
import type { Env, ProductKind } from "../db/schema.js";
import { invalidParameter } from "../errors/errors.js";
import { findSubscriptionIdByCheckoutSession } from "../payments/payment-link.store.js";
import type { Services } from "../services.js";
import { DEFAULT_NAMES, type PageNames } from "../workspaces/translated-names.service.js";
import { findBundle, findPlan } from "../workspaces/workspace.store.js";
import type { Plan, Tool, Workspace } from "../workspaces/workspace.types.js";
import type { CheckoutBody } from "./checkout.schema.js";
import { findStripeAccount } from "./stripe-account.store.js";
import { stripeClient } from "./stripe-client.js";
import { planStripeLinks } from "./stripe-plan-link.service.js";

export interface CreatedCheckout {
  url: string;
  checkout_session: string;
}

/** Who buys, when signed in: a device's session or a hosted page's; only these fields are read. */
export interface CheckoutBuyer {
  workspaceId: string;
  env: Env;
  personId: string;
}

/** A checkout asked for, its workspace and tool already found. */
export interface CheckoutRequest {
  workspace: Workspace;
  tool: Tool;
  /** The tool's own plans, or a bundle's that gives the tool. */
  product: { kind: ProductKind; id: string };
  plan: string;
  env: Env;
  seats?: number;
  email?: string;
  buyer: CheckoutBuyer | null;
  successUrl: string;
  cancelUrl?: string;
  /** Stripe Checkout's language (one of Stripe's locales, or `auto`): the hosted page's; Stripe's own choice when none is given. */
  locale?: string;
  /** The vendor's names in that language (the hosted page's), for the line item Warden prices inline; the names as given without. */
  names?: PageNames;
}

/** The extension's buy button (`POST /api/client/v1/tools/{tool}/checkout`): a tool's plan, the environment said by `livemode`. */
export async function createCheckout(
  services: Services,
  input: { hostname: string; toolId: string; body: CheckoutBody; buyer: CheckoutBuyer | null },
): Promise<CreatedCheckout> {
  const { body, toolId, buyer } = input;
  const { workspace, tool } = await resolveWorkspaceTool(services, input.hostname, body.workspace, toolId);
  const env = body.livemode ? "live" : "test";
  if (buyer && (buyer.workspaceId !== workspace.id || buyer.env !== env)) {
    throw invalidParameter("livemode", `This device is signed in to another workspace or to the ${buyer.env} environment; buy there, or signed out.`);
  }
  return startCheckout(services, {
    workspace,
    tool,
    product: { kind: "tool", id: toolId },
    plan: body.plan,
    env,
    buyer,
    successUrl: body.success_url,
    ...(body.seats === undefined ? {} : { seats: body.seats }),
    ...(body.email === undefined ? {} : { email: body.email }),
    ...(body.cancel_url === undefined ? {} : { cancelUrl: body.cancel_url }),
  });
}

/** The checkout itself, shared by the buy button and the hosted Plans page; refusals name the field at fault. */
export async function startCheckout(services: Services, request: CheckoutRequest): Promise<CreatedCheckout> {
  const { db, config, secretBox } = services;
  const { workspace, tool, product, env, buyer } = request;
  // Whatever is wrong with the plan asked for, the buyer reads that it is not offered here.
  const notOffered = { reason: "plan_not_offered" as const, facts: { plan: request.plan } };
  const bundle = product.kind === "bundle" ? await findBundle(db, workspace.id, product.id) : null;
  if (product.kind === "bundle" && !bundle?.toolIds.includes(tool.id)) {
    throw invalidParameter("bundle", `No bundle "${product.id}" that gives tool "${tool.id}".`, notOffered);
  }
  if (product.kind === "tool" && product.id !== tool.id) {
    throw invalidParameter("plan", `Plans of tool "${product.id}" are not sold here; this is tool "${tool.id}".`, notOffered);
  }
  const plan = await findPlan(db, workspace.id, product.kind, product.id, request.plan);
  if (!plan) throw invalidParameter("plan", `No plan "${request.plan}" for ${product.kind} "${product.id}".`, notOffered);
  // Retired: kept for what was bought with it, offered no more.
  if (plan.retiredAt !== null) throw invalidParameter("plan", `Plan "${plan.id}" of ${product.kind} "${product.id}" is no longer offered.`, notOffered);
  if (plan.amountCents === null) throw invalidParameter("plan", `Plan "${plan.id}" has no price to pay at checkout.`, notOffered);
  if (request.email !== undefined && !isEmailShape(request.email))
    throw invalidParameter("email", "email must be an email address such as person@example.com.", { reason: "email_shape" });
  if (buyer && (buyer.workspaceId !== workspace.id || buyer.env !== env)) {
    throw invalidParameter("env", `You are signed in to another workspace or to the ${buyer.env} environment; buy there, or signed out.`, {
      reason: "signed_in_elsewhere",
    });
  }
  const account = await findStripeAccount(db, workspace.id, env);
  if (!account?.secretKeySealed) throw invalidParameter("livemode", `This workspace takes no payments in ${env} mode yet.`, { reason: "payments_off" });
  const person = buyer ? await findPersonById(db, buyer.workspaceId, buyer.env, buyer.personId) : null;
  const email = request.email ?? person?.email;

  const metadata: Record<string, string> = { [product.kind === "tool" ? "warden_tool" : "warden_bundle"]: product.id, warden_plan: plan.id };
  if (request.seats !== undefined) metadata.warden_seats = String(request.seats);
  if (person) metadata.warden_account = person.id;
  const names = request.names ?? DEFAULT_NAMES;
  const productName = bundle ? names.product("bundle", bundle.id, bundle.name) : names.product("tool", tool.id, tool.name);
  const planName = names.plan(plan.productKind, plan.productId, plan.id, plan.name);
  const subscription = plan.billing === "subscription";
  const stripe = stripeClient(secretBox.open(account.secretKeySealed), config.stripeApiUrl);
  const linked = await sellablePrice(
    stripe,
    await planStripeLinks(services, workspace.id, { productKind: plan.productKind, productId: plan.productId, planId: plan.id }),
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
              product_data: { name: `${productName} (${planName})` },
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

/** What a finished checkout bought, as Warden stored it from Stripe's events. */
export type CheckoutOutcome =
  | { state: "pending" }
  | { state: "elsewhere" }
  | {
      state: "confirmed";
      kind: "licence" | "subscription";
      productKind: ProductKind;
      productName: string;
      planName: string | null;
      billing: "one_time" | "subscription";
      seats: number | null;
      status: string;
      periodEnd: number | null;
    };

/**
 * The checkout success page: what the Checkout Session bought, once Stripe's event has
 * made the licence or the subscription; until then it is being confirmed. Only what
 * gives `tool` (its own plan or a bundle with it) is told here; the session id alone
 * shows a product and plan, never who bought it.
 */
export async function checkoutOutcome(
  services: Services,
  input: { workspace: Workspace; env: Env; tool: Tool; checkoutSession: string; names?: PageNames },
): Promise<CheckoutOutcome> {
  const names = input.names ?? DEFAULT_NAMES;
  const { db } = services;
  const scope = { workspaceId: input.workspace.id, env: input.env };
  const licence = await findLicenceByCheckoutSession(db, scope, input.checkoutSession);
  const subscriptionId = licence ? null : await findSubscriptionIdByCheckoutSession(db, scope, input.checkoutSession);
  const subscription = subscriptionId === null ? null : await findSubscription(db, scope, subscriptionId);
  const bought = licence ?? subscription;
  if (!bought) return { state: "pending" };
  const bundle = bought.productKind === "bundle" ? await findBundle(db, input.workspace.id, bought.productId) : null;
  const forTool = bought.productKind === "tool" ? bought.productId === input.tool.id : (bundle?.toolIds.includes(input.tool.id) ?? false);
  if (!forTool) return { state: "elsewhere" };
  const plan = await findPlan(db, input.workspace.id, bought.productKind, bought.productId, bought.planId);
  return {
    state: "confirmed",
    kind: licence ? "licence" : "subscription",
    productKind: bought.productKind,
    productName: bundle ? names.product("bundle", bundle.id, bundle.name) : names.product("tool", input.tool.id, input.tool.name),
    planName: plan ? names.plan(plan.productKind, plan.productId, plan.id, plan.name) : null,
    billing: licence ? "one_time" : "subscription",
    seats: bought.seats !== null && bought.seats > 0 ? bought.seats : null,
    status: bought.status,
    periodEnd: subscription ? subscription.currentPeriodEnd : null,
  };
}
