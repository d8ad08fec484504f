import type { Executor } from "../db/database.js";
import type { Env } from "../db/schema.js";

type Scope = { workspaceId: string; env: Env };

/** Records a transaction Warden created for a checkout, and the person it was made for (null: signed out). */
export async function insertPaddleCheckout(ex: Executor, scope: Scope, transactionId: string, personId: string | null, now: number): Promise<void> {
  await ex
    .insertInto("paddle_checkouts")
    .values({ workspace_id: scope.workspaceId, env: scope.env, transaction_id: transactionId, person_id: personId, created_at: now })
    .onConflict((oc) => oc.columns(["workspace_id", "env", "transaction_id"]).doNothing())
    .execute();
}

/**
 * Who Warden created the transaction in the environment for (by the primary key): the person,
 * `null` for a checkout started signed out, `undefined` when Warden did not create it.
 */
export async function paddleCheckoutBuyer(ex: Executor, scope: Scope, transactionId: string): Promise<string | null | undefined> {
  const row = await ex
    .selectFrom("paddle_checkouts")
    .select("person_id")
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("transaction_id", "=", transactionId)
    .executeTakeFirst();
  return row === undefined ? undefined : row.person_id;
}
