import type { Selectable } from "kysely";
import type { Executor } from "../db/database.js";
import { prepared } from "../db/prepared.js";
import type { PlansTable, ProductKind } from "../db/schema.js";
import type { Bundle, Owner, Plan, Tool, Workspace } from "./workspace.types.js";

export async function insertOwner(ex: Executor, owner: Owner, emailNorm: string): Promise<void> {
  await ex
    .insertInto("owners")
    .values({ id: owner.id, email: owner.email, email_norm: emailNorm, suspended_at: owner.suspendedAt, created_at: owner.createdAt })
    .execute();
}

export async function findOwnerByEmail(ex: Executor, emailNorm: string): Promise<Owner | null> {
  const row = await ex.selectFrom("owners").selectAll().where("email_norm", "=", emailNorm).executeTakeFirst();
  return row ? toOwner(row) : null;
}

export async function findOwnerById(ex: Executor, id: string): Promise<Owner | null> {
  const row = await ex.selectFrom("owners").selectAll().where("id", "=", id).executeTakeFirst();
  return row ? { id: row.id, email: row.email, suspendedAt: row.suspended_at, createdAt: Number(row.created_at) } : null;
}

export async function setOwnerSuspended(ex: Executor, ownerId: string, suspendedAt: number | null): Promise<void> {
  await ex.updateTable("owners").set({ suspended_at: suspendedAt }).where("id", "=", ownerId).execute();
}

export async function insertWorkspace(ex: Executor, workspace: Workspace, ownerIds: readonly string[]): Promise<void> {
  await ex
    .insertInto("workspaces")
    .values({ id: workspace.id, slug: workspace.slug, name: workspace.name, plan: workspace.plan, created_at: workspace.createdAt })
    .execute();
  for (const ownerId of ownerIds) {
    // No added_at: the first owners own it since its creation (listWorkspaceOwnerRows reads that).
    await ex.insertInto("workspace_owners").values({ workspace_id: workspace.id, owner_id: ownerId }).execute();
  }
}

export async function findWorkspaceBySlug(ex: Executor, slug: string): Promise<Workspace | null> {
  const row = await ex.selectFrom("workspaces").selectAll().where("slug", "=", slug).executeTakeFirst();
  return row ? { id: row.id, slug: row.slug, name: row.name, plan: row.plan, createdAt: Number(row.created_at) } : null;
}

export async function findWorkspaceById(ex: Executor, id: string): Promise<Workspace | null> {
  const row = await ex.selectFrom("workspaces").selectAll().where("id", "=", id).executeTakeFirst();
  return row ? { id: row.id, slug: row.slug, name: row.name, plan: row.plan, createdAt: Number(row.created_at) } : null;
}

export async function insertTool(ex: Executor, workspaceId: string, tool: Tool): Promise<void> {
  await ex
    .insertInto("tools")
    .values({ workspace_id: workspaceId, id: tool.id, name: tool.name, trial_days: tool.trialDays, created_at: tool.createdAt })
    .execute();
}

export async function updateToolRow(ex: Executor, workspaceId: string, tool: Tool): Promise<void> {
  await ex
    .updateTable("tools")
    .set({ name: tool.name, trial_days: tool.trialDays })
    .where("workspace_id", "=", workspaceId)
    .where("id", "=", tool.id)
    .execute();
}

const selectTool = prepared((ex, p) =>
  ex.selectFrom("tools").select(["id", "name", "trial_days", "created_at"]).where("workspace_id", "=", p<string>(0)).where("id", "=", p<string>(1)),
);

export async function findTool(ex: Executor, workspaceId: string, toolId: string): Promise<Tool | null> {
  const [row] = await selectTool(ex, [workspaceId, toolId]);
  return row ? { id: row.id, name: row.name, trialDays: Number(row.trial_days), createdAt: Number(row.created_at) } : null;
}

export async function insertBundle(ex: Executor, workspaceId: string, bundle: Bundle): Promise<void> {
  await ex.insertInto("bundles").values({ workspace_id: workspaceId, id: bundle.id, name: bundle.name, created_at: bundle.createdAt }).execute();
  await ex
    .insertInto("bundle_tools")
    .values(bundle.toolIds.map((toolId) => ({ workspace_id: workspaceId, bundle_id: bundle.id, tool_id: toolId })))
    .execute();
}

export async function bundleExists(ex: Executor, workspaceId: string, bundleId: string): Promise<boolean> {
  const row = await ex.selectFrom("bundles").select("id").where("workspace_id", "=", workspaceId).where("id", "=", bundleId).executeTakeFirst();
  return row !== undefined;
}

export async function findBundle(ex: Executor, workspaceId: string, bundleId: string): Promise<Bundle | null> {
  const row = await ex
    .selectFrom("bundles")
    .select(["id", "name", "created_at"])
    .where("workspace_id", "=", workspaceId)
    .where("id", "=", bundleId)
    .executeTakeFirst();
  return row ? { id: row.id, name: row.name, toolIds: await listBundleTools(ex, workspaceId, bundleId), createdAt: Number(row.created_at) } : null;
}

/** The bundle names these tools from now on (entitlement reads bundle_tools on every check). */
export async function replaceBundleTools(ex: Executor, workspaceId: string, bundleId: string, change: { added: string[]; removed: string[] }): Promise<void> {
  if (change.removed.length > 0) {
    await ex
      .deleteFrom("bundle_tools")
      .where("workspace_id", "=", workspaceId)
      .where("bundle_id", "=", bundleId)
      .where("tool_id", "in", change.removed)
      .execute();
  }
  if (change.added.length > 0) {
    await ex
      .insertInto("bundle_tools")
      .values(change.added.map((toolId) => ({ workspace_id: workspaceId, bundle_id: bundleId, tool_id: toolId })))
      .execute();
  }
}

export async function listBundleTools(ex: Executor, workspaceId: string, bundleId: string): Promise<string[]> {
  const rows = await ex
    .selectFrom("bundle_tools")
    .select("tool_id")
    .where("workspace_id", "=", workspaceId)
    .where("bundle_id", "=", bundleId)
    .orderBy("tool_id")
    .execute();
  return rows.map((r) => r.tool_id);
}

export async function insertPlan(ex: Executor, workspaceId: string, plan: Plan): Promise<void> {
  if (plan.isDefault) {
    // One default plan per product: the new one takes over.
    await ex
      .updateTable("plans")
      .set({ is_default: 0 })
      .where("workspace_id", "=", workspaceId)
      .where("product_kind", "=", plan.productKind)
      .where("product_id", "=", plan.productId)
      .execute();
  }
  await ex
    .insertInto("plans")
    .values({
      workspace_id: workspaceId,
      product_kind: plan.productKind,
      product_id: plan.productId,
      id: plan.id,
      name: plan.name,
      billing: plan.billing,
      amount_cents: plan.amountCents,
      currency: plan.currency,
      interval: plan.interval,
      is_default: plan.isDefault ? 1 : 0,
      created_at: plan.createdAt,
      retired_at: plan.retiredAt,
      gives_access: plan.givesAccess ? 1 : 0,
    })
    .execute();
}

type PlanKey = Pick<Plan, "productKind" | "productId" | "id">;

const planRow = (ex: Executor, workspaceId: string, plan: PlanKey) =>
  ex
    .updateTable("plans")
    .where("workspace_id", "=", workspaceId)
    .where("product_kind", "=", plan.productKind)
    .where("product_id", "=", plan.productId)
    .where("id", "=", plan.id);

export async function updatePlanName(ex: Executor, workspaceId: string, plan: PlanKey & { name: string }): Promise<void> {
  await planRow(ex, workspaceId, plan).set({ name: plan.name }).execute();
}

/** Retires a plan that is still offered; false when it was retired already. */
export async function retirePlanRow(ex: Executor, workspaceId: string, plan: PlanKey, now: number): Promise<boolean> {
  const result = await planRow(ex, workspaceId, plan).set({ retired_at: now }).where("retired_at", "is", null).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** A product's plan by id, or its default plan when `planId` is null. */
export async function findPlan(ex: Executor, workspaceId: string, productKind: ProductKind, productId: string, planId: string | null): Promise<Plan | null> {
  let query = ex
    .selectFrom("plans")
    .selectAll()
    .where("workspace_id", "=", workspaceId)
    .where("product_kind", "=", productKind)
    .where("product_id", "=", productId);
  query = planId === null ? query.where("is_default", "=", 1) : query.where("id", "=", planId);
  const row = await query.executeTakeFirst();
  return row ? toPlan(row) : null;
}

function toPlan(row: Selectable<PlansTable>): Plan {
  return {
    productKind: row.product_kind,
    productId: row.product_id,
    id: row.id,
    name: row.name,
    billing: row.billing,
    amountCents: row.amount_cents === null ? null : Number(row.amount_cents),
    currency: row.currency,
    interval: row.interval,
    isDefault: row.is_default === 1,
    givesAccess: Number(row.gives_access) !== 0,
    createdAt: Number(row.created_at),
    retiredAt: row.retired_at === null ? null : Number(row.retired_at),
  };
}

/** Ids of the workspace's owners, whose quotas a workspace's additions are charged to as well. */
export async function listOwnerIds(ex: Executor, workspaceId: string): Promise<string[]> {
  const rows = await ex.selectFrom("workspace_owners").select("owner_id").where("workspace_id", "=", workspaceId).orderBy("owner_id").execute();
  return rows.map((r) => r.owner_id);
}

/** The workspaces an owner owns, by name. */
export async function listOwnedWorkspaceRows(ex: Executor, ownerId: string): Promise<Workspace[]> {
  const rows = await ex
    .selectFrom("workspaces as w")
    .innerJoin("workspace_owners as wo", "wo.workspace_id", "w.id")
    .select(["w.id", "w.slug", "w.name", "w.plan", "w.created_at"])
    .where("wo.owner_id", "=", ownerId)
    .orderBy("w.name")
    .orderBy("w.slug")
    .execute();
  return rows.map((row) => ({ id: row.id, slug: row.slug, name: row.name, plan: row.plan, createdAt: Number(row.created_at) }));
}

const toOwner = (row: { id: string; email: string; suspended_at: number | null; created_at: number }): Owner => ({
  id: row.id,
  email: row.email,
  suspendedAt: row.suspended_at === null ? null : Number(row.suspended_at),
  createdAt: Number(row.created_at),
});

const toWorkspace = (row: { id: string; slug: string; name: string; plan: Workspace["plan"]; created_at: number }): Workspace => ({
  id: row.id,
  slug: row.slug,
  name: row.name,
  plan: row.plan,
  createdAt: Number(row.created_at),
});

/** Every owner, oldest first, with the slugs of the workspaces each holds. */
export async function listOwners(ex: Executor): Promise<(Owner & { workspaces: string[] })[]> {
  const owners = await ex.selectFrom("owners").select(["id", "email", "suspended_at", "created_at"]).orderBy("created_at").orderBy("id").execute();
  const held = await ex
    .selectFrom("workspace_owners as wo")
    .innerJoin("workspaces as w", "w.id", "wo.workspace_id")
    .select(["wo.owner_id", "w.slug"])
    .orderBy("w.slug")
    .execute();
  const slugs = new Map<string, string[]>();
  for (const row of held) slugs.set(row.owner_id, [...(slugs.get(row.owner_id) ?? []), row.slug]);
  return owners.map((row) => ({ ...toOwner(row), workspaces: slugs.get(row.id) ?? [] }));
}

/** Workspaces oldest first, with their owners' emails; only those `ownerId` holds when given. */
export async function listWorkspaces(ex: Executor, ownerId: string | null): Promise<(Workspace & { owners: string[] })[]> {
  let query = ex.selectFrom("workspaces as w").select(["w.id", "w.slug", "w.name", "w.plan", "w.created_at"]);
  if (ownerId !== null) {
    query = query.where((eb) =>
      eb.exists(
        eb.selectFrom("workspace_owners as mine").select("mine.owner_id").whereRef("mine.workspace_id", "=", "w.id").where("mine.owner_id", "=", ownerId),
      ),
    );
  }
  const workspaces = await query.orderBy("w.created_at").orderBy("w.id").execute();
  const owners = await ex
    .selectFrom("workspace_owners as wo")
    .innerJoin("owners as o", "o.id", "wo.owner_id")
    .select(["wo.workspace_id", "o.email"])
    .orderBy("o.email")
    .execute();
  const emails = new Map<string, string[]>();
  for (const row of owners) emails.set(row.workspace_id, [...(emails.get(row.workspace_id) ?? []), row.email]);
  return workspaces.map((row) => ({ ...toWorkspace(row), owners: emails.get(row.id) ?? [] }));
}

export async function listTools(ex: Executor, workspaceId: string): Promise<Tool[]> {
  const rows = await ex.selectFrom("tools").select(["id", "name", "trial_days", "created_at"]).where("workspace_id", "=", workspaceId).orderBy("id").execute();
  return rows.map((row) => ({ id: row.id, name: row.name, trialDays: Number(row.trial_days), createdAt: Number(row.created_at) }));
}

export async function listBundles(ex: Executor, workspaceId: string): Promise<Bundle[]> {
  const bundles = await ex.selectFrom("bundles").select(["id", "name", "created_at"]).where("workspace_id", "=", workspaceId).orderBy("id").execute();
  const tools = await ex.selectFrom("bundle_tools").select(["bundle_id", "tool_id"]).where("workspace_id", "=", workspaceId).orderBy("tool_id").execute();
  const byBundle = new Map<string, string[]>();
  for (const row of tools) byBundle.set(row.bundle_id, [...(byBundle.get(row.bundle_id) ?? []), row.tool_id]);
  return bundles.map((row) => ({ id: row.id, name: row.name, toolIds: byBundle.get(row.id) ?? [], createdAt: Number(row.created_at) }));
}

/** A workspace's plans by product, then id; only one product's when given. */
export async function listPlans(ex: Executor, workspaceId: string, product: { kind: ProductKind; id: string } | null): Promise<Plan[]> {
  let query = ex.selectFrom("plans").selectAll().where("workspace_id", "=", workspaceId);
  if (product) query = query.where("product_kind", "=", product.kind).where("product_id", "=", product.id);
  const rows = await query.orderBy("product_kind", "desc").orderBy("product_id").orderBy("id").execute();
  return rows.map(toPlan);
}
