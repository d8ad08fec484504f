// Which Warden plan a purchase made without Warden's metadata is for (ExtensionPay, a
// payment link, a home-made checkout, everything bought before Warden): the vendor links
// the Stripe Price or Product ids of a plan (`warden admin plan update … --stripe-price`,
// the dashboard's plan page), and the reconcile maps by them. A price names its plan
// before its product does (one product often has a monthly and a yearly price); what
// maps to no plan, or to two, is listed for the vendor rather than guessed.
import { type Actor, recordAction } from "../audit/audit.service.js";
import type { Executor } from "../db/database.js";
import { invalidParameter } from "../errors/errors.js";
import type { Problem } from "../payments/fields.js";
import type { BoughtItem } from "../payments/payment-facts.js";
import type { Services } from "../services.js";
import type { Plan } from "../workspaces/workspace.types.js";
import { type ProductRef, requirePlan } from "../workspaces/workspace-lookup.service.js";
import { deletePlanLink, findPlanLinks, insertPlanLink, listPlanLinks, type PlanRef } from "./stripe-plan-link.store.js";

const STRIPE_PRICE = /^price_[A-Za-z0-9]{1,200}$/;
const STRIPE_PRODUCT = /^prod_[A-Za-z0-9]{1,200}$/;

export interface PlanLinksChange extends ProductRef {
  id: string;
  prices?: string[];
  products?: string[];
  /** Price or product ids to unlink from the plan. */
  remove?: string[];
}

function checked(param: string, values: string[] | undefined, shape: RegExp, example: string): string[] {
  return (values ?? []).map((raw) => {
    const value = raw.trim();
    if (!shape.test(value)) throw invalidParameter(param, `${param} must be a Stripe id such as ${example}.`);
    return value;
  });
}

/** Links (and unlinks) a plan's Stripe prices and products; answers the plan and every id linked to it now. */
export async function updatePlanStripeLinks(services: Services, input: PlanLinksChange, actor?: Actor): Promise<{ plan: Plan; stripeIds: string[] }> {
  const { workspace, plan } = await requirePlan(services.db, input);
  const added = [
    ...checked("stripe-price", input.prices, STRIPE_PRICE, "price_1Q2w3E4r"),
    ...checked("stripe-product", input.products, STRIPE_PRODUCT, "prod_Q2w3E4r"),
  ];
  const removed = (input.remove ?? []).map((id) => id.trim()).filter((id) => id !== "");
  const ref: PlanRef = { productKind: plan.productKind, productId: plan.productId, planId: plan.id };
  const now = services.clock.now();
  const stripeIds = await services.db.transaction().execute(async (trx) => {
    for (const stripeId of removed) await deletePlanLink(trx, workspace.id, ref, stripeId);
    for (const stripeId of added) {
      if (!(await insertPlanLink(trx, workspace.id, { ...ref, stripeId }, now))) {
        const other = (await findPlanLinks(trx, workspace.id, [stripeId])).get(stripeId);
        throw invalidParameter(
          stripeId.startsWith("price_") ? "stripe-price" : "stripe-product",
          `${stripeId} is linked to plan ${other?.planId ?? "?"} of ${other?.productKind ?? "?"} ${other?.productId ?? "?"} already; unlink it there first.`,
        );
      }
    }
    if (actor && (added.length > 0 || removed.length > 0)) {
      await recordAction(trx, actor, { action: "plan.stripe_linked", workspaceId: workspace.id, env: null, subject: `${plan.productId}:${plan.id}` }, now);
    }
    return listPlanLinks(trx, workspace.id, ref);
  });
  return { plan, stripeIds };
}

/** The Stripe ids linked to a plan (its dashboard page shows them). */
export async function planStripeLinks(services: Services, workspaceId: string, plan: PlanRef): Promise<string[]> {
  return listPlanLinks(services.db, workspaceId, plan);
}

/**
 * The one plan every item maps to (by its price, else its product), or why there is none:
 * an item no plan is linked to, or items that map to different plans.
 */
export async function planOfItems(ex: Executor, workspaceId: string, items: readonly BoughtItem[]): Promise<PlanRef | Problem> {
  if (items.length === 0) return { problem: "no line items to map" };
  const ids = items.flatMap((i) => [i.price, i.product]).filter((id): id is string => id !== null);
  const links = await findPlanLinks(ex, workspaceId, ids);
  const plans = new Map<string, PlanRef>();
  for (const item of items) {
    const plan = (item.price === null ? undefined : links.get(item.price)) ?? (item.product === null ? undefined : links.get(item.product));
    if (!plan) return { problem: `price ${item.price ?? "?"} (product ${item.product ?? "?"}) is linked to no plan` };
    plans.set(`${plan.productKind}:${plan.productId}:${plan.planId}`, plan);
  }
  if (plans.size > 1) return { problem: `its items map to ${plans.size} different plans` };
  return [...plans.values()][0] as PlanRef;
}
