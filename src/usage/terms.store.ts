// SQL for what a tool declares (features, meters) and what each plan's terms give for it.
import type { Executor } from "../db/database.js";
import type { ProductKind } from "../db/schema.js";
import type { Feature, Meter, PlanTerms, ToolTerms } from "./usage.types.js";

export interface PlanKey {
  productKind: ProductKind;
  productId: string;
  planId: string;
}

export async function listFeatures(ex: Executor, workspaceId: string, toolId: string): Promise<Feature[]> {
  const rows = await ex.selectFrom("tool_features").selectAll().where("workspace_id", "=", workspaceId).where("tool_id", "=", toolId).orderBy("id").execute();
  return rows.map((r) => ({ id: r.id, name: r.name, createdAt: Number(r.created_at) }));
}

export async function insertFeature(ex: Executor, workspaceId: string, toolId: string, feature: Feature): Promise<void> {
  await ex
    .insertInto("tool_features")
    .values({ workspace_id: workspaceId, tool_id: toolId, id: feature.id, name: feature.name, created_at: feature.createdAt })
    .execute();
}

export async function updateFeatureName(ex: Executor, workspaceId: string, toolId: string, id: string, name: string): Promise<void> {
  await ex.updateTable("tool_features").set({ name }).where("workspace_id", "=", workspaceId).where("tool_id", "=", toolId).where("id", "=", id).execute();
}

export async function listMeters(ex: Executor, workspaceId: string, toolId: string): Promise<Meter[]> {
  const rows = await ex.selectFrom("tool_meters").selectAll().where("workspace_id", "=", workspaceId).where("tool_id", "=", toolId).orderBy("id").execute();
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    unit: r.unit,
    freeAllowance: r.free_allowance === null ? null : Number(r.free_allowance),
    createdAt: Number(r.created_at),
  }));
}

export async function insertMeter(ex: Executor, workspaceId: string, toolId: string, meter: Meter): Promise<void> {
  await ex
    .insertInto("tool_meters")
    .values({
      workspace_id: workspaceId,
      tool_id: toolId,
      id: meter.id,
      name: meter.name,
      unit: meter.unit,
      free_allowance: meter.freeAllowance,
      created_at: meter.createdAt,
    })
    .execute();
}

export async function updateMeterRow(ex: Executor, workspaceId: string, toolId: string, meter: Meter): Promise<void> {
  await ex
    .updateTable("tool_meters")
    .set({ name: meter.name, unit: meter.unit, free_allowance: meter.freeAllowance })
    .where("workspace_id", "=", workspaceId)
    .where("tool_id", "=", toolId)
    .where("id", "=", meter.id)
    .execute();
}

const EMPTY_TERMS: PlanTerms = { features: [], allowances: {}, credits: {}, creditsExpireDays: null };

/** A plan's terms for one tool it covers; empty when none were set. */
export async function findPlanTerms(ex: Executor, workspaceId: string, plan: PlanKey, toolId: string): Promise<PlanTerms> {
  const row = await ex
    .selectFrom("plan_terms")
    .selectAll()
    .where("workspace_id", "=", workspaceId)
    .where("product_kind", "=", plan.productKind)
    .where("product_id", "=", plan.productId)
    .where("plan_id", "=", plan.planId)
    .where("tool_id", "=", toolId)
    .executeTakeFirst();
  if (!row) return EMPTY_TERMS;
  return {
    features: JSON.parse(row.features) as string[],
    allowances: JSON.parse(row.allowances) as Record<string, number>,
    credits: JSON.parse(row.credits) as Record<string, number>,
    creditsExpireDays: row.credits_expire_days,
  };
}

export async function savePlanTerms(ex: Executor, workspaceId: string, plan: PlanKey, toolId: string, terms: PlanTerms): Promise<void> {
  const values = {
    features: JSON.stringify(terms.features),
    allowances: JSON.stringify(terms.allowances),
    credits: JSON.stringify(terms.credits),
    credits_expire_days: terms.creditsExpireDays,
  };
  await ex
    .insertInto("plan_terms")
    .values({ workspace_id: workspaceId, product_kind: plan.productKind, product_id: plan.productId, plan_id: plan.planId, tool_id: toolId, ...values })
    .onConflict((oc) => oc.columns(["workspace_id", "product_kind", "product_id", "plan_id", "tool_id"]).doUpdateSet(values))
    .execute();
}

/**
 * What a tool declares, and its top terms: every feature, and per meter the largest
 * allowance of a plan covering the tool that is still offered and gives access.
 */
export async function loadToolTerms(ex: Executor, workspaceId: string, toolId: string): Promise<ToolTerms> {
  const [features, meters, allowances] = await Promise.all([
    ex.selectFrom("tool_features").select("id").where("workspace_id", "=", workspaceId).where("tool_id", "=", toolId).orderBy("id").execute(),
    ex.selectFrom("tool_meters").select(["id", "free_allowance"]).where("workspace_id", "=", workspaceId).where("tool_id", "=", toolId).orderBy("id").execute(),
    ex
      .selectFrom("plan_terms as pt")
      .innerJoin("plans as p", (join) =>
        join
          .onRef("p.workspace_id", "=", "pt.workspace_id")
          .onRef("p.product_kind", "=", "pt.product_kind")
          .onRef("p.product_id", "=", "pt.product_id")
          .onRef("p.id", "=", "pt.plan_id"),
      )
      .select("pt.allowances")
      .where("pt.workspace_id", "=", workspaceId)
      .where("pt.tool_id", "=", toolId)
      .where("p.retired_at", "is", null)
      .where("p.gives_access", "<>", 0)
      .execute(),
  ]);
  const top: Record<string, number> = {};
  for (const row of allowances) {
    for (const [meter, allowance] of Object.entries(JSON.parse(row.allowances) as Record<string, number>)) {
      top[meter] = Math.max(top[meter] ?? 0, allowance);
    }
  }
  return {
    features: features.map((f) => f.id),
    meters: meters.map((m) => ({ id: m.id, freeAllowance: m.free_allowance === null ? null : Number(m.free_allowance) })),
    top: { features: features.map((f) => f.id), allowances: top },
  };
}
