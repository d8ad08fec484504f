import type { Executor } from "../db/database.js";
import type { Env } from "../db/schema.js";

export interface IdempotencyRecord {
  requestHash: string;
  status: number;
  responseBody: string;
}

export interface IdempotencyScope {
  workspaceId: string;
  env: Env;
  key: string;
}

/**
 * Claims a key for this request, or answers the record of the request that claimed it.
 * A claim by a transaction still in flight makes PostgreSQL wait on the unique index
 * until it commits, so two concurrent requests with one key never both write.
 * A record older than `expiredBefore` no longer counts and is replaced.
 */
export async function claimIdempotencyKey(
  ex: Executor,
  scope: IdempotencyScope,
  requestHash: string,
  now: number,
  expiredBefore: number,
): Promise<IdempotencyRecord | "claimed"> {
  await ex
    .deleteFrom("idempotency_keys")
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("key", "=", scope.key)
    .where("created_at", "<=", expiredBefore)
    .execute();
  const inserted = await ex
    .insertInto("idempotency_keys")
    .values({ workspace_id: scope.workspaceId, env: scope.env, key: scope.key, request_hash: requestHash, status: 0, response_body: "", created_at: now })
    .onConflict((oc) => oc.columns(["workspace_id", "env", "key"]).doNothing())
    .returning("key")
    .executeTakeFirst();
  if (inserted) return "claimed";
  const row = await ex
    .selectFrom("idempotency_keys")
    .select(["request_hash", "status", "response_body"])
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("key", "=", scope.key)
    .executeTakeFirstOrThrow();
  return { requestHash: row.request_hash, status: row.status, responseBody: row.response_body };
}

export async function completeIdempotencyKey(ex: Executor, scope: IdempotencyScope, status: number, responseBody: string): Promise<void> {
  await ex
    .updateTable("idempotency_keys")
    .set({ status, response_body: responseBody })
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("key", "=", scope.key)
    .execute();
}
