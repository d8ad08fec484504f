import type { Executor } from "../db/database.js";
import type { Env, ProductKind } from "../db/schema.js";

type Scope = { workspaceId: string; env: Env };

/** The plan a Paddle price or product id is linked to. */
interface LinkedPlan {
  productKind: ProductKind;
  productId: string;
  planId: string;
}

/** Links a Paddle id to the plan in the environment; false when it names another plan already (nothing is changed). */
export async function insertPaddlePlanLink(ex: Executor, scope: Scope, link: LinkedPlan & { paddleId: string }, now: number): Promise<boolean> {
  const inserted = await ex
    .insertInto("paddle_plan_links")
    .values({
      workspace_id: scope.workspaceId,
      env: scope.env,
      paddle_id: link.paddleId,
      product_kind: link.productKind,
      product_id: link.productId,
      plan_id: link.planId,
      created_at: now,
    })
    .onConflict((oc) => oc.columns(["workspace_id", "env", "paddle_id"]).doNothing())
    .returning("paddle_id")
    .executeTakeFirst();
  if (inserted) return true;
  const plan = (await findPaddlePlanLinks(ex, scope, [link.paddleId])).get(link.paddleId);
  return plan !== undefined && plan.productKind === link.productKind && plan.productId === link.productId && plan.planId === link.planId;
}

export async function deletePaddlePlanLink(ex: Executor, scope: Scope, plan: LinkedPlan, paddleId: string): Promise<void> {
  await ex
    .deleteFrom("paddle_plan_links")
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("paddle_id", "=", paddleId)
    .where("product_kind", "=", plan.productKind)
    .where("product_id", "=", plan.productId)
    .where("plan_id", "=", plan.planId)
    .execute();
}

/** The Paddle ids linked to one plan in the environment, in the order they were linked. */
export async function listPaddlePlanLinks(ex: Executor, scope: Scope, plan: LinkedPlan): Promise<string[]> {
  const rows = await ex
    .selectFrom("paddle_plan_links")
    .select("paddle_id")
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("product_kind", "=", plan.productKind)
    .where("product_id", "=", plan.productId)
    .where("plan_id", "=", plan.planId)
    .orderBy("created_at")
    .orderBy("paddle_id")
    .execute();
  return rows.map((r) => r.paddle_id);
}

/** Every Paddle id linked in the environment with its plan, by product, plan and then the order they were linked. */
export async function listPaddleLinksOfEnv(ex: Executor, scope: Scope): Promise<(LinkedPlan & { paddleId: string })[]> {
  const rows = await ex
    .selectFrom("paddle_plan_links")
    .select(["paddle_id", "product_kind", "product_id", "plan_id"])
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .orderBy("product_kind")
    .orderBy("product_id")
    .orderBy("plan_id")
    .orderBy("created_at")
    .orderBy("paddle_id")
    .execute();
  return rows.map((r) => ({ productKind: r.product_kind, productId: r.product_id, planId: r.plan_id, paddleId: r.paddle_id }));
}

/** The plans these Paddle ids name in the environment, by id; ids that name none are absent. */
export async function findPaddlePlanLinks(ex: Executor, scope: Scope, paddleIds: readonly string[]): Promise<Map<string, LinkedPlan>> {
  if (paddleIds.length === 0) return new Map();
  const rows = await ex
    .selectFrom("paddle_plan_links")
    .select(["paddle_id", "product_kind", "product_id", "plan_id"])
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("paddle_id", "in", [...new Set(paddleIds)])
    .execute();
  return new Map(rows.map((r) => [r.paddle_id, { productKind: r.product_kind, productId: r.product_id, planId: r.plan_id }]));
}
