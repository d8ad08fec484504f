import type { Executor } from "../db/database.js";
import type { Env } from "../db/schema.js";

/**
 * Takes the workspace environment's payment lock until the transaction ends. Stripe
 * retries and reorders deliveries, and a vendor may act while one is applied; each
 * change reads the stored state, decides, and writes, so they must apply one at a time.
 * On PostgreSQL the row is locked FOR UPDATE; SQLite has one writer at a time anyway.
 */
export async function lockBilling(ex: Executor, scope: { workspaceId: string; env: Env }, rowLocks: boolean): Promise<void> {
  await ex
    .insertInto("billing_locks")
    .values({ workspace_id: scope.workspaceId, env: scope.env })
    .onConflict((oc) => oc.columns(["workspace_id", "env"]).doNothing())
    .execute();
  if (!rowLocks) return;
  await ex.selectFrom("billing_locks").select("workspace_id").where("workspace_id", "=", scope.workspaceId).where("env", "=", scope.env).forUpdate().execute();
}
