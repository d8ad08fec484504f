// A plan's Paddle prices and products, per environment (Paddle's sandbox and live hold
// catalogues of their own ids): Warden's checkout sells the plan's linked price, and a
// completed purchase is taken only when what was paid for is linked to the plan its
// custom_data names (custom_data can come from a buyer's browser; the price is what
// Paddle charged). `warden admin plan update --paddle-price …` and the plan's dashboard page.
import { type Actor, recordAction } from "../audit/audit.service.js";
import type { Executor } from "../db/database.js";
import type { Env } from "../db/schema.js";
import { invalidParameter } from "../errors/errors.js";
import type { Problem } from "../payments/fields.js";
import type { BoughtItem, LinkedPlan } from "../payments/payment-facts.js";
import type { Services } from "../services.js";
import type { Plan } from "../workspaces/workspace.types.js";
import { type ProductRef, requireEnv, requirePlan, requireWorkspace } from "../workspaces/workspace-lookup.service.js";
import { deletePaddlePlanLink, findPaddlePlanLinks, insertPaddlePlanLink, listPaddleLinksOfEnv, listPaddlePlanLinks } from "./paddle-plan-link.store.js";

// Paddle's ids: a prefix and 26 lower-case base32 characters (ULIDs).
const PADDLE_PRICE = /^pri_[a-z0-9]{26}$/;
const PADDLE_PRODUCT = /^pro_[a-z0-9]{26}$/;

export interface PaddleLinksChange extends ProductRef {
  id: string;
  env: string;
  prices?: string[];
  products?: string[];
  /** Price or product ids to unlink from the plan. */
  remove?: string[];
}

function checked(param: string, values: string[] | undefined, shape: RegExp, example: string): string[] {
  return (values ?? []).map((raw) => {
    const value = raw.trim();
    if (!shape.test(value)) throw invalidParameter(param, `${param} must be a Paddle id such as ${example}.`);
    return value;
  });
}

/** Links (and unlinks) a plan's Paddle prices and products in one environment; answers the plan and every id linked to it there now. */
export async function updatePlanPaddleLinks(
  services: Services,
  input: PaddleLinksChange,
  actor?: Actor,
): Promise<{ plan: Plan; env: Env; paddleIds: string[] }> {
  const { workspace, plan } = await requirePlan(services.db, input);
  const env = requireEnv(input.env);
  const added = [
    ...checked("paddle-price", input.prices, PADDLE_PRICE, "pri_01h04vsc0qhwtsbsxh3422wjs4"),
    ...checked("paddle-product", input.products, PADDLE_PRODUCT, "pro_01h04vsc0qhwtsbsxh3422wjs4"),
  ];
  const removed = (input.remove ?? []).map((id) => id.trim()).filter((id) => id !== "");
  const ref: LinkedPlan = { productKind: plan.productKind, productId: plan.productId, planId: plan.id };
  const scope = { workspaceId: workspace.id, env };
  const now = services.clock.now();
  const paddleIds = await services.db.transaction().execute(async (trx) => {
    for (const id of removed) await deletePaddlePlanLink(trx, scope, ref, id);
    for (const id of added) {
      if (!(await insertPaddlePlanLink(trx, scope, { ...ref, paddleId: id }, now))) {
        const other = (await findPaddlePlanLinks(trx, scope, [id])).get(id);
        throw invalidParameter(
          id.startsWith("pri_") ? "paddle-price" : "paddle-product",
          `${id} is linked to plan ${other?.planId ?? "?"} of ${other?.productKind ?? "?"} ${other?.productId ?? "?"} already; unlink it there first.`,
        );
      }
    }
    if (actor && (added.length > 0 || removed.length > 0)) {
      await recordAction(trx, actor, { action: "plan.paddle_linked", workspaceId: workspace.id, env, subject: `${plan.productId}:${plan.id}` }, now);
    }
    return listPaddlePlanLinks(trx, scope, ref);
  });
  return { plan, env, paddleIds };
}

/**
 * The one plan every item maps to in the environment (by its price, else its product),
 * or why there is none: an item linked to no plan, or items linked to different plans.
 */
export async function paddlePlanOfItems(ex: Executor, scope: { workspaceId: string; env: Env }, items: readonly BoughtItem[]): Promise<LinkedPlan | Problem> {
  if (items.length === 0) return { problem: "no items to map" };
  const links = await findPaddlePlanLinks(
    ex,
    scope,
    items.flatMap((i) => [i.price, i.product]).filter((id): id is string => id !== null),
  );
  const plans = new Map<string, LinkedPlan>();
  for (const item of items) {
    const plan = (item.price === null ? undefined : links.get(item.price)) ?? (item.product === null ? undefined : links.get(item.product));
    if (!plan) return { problem: `price ${item.price ?? "?"} (product ${item.product ?? "?"}) is linked to no plan` };
    plans.set(`${plan.productKind}:${plan.productId}:${plan.planId}`, plan);
  }
  if (plans.size > 1) return { problem: `its items are linked to ${plans.size} different plans` };
  return [...plans.values()][0] as LinkedPlan;
}

export interface PaddleLinkRow extends LinkedPlan {
  /** A Paddle price (`pri_…`) or product (`pro_…`) id. */
  paddleId: string;
}

/** Every plan's Paddle prices and products in one environment: the payments page's read-only list. */
export async function paddleLinksOfEnv(services: Services, input: { workspace: string; env: string }): Promise<PaddleLinkRow[]> {
  const workspace = await requireWorkspace(services.db, input.workspace);
  return listPaddleLinksOfEnv(services.db, { workspaceId: workspace.id, env: requireEnv(input.env) });
}
