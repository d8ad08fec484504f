import { sql } from "kysely";
import type { Executor } from "../db/database.js";
import type { Env } from "../db/schema.js";

/**
 * Passes held now in a workspace environment (decisions.md): live grants and trials,
 * active or suspended licences (a team purchase itself is none; its seats are), and
 * running subscriptions that are not team purchases. Counting stops at `cap`, so the
 * cost is bounded by the plan's limit however large the workspace is.
 */
export async function countPassesHeld(ex: Executor, workspaceId: string, env: Env, now: number, cap: number): Promise<number> {
  const grants = ex
    .selectFrom("grants")
    .select(sql<number>`1`.as("one"))
    .where("workspace_id", "=", workspaceId)
    .where("env", "=", env)
    .where("revoked_at", "is", null)
    .where("starts_at", "<=", now)
    .where((eb) => eb.or([eb("ends_at", "is", null), eb("ends_at", ">", now)]))
    .limit(cap);
  const licences = ex
    .selectFrom("licences")
    .select(sql<number>`1`.as("one"))
    .where("workspace_id", "=", workspaceId)
    .where("env", "=", env)
    .where("status", "in", ["active", "suspended"])
    .where((eb) => eb.or([eb("seats", "is", null), eb("seats", "=", 0)]))
    .limit(cap);
  const subscriptions = ex
    .selectFrom("subscriptions")
    .select(sql<number>`1`.as("one"))
    .where("workspace_id", "=", workspaceId)
    .where("env", "=", env)
    .where("ended_at", "is", null)
    .where("status", "in", ["trialing", "active", "past_due"])
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
