// Operator use cases behind `warden admin`: owners, workspaces, tools, bundles, plans
// and keys. Each checks its input and answers a clear error; nothing is half-written.

import { type Actor, type AuditAction, recordAction } from "../audit/audit.service.js";
import { createApiKey, type KeySummary, listWorkspaceKeys } from "../auth/key.service.js";
import { forgetAuthVersion, revokeKey as revokeKeyRow } from "../auth/key.store.js";
import type { Clock } from "../clock.js";
import { recordEveryoneChanged } from "../customers/access-change.store.js";
import { isEmailShape, normaliseEmail } from "../customers/email.js";
import type { Db, Executor } from "../db/database.js";
import type { Env } from "../db/schema.js";
import { invalidParameter, notFound } from "../errors/errors.js";
import { newId } from "../ids.js";
import type { Services } from "../services.js";
import {
  bundleExists,
  findOwnerByEmail,
  findPlan,
  findTool,
  findWorkspaceBySlug,
  insertBundle,
  insertOwner,
  insertPlan,
  insertTool,
  insertWorkspace,
  listBundles as listBundleRows,
  listOwnedWorkspaceRows,
  listOwnerIds,
  listOwners as listOwnerRows,
  listPlans as listPlanRows,
  listTools as listToolRows,
  listWorkspaces as listWorkspaceRows,
  retirePlanRow,
  setOwnerSuspended,
  updatePlanName,
  updateToolRow,
} from "./workspace.store.js";
import type { Bundle, Owner, Plan, ServicePlan, Tool, Workspace } from "./workspace.types.js";
import { type ProductRef, requireEnv, requireOwner, requirePlan, requireProduct, requireTool, requireWorkspace } from "./workspace-lookup.service.js";

export const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
// Tool, bundle and plan ids appear in URLs and in event data (`<tool>:<plan>`), so no colon.
const PRODUCT_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

function requireText(param: string, value: string, max = 200): string {
  const trimmed = value.trim();
  if (trimmed === "" || trimmed.length > max || trimmed.includes("\u0000")) {
    throw invalidParameter(param, `${param} must be 1 to ${max} characters.`);
  }
  return trimmed;
}

function requireProductId(param: string, value: string): string {
  if (!PRODUCT_ID.test(value)) throw invalidParameter(param, `${param} must be 1 to 64 letters, digits, '_', '-' or '.', starting with a letter or digit.`);
  return value;
}

/** The workspaces an owner owns (the dashboard shows only these). */
export function listOwnedWorkspaces(db: Db, ownerId: string): Promise<Workspace[]> {
  return listOwnedWorkspaceRows(db, ownerId);
}

/** Every owner of a workspace: the dashboard charges a page's reads to all of them, as the API does for a key. */
export function listWorkspaceOwnerIds(db: Db, workspaceId: string): Promise<string[]> {
  return listOwnerIds(db, workspaceId);
}

export async function createOwner(db: Db, clock: Clock, input: { email: string }): Promise<Owner> {
  if (!isEmailShape(input.email)) throw invalidParameter("email", "email must be an email address.");
  if (await findOwnerByEmail(db, normaliseEmail(input.email))) throw invalidParameter("email", `An owner with email "${input.email}" exists already.`);
  const owner: Owner = { id: newId("own"), email: input.email, suspendedAt: null, createdAt: clock.now() };
  await insertOwner(db, owner, normaliseEmail(input.email));
  return owner;
}

export async function setOwnerSuspension(db: Db, clock: Clock, input: { email: string; suspended: boolean }): Promise<Owner> {
  const owner = await requireOwner(db, input.email);
  const suspendedAt = input.suspended ? (owner.suspendedAt ?? clock.now()) : null;
  await setOwnerSuspended(db, owner.id, suspendedAt);
  forgetAuthVersion(db);
  return { ...owner, suspendedAt };
}

export async function createWorkspace(db: Db, clock: Clock, input: { slug: string; name: string; ownerEmail: string; plan?: string }): Promise<Workspace> {
  if (!SLUG.test(input.slug)) throw invalidParameter("slug", "slug must be 1 to 63 lower-case letters, digits or '-', not starting or ending with '-'.");
  const plan = (input.plan ?? "hobby") as ServicePlan;
  if (plan !== "hobby" && plan !== "pro") throw invalidParameter("plan", "plan must be hobby or pro.");
  const name = requireText("name", input.name);
  const owner = await requireOwner(db, input.ownerEmail);
  if (await findWorkspaceBySlug(db, input.slug)) throw invalidParameter("slug", `A workspace with slug "${input.slug}" exists already.`);
  const workspace: Workspace = { id: newId("ws"), slug: input.slug, name, plan, createdAt: clock.now() };
  await db.transaction().execute((trx) => insertWorkspace(trx, workspace, [owner.id]));
  return workspace;
}

const MAX_TRIAL_DAYS = 365;

function requireTrialDays(raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const days = /^\d{1,3}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(days <= MAX_TRIAL_DAYS)) throw invalidParameter("trial-days", `The trial must be a whole number of days from 0 (no trial) to ${MAX_TRIAL_DAYS}.`);
  return days;
}

/**
 * Records what an owner changed in a workspace's catalogue, Stripe connection or owners,
 * in the change's transaction. The operator's `warden admin` acts as no owner, so it
 * passes no actor and nothing is recorded.
 */
async function audit(
  trx: Executor,
  actor: Actor | undefined,
  what: { action: AuditAction; workspaceId: string; env?: Env; subject: string },
  now: number,
): Promise<void> {
  if (actor) await recordAction(trx, actor, { env: null, ...what }, now);
}

export async function createTool(
  db: Db,
  clock: Clock,
  input: { workspace: string; id: string; name: string; trialDays?: string },
  actor?: Actor,
): Promise<Tool> {
  const workspace = await requireWorkspace(db, input.workspace);
  const tool: Tool = {
    id: requireProductId("id", input.id),
    name: requireText("name", input.name),
    trialDays: requireTrialDays(input.trialDays, 0),
    createdAt: clock.now(),
  };
  if (await findTool(db, workspace.id, tool.id)) throw invalidParameter("id", `Tool "${tool.id}" exists already in this workspace.`);
  await db.transaction().execute(async (trx) => {
    await insertTool(trx, workspace.id, tool);
    await audit(trx, actor, { action: "tool.created", workspaceId: workspace.id, subject: tool.id }, tool.createdAt);
  });
  return tool;
}

/** Renames a tool or changes the trial it offers; a trial already started keeps its end. Its id never changes. */
export async function updateTool(
  db: Db,
  clock: Clock,
  input: { workspace: string; id: string; name?: string; trialDays?: string },
  actor?: Actor,
): Promise<Tool> {
  const { workspace, tool: found } = await requireTool(db, input);
  if (input.name === undefined && input.trialDays === undefined) throw invalidParameter("trial-days", "Nothing to change: give a new name or a trial length.");
  const tool: Tool = {
    ...found,
    name: input.name === undefined ? found.name : requireText("name", input.name),
    trialDays: requireTrialDays(input.trialDays, found.trialDays),
  };
  await db.transaction().execute(async (trx) => {
    await updateToolRow(trx, workspace.id, tool);
    await audit(trx, actor, { action: "tool.updated", workspaceId: workspace.id, subject: tool.id }, clock.now());
  });
  return tool;
}

/** The tools a bundle may name: at least one, each of this workspace, each once. */
export async function requireBundleTools(db: Db, workspaceId: string, toolIds: readonly string[]): Promise<string[]> {
  const unique = [...new Set(toolIds.map((t) => t.trim()).filter((t) => t !== ""))];
  if (unique.length === 0) throw invalidParameter("tools", "A bundle names at least one tool.");
  for (const toolId of unique) {
    if (!(await findTool(db, workspaceId, toolId))) throw invalidParameter("tools", `No tool "${toolId}" in this workspace.`);
  }
  return unique;
}

export async function createBundle(
  db: Db,
  clock: Clock,
  input: { workspace: string; id: string; name: string; toolIds: string[] },
  actor?: Actor,
): Promise<Bundle> {
  const workspace = await requireWorkspace(db, input.workspace);
  const id = requireProductId("id", input.id);
  const toolIds = await requireBundleTools(db, workspace.id, input.toolIds);
  if (await bundleExists(db, workspace.id, id)) throw invalidParameter("id", `Bundle "${id}" exists already in this workspace.`);
  const bundle: Bundle = { id, name: requireText("name", input.name), toolIds, createdAt: clock.now() };
  await db.transaction().execute(async (trx) => {
    await insertBundle(trx, workspace.id, bundle);
    await audit(trx, actor, { action: "bundle.created", workspaceId: workspace.id, subject: bundle.id }, bundle.createdAt);
  });
  return bundle;
}

export interface CreatePlanInput extends ProductRef {
  id: string;
  name: string;
  billing: string;
  /** Minor units (cents), as a number or as the text a person typed; absent: a plan with no price to pay. */
  amountCents?: number | string;
  currency?: string;
  interval?: string;
  isDefault?: boolean;
  /** False: a credit pack sold alone (one-time only), whose purchase adds its credits and gives no access. */
  givesAccess?: boolean;
}

function requireAmount(raw: number | string | undefined): number | null {
  if (raw === undefined) return null;
  const amount = typeof raw === "number" ? raw : /^\d{1,16}$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
  if (!Number.isSafeInteger(amount) || amount < 0) {
    throw invalidParameter("amount-cents", "The amount must be a whole number of minor units (cents: 4900 is 49.00), 0 or more.");
  }
  return amount;
}

export async function createPlan(db: Db, clock: Clock, input: CreatePlanInput, actor?: Actor): Promise<Plan> {
  const { workspace, productKind, productId } = await requireProduct(db, input);
  if (input.billing !== "one_time" && input.billing !== "subscription") throw invalidParameter("billing", "billing must be one_time or subscription.");
  const interval = input.interval ?? null;
  if (input.billing === "subscription" && interval !== "month" && interval !== "year") {
    throw invalidParameter("interval", "A subscription plan renews every month or every year: give its interval, month or year.");
  }
  if (input.billing === "one_time" && interval !== null) throw invalidParameter("interval", "A one-time plan has no interval.");
  const currency = (input.currency ?? "eur").trim().toLowerCase();
  if (!/^[a-z]{3}$/.test(currency)) throw invalidParameter("currency", "currency must be a three-letter code such as eur.");
  const amountCents = requireAmount(input.amountCents);
  const givesAccess = input.givesAccess ?? true;
  if (!givesAccess && input.billing !== "one_time")
    throw invalidParameter("billing", "A credit pack sold alone is a one-time plan: its credits come with each purchase.");
  const id = requireProductId("id", input.id);
  if (await findPlan(db, workspace.id, productKind, productId, id))
    throw invalidParameter("id", `Plan "${id}" exists already for ${productKind} "${productId}".`);
  const plan: Plan = {
    productKind,
    productId,
    id,
    name: requireText("name", input.name),
    billing: input.billing,
    amountCents,
    currency,
    interval: interval as Plan["interval"],
    isDefault: input.isDefault ?? false,
    createdAt: clock.now(),
    retiredAt: null,
    givesAccess,
  };
  await db.transaction().execute(async (trx) => {
    await insertPlan(trx, workspace.id, plan);
    await audit(trx, actor, { action: "plan.created", workspaceId: workspace.id, subject: planSubject(plan) }, plan.createdAt);
  });
  return plan;
}

/** How the audit log names a plan: `tabmaster:lifetime`, as event data does. */
const planSubject = (plan: Pick<Plan, "productId" | "id">) => `${plan.productId}:${plan.id}`;

/** A plan's new name; its id, price and billing never change (purchases name it). */
export async function renamePlan(db: Db, clock: Clock, input: ProductRef & { id: string; name: string }, actor?: Actor): Promise<Plan> {
  const { workspace, plan: found } = await requirePlan(db, input);
  const plan = { ...found, name: requireText("name", input.name) };
  await db.transaction().execute(async (trx) => {
    await updatePlanName(trx, workspace.id, plan);
    // Every answer that names the plan names it anew: the caches of every process drop the workspace's.
    await recordEveryoneChanged(trx, workspace.id, clock.now());
    await audit(trx, actor, { action: "plan.renamed", workspaceId: workspace.id, subject: planSubject(plan) }, clock.now());
  });
  return plan;
}

/**
 * Retires a plan: checkout no longer offers it, and a purchase that names no plan no
 * longer falls back to it. The licences and subscriptions bought with it keep it (their
 * renewals, refunds and events still name it). It keeps its default mark, so the events
 * of what was bought with it keep naming it the same way (a default plan by its bare
 * id). Retiring a retired plan changes nothing.
 */
export async function retirePlan(db: Db, clock: Clock, input: ProductRef & { id: string }, actor?: Actor): Promise<Plan & { retiredNow: boolean }> {
  const { workspace, plan } = await requirePlan(db, input);
  const now = clock.now();
  const retiredNow = await db.transaction().execute(async (trx) => {
    if (!(await retirePlanRow(trx, workspace.id, plan, now))) return false;
    // A tool's top terms are the largest of its offered plans': every process's memory of them is dropped.
    await recordEveryoneChanged(trx, workspace.id, now);
    await audit(trx, actor, { action: "plan.retired", workspaceId: workspace.id, subject: planSubject(plan) }, now);
    return true;
  });
  return retiredNow ? { ...plan, retiredAt: now, retiredNow } : { ...plan, retiredNow };
}

export async function createKey(
  db: Db,
  clock: Clock,
  input: { workspace: string; env: string; name?: string },
): Promise<{ id: string; key: string; workspace: string; env: Env }> {
  const workspace = await requireWorkspace(db, input.workspace);
  const env = requireEnv(input.env);
  const name = input.name === undefined ? null : requireText("name", input.name);
  const created = await createApiKey(db, clock, { workspaceId: workspace.id, env, name });
  return { ...created, workspace: workspace.slug, env };
}

export async function revokeKey(db: Db, clock: Clock, input: { id: string }): Promise<{ id: string; revokedAt: number }> {
  const revoked = await revokeKeyRow(db, input.id, clock.now());
  if (!revoked) throw notFound(`No API key "${input.id}".`);
  // Refused by this process from its next request; by the others when their key watch reads (auth/key-watch.ts).
  forgetAuthVersion(db);
  return revoked;
}

// The operator's lists, for `warden admin … list` at a terminal: each is read whole, in a
// stable order, with no paging (a workspace has a handful of tools, plans and keys; the
// owners and workspaces of one installation are read in one statement each).

export async function listOwners(db: Db): Promise<(Owner & { workspaces: string[] })[]> {
  return listOwnerRows(db);
}

/** Every workspace, or those of the owner with this email. */
export async function listWorkspaces(db: Db, input: { ownerEmail?: string }): Promise<(Workspace & { owners: string[] })[]> {
  const owner = input.ownerEmail === undefined ? null : await requireOwner(db, input.ownerEmail);
  return listWorkspaceRows(db, owner?.id ?? null);
}

export async function listTools(db: Db, input: { workspace: string }): Promise<Tool[]> {
  return listToolRows(db, (await requireWorkspace(db, input.workspace)).id);
}

export async function listBundles(db: Db, input: { workspace: string }): Promise<Bundle[]> {
  return listBundleRows(db, (await requireWorkspace(db, input.workspace)).id);
}

/** A workspace's plans, or one tool's or one bundle's (which must exist). */
export async function listPlans(db: Db, input: { workspace: string; tool?: string; bundle?: string }): Promise<Plan[]> {
  const workspace = await requireWorkspace(db, input.workspace);
  if (input.tool !== undefined && input.bundle !== undefined) throw invalidParameter("tool", "Give --tool or --bundle, not both.");
  if (input.tool !== undefined) {
    if (!(await findTool(db, workspace.id, input.tool))) throw notFound(`No tool "${input.tool}" in workspace "${workspace.slug}".`);
    return listPlanRows(db, workspace.id, { kind: "tool", id: input.tool });
  }
  if (input.bundle !== undefined) {
    if (!(await bundleExists(db, workspace.id, input.bundle))) throw notFound(`No bundle "${input.bundle}" in workspace "${workspace.slug}".`);
    return listPlanRows(db, workspace.id, { kind: "bundle", id: input.bundle });
  }
  return listPlanRows(db, workspace.id, null);
}

/** A workspace's keys (one environment's when given), without their secrets. */
export async function listKeys(services: Services, input: { workspace: string; env?: string }): Promise<KeySummary[]> {
  const { db } = services;
  const workspace = await requireWorkspace(db, input.workspace);
  return listWorkspaceKeys(services, { workspaceId: workspace.id, env: input.env === undefined ? null : requireEnv(input.env) });
}
