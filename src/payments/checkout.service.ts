// The buy button and the hosted Plans page: a checkout for a plan of a tool, or of a
// bundle that gives the tool, opened at the workspace environment's processor (Stripe's
// Checkout Session, Paddle's transaction) and carrying Warden's metadata, which the
// webhook side reads back, so the purchase that follows is tied to the product, plan and
// seats. A signed-in buyer (a device token, or a hosted page's web session) is named by
// `warden_account`, so the purchase is theirs whatever address they type there.
import { findLicenceByCheckoutSession } from "../billing/licence.store.js";
import { findSubscription } from "../billing/subscription.store.js";
import { resolveWorkspaceTool } from "../client/client.service.js";
import { isEmailShape } from "../customers/email.js";
import { findPersonById } from "../customers/person.store.js";
import type { Env, ProductKind } from "../db/schema.js";
import { invalidParameter } from "../errors/errors.js";
import type { Services } from "../services.js";
import { DEFAULT_NAMES, type PageNames } from "../workspaces/translated-names.service.js";
import { findBundle, findPlan } from "../workspaces/workspace.store.js";
import type { Tool, Workspace } from "../workspaces/workspace.types.js";
import type { CheckoutBody } from "./checkout.schema.js";
import { isProblem, readWardenMetadata } from "./fields.js";
import { findInvoiceSubscription, findSubscriptionIdByCheckoutSession } from "./payment-link.store.js";
import type { CheckoutBuyer, CheckoutRequest, CreatedCheckout, PaymentProcessor, ProcessorName } from "./payment-processor.js";
import { processorOf } from "./processors.js";

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
  const { db } = services;
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
  const amountCents = plan.amountCents;
  if (amountCents === null) throw invalidParameter("plan", `Plan "${plan.id}" has no price to pay at checkout.`, notOffered);
  if (request.email !== undefined && !isEmailShape(request.email))
    throw invalidParameter("email", "email must be an email address such as person@example.com.", { reason: "email_shape" });
  if (buyer && (buyer.workspaceId !== workspace.id || buyer.env !== env)) {
    throw invalidParameter("env", `You are signed in to another workspace or to the ${buyer.env} environment; buy there, or signed out.`, {
      reason: "signed_in_elsewhere",
    });
  }
  const person = buyer ? await findPersonById(db, buyer.workspaceId, buyer.env, buyer.personId) : null;
  const metadata: Record<string, string> = { [product.kind === "tool" ? "warden_tool" : "warden_bundle"]: product.id, warden_plan: plan.id };
  if (request.seats !== undefined) metadata.warden_seats = String(request.seats);
  if (person) metadata.warden_account = person.id;
  const processor = await processorOf(services, { workspaceId: workspace.id, env });
  const names = request.names ?? DEFAULT_NAMES;
  return processor.startCheckout(services, {
    request,
    plan: { ...plan, amountCents, name: names.plan(plan.productKind, plan.productId, plan.id, plan.name) },
    productName: bundle ? names.product("bundle", bundle.id, bundle.name) : names.product("tool", tool.id, tool.name),
    email: request.email ?? person?.email,
    metadata,
  });
}

/** What a finished checkout bought, as Warden stored it from the processor's events; and the processor, which the page names. */
export type CheckoutOutcome = CheckoutState & { processor: ProcessorName };

type CheckoutState =
  /** Waiting for the processor's event; `unanswered`: why the processor could not be asked about the checkout (for the log). */
  | { state: "pending"; unanswered?: string }
  | { state: "elsewhere" }
  /** Not a checkout of this environment's processor, unknown there, or someone else's: nothing of it is told. */
  | { state: "unknown" }
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
 * The checkout success page: what the checkout (a Stripe Checkout Session, a Paddle
 * transaction) bought, once the processor's event has made the licence or the
 * subscription; until then it is being confirmed, as Warden waits for the event. Only what
 * gives `tool` (its own plan or a bundle with it) is told here, and never who bought it;
 * to a `viewer` (the person of a page signed in by address) only what they bought.
 * The id must be of the environment's processor. While nothing has arrived, a page signed
 * in by address asks the processor when it can (Paddle with an API key): a checkout it does
 * not hold in this environment, not Warden's, or naming another buyer, is unknown rather
 * than pending for ever.
 */
export async function checkoutOutcome(
  services: Services,
  input: { workspace: Workspace; env: Env; tool: Tool; checkoutSession: string; viewer: string | null; names?: PageNames },
): Promise<CheckoutOutcome> {
  const scope = { workspaceId: input.workspace.id, env: input.env };
  const processor = await processorOf(services, scope);
  return { ...(await stateOf(services, input, processor)), processor: processor.name };
}

async function stateOf(
  services: Services,
  input: { workspace: Workspace; env: Env; tool: Tool; checkoutSession: string; viewer: string | null; names?: PageNames },
  processor: PaymentProcessor,
): Promise<CheckoutState> {
  const names = input.names ?? DEFAULT_NAMES;
  const { db } = services;
  const scope = { workspaceId: input.workspace.id, env: input.env };
  if (!processor.isCheckoutId(input.checkoutSession)) return { state: "unknown" };
  const licence = await findLicenceByCheckoutSession(db, scope, input.checkoutSession);
  // A Stripe subscription is linked to its Checkout Session; a Paddle one is the subscription its transaction paid the first invoice of.
  const subscriptionId = licence
    ? null
    : ((await findSubscriptionIdByCheckoutSession(db, scope, input.checkoutSession)) ?? (await findInvoiceSubscription(db, scope, input.checkoutSession)));
  const subscription = subscriptionId === null ? null : await findSubscription(db, scope, subscriptionId);
  const bought = licence ?? subscription;
  if (!bought) return waiting(services, input, processor);
  if (input.viewer !== null && bought.personId !== input.viewer) return { state: "unknown" };
  if (!(await givesTool(services, input, bought.productKind, bought.productId))) return { state: "elsewhere" };
  const bundle = bought.productKind === "bundle" ? await findBundle(db, input.workspace.id, bought.productId) : null;
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

/** Whether a product gives the page's tool: the tool itself, or a bundle with it. */
async function givesTool(services: Services, input: { workspace: Workspace; tool: Tool }, kind: ProductKind, id: string): Promise<boolean> {
  if (kind === "tool") return id === input.tool.id;
  return (await findBundle(services.db, input.workspace.id, id))?.toolIds.includes(input.tool.id) ?? false;
}

/** A checkout whose purchase has not arrived: pending, unless the processor says it is not one to wait for here. */
async function waiting(
  services: Services,
  input: { workspace: Workspace; env: Env; tool: Tool; checkoutSession: string; viewer: string | null },
  processor: PaymentProcessor,
): Promise<CheckoutState> {
  // Signed out, the page asks the processor nothing: a page anyone can open with any id must
  // not spend the vendor's API quota (docs/decisions.md, "Checkout success").
  if (input.viewer === null) return { state: "pending" };
  const found = await processor.findCheckout(services, { workspaceId: input.workspace.id, env: input.env }, input.checkoutSession, input.viewer);
  if (found === null) return { state: "pending" };
  if (found === "unknown") return { state: "unknown" };
  // The processor failed or refused (a 429, a key it no longer takes): the buyer waits, and the page logs why.
  if ("unanswered" in found) return { state: "pending", unanswered: found.unanswered };
  const metadata = readWardenMetadata(found.metadata);
  // Not a checkout Warden opened, or one a signed-in person opened for someone else.
  if (isProblem(metadata)) return { state: "unknown" };
  if (input.viewer !== null && metadata.accountPersonId !== null && metadata.accountPersonId !== input.viewer) return { state: "unknown" };
  return (await givesTool(services, input, metadata.productKind, metadata.productId)) ? { state: "pending" } : { state: "elsewhere" };
}
