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
  key: { id: string; workspaceId: string; env: Env; name: string | null; hash: string; lastFour: string; createdAt: number },
): Promise<void> {
  await ex
    .insertInto("api_keys")
    .values({
      id: key.id,
      workspace_id: key.workspaceId,
      env: key.env,
      name: key.name,
      hash: key.hash,
      last_four: key.lastFour,
      created_at: key.createdAt,
      revoked_at: null,
    })
    .execute();
}

/** A key as a list shows it: never the key, only its last four characters. */
export interface ListedKey {
  id: string;
  name: string | null;
  env: Env;
  lastFour: string | null;
  createdAt: number;
  revokedAt: number | null;
}

/** A workspace's keys, newest first; one environment's when given. */
export async function listKeys(ex: Executor, workspaceId: string, env: Env | null): Promise<ListedKey[]> {
  let query = ex.selectFrom("api_keys").select(["id", "name", "env", "last_four", "created_at", "revoked_at"]).where("workspace_id", "=", workspaceId);
  if (env !== null) query = query.where("env", "=", env);
  const rows = await query.orderBy("created_at", "desc").orderBy("id").execute();
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    env: row.env,
    lastFour: row.last_four,
    createdAt: Number(row.created_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
  }));
}

/** Revokes a key of this workspace environment only; null when it has no such key. Revoking twice keeps the first time. */
export async function revokeKeyOf(
  ex: Executor,
  scope: { workspaceId: string; env: Env },
  keyId: string,
  now: number,
): Promise<{ id: string; revokedAt: number } | null> {
  await ex
    .updateTable("api_keys")
    .set({ revoked_at: now })
    .where("id", "=", keyId)
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("revoked_at", "is", null)
    .execute();
  const row = await ex
    .selectFrom("api_keys")
    .select(["id", "revoked_at"])
    .where("id", "=", keyId)
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .executeTakeFirst();
  return row && row.revoked_at !== null ? { id: row.id, revokedAt: Number(row.revoked_at) } : null;
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
  auth_version: number;
};

// The columns and joins of a key lookup, from `args` (hash, source_scope): each row is one
// owner (a key's workspace has at least one), and the source's counter rides along even
// when no key matches.
const KEY_LOOKUP = sql`k.id, k.hash, k.env, k.revoked_at, w.id as workspace_id, w.slug, w.plan, o.id as owner_id, o.suspended_at,
  c.count as source_count, c.window_end as source_window_end, (select version from auth_version where id = 1) as auth_version`;
const KEY_JOINS = sql`left join counters as c on c.scope = args.source_scope
left join api_keys as k on k.hash = args.hash
left join workspaces as w on w.id = k.workspace_id
left join workspace_owners as wo on wo.workspace_id = w.id
left join owners as o on o.id = wo.owner_id`;

// A request's key, its workspace's owners and the wrong-key count of the request's
// source address, in one statement, with the auth_version it was read at.
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

// A lookup with the auth_version its statement read (the same on every row).
const toVersionedLookup = (rows: readonly KeyOwnerSourceRow[]) => ({ ...toKeyLookup(rows), version: Number(rows[0]?.auth_version) });

/** The key with this hash and its workspace's owners, with the counter `sourceScope`, in one round trip (shared by concurrent requests on PostgreSQL). */
const readKeyWithOwners = batchedRead<KeyQuery, KeyLookup & { version: number }>(
  async (ex, { hash, sourceScope }) => toVersionedLookup(await selectKeyOwnersAndSource(ex, [hash, sourceScope])),
  async (ex, queries) => {
    const rows = await selectManyKeyOwnersAndSources(ex, [queries.map((q) => q.hash), queries.map((q) => q.sourceScope)]);
    const byQuery = queries.map((): KeyOwnerSourceRow[] => []);
    for (const row of rows) byQuery[Number(row.i) - 1]?.push(row);
    return byQuery.map(toVersionedLookup);
  },
);

// The version alone, with the source's counter: what a remembered key still needs.
const VERSION_AND_SOURCE = sql`(select version from auth_version where id = 1) as version, c.count as source_count, c.window_end as source_window_end`;
type VersionSourceRow = { version: number; source_count: number | null; source_window_end: number | null };
const selectVersionAndSource = preparedRaw<VersionSourceRow>(
  (p) => sql`select ${VERSION_AND_SOURCE}
from (select cast(${p<string>(0)} as text) as source_scope) as args
left join counters as c on c.scope = args.source_scope`,
);
const selectManyVersionsAndSources = preparedRaw<VersionSourceRow & { i: number }>(
  (p) => sql`select args.i, ${VERSION_AND_SOURCE}
from unnest(cast(${p<string[]>(0)} as text[])) with ordinality as args(source_scope, i)
left join counters as c on c.scope = args.source_scope`,
);

const toVersionAndSource = (row: VersionSourceRow | undefined) => ({
  version: Number(row?.version),
  source:
    row && row.source_count !== null && row.source_window_end !== null ? { count: Number(row.source_count), windowEnd: Number(row.source_window_end) } : null,
});

const readVersionAndSource = batchedRead<string, ReturnType<typeof toVersionAndSource>>(
  async (ex, sourceScope) => toVersionAndSource((await selectVersionAndSource(ex, [sourceScope]))[0]),
  async (ex, sourceScopes) => {
    const rows = await selectManyVersionsAndSources(ex, [sourceScopes]);
    const byPosition = new Map(rows.map((row) => [Number(row.i), row]));
    return sourceScopes.map((_, i) => toVersionAndSource(byPosition.get(i + 1)));
  },
);

interface RememberedKey {
  version: number;
  key: StoredKey;
  owners: KeyOwner[];
}

// Keys a process remembers per database; past this the oldest is forgotten. A vendor has
// a handful of keys; the bound only stops a flood of distinct valid keys from growing it.
const REMEMBERED_KEYS = 10_000;
const rememberedKeys = new WeakMap<Executor, Map<string, RememberedKey>>();
// The auth_version a process's watch last read (customers' access watch, once a second),
// per database; absent while no watch reads it (commands, tests without a server), after a
// read failed, and after this process revoked a key. A forgetting counts as a generation:
// a watch's read begun before it is not trusted (it may predate the revocation).
const watchedVersions = new WeakMap<Executor, { version: number; until: number }>();
const forgettings = new WeakMap<Executor, number>();

/** The auth_version now, read by a serving process's watch. */
export async function readAuthVersion(ex: Executor): Promise<number> {
  const row = await ex.selectFrom("auth_version").select("version").where("id", "=", 1).executeTakeFirst();
  return Number(row?.version);
}

/** Taken before the watch reads the version: `trustAuthVersion` keeps that read only if nothing was forgotten meanwhile. */
export function authVersionTicket(ex: Executor): number {
  return forgettings.get(ex) ?? 0;
}

/**
 * What the watch read: remembered keys of this version are answered without asking the
 * database until `until` (the read's start plus a little over a turn), so a watch that
 * falls behind (a slow database) stops the trust rather than stretching it.
 */
export function trustAuthVersion(ex: Executor, version: number, ticket: number, until: number): void {
  if (authVersionTicket(ex) === ticket) watchedVersions.set(ex, { version, until });
}

/** Every request reads its key's version again, until the watch's next read. */
export function forgetAuthVersion(ex: Executor): void {
  watchedVersions.delete(ex);
  forgettings.set(ex, authVersionTicket(ex) + 1);
}

/**
 * The key with this hash and its workspace's owners, with the counter `sourceScope`. A
 * key found once is remembered with the auth_version it was read at: every write to keys,
 * workspaces and owners raises that version by trigger (migration 008), from any process.
 * While a serving process's watch last read that same version, less than two seconds before `now` (`trustAuthVersion`), the
 * remembered key is answered from memory with `source` undefined (not read: the caller
 * checks the address's block from what the watch read); a revocation or a suspension
 * written anywhere is then refused once the watch reads the new version, within a second.
 * Without a watch, each request reads the version with the source's counter in one small
 * statement (shared by concurrent requests on PostgreSQL) instead of the four-table join.
 * Inside a transaction the whole lookup is read, as it must see that transaction's writes.
 */
export async function findKeyWithOwners(ex: Executor, query: KeyQuery, now?: number): Promise<KeyLookup | (Omit<KeyLookup, "source"> & { source: undefined })> {
  if (ex.isTransaction) return readKeyWithOwners(ex, query);
  let remembered = rememberedKeys.get(ex);
  if (!remembered) {
    remembered = new Map();
    rememberedKeys.set(ex, remembered);
  }
  const known = remembered.get(query.hash);
  if (known) {
    const watched = watchedVersions.get(ex);
    if (watched !== undefined && now !== undefined && now < watched.until && known.version === watched.version) {
      return { key: known.key, owners: known.owners, source: undefined };
    }
    const { version, source } = await readVersionAndSource(ex, query.sourceScope);
    if (version === known.version) return { key: known.key, owners: known.owners, source };
    remembered.delete(query.hash);
  }
  const { version, ...lookup } = await readKeyWithOwners(ex, query);
  if (lookup.key) {
    if (remembered.size >= REMEMBERED_KEYS) remembered.delete(remembered.keys().next().value as string);
    remembered.set(query.hash, { version, key: lookup.key, owners: lookup.owners });
  }
  return lookup;
}

/** Revokes a key; answers false when no such key exists. Revoking twice keeps the first time. */
export async function revokeKey(ex: Executor, keyId: string, now: number): Promise<{ id: string; revokedAt: number } | null> {
  await ex.updateTable("api_keys").set({ revoked_at: now }).where("id", "=", keyId).where("revoked_at", "is", null).execute();
  const row = await ex.selectFrom("api_keys").select(["id", "revoked_at"]).where("id", "=", keyId).executeTakeFirst();
  return row && row.revoked_at !== null ? { id: row.id, revokedAt: Number(row.revoked_at) } : null;
}
