import { sql } from "kysely";
import { type SourceColumns, sourceColumns, toSources } from "../customers/customer-sources.store.js";
import type { Sources } from "../customers/entitlement.js";
import { batchedRead } from "../db/batched-read.js";
import { type Db, dialectOf, type Executor } from "../db/database.js";
import { GroupCommit, type Waiting } from "../db/group-commit.js";
import { type Placeholder, prepared, preparedRaw } from "../db/prepared.js";
import type { Env } from "../db/schema.js";
import { isStorageFull } from "../db/storage-faults.js";
import type { CounterState } from "../limits/counter.store.js";
import { type CreditsVersion, type CreditsVersionColumns, creditsVersionColumns, toCreditsVersion } from "../usage/credits.store.js";

/**
 * Whom a client use case acts for, as it reads it: the person of a device session, or the
 * signed-in person of a hosted page (customer-pages/customer-session.ts), which has no
 * device. Use cases that need no more take this, not a device.
 */
export interface PersonScope {
  workspaceId: string;
  workspaceSlug: string;
  env: Env;
  /** The tool asked about: the device's, or the page's (a web session is the workspace environment's, for any of its tools). */
  toolId: string;
  personId: string;
  /** The person's address as first stored. */
  email: string;
  /** The licence the device was activated with (no sign-in), or null for a signed-in device. */
  licenceId: string | null;
}

/** A signed-in device as its bearer token finds it. */
export interface DeviceSession extends PersonScope {
  deviceId: string;
  tokenHash: string;
}

export interface DeviceView {
  id: string;
  toolId: string;
  name: string;
  platform: string | null;
  createdAt: number;
  lastActiveAt: number | null;
}

interface SessionRow {
  device_id: string | null;
  workspace_id: string | null;
  slug: string | null;
  env: Env | null;
  tool_id: string | null;
  person_id: string | null;
  email: string | null;
  licence_id: string | null;
  token_hash: string | null;
  source_count: number | null;
  source_window_end: number | null;
}

// From `args` (hash, source_scope): the signed-in device of the token hash with its
// workspace and person, and the wrong-key count of the request's source address, which
// rides along even when no device matches (as an API key's lookup reads it).
const SESSION_COLUMNS = sql`d.id as device_id, d.workspace_id, w.slug, d.env, d.tool_id, d.person_id, person.email, d.licence_id, d.token_hash,
  c.count as source_count, c.window_end as source_window_end`;
const SESSION_JOINS = sql`left join counters as c on c.scope = args.source_scope
left join devices as d on d.token_hash = args.hash and d.signed_out_at is null
left join workspaces as w on w.id = d.workspace_id
left join people as person on person.id = d.person_id`;
const SESSION_FROM = (p: Placeholder) =>
  sql`from (select cast(${p<string>(0)} as text) as hash, cast(${p<string>(1)} as text) as source_scope) as args ${SESSION_JOINS}`;
const deviceTool = { workspaceId: sql.ref<string>("d.workspace_id"), toolId: sql.ref<string>("d.tool_id") };

const selectSession = preparedRaw<SessionRow>((p) => sql`select ${SESSION_COLUMNS} ${SESSION_FROM(p)}`);

// The same with the person's sources of the device's tool and the version of their credits of it: the access check's one read.
const deviceCredits = {
  workspaceId: sql.ref<string>("d.workspace_id"),
  env: sql.ref<string>("d.env"),
  personId: sql.ref<string>("d.person_id"),
  toolId: sql.ref<string>("d.tool_id"),
};
const selectSessionWithSources = preparedRaw<SessionRow & SourceColumns & CreditsVersionColumns>(
  (p, ex) => sql`select ${SESSION_COLUMNS}, ${sourceColumns(ex, deviceTool)}, ${creditsVersionColumns(deviceCredits)} ${SESSION_FROM(p)}`,
);

// That read for several checks at once (PostgreSQL): arrays of hashes and source scopes,
// `i` the position asked (from 1).
const selectManySessionsWithSources = preparedRaw<SessionRow & SourceColumns & CreditsVersionColumns & { i: number }>(
  (p, ex) => sql`select args.i, ${SESSION_COLUMNS}, ${sourceColumns(ex, deviceTool)}, ${creditsVersionColumns(deviceCredits)}
from unnest(cast(${p<string[]>(0)} as text[]), cast(${p<string[]>(1)} as text[])) with ordinality as args(hash, source_scope, i) ${SESSION_JOINS}`,
);

/** What a device token finds: its session (null when unknown or signed out) and the source address's wrong-key counter as stored. */
export interface SessionLookup {
  session: DeviceSession | null;
  source: CounterState | null;
}

function toLookup(row: SessionRow | undefined): SessionLookup {
  const source =
    row && row.source_count !== null && row.source_window_end !== null ? { count: Number(row.source_count), windowEnd: Number(row.source_window_end) } : null;
  if (!row || row.device_id === null || row.token_hash === null || row.workspace_id === null || row.slug === null || row.env === null) {
    return { session: null, source };
  }
  return {
    session: {
      deviceId: row.device_id,
      workspaceId: row.workspace_id,
      workspaceSlug: row.slug,
      env: row.env,
      toolId: row.tool_id as string,
      personId: row.person_id as string,
      email: row.email as string,
      licenceId: row.licence_id,
      tokenHash: row.token_hash,
    },
    source,
  };
}

export interface Query {
  tokenHash: string;
  /** The counter of the source's wrong keys (LimitsService.wrongKeyScope). */
  sourceScope: string;
}

/** The signed-in device of a token hash, with the source's wrong-key counter, in one statement. */
export async function findDeviceSession(ex: Executor, query: Query): Promise<SessionLookup> {
  return toLookup((await selectSession(ex, [query.tokenHash, query.sourceScope]))[0]);
}

type SessionWithSources = SessionLookup & {
  sources: Sources | null;
  /** The version of the person's credits of the tool; null for no session, or a device activated with a licence key, which cannot spend them. */
  credits: CreditsVersion | null;
};

function toLookupWithSources(row: (SessionRow & SourceColumns & CreditsVersionColumns) | undefined): SessionWithSources {
  const lookup = toLookup(row);
  if (!row || !lookup.session) return { ...lookup, sources: null, credits: null };
  return { ...lookup, sources: toSources(row), credits: lookup.session.licenceId === null ? toCreditsVersion(row) : null };
}

/**
 * The same, with every source of the person's access to the device's tool and the version
 * of their credits of it. Concurrent
 * checks share one statement on PostgreSQL (db/batched-read.ts): alone, 20 checks at
 * once queued on the pool's connections.
 */
export const findDeviceSessionWithSources = batchedRead<Query, SessionWithSources>(
  async (ex, query) => toLookupWithSources((await selectSessionWithSources(ex, [query.tokenHash, query.sourceScope]))[0]),
  async (ex, queries) => {
    const rows = await selectManySessionsWithSources(ex, [queries.map((q) => q.tokenHash), queries.map((q) => q.sourceScope)]);
    const byPosition = new Map(rows.map((row) => [Number(row.i), row]));
    return queries.map((_, i) => toLookupWithSources(byPosition.get(i + 1)));
  },
);

export async function setSessionToken(ex: Executor, deviceId: string, tokenHash: string): Promise<void> {
  await ex.updateTable("devices").set({ token_hash: tokenHash }).where("id", "=", deviceId).execute();
}

const updateLastActive = prepared((ex, p) =>
  ex
    .updateTable("devices")
    .set({ last_active_at: p<number>(1) })
    .where("id", "=", p<string>(0)),
);

// Several devices in one statement. SQLite: from a JSON array of {id, at}. PostgreSQL:
// from arrays of ids and times, the ids matched with `= any` so that each is an index
// lookup whatever the planner guesses of the batch's size; and its commit does not wait
// for the WAL flush: `last_active_at` is a hint for the vendor, and a crash of the
// database server may forget its last milliseconds, never anything else.
const updateManyLastActiveSqlite = preparedRaw(
  (p) => sql`update devices set last_active_at = t.at
from (select value ->> 'id' as id, value ->> 'at' as at from json_each(${p<string>(0)})) as t
where devices.id = t.id`,
);
const updateManyLastActivePg = preparedRaw(
  (p) => sql`update devices set last_active_at = (cast(${p<number[]>(1)} as bigint[]))[array_position(cast(${p<string[]>(0)} as text[]), devices.id)]
where devices.id = any(cast(${p<string[]>(0)} as text[]))
returning set_config('synchronous_commit', 'off', true) as commit_mode`,
);

interface Touch {
  deviceId: string;
  now: number;
}

// Every access check records when its device was last active: a write per check. The
// checks of one turn of the event loop write theirs together, one statement and one
// commit for all (alone, each write was 8% of a check's CPU on SQLite: bench/journal.md,
// scenario 8).
const touchGroups = new WeakMap<Db, GroupCommit<Touch, void>>();

// While the database's storage is full (db/storage-faults.ts) the times are held here,
// by device, and written with the next batch that the database takes: the access check
// answers meanwhile. The only memory of its kind, written by writeTouches alone (one
// batch at a time). Bound: this many devices; past it a device's time is not held
// (the column is a hint: the next check after the disk has room writes it again).
// Dropped once written, or when the process stops.
const MAX_HELD_TOUCHES = 100_000;
const heldTouches = new WeakMap<Db, Map<string, number>>();

async function writeTouches(db: Db, batch: Waiting<Touch, void>[]): Promise<void> {
  const held = heldTouches.get(db);
  const latest = new Map<string, number>(held ?? []);
  for (const { input } of batch) latest.set(input.deviceId, Math.max(input.now, latest.get(input.deviceId) ?? 0));
  const [only] = latest;
  try {
    // On PostgreSQL always the statement whose commit does not wait for the flush: alone, a
    // plain update's commit waited 2.4 ms for the disk here (bench/journal.md, scenario 8).
    if (dialectOf(db) === "postgres") await updateManyLastActivePg(db, [[...latest.keys()], [...latest.values()]]);
    else if (latest.size === 1 && only) await updateLastActive(db, only);
    else await updateManyLastActiveSqlite(db, [JSON.stringify([...latest].map(([id, at]) => ({ id, at })))]);
    heldTouches.delete(db);
  } catch (error) {
    // Any other failure rejects the whole batch (GroupCommit).
    if (!isStorageFull(error)) throw error;
    const keep = held ?? new Map<string, number>();
    heldTouches.set(db, keep);
    for (const [id, at] of latest) if (keep.has(id) || keep.size < MAX_HELD_TOUCHES) keep.set(id, at);
  }
  for (const { resolve } of batch) resolve();
}

// `last_active_at` is written at most once a minute per device and process (decisions.md):
// the lists show it to tell an active device from an abandoned one, which a minute does not
// change, and most checks then write nothing. The time a process last
// wrote for each device, per database; past the bound it starts again empty (a device
// then writes once more).
const TOUCH_GRAIN_MS = 60_000;
const MAX_REMEMBERED_TOUCHES = 100_000;
const lastTouches = new WeakMap<Db, Map<string, number>>();

/** Records that the device was active at `now`, with the other devices touched in the same turn. */
export function touchDevice(db: Db, deviceId: string, now: number): Promise<void> {
  let touched = lastTouches.get(db);
  if (!touched) {
    touched = new Map();
    lastTouches.set(db, touched);
  }
  const last = touched.get(deviceId);
  if (last !== undefined && now >= last && now - last < TOUCH_GRAIN_MS) return Promise.resolve();
  if (touched.size >= MAX_REMEMBERED_TOUCHES) touched.clear();
  touched.set(deviceId, now);
  let group = touchGroups.get(db);
  if (!group) {
    const created = new GroupCommit<Touch, void>((batch) => writeTouches(db, batch), 128);
    touchGroups.set(db, created);
    group = created;
  }
  return group.add({ deviceId, now });
}

type DeviceScope = Pick<PersonScope, "workspaceId" | "env" | "personId" | "licenceId">;

/** The person's signed-in devices in one workspace environment (those of `licenceId` only, when named), oldest first. */
export async function listSignedInDevices(ex: Executor, scope: DeviceScope): Promise<DeviceView[]> {
  const rows = await ex
    .selectFrom("devices")
    .select(["id", "tool_id", "name", "platform", "created_at", "last_active_at"])
    .where("person_id", "=", scope.personId)
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("signed_out_at", "is", null)
    .$if(scope.licenceId !== null, (q) => q.where("licence_id", "=", scope.licenceId))
    .orderBy("created_at")
    .orderBy("id")
    .execute();
  return rows.map((r) => ({
    id: r.id,
    toolId: r.tool_id,
    name: r.name,
    platform: r.platform,
    createdAt: Number(r.created_at),
    lastActiveAt: r.last_active_at === null ? null : Number(r.last_active_at),
  }));
}

/** Signs one of the person's devices out (of `licenceId`, when named); answers its tool, or null when it is not theirs or already out. */
export async function signOutDevice(ex: Executor, scope: DeviceScope, deviceId: string, now: number): Promise<string | null> {
  const row = await ex
    .updateTable("devices")
    .set({ signed_out_at: now, token_hash: null })
    .where("id", "=", deviceId)
    .where("person_id", "=", scope.personId)
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("signed_out_at", "is", null)
    .$if(scope.licenceId !== null, (q) => q.where("licence_id", "=", scope.licenceId))
    .returning("tool_id")
    .executeTakeFirst();
  return row?.tool_id ?? null;
}
