import type { Executor } from "../db/database.js";
import { perRowCount, prepared } from "../db/prepared.js";
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
 * Claims keys for a batch (arguments: workspace, environment, now, expired-before, then key
 * and request hash for each): a key no record holds is inserted; a record older than the
 * window is replaced in place; either comes back. A live record is left as it is (and,
 * on PostgreSQL, locked until the batch ends, as a claim still in flight makes the insert
 * wait on the unique index until it commits).
 */
// Prepared per number of keys (a spend batch is 1 to 64): Kysely builds a multi-row
// statement anew on every call, which cost a spend more than running it.
const claimKeys = perRowCount((rows) =>
  prepared((ex, p) =>
    ex
      .insertInto("idempotency_keys")
      .values(
        Array.from({ length: rows }, (_, i) => ({
          workspace_id: p<string>(0),
          env: p<Env>(1),
          key: p<string>(4 + 2 * i),
          request_hash: p<string>(5 + 2 * i),
          status: 0,
          response_body: "",
          created_at: p<number>(2),
        })),
      )
      .onConflict((oc) =>
        oc
          .columns(["workspace_id", "env", "key"])
          .doUpdateSet((eb) => ({
            request_hash: eb.ref("excluded.request_hash"),
            status: eb.ref("excluded.status"),
            response_body: eb.ref("excluded.response_body"),
            created_at: eb.ref("excluded.created_at"),
          }))
          .where("idempotency_keys.created_at", "<=", p<number>(3)),
      )
      .returning("key"),
  ),
);

/** The records of keys the batch found taken (arguments: workspace, environment, then the keys). */
const selectKeys = perRowCount((rows) =>
  prepared((ex, p) =>
    ex
      .selectFrom("idempotency_keys")
      .select(["key", "request_hash", "status", "response_body"])
      .where("workspace_id", "=", p<string>(0))
      .where("env", "=", p<Env>(1))
      .where(
        "key",
        "in",
        Array.from({ length: rows }, (_, i) => p<string>(2 + i)),
      ),
  ),
);

/**
 * claimIdempotencyKey for a batch of requests with distinct keys, in one statement when
 * every key is new (two when some are taken) whatever its size: by key, "claimed" or the
 * record of the request that claimed it.
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
  const inserted = await claimKeys(ordered.length)(ex, [scope.workspaceId, scope.env, now, expiredBefore, ...ordered.flatMap((c) => [c.key, c.requestHash])]);
  for (const row of inserted) outcomes.set(row.key, "claimed");
  const taken = ordered.flatMap((c) => (outcomes.has(c.key) ? [] : [c.key]));
  if (taken.length === 0) return outcomes;
  const rows = await selectKeys(taken.length)(ex, [scope.workspaceId, scope.env, ...taken]);
  for (const row of rows) outcomes.set(row.key, { requestHash: row.request_hash, status: row.status, responseBody: row.response_body });
  return outcomes;
}

/** Writes the answers of claimed keys (arguments: workspace, environment, claimed at, then key, request hash, status and body for each). */
const completeKeys = perRowCount((rows) =>
  prepared((ex, p) =>
    ex
      .insertInto("idempotency_keys")
      .values(
        Array.from({ length: rows }, (_, i) => ({
          workspace_id: p<string>(0),
          env: p<Env>(1),
          key: p<string>(3 + 4 * i),
          request_hash: p<string>(4 + 4 * i),
          status: p<number>(5 + 4 * i),
          response_body: p<string>(6 + 4 * i),
          created_at: p<number>(2),
        })),
      )
      .onConflict((oc) =>
        oc
          .columns(["workspace_id", "env", "key"])
          .doUpdateSet((eb) => ({ status: eb.ref("excluded.status"), response_body: eb.ref("excluded.response_body") })),
      ),
  ),
);

/** completeIdempotencyKey for claimed keys of one batch, in one statement. */
export async function completeIdempotencyKeys(
  ex: Executor,
  scope: Omit<IdempotencyScope, "key">,
  answers: readonly (KeyClaim & { status: number; responseBody: string })[],
  claimedAt: number,
): Promise<void> {
  if (answers.length === 0) return;
  await completeKeys(answers.length)(ex, [
    scope.workspaceId,
    scope.env,
    claimedAt,
    ...answers.flatMap((a) => [a.key, a.requestHash, a.status, a.responseBody]),
  ]);
}

/** Gives claimed keys back: their requests wrote nothing, so a retry is a new request. */
export async function releaseIdempotencyKeys(ex: Executor, scope: Omit<IdempotencyScope, "key">, keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  await ex.deleteFrom("idempotency_keys").where("workspace_id", "=", scope.workspaceId).where("env", "=", scope.env).where("key", "in", keys).execute();
}
