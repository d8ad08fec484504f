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

/** One request's key in a batch of one workspace environment's requests. */
export interface KeyClaim {
  key: string;
  requestHash: string;
}

/**
 * claimIdempotencyKey for a batch of requests with distinct keys, in three statements
 * whatever its size: by key, "claimed" or the record of the request that claimed it.
 */
export async function claimIdempotencyKeys(
  ex: Executor,
  scope: Omit<IdempotencyScope, "key">,
  claims: readonly KeyClaim[],
  now: number,
  expiredBefore: number,
): Promise<Map<string, IdempotencyRecord | "claimed">> {
  const outcomes = new Map<string, IdempotencyRecord | "claimed">();
  if (claims.length === 0) return outcomes;
  // In key order: two batches claiming the same keys (a client's retries through another
  // process) then wait on each other in one order, never in a circle (a deadlock).
  const ordered = [...claims].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const keys = ordered.map((c) => c.key);
  await ex
    .deleteFrom("idempotency_keys")
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("key", "in", keys)
    .where("created_at", "<=", expiredBefore)
    .execute();
  const inserted = await ex
    .insertInto("idempotency_keys")
    .values(
      ordered.map((c) => ({
        workspace_id: scope.workspaceId,
        env: scope.env,
        key: c.key,
        request_hash: c.requestHash,
        status: 0,
        response_body: "",
        created_at: now,
      })),
    )
    .onConflict((oc) => oc.columns(["workspace_id", "env", "key"]).doNothing())
    .returning("key")
    .execute();
  for (const row of inserted) outcomes.set(row.key, "claimed");
  const taken = keys.filter((key) => !outcomes.has(key));
  if (taken.length === 0) return outcomes;
  const rows = await ex
    .selectFrom("idempotency_keys")
    .select(["key", "request_hash", "status", "response_body"])
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("key", "in", taken)
    .execute();
  for (const row of rows) outcomes.set(row.key, { requestHash: row.request_hash, status: row.status, responseBody: row.response_body });
  return outcomes;
}

/** completeIdempotencyKey for claimed keys of one batch, in one statement. */
export async function completeIdempotencyKeys(
  ex: Executor,
  scope: Omit<IdempotencyScope, "key">,
  answers: readonly (KeyClaim & { status: number; responseBody: string })[],
  claimedAt: number,
): Promise<void> {
  if (answers.length === 0) return;
  await ex
    .insertInto("idempotency_keys")
    .values(
      answers.map((a) => ({
        workspace_id: scope.workspaceId,
        env: scope.env,
        key: a.key,
        request_hash: a.requestHash,
        status: a.status,
        response_body: a.responseBody,
        created_at: claimedAt,
      })),
    )
    .onConflict((oc) =>
      oc.columns(["workspace_id", "env", "key"]).doUpdateSet((eb) => ({ status: eb.ref("excluded.status"), response_body: eb.ref("excluded.response_body") })),
    )
    .execute();
}

/** Gives claimed keys back: their requests wrote nothing, so a retry is a new request. */
export async function releaseIdempotencyKeys(ex: Executor, scope: Omit<IdempotencyScope, "key">, keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  await ex.deleteFrom("idempotency_keys").where("workspace_id", "=", scope.workspaceId).where("env", "=", scope.env).where("key", "in", keys).execute();
}
