// The lookups every use case starts from: the workspace, owner, tool, bundle or plan an
// operator, a page or a request names, or the refusal that says which is missing. Apart
// from the use cases that change them (workspace.service.ts), so that the audit log and
// the API keys, which workspace.service.ts uses, can find a workspace too.
import { normaliseEmail } from "../customers/email.js";
import type { Db } from "../db/database.js";
import type { Env, ProductKind } from "../db/schema.js";
import { invalidParameter, notFound } from "../errors/errors.js";
import { bundleExists, findBundle, findOwnerByEmail, findPlan, findTool, findWorkspaceBySlug } from "./workspace.store.js";
import type { Bundle, Owner, Plan, Tool, Workspace } from "./workspace.types.js";

export function requireEnv(value: string): Env {
  if (value !== "test" && value !== "live") throw invalidParameter("env", "env must be test or live.");
  return value;
}

export async function requireWorkspace(db: Db, slug: string): Promise<Workspace> {
  const workspace = await findWorkspaceBySlug(db, slug);
  if (!workspace) throw notFound(`No workspace with slug "${slug}".`);
  return workspace;
}

export async function requireOwner(db: Db, email: string): Promise<Owner> {
  const owner = await findOwnerByEmail(db, normaliseEmail(email));
  if (!owner) throw notFound(`No owner with email "${email}".`);
  return owner;
}

/** A tool of the workspace, or 404. */
export async function requireTool(db: Db, input: { workspace: string; id: string }): Promise<{ workspace: Workspace; tool: Tool }> {
  const workspace = await requireWorkspace(db, input.workspace);
  const tool = await findTool(db, workspace.id, input.id);
  if (!tool) throw notFound(`No tool "${input.id}" in workspace "${workspace.slug}".`);
  return { workspace, tool };
}

/** A bundle of the workspace with its tools, or 404. */
export async function requireBundle(db: Db, input: { workspace: string; id: string }): Promise<{ workspace: Workspace; bundle: Bundle }> {
  const workspace = await requireWorkspace(db, input.workspace);
  const bundle = await findBundle(db, workspace.id, input.id);
  if (!bundle) throw notFound(`No bundle "${input.id}" in workspace "${workspace.slug}".`);
  return { workspace, bundle };
}

/** What a plan is for: exactly one of a tool or a bundle, which must exist. */
export interface ProductRef {
  workspace: string;
  tool?: string;
  bundle?: string;
}

export async function requireProduct(db: Db, input: ProductRef): Promise<{ workspace: Workspace; productKind: ProductKind; productId: string }> {
  const workspace = await requireWorkspace(db, input.workspace);
  if ((input.tool === undefined) === (input.bundle === undefined)) throw invalidParameter("tool", "Give exactly one of --tool or --bundle.");
  const productKind: ProductKind = input.tool !== undefined ? "tool" : "bundle";
  const productId = input.tool ?? input.bundle ?? "";
  if (productKind === "tool" ? !(await findTool(db, workspace.id, productId)) : !(await bundleExists(db, workspace.id, productId))) {
    throw notFound(`No ${productKind} "${productId}" in this workspace.`);
  }
  return { workspace, productKind, productId };
}

export async function requirePlan(db: Db, input: ProductRef & { id: string }): Promise<{ workspace: Workspace; plan: Plan }> {
  const { workspace, productKind, productId } = await requireProduct(db, input);
  const plan = await findPlan(db, workspace.id, productKind, productId, input.id);
  if (!plan) throw notFound(`No plan "${input.id}" for ${productKind} "${productId}".`);
  return { workspace, plan };
}
