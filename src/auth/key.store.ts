import { sql } from "kysely";
import { batchedRead } from "../db/batched-read.js";
import type { Executor } from "../db/database.js";
import { preparedRaw } from "../db/prepared.js";
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

type KeyOwnerSourceRow = {
  id: string | null;
  hash: string | null;
  env: Env | null;
  revoked_at: number | null;
  workspace_id: string | null;
  slug: string | null;
  plan: ServicePlan | null;
  owner_id: string | null;
  suspended_at: number | null;
  source_count: number | null;
  source_window_end: number | null;
};

// The columns and joins of a key lookup, from `args` (hash, source_scope): each row is one
// owner (a key's workspace has at least one), and the source's counter rides along even
// when no key matches.
const KEY_LOOKUP = sql`k.id, k.hash, k.env, k.revoked_at, w.id as workspace_id, w.slug, w.plan, o.id as owner_id, o.suspended_at,
  c.count as source_count, c.window_end as source_window_end`;
const KEY_JOINS = sql`left join counters as c on c.scope = args.source_scope
left join api_keys as k on k.hash = args.hash
left join workspaces as w on w.id = k.workspace_id
left join workspace_owners as wo on wo.workspace_id = w.id
left join owners as o on o.id = wo.owner_id`;

// Run on every authenticated request, never cached (a revocation or suspension must
// apply to the very next request, in every process): a request's key, its workspace's
// owners and the wrong-key count of the request's source address, in one statement.
const selectKeyOwnersAndSource = preparedRaw<KeyOwnerSourceRow>(
  (p) => sql`select ${KEY_LOOKUP}
from (select cast(${p<string>(0)} as text) as hash, cast(${p<string>(1)} as text) as source_scope) as args
${KEY_JOINS}
order by o.id`,
);

// The same for several requests at once (PostgreSQL): arrays of hashes and source scopes.
const selectManyKeyOwnersAndSources = preparedRaw<KeyOwnerSourceRow & { i: number }>(
  (p) => sql`select args.i, ${KEY_LOOKUP}
from unnest(cast(${p<string[]>(0)} as text[]), cast(${p<string[]>(1)} as text[])) with ordinality as args(hash, source_scope, i)
${KEY_JOINS}
order by args.i, o.id`,
);

export interface KeyLookup {
  /** The key with that hash, or null. */
  key: StoredKey | null;
  owners: KeyOwner[];
  /** The counter of `sourceScope` as stored (its window may have closed), or null. */
  source: { count: number; windowEnd: number } | null;
}

function toKeyLookup(rows: readonly KeyOwnerSourceRow[]): KeyLookup {
  const [first] = rows;
  const source =
    first && first.source_count !== null && first.source_window_end !== null
      ? { count: Number(first.source_count), windowEnd: Number(first.source_window_end) }
      : null;
  if (!first || first.id === null || first.hash === null || first.env === null || first.workspace_id === null || first.slug === null || first.plan === null) {
    return { key: null, owners: [], source };
  }
  return {
    key: {
      id: first.id,
      hash: first.hash,
      env: first.env,
      revokedAt: first.revoked_at === null ? null : Number(first.revoked_at),
      workspaceId: first.workspace_id,
      workspaceSlug: first.slug,
      workspacePlan: first.plan,
    },
    owners: rows.flatMap((r) => (r.owner_id === null ? [] : [{ id: r.owner_id, suspended: r.suspended_at !== null }])),
    source,
  };
}

interface KeyQuery {
  hash: string;
  sourceScope: string;
}

/** The key with this hash and its workspace's owners, with the counter `sourceScope`, in one round trip (shared by concurrent requests on PostgreSQL). */
export const findKeyWithOwners = batchedRead<KeyQuery, KeyLookup>(
  async (ex, { hash, sourceScope }) => toKeyLookup(await selectKeyOwnersAndSource(ex, [hash, sourceScope])),
  async (ex, queries) => {
    const rows = await selectManyKeyOwnersAndSources(ex, [queries.map((q) => q.hash), queries.map((q) => q.sourceScope)]);
    const byQuery = queries.map((): KeyOwnerSourceRow[] => []);
    for (const row of rows) byQuery[Number(row.i) - 1]?.push(row);
    return byQuery.map(toKeyLookup);
  },
);

/** Revokes a key; answers false when no such key exists. Revoking twice keeps the first time. */
export async function revokeKey(ex: Executor, keyId: string, now: number): Promise<{ id: string; revokedAt: number } | null> {
  await ex.updateTable("api_keys").set({ revoked_at: now }).where("id", "=", keyId).where("revoked_at", "is", null).execute();
  const row = await ex.selectFrom("api_keys").select(["id", "revoked_at"]).where("id", "=", keyId).executeTakeFirst();
  return row && row.revoked_at !== null ? { id: row.id, revokedAt: Number(row.revoked_at) } : null;
}
