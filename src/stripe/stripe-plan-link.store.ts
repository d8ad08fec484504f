import type { Executor } from "../db/database.js";
import type { ProductKind } from "../db/schema.js";

/** The plan a Stripe Price or Product id names. */
export interface PlanRef {
  productKind: ProductKind;
  productId: string;
  planId: string;
}

export interface StripePlanLink extends PlanRef {
  stripeId: string;
}

/** Links a Stripe id to the plan; false when it names another plan already (nothing is changed). */
export async function insertPlanLink(ex: Executor, workspaceId: string, link: StripePlanLink, now: number): Promise<boolean> {
  const inserted = await ex
    .insertInto("stripe_plan_links")
    .values({
      workspace_id: workspaceId,
      stripe_id: link.stripeId,
      product_kind: link.productKind,
      product_id: link.productId,
      plan_id: link.planId,
      created_at: now,
    })
    .onConflict((oc) => oc.columns(["workspace_id", "stripe_id"]).doNothing())
    .returning("stripe_id")
    .executeTakeFirst();
  if (inserted) return true;
  const existing = await findPlanLinks(ex, workspaceId, [link.stripeId]);
  const plan = existing.get(link.stripeId);
  return plan !== undefined && plan.productKind === link.productKind && plan.productId === link.productId && plan.planId === link.planId;
}

export async function deletePlanLink(ex: Executor, workspaceId: string, plan: PlanRef, stripeId: string): Promise<boolean> {
  const result = await ex
    .deleteFrom("stripe_plan_links")
    .where("workspace_id", "=", workspaceId)
    .where("stripe_id", "=", stripeId)
    .where("product_kind", "=", plan.productKind)
    .where("product_id", "=", plan.productId)
    .where("plan_id", "=", plan.planId)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** The Stripe ids linked to one plan, in the order they were linked. */
export async function listPlanLinks(ex: Executor, workspaceId: string, plan: PlanRef): Promise<string[]> {
  const rows = await ex
    .selectFrom("stripe_plan_links")
    .select("stripe_id")
    .where("workspace_id", "=", workspaceId)
    .where("product_kind", "=", plan.productKind)
    .where("product_id", "=", plan.productId)
    .where("plan_id", "=", plan.planId)
    .orderBy("created_at")
    .orderBy("stripe_id")
    .execute();
  return rows.map((r) => r.stripe_id);
}

/** The plans these Stripe ids name, by id; ids that name none are absent. */
export async function findPlanLinks(ex: Executor, workspaceId: string, stripeIds: readonly string[]): Promise<Map<string, PlanRef>> {
  if (stripeIds.length === 0) return new Map();
  const rows = await ex
    .selectFrom("stripe_plan_links")
    .select(["stripe_id", "product_kind", "product_id", "plan_id"])
    .where("workspace_id", "=", workspaceId)
    .where("stripe_id", "in", [...new Set(stripeIds)])
    .execute();
  return new Map(rows.map((r) => [r.stripe_id, { productKind: r.product_kind, productId: r.product_id, planId: r.plan_id }]));
}
