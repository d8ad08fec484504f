import { sql } from "kysely";
import { dialectOf, type Executor, type Trx } from "../db/database.js";

// Every statement here deletes at most `limit` rows, chosen by a range scan of the age
// indexes of migration 015 (`order by` the indexed column, so the scan stops after
// `limit` entries), and repeats its conditions outside the subquery. On PostgreSQL the
// rows are chosen FOR UPDATE SKIP LOCKED: two pruners take different rows, and a pruner
// never waits on a request that holds a row (a counter being counted, a delivery being
// resent), so it can be part of no deadlock; the request waits on the pruner's batch at
// worst, and then finds the row gone (a counter starts anew, a resend sends nothing).

const deleted = (result: { numAffectedRows?: bigint }) => Number(result.numAffectedRows ?? 0n);
const skipLocked = (ex: Executor) => (dialectOf(ex) === "postgres" ? sql`for update skip locked` : sql``);

/** Idempotency keys recorded at or before `before`; a key that old no longer counts (grant.service). */
export async function deleteIdempotencyKeys(ex: Executor, before: number, limit: number): Promise<number> {
  return deleted(
    await sql`delete from idempotency_keys where (workspace_id, env, key) in (
  select workspace_id, env, key from idempotency_keys where created_at <= ${before} order by created_at limit ${limit} ${skipLocked(ex)}
) and created_at <= ${before}`.execute(ex),
  );
}

/** Sign-in codes that expired before `before`: nothing reads a code after it expires. */
export async function deleteSignInCodes(ex: Executor, before: number, limit: number): Promise<number> {
  return deleted(
    await sql`delete from sign_in_codes where id in (
  select id from sign_in_codes where expires_at < ${before} order by expires_at limit ${limit} ${skipLocked(ex)}
) and expires_at < ${before}`.execute(ex),
  );
}

/** Mails sent before `before` (their content was erased when sent); unsent mails are kept, whatever their age. */
export async function deleteSentMails(ex: Executor, before: number, limit: number): Promise<number> {
  return deleted(
    await sql`delete from mail_outbox where id in (
  select id from mail_outbox where sent_at < ${before} order by sent_at limit ${limit} ${skipLocked(ex)}
) and sent_at < ${before}`.execute(ex),
  );
}

/** The hosted pages' web sessions opened before `before`: past their 7 days, ended or not, none opens a page again. */
export async function deleteCustomerSessions(ex: Executor, before: number, limit: number): Promise<number> {
  return deleted(
    await sql`delete from customer_sessions where id in (
  select id from customer_sessions where created_at < ${before} order by created_at limit ${limit} ${skipLocked(ex)}
) and created_at < ${before}`.execute(ex),
  );
}

/** Hand-off codes and page tickets that expired before `before`: nothing spends one after its 60 s. */
export async function deleteExchangeTokens(ex: Executor, before: number, limit: number): Promise<number> {
  return deleted(
    await sql`delete from customer_exchange_tokens where id in (
  select id from customer_exchange_tokens where expires_at < ${before} order by expires_at limit ${limit} ${skipLocked(ex)}
) and expires_at < ${before}`.execute(ex),
  );
}

/** Limit counters whose window closed before `before`: a closed window counts as zero, and the next count starts a new row. */
export async function deleteSpentCounters(ex: Executor, before: number, limit: number): Promise<number> {
  return deleted(
    await sql`delete from counters where scope in (
  select scope from counters where window_end < ${before} order by window_end limit ${limit} ${skipLocked(ex)}
) and window_end < ${before}`.execute(ex),
  );
}

/** Stripe's event ids received before `before`, except those still held back for a subscription's buyer. */
export async function deleteStripeEvents(ex: Executor, before: number, limit: number): Promise<number> {
  return deleted(
    await sql`delete from stripe_events where (workspace_id, env, id) in (
  select workspace_id, env, id from stripe_events where received_at < ${before} and outcome <> 'deferred'
  order by received_at limit ${limit} ${skipLocked(ex)}
) and received_at < ${before} and outcome <> 'deferred'`.execute(ex),
  );
}

/**
 * Paddle's event ids received before `before`: a replay is refused by its signature's
 * minute long before, and a retry comes within Paddle's three days. Nothing waits in them.
 */
export async function deletePaddleEvents(ex: Executor, before: number, limit: number): Promise<number> {
  return deleted(
    await sql`delete from paddle_events where (workspace_id, env, id) in (
  select workspace_id, env, id from paddle_events where received_at < ${before}
  order by received_at limit ${limit} ${skipLocked(ex)}
) and received_at < ${before}`.execute(ex),
  );
}

/**
 * The Paddle transactions Warden created for checkouts before `before` (migration 056): by
 * then the purchase has arrived or never will, and the thank-you page no longer asks Paddle.
 */
export async function deletePaddleCheckouts(ex: Executor, before: number, limit: number): Promise<number> {
  return deleted(
    await sql`delete from paddle_checkouts where (workspace_id, env, transaction_id) in (
  select workspace_id, env, transaction_id from paddle_checkouts where created_at < ${before}
  order by created_at limit ${limit} ${skipLocked(ex)}
) and created_at < ${before}`.execute(ex),
  );
}

/**
 * Up to `limit` settled deliveries created before `before`, with their attempts (first:
 * attempts refer to their delivery), all or none. On PostgreSQL one statement, whose
 * parts see the same rows, locked: none can be resent meanwhile. On SQLite two, in the
 * caller's transaction, which the first (a write) holds the write lock of: no other
 * writer, in this process or another, comes between them. The literal 'pending' lets
 * both engines use the partial index deliveries_settled_age; `= any(array(…))` makes
 * PostgreSQL look the chosen ids up by index rather than join them to a whole table.
 */
export async function deleteSettledDeliveries(trx: Trx, before: number, limit: number): Promise<number> {
  const chosen = sql`select id from deliveries where status <> 'pending' and created_at < ${before} order by created_at limit ${limit}`;
  if (dialectOf(trx) === "postgres") {
    return deleted(
      await sql`with chosen as (${chosen} for update skip locked),
attempts as (delete from delivery_attempts where delivery_id = any(array(select id from chosen)))
delete from deliveries where id = any(array(select id from chosen))`.execute(trx),
    );
  }
  await sql`delete from delivery_attempts where delivery_id in (${chosen})`.execute(trx);
  return deleted(await sql`delete from deliveries where id in (${chosen})`.execute(trx));
}

/**
 * Events created before `before` that no delivery refers to any more: an event whose
 * delivery is still owed (pending, or settled and kept) stays, as the worker sends its
 * stored body.
 */
export async function deleteUndeliveredEvents(ex: Executor, before: number, limit: number): Promise<number> {
  // A scalar subquery rather than `not exists`: PostgreSQL runs it once per event with the
  // index deliveries_event, where an anti-join could read every delivery.
  const owed = (e: string) =>
    sql`(select 1 from deliveries as d where d.workspace_id = ${sql.ref(`${e}.workspace_id`)} and d.env = ${sql.ref(`${e}.env`)} and d.event_id = ${sql.ref(`${e}.id`)} limit 1)`;
  return deleted(
    await sql`delete from events where (workspace_id, env, id) in (
  select o.workspace_id, o.env, o.id from events as o where o.created_at < ${before} and ${owed("o")} is null order by o.created_at limit ${limit} ${skipLocked(ex)}
) and created_at < ${before} and ${owed("events")} is null`.execute(ex),
  );
}

/**
 * On SQLite, copies the log's pages into the database file now, as part of the pruner's
 * batch (and so of the time its pause is measured from). Left to itself, SQLite does it
 * in the commit that takes the log past 1,000 pages: a request's (a retrieve commits its
 * limit counts), which then waits on the copy of pages the pruner wrote.
 */
export async function checkpointLog(ex: Executor): Promise<void> {
  if (dialectOf(ex) === "sqlite") await sql`pragma wal_checkpoint(PASSIVE)`.execute(ex);
}

/** Entries of the access-change feed written before `before`: every reader has long passed them. */
export async function deleteAccessChanges(ex: Executor, before: number, limit: number): Promise<number> {
  return deleted(
    await sql`delete from access_changes where seq in (
  select seq from access_changes where changed_at < ${before} order by changed_at limit ${limit} ${skipLocked(ex)}
) and changed_at < ${before}`.execute(ex),
  );
}
