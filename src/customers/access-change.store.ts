import type { Executor } from "../db/database.js";
import type { Env } from "../db/schema.js";
import { EVERYONE, noteAccessWrites } from "./answer-cache.js";

/** One entry of the feed: this person's access may differ from what their devices hold. */
export interface AccessChange {
  seq: number;
  workspaceId: string;
  env: Env;
  personId: string;
}

// Rows a statement writes at most: 4 values each, far under SQLite's 32,766 variables.
const WRITE_BATCH = 1_000;

/** Notes, in the caller's transaction, that these people's access may have changed. */
export async function recordAccessChanges(ex: Executor, workspaceId: string, env: Env, personIds: readonly string[], now: number): Promise<void> {
  // Before the rows: from here until the feed shows them, this process neither serves nor keeps these people's answers.
  noteAccessWrites(workspaceId, env, personIds);
  for (let i = 0; i < personIds.length; i += WRITE_BATCH) {
    const batch = personIds.slice(i, i + WRITE_BATCH);
    await ex
      .insertInto("access_changes")
      .values(batch.map((personId) => ({ workspace_id: workspaceId, env, person_id: personId, changed_at: now })))
      .execute();
  }
}

/** Notes, in the caller's transaction, a change of what every answer of the workspace says (a plan renamed), in both environments. */
export async function recordEveryoneChanged(ex: Executor, workspaceId: string, now: number): Promise<void> {
  for (const env of ["test", "live"] as const) await recordAccessChanges(ex, workspaceId, env, [EVERYONE], now);
}

const toChange = (r: { seq: number; workspace_id: string; env: Env; person_id: string }): AccessChange => ({
  seq: Number(r.seq),
  workspaceId: r.workspace_id,
  env: r.env,
  personId: r.person_id,
});

/** The feed after a position, oldest first. */
export async function readAccessChangesAfter(ex: Executor, after: number, limit: number): Promise<AccessChange[]> {
  const rows = await ex
    .selectFrom("access_changes")
    .select(["seq", "workspace_id", "env", "person_id"])
    .where("seq", ">", after)
    .orderBy("seq")
    .limit(limit)
    .execute();
  return rows.map(toChange);
}

/** The entries at these positions that exist now (positions a reader skipped while their transactions were still open). */
export async function readAccessChangesAt(ex: Executor, seqs: readonly number[]): Promise<AccessChange[]> {
  if (seqs.length === 0) return [];
  const rows = await ex.selectFrom("access_changes").select(["seq", "workspace_id", "env", "person_id"]).where("seq", "in", seqs).execute();
  return rows.map(toChange);
}

/** The feed's last position (0 when empty): where a new reader starts. */
export async function lastAccessChange(ex: Executor): Promise<number> {
  const row = await ex
    .selectFrom("access_changes")
    .select((eb) => eb.fn.max("seq").as("last"))
    .executeTakeFirst();
  return row?.last == null ? 0 : Number(row.last);
}
