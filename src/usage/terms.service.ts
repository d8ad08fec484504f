// The operator's and owner's use cases for what a tool sells besides itself: features
// and meters a tool declares, and each plan's terms for the tools it covers. Behind the
// CLI (`warden admin feature|meter|plan terms`) and the dashboard's Configure pages.
import { type Actor, type AuditAction, recordAction } from "../audit/audit.service.js";
import type { Clock } from "../clock.js";
import { recordEveryoneChanged } from "../customers/access-change.store.js";
import type { Db, Executor } from "../db/database.js";
import { invalidParameter } from "../errors/errors.js";
import { listBundleTools } from "../workspaces/workspace.store.js";
import type { Tool, Workspace } from "../workspaces/workspace.types.js";
import { type ProductRef, requirePlan, requireTool } from "../workspaces/workspace-lookup.service.js";
import {
  findPlanTerms,
  insertFeature,
  insertMeter,
  listFeatures,
  listMeters,
  listToolPlanTerms,
  type PlanKey,
  savePlanTerms,
  updateFeatureName,
  updateMeterRow,
} from "./terms.store.js";
import type { Feature, Meter, PlanTerms } from "./usage.types.js";

// Feature and meter ids appear in paths, JSON keys and a library's calls: lower case, no spaces.
const TERM_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;
// Far beyond any sensible allowance, and exact in a JavaScript number and a bigint column.
export const MAX_UNITS = 1_000_000_000_000;

function requireTermId(param: string, value: string): string {
  if (!TERM_ID.test(value)) throw invalidParameter(param, `${param} must be 1 to 64 lower-case letters, digits, '_' or '-', starting with a letter or digit.`);
  // Ids are keys of the terms' JSON objects, read as plain objects: a name every object has would read as set.
  if (value in Object.prototype) throw invalidParameter(param, `${param} "${value}" is a reserved word; choose another id.`);
  return value;
}

function requireText(param: string, value: string, max: number): string {
  const trimmed = value.trim();
  if (trimmed === "" || trimmed.length > max || trimmed.includes("\u0000")) throw invalidParameter(param, `${param} must be 1 to ${max} characters.`);
  return trimmed;
}

/** A whole number of units, 0 to a trillion, from a command's text or a form's field. */
export function requireUnits(param: string, raw: string | number, min = 0): number {
  const value = typeof raw === "number" ? raw : /^\s*\d{1,13}\s*$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > MAX_UNITS) {
    throw invalidParameter(param, `${param} must be a whole number from ${min} to ${MAX_UNITS.toLocaleString("en")}.`);
  }
  return value;
}

async function audited(trx: Executor, actor: Actor | undefined, action: AuditAction, workspace: Workspace, subject: string, now: number) {
  if (actor) await recordAction(trx, actor, { action, workspaceId: workspace.id, env: null, subject }, now);
  // What a tool declares and what plans give shows in every access answer: every process's caches drop the workspace's.
  await recordEveryoneChanged(trx, workspace.id, now);
}

export interface ToolCatalogueTerms {
  workspace: Workspace;
  tool: Tool;
  features: Feature[];
  meters: Meter[];
}

export async function readToolTerms(db: Db, input: { workspace: string; tool: string }): Promise<ToolCatalogueTerms> {
  const { workspace, tool } = await requireTool(db, { workspace: input.workspace, id: input.tool });
  const [features, meters] = await Promise.all([listFeatures(db, workspace.id, tool.id), listMeters(db, workspace.id, tool.id)]);
  return { workspace, tool, features, meters };
}

export interface ToolSoldTerms {
  features: Feature[];
  meters: Meter[];
  /** The plan's terms for the tool: none (empty) when none were set, as a purchase of it then gives. */
  termsOf(plan: PlanKey): PlanTerms;
}

const NO_PLAN_TERMS: PlanTerms = { features: [], allowances: {}, credits: {}, creditsExpireDays: null };

/**
 * What a tool declares and what each plan gives it, for the hosted Plans page: three
 * reads by key, whatever the number of plans. Ids a tool no longer declares are left
 * out, as the access answers leave them out.
 */
export async function readToolSoldTerms(db: Db, input: { workspaceId: string; toolId: string }): Promise<ToolSoldTerms> {
  const [features, meters, plans] = await Promise.all([
    listFeatures(db, input.workspaceId, input.toolId),
    listMeters(db, input.workspaceId, input.toolId),
    listToolPlanTerms(db, input.workspaceId, input.toolId),
  ]);
  const declared = new Set(features.map((f) => f.id));
  const meterIds = new Set(meters.map((m) => m.id));
  const onlyMeters = (units: Record<string, number>) => Object.fromEntries(Object.entries(units).filter(([id, n]) => meterIds.has(id) && n > 0));
  const key = (plan: PlanKey) => `${plan.productKind}\u0000${plan.productId}\u0000${plan.planId}`;
  const byPlan = new Map(
    plans.map(({ plan, terms }) => [
      key(plan),
      { ...terms, features: terms.features.filter((f) => declared.has(f)), allowances: onlyMeters(terms.allowances), credits: onlyMeters(terms.credits) },
    ]),
  );
  return { features, meters, termsOf: (plan) => byPlan.get(key(plan)) ?? NO_PLAN_TERMS };
}

/** Declares a feature of a tool; plans unlock it through their terms. */
export async function addFeature(db: Db, clock: Clock, input: { workspace: string; tool: string; id: string; name: string }, actor?: Actor): Promise<Feature> {
  const { workspace, tool, features } = await readToolTerms(db, input);
  const feature: Feature = { id: requireTermId("id", input.id), name: requireText("name", input.name, 100), createdAt: clock.now() };
  if (features.some((f) => f.id === feature.id)) throw invalidParameter("id", `Tool "${tool.id}" declares feature "${feature.id}" already.`);
  await db.transaction().execute(async (trx) => {
    await insertFeature(trx, workspace.id, tool.id, feature);
    await audited(trx, actor, "feature.added", workspace, `${tool.id}:${feature.id}`, feature.createdAt);
  });
  return feature;
}

export async function renameFeature(
  db: Db,
  clock: Clock,
  input: { workspace: string; tool: string; id: string; name: string },
  actor?: Actor,
): Promise<Feature> {
  const { workspace, tool, features } = await readToolTerms(db, input);
  const found = features.find((f) => f.id === input.id);
  if (!found) throw invalidParameter("id", `Tool "${tool.id}" declares no feature "${input.id}".`);
  const feature = { ...found, name: requireText("name", input.name, 100) };
  await db.transaction().execute(async (trx) => {
    await updateFeatureName(trx, workspace.id, tool.id, feature.id, feature.name);
    await audited(trx, actor, "feature.renamed", workspace, `${tool.id}:${feature.id}`, clock.now());
  });
  return feature;
}

/** Declares a meter of a tool: what a person spends, with an optional free allowance each calendar month. */
export async function addMeter(
  db: Db,
  clock: Clock,
  input: { workspace: string; tool: string; id: string; name: string; unit: string; freeAllowance?: string | number | null },
  actor?: Actor,
): Promise<Meter> {
  const { workspace, tool, meters } = await readToolTerms(db, input);
  const meter: Meter = {
    id: requireTermId("id", input.id),
    name: requireText("name", input.name, 100),
    unit: requireText("unit", input.unit, 40),
    freeAllowance:
      input.freeAllowance === undefined || input.freeAllowance === null || input.freeAllowance === "" ? null : requireUnits("free", input.freeAllowance),
    createdAt: clock.now(),
  };
  if (meters.some((m) => m.id === meter.id)) throw invalidParameter("id", `Tool "${tool.id}" declares meter "${meter.id}" already.`);
  await db.transaction().execute(async (trx) => {
    await insertMeter(trx, workspace.id, tool.id, meter);
    await audited(trx, actor, "meter.added", workspace, `${tool.id}:${meter.id}`, meter.createdAt);
  });
  return meter;
}

/** A meter's new name, unit or free allowance; its id never changes (what was used is counted under it). */
export async function updateMeter(
  db: Db,
  clock: Clock,
  input: { workspace: string; tool: string; id: string; name?: string; unit?: string; freeAllowance?: string | number | null },
  actor?: Actor,
): Promise<Meter> {
  const { workspace, tool, meters } = await readToolTerms(db, input);
  const found = meters.find((m) => m.id === input.id);
  if (!found) throw invalidParameter("id", `Tool "${tool.id}" declares no meter "${input.id}".`);
  if (input.name === undefined && input.unit === undefined && input.freeAllowance === undefined) {
    throw invalidParameter("name", "Nothing to change: give a new name, unit or free allowance.");
  }
  const meter: Meter = {
    ...found,
    name: input.name === undefined ? found.name : requireText("name", input.name, 100),
    unit: input.unit === undefined ? found.unit : requireText("unit", input.unit, 40),
    freeAllowance:
      input.freeAllowance === undefined
        ? found.freeAllowance
        : input.freeAllowance === null || input.freeAllowance === ""
          ? null
          : requireUnits("free", input.freeAllowance),
  };
  await db.transaction().execute(async (trx) => {
    await updateMeterRow(trx, workspace.id, tool.id, meter);
    await audited(trx, actor, "meter.updated", workspace, `${tool.id}:${meter.id}`, clock.now());
  });
  return meter;
}

export interface PlanTermsChange {
  /** For a bundle's plan: which of its tools these terms are for. A tool's plan: that tool (may be omitted). */
  forTool?: string;
  features?: readonly string[];
  allowances?: Readonly<Record<string, string | number>>;
  credits?: Readonly<Record<string, string | number>>;
  creditsExpireDays?: string | number | null;
}

export interface PlanTermsResult {
  tool: string;
  terms: PlanTerms;
}

async function requireTermsTool(db: Db, input: ProductRef & { id: string; forTool?: string }) {
  const { workspace, plan } = await requirePlan(db, input);
  let toolId: string;
  if (plan.productKind === "tool") {
    if (input.forTool !== undefined && input.forTool !== plan.productId)
      throw invalidParameter("for-tool", `Plan "${plan.id}" is tool "${plan.productId}"'s: its terms are for that tool.`);
    toolId = plan.productId;
  } else {
    if (input.forTool === undefined)
      throw invalidParameter("for-tool", `Plan "${plan.id}" is bundle "${plan.productId}"'s: name which of its tools these terms are for.`);
    if (!(await listBundleTools(db, workspace.id, plan.productId)).includes(input.forTool))
      throw invalidParameter("for-tool", `Bundle "${plan.productId}" does not name tool "${input.forTool}".`);
    toolId = input.forTool;
  }
  return { workspace, plan, toolId };
}

export async function readPlanTerms(db: Db, input: ProductRef & { id: string; forTool?: string }): Promise<PlanTermsResult> {
  const { workspace, plan, toolId } = await requireTermsTool(db, input);
  return { tool: toolId, terms: await findPlanTerms(db, workspace.id, { productKind: plan.productKind, productId: plan.productId, planId: plan.id }, toolId) };
}

/**
 * Sets a plan's terms for one tool: the features it unlocks, each meter's allowance per
 * period, and the credits each purchase adds (one-time plans only: a credit pack). What
 * is not given stays as it was. Every feature and meter must be the tool's own.
 */
export async function setPlanTerms(db: Db, clock: Clock, input: ProductRef & { id: string } & PlanTermsChange, actor?: Actor): Promise<PlanTermsResult> {
  const { workspace, plan, toolId } = await requireTermsTool(db, input);
  const key = { productKind: plan.productKind, productId: plan.productId, planId: plan.id };
  const [features, meters, current] = await Promise.all([
    listFeatures(db, workspace.id, toolId),
    listMeters(db, workspace.id, toolId),
    findPlanTerms(db, workspace.id, key, toolId),
  ]);
  if (input.features === undefined && input.allowances === undefined && input.credits === undefined && input.creditsExpireDays === undefined) {
    throw invalidParameter("features", "Nothing to change: give features, allowances, credits or how long credits last.");
  }
  const declared = new Set(features.map((f) => f.id));
  const meterIds = new Set(meters.map((m) => m.id));
  const perMeter = (param: string, given: Readonly<Record<string, string | number>>, min: number): Record<string, number> => {
    const out: Record<string, number> = {};
    for (const [meter, raw] of Object.entries(given)) {
      if (!meterIds.has(meter))
        throw invalidParameter(
          param,
          `Tool "${toolId}" declares no meter "${meter}"${meterIds.size === 0 ? " (it declares none)" : `: it declares ${[...meterIds].join(", ")}`}.`,
        );
      const units = requireUnits(param, raw, min);
      if (units > 0) out[meter] = units;
    }
    return out;
  };
  const terms: PlanTerms = { ...current };
  if (input.features !== undefined) {
    for (const f of input.features) {
      if (!declared.has(f))
        throw invalidParameter(
          "features",
          `Tool "${toolId}" declares no feature "${f}"${declared.size === 0 ? " (it declares none)" : `: it declares ${[...declared].join(", ")}`}.`,
        );
    }
    terms.features = [...new Set(input.features)].sort();
  }
  if (input.allowances !== undefined) terms.allowances = perMeter("allowances", input.allowances, 0);
  if (input.credits !== undefined) {
    terms.credits = perMeter("credits", input.credits, 0);
    if (Object.keys(terms.credits).length > 0 && plan.billing !== "one_time") {
      throw invalidParameter("credits", "Credits come with a one-time plan (a credit pack); a subscription's allowance renews each period instead.");
    }
  }
  if (input.creditsExpireDays !== undefined) {
    terms.creditsExpireDays =
      input.creditsExpireDays === null || input.creditsExpireDays === "" ? null : requireUnits("credits-expire-days", input.creditsExpireDays, 1);
    if (terms.creditsExpireDays !== null && terms.creditsExpireDays > 3650)
      throw invalidParameter("credits-expire-days", "credits-expire-days must be 1 to 3650, or empty for credits that last until spent.");
  }
  await db.transaction().execute(async (trx) => {
    await savePlanTerms(trx, workspace.id, key, toolId, terms);
    await audited(trx, actor, "plan.terms_changed", workspace, `${plan.productId}:${plan.id}`, clock.now());
  });
  return { tool: toolId, terms };
}
