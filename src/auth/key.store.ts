import type { Executor } from "../db/database.js";
import { prepared } from "../db/prepared.js";
import type { Env } from "../db/schema.js";
import type { ServicePlan } from "../workspaces/workspace.types.js";

interface StoredKey {
  id: string;
  hash: string;
  env: Env;
  revokedAt: number | null;
  workspaceId: string;
  workspaceSlug: string;
  workspacePlan: ServicePlan;
}

interface KeyOwner {
  id: string;
  suspended: boolean;
}

export async function insertKey(
  ex: Executor,
  key: { id: string; workspaceId: string; env: Env; name: string | null; hash: string; createdAt: number },
): Promise<void> {
  await ex
    .insertInto("api_keys")
    .values({ id: key.id, workspace_id: key.workspaceId, env: key.env, name: key.name, hash: key.hash, created_at: key.createdAt, revoked_at: null })
    .execute();
}

// Both run on every authenticated request: prepared once, never cached (a revocation
// or suspension must apply to the very next request, in every process).
const selectKeyByHash = prepared((ex, p) =>
  ex
    .selectFrom("api_keys as k")
    .innerJoin("workspaces as w", "w.id", "k.workspace_id")
    .select(["k.id", "k.hash", "k.env", "k.revoked_at", "w.id as workspace_id", "w.slug", "w.plan"])
    .where("k.hash", "=", p<string>(0)),
);

const selectKeyOwners = prepared((ex, p) =>
  ex
    .selectFrom("workspace_owners as wo")
    .innerJoin("owners as o", "o.id", "wo.owner_id")
    .select(["o.id", "o.suspended_at"])
    .where("wo.workspace_id", "=", p<string>(0))
    .orderBy("o.id"),
);

export async function findKeyByHash(ex: Executor, hash: string): Promise<StoredKey | null> {
  const [row] = await selectKeyByHash(ex, [hash]);
  if (!row) return null;
  return {
    id: row.id,
    hash: row.hash,
    env: row.env,
    revokedAt: row.revoked_at,
    workspaceId: row.workspace_id,
    workspaceSlug: row.slug,
    workspacePlan: row.plan,
  };
}

export async function listKeyOwners(ex: Executor, workspaceId: string): Promise<KeyOwner[]> {
  const rows = await selectKeyOwners(ex, [workspaceId]);
  return rows.map((r) => ({ id: r.id, suspended: r.suspended_at !== null }));
}

/** Revokes a key; answers false when no such key exists. Revoking twice keeps the first time. */
export async function revokeKey(ex: Executor, keyId: string, now: number): Promise<{ id: string; revokedAt: number } | null> {
  await ex.updateTable("api_keys").set({ revoked_at: now }).where("id", "=", keyId).where("revoked_at", "is", null).execute();
  const row = await ex.selectFrom("api_keys").select(["id", "revoked_at"]).where("id", "=", keyId).executeTakeFirst();
  return row && row.revoked_at !== null ? { id: row.id, revokedAt: Number(row.revoked_at) } : null;
}
