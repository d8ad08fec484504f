// A plan's Paddle prices and products, per environment (Paddle's sandbox and live hold
// catalogues of their own ids): Warden's checkout sells the plan's linked price, and a
// completed purchase is taken only when what was paid for is linked to the plan its
// custom_data names (custom_data can come from a buyer's browser; the price is what
// Paddle charged). `warden admin plan update --paddle-price …` and the plan's dashboard page;
// what Stripe's links share with them is in payments/plan-links.ts.
import { type Actor, recordAction } from "../audit/audit.service.js";
import type { Executor } from "../db/database.js";
import type { Env } from "../db/schema.js";
import type { Problem } from "../payments/fields.js";
import type { BoughtItem, LinkedPlan } from "../payments/payment-facts.js";
import { changePlanLinks, checkedIds, idsOfItems, onePlanOfItems, type PlanLinkTable } from "../payments/plan-links.js";
import type { Services } from "../services.js";
import type { Plan } from "../workspaces/workspace.types.js";
import { type ProductRef, requireEnv, requirePlan, requireWorkspace } from "../workspaces/workspace-lookup.service.js";
import { deletePaddlePlanLink, findPaddlePlanLinks, insertPaddlePlanLink, listPaddleLinksOfEnv, listPaddlePlanLinks } from "./paddle-plan-link.store.js";

// Paddle's ids: a prefix and 26 lower-case base32 characters (ULIDs).
const PADDLE_PRICE = { param: "paddle-price", shape: /^pri_[a-z0-9]{26}$/, example: "pri_01h04vsc0qhwtsbsxh3422wjs4" };
const PADDLE_PRODUCT = { param: "paddle-product", shape: /^pro_[a-z0-9]{26}$/, example: "pro_01h04vsc0qhwtsbsxh3422wjs4" };

export interface PaddleLinksChange extends ProductRef {
  id: string;
  env: string;
  prices?: string[];
  products?: string[];
  /** Price or product ids to unlink from the plan. */
  remove?: string[];
}

/** Links (and unlinks) a plan's Paddle prices and products in one environment; answers the plan and every id linked to it there now. */
export async function updatePlanPaddleLinks(
  services: Services,
  input: PaddleLinksChange,
  actor?: Actor,
): Promise<{ plan: Plan; env: Env; paddleIds: string[] }> {
  const { workspace, plan } = await requirePlan(services.db, input);
  const env = requireEnv(input.env);
  const added = [...checkedIds("Paddle", PADDLE_PRICE, input.prices), ...checkedIds("Paddle", PADDLE_PRODUCT, input.products)];
  const ref: LinkedPlan = { productKind: plan.productKind, productId: plan.productId, planId: plan.id };
  const scope = { workspaceId: workspace.id, env };
  const now = services.clock.now();
  const table: PlanLinkTable = {
    link: (trx, paddleId) => insertPaddlePlanLink(trx, scope, { ...ref, paddleId }, now),
    unlink: (trx, paddleId) => deletePaddlePlanLink(trx, scope, ref, paddleId),
    holder: async (trx, paddleId) => (await findPaddlePlanLinks(trx, scope, [paddleId])).get(paddleId),
  };
  const paddleIds = await services.db.transaction().execute(async (trx) => {
    const { changed } = await changePlanLinks(trx, table, {
      added,
      remove: input.remove,
      paramOf: (id) => (id.startsWith("pri_") ? PADDLE_PRICE.param : PADDLE_PRODUCT.param),
    });
    if (actor && changed) {
      await recordAction(trx, actor, { action: "plan.paddle_linked", workspaceId: workspace.id, env, subject: `${plan.productId}:${plan.id}` }, now);
    }
    return listPaddlePlanLinks(trx, scope, ref);
  });
  return { plan, env, paddleIds };
}

/** The Paddle ids linked to a plan in one environment (its dashboard page shows them). */
export async function planPaddleLinks(services: Services, scope: { workspaceId: string; env: Env }, plan: LinkedPlan): Promise<string[]> {
  return listPaddlePlanLinks(services.db, scope, plan);
}

/** The one plan every item maps to in the environment by its Paddle price, else product, or why there is none (payments/plan-links.ts). */
export async function paddlePlanOfItems(ex: Executor, scope: { workspaceId: string; env: Env }, items: readonly BoughtItem[]): Promise<LinkedPlan | Problem> {
  return onePlanOfItems(items, await findPaddlePlanLinks(ex, scope, idsOfItems(items)));
}

export interface PaddleLinkRow extends LinkedPlan {
  /** A Paddle price (`pri_…`) or product (`pro_…`) id. */
  paddleId: string;
}

/** Every plan's Paddle prices and products in one environment: the payments page's list. */
export async function paddleLinksOfEnv(services: Services, input: { workspace: string; env: string }): Promise<PaddleLinkRow[]> {
  const workspace = await requireWorkspace(services.db, input.workspace);
  return listPaddleLinksOfEnv(services.db, { workspaceId: workspace.id, env: requireEnv(input.env) });
}
