// The plans of one tool or one bundle, on that product's page: add, rename, retire
// (after a confirmation page), link Stripe prices and products, and Paddle's of the
// environment (shown unless Stripe is this environment's processor and none is linked). The same routes serve
// both kinds of product; each calls the use case of `warden admin plan …` with the
// owner as actor.
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { ProductKind } from "../../db/schema.js";
import { planPaddleLinks, updatePlanPaddleLinks } from "../../paddle/paddle-plan-link.service.js";
import { connectedProcessor } from "../../payments/processors.js";
import type { Services } from "../../services.js";
import { planStripeLinks, updatePlanStripeLinks } from "../../stripe/stripe-plan-link.service.js";
import { readPlanTerms, readToolTerms, setPlanTerms } from "../../usage/terms.service.js";
import { createPlan, listBundles, renamePlan, retirePlan } from "../../workspaces/workspace.service.js";
import type { Plan } from "../../workspaces/workspace.types.js";
import type { Html } from "../shared/html.js";
import { parseMajorAmount } from "../shared/money.js";
import type { WorkspacePage } from "../shared/owner-context.js";
import { fieldRefusal, sendPage } from "../shared/page.js";
import { formField, PageRefusal } from "../shared/security.js";
import { type PlanForm, type Product, planPath, planView, productPath, retirePlanView } from "./plans.views.js";
import { type TermsInput, type ToolTermsPart, termsPanels } from "./terms.views.js";

export interface OpenedProduct {
  page: WorkspacePage;
  product: Product;
  plans: Plan[];
  /** The product's page, with the add-a-plan form as given (an error to show, what was typed). */
  render(planForm: PlanForm): Html;
}

const productRef = (product: Product, workspace: string) => (product.kind === "tool" ? { workspace, tool: product.id } : { workspace, bundle: product.id });

export async function planRoutes(
  app: FastifyInstance,
  options: { services: Services; kind: ProductKind; open(request: FastifyRequest): Promise<OpenedProduct> },
): Promise<void> {
  const { services, open } = options;
  const { db, clock } = services;
  const base = options.kind === "tool" ? "/w/:workspace/:env/tools/:tool/plans" : "/w/:workspace/:env/bundles/:bundle/plans";

  async function openPlan(request: FastifyRequest) {
    const opened = await open(request);
    const { plan: planId } = request.params as { plan: string };
    const plan = opened.plans.find((p) => p.id === planId);
    if (!plan) throw new PageRefusal(404, "Not found", `No plan "${planId}" for ${opened.product.name}.`);
    const ref = { productKind: plan.productKind, productId: plan.productId, planId: plan.id };
    const scope = { workspaceId: opened.page.workspace.id, env: opened.page.env };
    const [stripeIds, paddleIds, processor] = await Promise.all([
      planStripeLinks(services, opened.page.workspace.id, ref),
      planPaddleLinks(services, scope, ref),
      connectedProcessor(services, scope),
    ]);
    const parts = await termsParts(opened.page.workspace.slug, opened.product, plan);
    const terms = (input: TermsInput = {}) => termsPanels(opened.page.frame, opened.product, plan, parts, input);
    // Paddle's links are per environment; where Stripe takes this environment's payments they are noise unless some exist.
    const paddle = processor === "stripe" && paddleIds.length === 0 ? null : { ids: paddleIds };
    return { ...opened, plan, stripeIds, paddle, parts, terms };
  }

  /** The plan's terms for each tool it covers: a tool's plan, that tool; a bundle's, each of its tools. */
  async function termsParts(workspace: string, product: Product, plan: Plan): Promise<ToolTermsPart[]> {
    const toolIds = product.kind === "tool" ? [product.id] : ((await listBundles(db, { workspace })).find((b) => b.id === product.id)?.toolIds ?? []);
    return Promise.all(
      toolIds.map(async (toolId) => {
        const { tool, features, meters } = await readToolTerms(db, { workspace, tool: toolId });
        const { terms } = await readPlanTerms(db, { ...productRef(product, workspace), id: plan.id, forTool: toolId });
        return { tool: { id: tool.id, name: tool.name }, features, meters, terms };
      }),
    );
  }

  app.post(base, async (request, reply) => {
    const { page, product, render } = await open(request);
    const form: PlanForm = {
      id: formField(request, "id").trim(),
      name: formField(request, "name"),
      billing: formField(request, "billing"),
      amount: formField(request, "amount").trim(),
      currency: formField(request, "currency"),
      interval: formField(request, "interval"),
      isDefault: formField(request, "default") === "1",
    };
    // The page takes the amount in the currency's major unit ("49.00"); the use case, like
    // the API and the CLI, takes minor units.
    const amount = form.amount ? parseMajorAmount(form.amount, form.currency?.trim() || "eur") : null;
    if (amount !== null && !amount.ok) return sendPage(reply, 400, render({ ...form, error: amount.message, errorParam: amount.param }));
    try {
      const plan = await createPlan(
        db,
        clock,
        {
          ...productRef(product, page.workspace.slug),
          id: form.id ?? "",
          name: form.name ?? "",
          billing: form.billing ?? "",
          // Empty fields are left out, as the CLI leaves out an option not given.
          ...(amount !== null ? { amountCents: amount.minorUnits } : {}),
          ...(form.currency?.trim() ? { currency: form.currency } : {}),
          ...(form.interval ? { interval: form.interval } : {}),
          isDefault: form.isDefault,
        },
        page.owner.session.actor,
      );
      return reply.redirect(`${productPath(page.frame, product)}?plan_added=${encodeURIComponent(plan.id)}#plans`, 303);
    } catch (error) {
      const refusal = fieldRefusal(error);
      if (refusal === null) throw error;
      return sendPage(reply, 400, render({ ...form, ...refusal }));
    }
  });

  app.get(`${base}/:plan`, async (request, reply) => {
    const { page, product, plan, stripeIds, paddle, terms } = await openPlan(request);
    const query = request.query as Record<string, string | undefined>;
    return sendPage(
      reply,
      200,
      planView(page.frame, product, plan, {
        renamed: query.renamed === "1",
        retired: query.retired === "1",
        stripeLinked: query.linked === "1",
        stripeIds,
        paddle: paddle && { ...paddle, linked: query.paddle === "1" },
        terms: terms({ saved: query.terms === "1" }),
      }),
    );
  });

  app.post(`${base}/:plan/terms`, async (request, reply) => {
    const { page, product, plan, stripeIds, paddle, parts, terms } = await openPlan(request);
    const part = parts.find((p) => p.tool.id === formField(request, "tool"));
    if (!part) throw new PageRefusal(400, "Bad request", "The form names no tool of this plan.");
    // Every field the form shows is sent: an unticked feature is one the plan no longer unlocks, an empty amount gives none.
    const perMeter = (prefix: string) => Object.fromEntries(part.meters.map((m) => [m.id, formField(request, `${prefix}_${m.id}`).trim() || "0"]));
    const oneTime = plan.billing === "one_time";
    try {
      await setPlanTerms(
        db,
        clock,
        {
          ...productRef(product, page.workspace.slug),
          id: plan.id,
          forTool: part.tool.id,
          features: part.features.filter((f) => formField(request, `feature_${f.id}`) === "1").map((f) => f.id),
          allowances: perMeter("allowance"),
          ...(oneTime ? { credits: perMeter("credits"), creditsExpireDays: formField(request, "credits_expire_days").trim() || null } : {}),
        },
        page.owner.session.actor,
      );
      return reply.redirect(`${planPath(page.frame, product, plan.id)}?terms=1#terms-${encodeURIComponent(part.tool.id)}`, 303);
    } catch (error) {
      const refusal = fieldRefusal(error);
      if (refusal === null) throw error;
      return sendPage(reply, 400, planView(page.frame, product, plan, { stripeIds, paddle, terms: terms({ refused: { tool: part.tool.id, ...refusal } }) }));
    }
  });

  app.post(`${base}/:plan/stripe`, async (request, reply) => {
    const { page, product, plan, stripeIds, paddle, terms } = await openPlan(request);
    const typed = formField(request, "stripe_id").trim();
    const unlink = formField(request, "unlink").trim();
    // One field for either kind of id: the use case checks each against its own shape.
    const link = unlink !== "" ? { remove: [unlink] } : typed.startsWith("prod_") ? { products: [typed] } : { prices: [typed] };
    try {
      await updatePlanStripeLinks(services, { ...productRef(product, page.workspace.slug), id: plan.id, ...link }, page.owner.session.actor);
      return reply.redirect(`${planPath(page.frame, product, plan.id)}?linked=1#stripe-prices`, 303);
    } catch (error) {
      const refusal = fieldRefusal(error);
      if (refusal === null) throw error;
      const message = refusal.error;
      const said = message.replace(/^stripe-(price|product) must be/, "It must be");
      return sendPage(reply, 400, planView(page.frame, product, plan, { stripeIds, paddle, stripeError: said, stripeTyped: typed, terms: terms() }));
    }
  });

  // The environment's Paddle prices, with the checks of `warden admin plan update --env … --paddle-price`.
  app.post(`${base}/:plan/paddle`, async (request, reply) => {
    const { page, product, plan, stripeIds, paddle, terms } = await openPlan(request);
    const typed = formField(request, "paddle_id").trim();
    const unlink = formField(request, "unlink").trim();
    const link = unlink !== "" ? { remove: [unlink] } : typed.startsWith("pro_") ? { products: [typed] } : { prices: [typed] };
    try {
      await updatePlanPaddleLinks(services, { ...productRef(product, page.workspace.slug), id: plan.id, env: page.env, ...link }, page.owner.session.actor);
      return reply.redirect(`${planPath(page.frame, product, plan.id)}?paddle=1#paddle-prices`, 303);
    } catch (error) {
      const refusal = fieldRefusal(error);
      if (refusal === null) throw error;
      const said = refusal.error.replace(/^paddle-(price|product) must be/, "It must be");
      return sendPage(reply, 400, planView(page.frame, product, plan, { stripeIds, paddle: { ids: paddle?.ids ?? [], error: said, typed }, terms: terms() }));
    }
  });

  app.post(`${base}/:plan`, async (request, reply) => {
    const { page, product, plan, stripeIds, paddle, terms } = await openPlan(request);
    const name = formField(request, "name");
    try {
      await renamePlan(db, clock, { ...productRef(product, page.workspace.slug), id: plan.id, name }, page.owner.session.actor);
      return reply.redirect(`${planPath(page.frame, product, plan.id)}?renamed=1`, 303);
    } catch (error) {
      const refusal = fieldRefusal(error);
      if (refusal === null) throw error;
      return sendPage(reply, 400, planView(page.frame, product, plan, { ...refusal, name, stripeIds, paddle, terms: terms() }));
    }
  });

  app.get(`${base}/:plan/retire`, async (request, reply) => {
    const { page, product, plan } = await openPlan(request);
    if (plan.retiredAt !== null) return reply.redirect(planPath(page.frame, product, plan.id), 303);
    return sendPage(reply, 200, retirePlanView(page.frame, product, plan));
  });

  app.post(`${base}/:plan/retire`, async (request, reply) => {
    const { page, product, plan } = await openPlan(request);
    await retirePlan(db, clock, { ...productRef(product, page.workspace.slug), id: plan.id }, page.owner.session.actor);
    return reply.redirect(`${planPath(page.frame, product, plan.id)}?retired=1`, 303);
  });
}
