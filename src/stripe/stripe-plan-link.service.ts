// Which Warden plan a purchase made without Warden's metadata is for (ExtensionPay, a
// payment link, a home-made checkout, everything bought before Warden): the vendor links
// the Stripe Price or Product ids of a plan (`warden admin plan update … --stripe-price`,
// the dashboard's plan page), and the reconcile maps by them. A price names its plan
// before its product does (one product often has a monthly and a yearly price); what
// maps to no plan, or to two, is listed for the vendor rather than guessed.
import { type Actor, recordAction } from "../audit/audit.service.js";
import type { Executor } from "../db/database.js";
import type { Problem } from "../payments/fields.js";
import type { BoughtItem } from "../payments/payment-facts.js";
import { changePlanLinks, checkedIds, idsOfItems, onePlanOfItems, type PlanLinkTable } from "../payments/plan-links.js";
import type { Services } from "../services.js";
import type { Plan } from "../workspaces/workspace.types.js";
import { type ProductRef, requirePlan } from "../workspaces/workspace-lookup.service.js";
import { deletePlanLink, findPlanLinks, insertPlanLink, listPlanLinks, type PlanRef } from "./stripe-plan-link.store.js";

const STRIPE_PRICE = { param: "stripe-price", shape: /^price_[A-Za-z0-9]{1,200}$/, example: "price_1Q2w3E4r" };
const STRIPE_PRODUCT = { param: "stripe-product", shape: /^prod_[A-Za-z0-9]{1,200}$/, example: "prod_Q2w3E4r" };

export interface PlanLinksChange extends ProductRef {
  id: string;
  prices?: string[];
  products?: string[];
  /** Price or product ids to unlink from the plan. */
  remove?: string[];
}

/** Links (and unlinks) a plan's Stripe prices and products; answers the plan and every id linked to it now. */
export async function updatePlanStripeLinks(services: Services, input: PlanLinksChange, actor?: Actor): Promise<{ plan: Plan; stripeIds: string[] }> {
  const { workspace, plan } = await requirePlan(services.db, input);
  const added = [...checkedIds("Stripe", STRIPE_PRICE, input.prices), ...checkedIds("Stripe", STRIPE_PRODUCT, input.products)];
  const ref: PlanRef = { productKind: plan.productKind, productId: plan.productId, planId: plan.id };
  const now = services.clock.now();
  const table: PlanLinkTable = {
    link: (trx, stripeId) => insertPlanLink(trx, workspace.id, { ...ref, stripeId }, now),
    unlink: (trx, stripeId) => deletePlanLink(trx, workspace.id, ref, stripeId),
    holder: async (trx, stripeId) => (await findPlanLinks(trx, workspace.id, [stripeId])).get(stripeId),
  };
  const stripeIds = await services.db.transaction().execute(async (trx) => {
    const { changed } = await changePlanLinks(trx, table, {
      added,
      remove: input.remove,
      paramOf: (id) => (id.startsWith("price_") ? STRIPE_PRICE.param : STRIPE_PRODUCT.param),
    });
    if (actor && changed) {
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

/** The one plan every item maps to by its Stripe price, else product, or why there is none (payments/plan-links.ts). */
export async function planOfItems(ex: Executor, workspaceId: string, items: readonly BoughtItem[]): Promise<PlanRef | Problem> {
  return onePlanOfItems(items, await findPlanLinks(ex, workspaceId, idsOfItems(items)));
}
