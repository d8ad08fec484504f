// SQL for what people spent of their meters: the per-source, per-period counts in
// meter_usage, the credits ledger in meter_credits, and the lock every spend takes first.
// A spend's statements are prepared (built and compiled once, db/prepared.ts): building
// them with Kysely on every batch cost more than running them.
import { sql } from "kysely";
import { dialectOf, type Executor } from "../db/database.js";
import { perRowCount, prepared } from "../db/prepared.js";
import type { Env } from "../db/schema.js";

/** One person's meter of one tool. */
export interface MeterKey {
  workspaceId: string;
  env: Env;
  personId: string;
  toolId: string;
  meterId: string;
}

/** What was used of one bucket in one period. */
export interface UsedRow {
  meter: string;
  bucket: string;
  periodStart: number;
  used: number;
}

/** Credits that may be spent: remaining, not expired, of no pack or of a pack still held. */
export interface AvailableCredit {
  id: string;
  meter: string;
  remaining: number;
  expiresAt: number | null;
  createdAt: number;
}

/** Arguments: workspace, environment, person, tool, meter. */
const upsertMeterLock = prepared((ex, p) =>
  ex
    .insertInto("meter_locks")
    .values({ workspace_id: p<string>(0), env: p<Env>(1), person_id: p<string>(2), tool_id: p<string>(3), meter_id: p<string>(4), spends: 1 })
    .onConflict((oc) => oc.columns(["workspace_id", "env", "person_id", "tool_id", "meter_id"]).doUpdateSet({ spends: sql`meter_locks.spends + 1` })),
);

/**
 * Takes the lock of one person's meter until the transaction ends: spends of it apply
 * one at a time across processes. On PostgreSQL one upsert, which holds the row's lock.
 * SQLite's transaction is the one writer already (holdWriteLock, its first statement):
 * nothing more to take, and a statement fewer on the hot path.
 */
export async function lockMeter(ex: Executor, key: MeterKey): Promise<void> {
  if (dialectOf(ex) === "sqlite") return;
  await upsertMeterLock(ex, [key.workspaceId, key.env, key.personId, key.toolId, key.meterId]);
}

/**
 * Takes the locks of every meter of these tools for these people until the transaction
 * ends, as their spends do (a change that takes away what pays for them: a dispute
 * suspending a licence). A spend holding one commits first; a spend after reads the
 * change. The rows are written as they are (`spends` counts spends, and this is none).
 * SQLite's one writer orders the two transactions already.
 */
export async function lockPeopleMeters(
  ex: Executor,
  scope: { workspaceId: string; env: Env },
  toolIds: readonly string[],
  personIds: readonly string[],
): Promise<void> {
  if (dialectOf(ex) === "sqlite" || toolIds.length === 0 || personIds.length === 0) return;
  await sql`insert into meter_locks (workspace_id, env, person_id, tool_id, meter_id, spends)
select m.workspace_id, ${scope.env}, p.id, m.tool_id, m.id, 0
from tool_meters m cross join unnest(cast(${[...personIds]} as text[])) as p(id)
where m.workspace_id = ${scope.workspaceId} and m.tool_id = any(cast(${[...toolIds]} as text[]))
on conflict (workspace_id, env, person_id, tool_id, meter_id) do update set spends = meter_locks.spends`.execute(ex);
}

/** Arguments: workspace, environment, person, tool, since, then the meters. */
const selectUsed = perRowCount((meters) =>
  prepared((ex, p) =>
    ex
      .selectFrom("meter_usage")
      .select(["meter_id", "bucket", "period_start", "used"])
      .where("workspace_id", "=", p<string>(0))
      .where("env", "=", p<Env>(1))
      .where("person_id", "=", p<string>(2))
      .where("tool_id", "=", p<string>(3))
      .where(
        "meter_id",
        "in",
        Array.from({ length: meters }, (_, i) => p<string>(5 + i)),
      )
      .where("period_start", ">=", p<number>(4)),
  ),
);

/** What the person used, per meter and bucket, in periods that started at or after `since` (the oldest period asked about). */
export async function readUsed(ex: Executor, key: Omit<MeterKey, "meterId">, meters: readonly string[], since: number): Promise<UsedRow[]> {
  if (meters.length === 0) return [];
  const rows = await selectUsed(meters.length)(ex, [key.workspaceId, key.env, key.personId, key.toolId, since, ...meters]);
  return rows.map((r) => ({ meter: r.meter_id, bucket: r.bucket, periodStart: Number(r.period_start), used: Number(r.used) }));
}

/** Arguments: workspace, environment, person, tool, now, then the meters; `lock`: FOR UPDATE. */
function selectAvailableCredits(lock: boolean) {
  return perRowCount((meters) =>
    prepared((ex, p) => {
      const query = ex
        .selectFrom("meter_credits as c")
        .select(["c.id", "c.meter_id", "c.remaining", "c.expires_at", "c.created_at"])
        .where("c.workspace_id", "=", p<string>(0))
        .where("c.env", "=", p<Env>(1))
        .where("c.person_id", "=", p<string>(2))
        .where("c.tool_id", "=", p<string>(3))
        .where(
          "c.meter_id",
          "in",
          Array.from({ length: meters }, (_, i) => p<string>(5 + i)),
        )
        .where("c.remaining", ">", 0)
        .where((eb) => eb.or([eb("c.expires_at", "is", null), eb("c.expires_at", ">", p<number>(4))]))
        // A pack's credits count while its licence is held: not suspended by a dispute, not revoked.
        .where((eb) =>
          eb.or([eb("c.licence_id", "is", null), eb("c.licence_id", "in", eb.selectFrom("licences").select("id").where("status", "=", "active"))]),
        );
      return lock ? query.forUpdate() : query;
    }),
  );
}
const selectCredits = selectAvailableCredits(false);
const selectCreditsForUpdate = selectAvailableCredits(true);

/** Credits the person may spend now, soonest expiring first, then those that never expire, oldest first. */
export async function readAvailableCredits(
  ex: Executor,
  key: Omit<MeterKey, "meterId">,
  meters: readonly string[],
  now: number,
  options: { lock?: boolean } = {},
): Promise<AvailableCredit[]> {
  if (meters.length === 0) return [];
  // A spend locks what it draws from (PostgreSQL): a refund that takes a pack's credits back
  // commits first or waits, and the row read after it is read again (`remaining > 0`), so a
  // credit taken back is never spent. SQLite's one writer orders them already.
  const select = options.lock && dialectOf(ex) === "postgres" ? selectCreditsForUpdate : selectCredits;
  const rows = await select(meters.length)(ex, [key.workspaceId, key.env, key.personId, key.toolId, now, ...meters]);
  const credits = rows.map((r) => ({
    id: r.id,
    meter: r.meter_id,
    remaining: Number(r.remaining),
    expiresAt: r.expires_at === null ? null : Number(r.expires_at),
    createdAt: Number(r.created_at),
  }));
  return credits.sort(
    (a, b) =>
      (a.expiresAt ?? Number.POSITIVE_INFINITY) - (b.expiresAt ?? Number.POSITIVE_INFINITY) ||
      a.createdAt - b.createdAt ||
      (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
}

/** Arguments: workspace, environment, person, tool, meter, bucket, period start, period end, units. */
const upsertUsed = prepared((ex, p) =>
  ex
    .insertInto("meter_usage")
    .values({
      workspace_id: p<string>(0),
      env: p<Env>(1),
      person_id: p<string>(2),
      tool_id: p<string>(3),
      meter_id: p<string>(4),
      bucket: p<string>(5),
      period_start: p<number>(6),
      period_end: p<number>(7),
      used: p<number>(8),
    })
    .onConflict((oc) =>
      oc
        .columns(["workspace_id", "env", "person_id", "tool_id", "meter_id", "bucket", "period_start"])
        .doUpdateSet((eb) => ({ used: sql`meter_usage.used + ${eb.ref("excluded.used")}`, period_end: eb.ref("excluded.period_end") })),
    ),
);

/** Adds units to what a bucket used in a period. */
export async function addUsed(ex: Executor, key: MeterKey, bucket: { bucket: string; periodStart: number; periodEnd: number }, units: number): Promise<void> {
  await upsertUsed(ex, [key.workspaceId, key.env, key.personId, key.toolId, key.meterId, bucket.bucket, bucket.periodStart, bucket.periodEnd, units]);
}

/** What a source used in a period, written whole: an import's counters, for sources it creates (so no row exists yet). */
export async function insertUsed(
  ex: Executor,
  rows: readonly (MeterKey & { bucket: string; periodStart: number; periodEnd: number; used: number })[],
): Promise<void> {
  if (rows.length === 0) return;
  await ex
    .insertInto("meter_usage")
    .values(
      rows.map((r) => ({
        workspace_id: r.workspaceId,
        env: r.env,
        person_id: r.personId,
        tool_id: r.toolId,
        meter_id: r.meterId,
        bucket: r.bucket,
        period_start: r.periodStart,
        period_end: r.periodEnd,
        used: r.used,
      })),
    )
    .execute();
}

/** Arguments: the credit row, units. */
const updateCredits = prepared((ex, p) =>
  ex
    .updateTable("meter_credits")
    .set({ remaining: sql`remaining - ${p<number>(1)}` })
    .where("id", "=", p<string>(0)),
);

/** Takes units from a credit row. */
export async function takeCredits(ex: Executor, creditId: string, units: number): Promise<void> {
  await updateCredits(ex, [creditId, units]);
}

/** Rows a meter's figure of a day is spread over (migration 044): people's spends wait on each other's only when they share one. */
const METER_DAY_SHARDS = 16;

/** The person's row of a meter's day: FNV-1a of their id. */
function meterDayShard(personId: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < personId.length; i++) hash = Math.imul(hash ^ personId.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % METER_DAY_SHARDS;
}

/** Arguments: workspace, environment, tool, meter, day, shard, units. */
const upsertMeterDay = prepared((ex, p) =>
  ex
    .insertInto("insight_meter_days")
    .values({
      workspace_id: p<string>(0),
      env: p<Env>(1),
      tool_id: p<string>(2),
      meter_id: p<string>(3),
      day: p<string>(4),
      shard: p<number>(5),
      used: p<number>(6),
    })
    .onConflict((oc) =>
      oc
        .columns(["workspace_id", "env", "tool_id", "meter_id", "day", "shard"])
        .doUpdateSet((eb) => ({ used: sql`insight_meter_days.used + ${eb.ref("excluded.used")}` })),
    ),
);

/** Adds a spend's units to its meter's figure of the day (Insights): the spend's one statement for it. */
export async function countMeterDay(ex: Executor, key: MeterKey, day: string, units: number): Promise<void> {
  await upsertMeterDay(ex, [key.workspaceId, key.env, key.toolId, key.meterId, day, meterDayShard(key.personId), units]);
}

/** Notes that the person's allowance of the meter ran out in `period`; false when it had already, in that period. */
export async function recordRunOut(ex: Executor, key: MeterKey, period: string, at: number, resetsAt: number): Promise<boolean> {
  const written = await ex
    .insertInto("allowance_runouts")
    .values({
      workspace_id: key.workspaceId,
      env: key.env,
      tool_id: key.toolId,
      meter_id: key.meterId,
      person_id: key.personId,
      period,
      ran_out_at: at,
      resets_at: resetsAt,
    })
    .onConflict((oc) => oc.doNothing())
    .returning("person_id")
    .execute();
  return written.length > 0;
}
