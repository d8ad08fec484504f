// SQL for what a tool declares (features, meters) and what each plan's terms give for it.
import { sql } from "kysely";
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
  return row ? termsOfRow(row) : EMPTY_TERMS;
}

function termsOfRow(row: { features: string; allowances: string; credits: string; credits_expire_days: number | null }): PlanTerms {
  return {
    features: JSON.parse(row.features) as string[],
    allowances: JSON.parse(row.allowances) as Record<string, number>,
    credits: JSON.parse(row.credits) as Record<string, number>,
    creditsExpireDays: row.credits_expire_days,
  };
}

/** Every plan's terms for one tool (its own plans' and its bundles'), in one statement by key. */
export async function listToolPlanTerms(ex: Executor, workspaceId: string, toolId: string): Promise<{ plan: PlanKey; terms: PlanTerms }[]> {
  const rows = await ex.selectFrom("plan_terms").selectAll().where("workspace_id", "=", workspaceId).where("tool_id", "=", toolId).execute();
  return rows.map((r) => ({ plan: { productKind: r.product_kind, productId: r.product_id, planId: r.plan_id }, terms: termsOfRow(r) }));
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
 * allowance of a plan covering the tool that is still offered and gives access. One
 * statement (read beside every access answer the terms cache has not kept): features,
 * meters and the live plans' allowances as rows of one union.
 */
export async function loadToolTerms(ex: Executor, workspaceId: string, toolId: string): Promise<ToolTerms> {
  // A bundle's plan counts only while the bundle still names the tool: its terms for a
  // tool it no longer covers stay stored (and come back with the tool) but give nothing.
  const { rows } = await sql<{ kind: "feature" | "meter" | "plan"; id: string | null; value: string | null; name: string | null; unit: string | null }>`
    select 'feature' as kind, id, null as value, null as name, null as unit from tool_features where workspace_id = ${workspaceId} and tool_id = ${toolId}
    union all
    select 'meter' as kind, id, cast(free_allowance as text) as value, name, unit from tool_meters where workspace_id = ${workspaceId} and tool_id = ${toolId}
    union all
    select 'plan' as kind, null as id, pt.allowances as value, null as name, null as unit
      from plan_terms pt
      join plans p on p.workspace_id = pt.workspace_id and p.product_kind = pt.product_kind and p.product_id = pt.product_id and p.id = pt.plan_id
      where pt.workspace_id = ${workspaceId} and pt.tool_id = ${toolId} and p.retired_at is null and p.gives_access <> 0
        and (pt.product_kind = 'tool' or exists (
          select 1 from bundle_tools bt where bt.workspace_id = pt.workspace_id and bt.bundle_id = pt.product_id and bt.tool_id = pt.tool_id))
  `.execute(ex);
  // Sorted here rather than by the database: the same order (code points) on both engines.
  const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  const features = rows
    .filter((r) => r.kind === "feature")
    .map((r) => ({ id: r.id as string }))
    .sort(byId)
    .map((f) => f.id);
  const meters = rows
    .filter((r) => r.kind === "meter")
    .map((r) => ({ id: r.id as string, name: r.name as string, unit: r.unit as string, freeAllowance: r.value === null ? null : Number(r.value) }))
    .sort(byId);
  const top: Record<string, number> = {};
  for (const row of rows) {
    if (row.kind !== "plan" || row.value === null) continue;
    for (const [meter, allowance] of Object.entries(JSON.parse(row.value) as Record<string, number>)) {
      top[meter] = Math.max(top[meter] ?? 0, allowance);
    }
  }
  return { features, meters, top: { features, allowances: top } };
}
