// The plans of one tool or one bundle, on that product's page: add, rename, retire
// (after a confirmation page), link Stripe prices and products. The same routes serve
// both kinds of product; each calls the use case of `warden admin plan …` with the
// owner as actor.
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { ProductKind } from "../../db/schema.js";
import type { Services } from "../../services.js";
import { planStripeLinks, updatePlanStripeLinks } from "../../stripe/stripe-plan-link.service.js";
import { createPlan, renamePlan, retirePlan } from "../../workspaces/workspace.service.js";
import type { Plan } from "../../workspaces/workspace.types.js";
import type { Html } from "../shared/html.js";
import { parseMajorAmount } from "../shared/money.js";
import type { WorkspacePage } from "../shared/owner-context.js";
import { fieldRefusal, sendPage } from "../shared/page.js";
import { formField, PageRefusal } from "../shared/security.js";
import { type PlanForm, type Product, planPath, planView, productPath, retirePlanView } from "./plans.views.js";

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
    const stripeIds = await planStripeLinks(services, opened.page.workspace.id, { productKind: plan.productKind, productId: plan.productId, planId: plan.id });
    return { ...opened, plan, stripeIds };
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
    const { page, product, plan, stripeIds } = await openPlan(request);
    const query = request.query as Record<string, string | undefined>;
    return sendPage(
      reply,
      200,
      planView(page.frame, product, plan, { renamed: query.renamed === "1", retired: query.retired === "1", stripeLinked: query.linked === "1", stripeIds }),
    );
  });

  app.post(`${base}/:plan/stripe`, async (request, reply) => {
    const { page, product, plan, stripeIds } = await openPlan(request);
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
      return sendPage(reply, 400, planView(page.frame, product, plan, { stripeIds, stripeError: said, stripeTyped: typed }));
    }
  });

  app.post(`${base}/:plan`, async (request, reply) => {
    const { page, product, plan, stripeIds } = await openPlan(request);
    const name = formField(request, "name");
    try {
      await renamePlan(db, clock, { ...productRef(product, page.workspace.slug), id: plan.id, name }, page.owner.session.actor);
      return reply.redirect(`${planPath(page.frame, product, plan.id)}?renamed=1`, 303);
    } catch (error) {
      const refusal = fieldRefusal(error);
      if (refusal === null) throw error;
      return sendPage(reply, 400, planView(page.frame, product, plan, { ...refusal, name, stripeIds }));
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
