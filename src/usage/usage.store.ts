// SQL for what people spent of their meters: the per-source, per-period counts in
// meter_usage, the credits ledger in meter_credits, and the lock every spend takes first.
import { sql } from "kysely";
import { dialectOf, type Executor } from "../db/database.js";
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

/**
 * Takes the lock of one person's meter until the transaction ends: spends of it apply
 * one at a time across processes. On PostgreSQL one upsert, which holds the row's lock.
 * SQLite's transaction is the one writer already (holdWriteLock, its first statement):
 * nothing more to take, and a statement fewer on the hot path.
 */
export async function lockMeter(ex: Executor, key: MeterKey): Promise<void> {
  if (dialectOf(ex) === "sqlite") return;
  await ex
    .insertInto("meter_locks")
    .values({ workspace_id: key.workspaceId, env: key.env, person_id: key.personId, tool_id: key.toolId, meter_id: key.meterId, spends: 1 })
    .onConflict((oc) => oc.columns(["workspace_id", "env", "person_id", "tool_id", "meter_id"]).doUpdateSet({ spends: sql`meter_locks.spends + 1` }))
    .execute();
}

/** What the person used, per meter and bucket, in periods that started at or after `since` (the oldest period asked about). */
export async function readUsed(ex: Executor, key: Omit<MeterKey, "meterId">, meters: readonly string[], since: number): Promise<UsedRow[]> {
  if (meters.length === 0) return [];
  const rows = await ex
    .selectFrom("meter_usage")
    .select(["meter_id", "bucket", "period_start", "used"])
    .where("workspace_id", "=", key.workspaceId)
    .where("env", "=", key.env)
    .where("person_id", "=", key.personId)
    .where("tool_id", "=", key.toolId)
    .where("meter_id", "in", meters)
    .where("period_start", ">=", since)
    .execute();
  return rows.map((r) => ({ meter: r.meter_id, bucket: r.bucket, periodStart: Number(r.period_start), used: Number(r.used) }));
}

/** Credits the person may spend now, soonest expiring first, then those that never expire, oldest first. */
export async function readAvailableCredits(
  ex: Executor,
  key: Omit<MeterKey, "meterId">,
  meters: readonly string[],
  now: number,
  options: { lock?: boolean } = {},
): Promise<AvailableCredit[]> {
  if (meters.length === 0) return [];
  let query = ex
    .selectFrom("meter_credits as c")
    .select(["c.id", "c.meter_id", "c.remaining", "c.expires_at", "c.created_at"])
    .where("c.workspace_id", "=", key.workspaceId)
    .where("c.env", "=", key.env)
    .where("c.person_id", "=", key.personId)
    .where("c.tool_id", "=", key.toolId)
    .where("c.meter_id", "in", meters)
    .where("c.remaining", ">", 0)
    .where((eb) => eb.or([eb("c.expires_at", "is", null), eb("c.expires_at", ">", now)]))
    // A pack's credits count while its licence is held: not suspended by a dispute, not revoked.
    .where((eb) => eb.or([eb("c.licence_id", "is", null), eb("c.licence_id", "in", eb.selectFrom("licences").select("id").where("status", "=", "active"))]));
  // A spend locks what it draws from (PostgreSQL): a refund that takes a pack's credits back
  // commits first or waits, and the row read after it is read again (`remaining > 0`), so a
  // credit taken back is never spent. SQLite's one writer orders them already.
  if (options.lock && dialectOf(ex) === "postgres") query = query.forUpdate();
  const rows = await query.execute();
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

/** Adds units to what a bucket used in a period. */
export async function addUsed(ex: Executor, key: MeterKey, bucket: { bucket: string; periodStart: number; periodEnd: number }, units: number): Promise<void> {
  await ex
    .insertInto("meter_usage")
    .values({
      workspace_id: key.workspaceId,
      env: key.env,
      person_id: key.personId,
      tool_id: key.toolId,
      meter_id: key.meterId,
      bucket: bucket.bucket,
      period_start: bucket.periodStart,
      period_end: bucket.periodEnd,
      used: units,
    })
    .onConflict((oc) =>
      oc
        .columns(["workspace_id", "env", "person_id", "tool_id", "meter_id", "bucket", "period_start"])
        .doUpdateSet({ used: sql`meter_usage.used + ${units}`, period_end: bucket.periodEnd }),
    )
    .execute();
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

/** Takes units from a credit row. */
export async function takeCredits(ex: Executor, creditId: string, units: number): Promise<void> {
  await ex
    .updateTable("meter_credits")
    .set({ remaining: sql`remaining - ${units}` })
    .where("id", "=", creditId)
    .execute();
}

/** Rows a meter's figure of a day is spread over (migration 044): people's spends wait on each other's only when they share one. */
const METER_DAY_SHARDS = 16;

/** The person's row of a meter's day: FNV-1a of their id. */
function meterDayShard(personId: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < personId.length; i++) hash = Math.imul(hash ^ personId.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % METER_DAY_SHARDS;
}

/** Adds a spend's units to its meter's figure of the day (Insights): the spend's one statement for it. */
export async function countMeterDay(ex: Executor, key: MeterKey, day: string, units: number): Promise<void> {
  await ex
    .insertInto("insight_meter_days")
    .values({ workspace_id: key.workspaceId, env: key.env, tool_id: key.toolId, meter_id: key.meterId, day, shard: meterDayShard(key.personId), used: units })
    .onConflict((oc) =>
      oc.columns(["workspace_id", "env", "tool_id", "meter_id", "day", "shard"]).doUpdateSet({ used: sql`insight_meter_days.used + ${units}` }),
    )
    .execute();
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
