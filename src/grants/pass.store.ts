import { createHash } from "node:crypto";
import { sql } from "kysely";
import { dialectOf, type Executor } from "../db/database.js";
import type { Env } from "../db/schema.js";

const RUNNING = ["trialing", "active", "past_due"];

/**
 * Passes held now in a workspace environment (decisions.md): live grants and trials,
 * active or suspended licences (a team purchase itself is none; its seats are), and
 * running subscriptions that are not team purchases. Counting stops at `cap`, so the
 * cost is bounded by the plan's limit however large the workspace is. A grant counts
 * from its creation, not from `starts_at`: of two transactions adding passes, the one
 * that took the pass lock first may have read the clock later, and a grant it made must
 * not be missed. To check before adding one, use `countPassesBeforeAdding`.
 */
export async function countPassesHeld(ex: Executor, workspaceId: string, env: Env, now: number, cap: number): Promise<number> {
  const grants = ex
    .selectFrom("grants")
    .select(sql<number>`1`.as("one"))
    .where("workspace_id", "=", workspaceId)
    .where("env", "=", env)
    .where("revoked_at", "is", null)
    .where((eb) => eb.or([eb("ends_at", "is", null), eb("ends_at", ">", now)]))
    .limit(cap);
  // A seat is a pass only while its team purchase still stands.
  const licences = ex
    .selectFrom("licences as l")
    .select(sql<number>`1`.as("one"))
    .where("l.workspace_id", "=", workspaceId)
    .where("l.env", "=", env)
    .where("l.status", "in", ["active", "suspended"])
    .where((eb) => eb.or([eb("l.seats", "is", null), eb("l.seats", "=", 0)]))
    .where((eb) =>
      eb.or([
        eb("l.team_licence_id", "is", null),
        eb.exists(eb.selectFrom("licences as t").select("t.id").whereRef("t.id", "=", "l.team_licence_id").where("t.status", "in", ["active", "suspended"])),
      ]),
    )
    .where((eb) =>
      eb.or([
        eb("l.team_subscription_id", "is", null),
        eb.exists(
          eb
            .selectFrom("subscriptions as s")
            .select("s.id")
            .whereRef("s.workspace_id", "=", "l.workspace_id")
            .whereRef("s.env", "=", "l.env")
            .whereRef("s.id", "=", "l.team_subscription_id")
            .where("s.ended_at", "is", null)
            .where("s.status", "in", RUNNING),
        ),
      ]),
    )
    .limit(cap);
  const subscriptions = ex
    .selectFrom("subscriptions")
    .select(sql<number>`1`.as("one"))
    .where("workspace_id", "=", workspaceId)
    .where("env", "=", env)
    .where("ended_at", "is", null)
    .where("status", "in", RUNNING)
    .where((eb) => eb.or([eb("seats", "is", null), eb("seats", "=", 0)]))
    .limit(cap);
  let total = 0;
  for (const part of [grants, licences, subscriptions]) {
    const row = await ex
      .selectFrom(part.as("t"))
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .executeTakeFirstOrThrow();
    total += Number(row.n);
    if (total >= cap) return cap;
  }
  return total;
}

/**
 * The check before a pass is added, in the adding transaction: on PostgreSQL it first
 * takes the workspace environment's pass lock (a transaction-scoped advisory lock, held
 * until commit, in every process), so two transactions that each count and then add go
 * one after the other (150 concurrent grants against a cap of 100 made 103-114 without
 * it and the creation-time rule above). SQLite's transactions are serialised already.
 */
export async function countPassesBeforeAdding(trx: Executor, workspaceId: string, env: Env, now: number, cap: number): Promise<number> {
  if (!trx.isTransaction) throw new Error("countPassesBeforeAdding must run in the transaction that adds the pass");
  if (dialectOf(trx) === "postgres") await sql`select pg_advisory_xact_lock(${passLockKey(workspaceId, env)}::bigint)`.execute(trx);
  return countPassesHeld(trx, workspaceId, env, now, cap);
}

/** The advisory lock's 64-bit key for a workspace environment's passes. */
function passLockKey(workspaceId: string, env: Env): string {
  const digest = createHash("sha256").update(`passes:${workspaceId}:${env}`).digest();
  return digest.readBigInt64BE(0).toString();
}
