import { sql } from "kysely";
import { dialectOf, type Executor } from "../db/database.js";
import { type Placeholder, prepared, preparedRaw } from "../db/prepared.js";
import type { DeliveriesTable, DeliveryStatus, Env } from "../db/schema.js";
import { newOrderedId } from "../ids.js";
import { type PreviousSecret, previousSecretOf } from "./endpoint.store.js";

export interface Delivery {
  id: string;
  workspaceId: string;
  env: Env;
  endpointId: string;
  eventId: string;
  status: DeliveryStatus;
  attempts: number;
  oneShot: boolean;
  nextAttemptAt: number | null;
  lastAttemptAt: number | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: number;
}

/** A claimed delivery with what it takes to send it. */
export interface DueDelivery {
  id: string;
  endpointId: string;
  eventId: string;
  attempts: number;
  oneShot: boolean;
  /** For a manual resend of a delivery still being retried: the scheduled retry it went ahead of. */
  retryAt: number | null;
  url: string;
  secretSealed: string;
  /** The secret a rotation replaced, as the claim read it; it signs too until its expiry (signingSecrets). */
  previousSecret: PreviousSecret | null;
  body: string;
  createdAt: number;
}

export interface Attempt {
  id: string;
  deliveryId: string;
  attemptedAt: number;
  durationMs: number;
  statusCode: number | null;
  responseBody: string | null;
  error: string | null;
  manual: boolean;
}

const num = (v: number | null) => (v === null ? null : Number(v));

export async function insertDeliveries(
  ex: Executor,
  event: { workspaceId: string; env: Env; id: string },
  endpointIds: readonly string[],
  now: number,
): Promise<void> {
  if (endpointIds.length === 0) return;
  await ex
    .insertInto("deliveries")
    .values(
      endpointIds.map((endpointId) => ({
        id: newOrderedId("dlv", now),
        workspace_id: event.workspaceId,
        env: event.env,
        endpoint_id: endpointId,
        event_id: event.id,
        status: "pending" as const,
        attempts: 0,
        one_shot: 0,
        next_attempt_at: now,
        last_attempt_at: null,
        last_status_code: null,
        last_error: null,
        created_at: now,
      })),
    )
    .execute();
}

/** An endpoint with deliveries due now, and whether only its manual resends may go (it is paused). */
export interface DueEndpoint {
  endpointId: string;
  resendsOnly: boolean;
}

/**
 * Up to `limit` enabled endpoints with deliveries due now that no worker leases, oldest
 * due first, leaving out `busy` ones (this process is sending to them). For a `paused`
 * endpoint (a failure just now) only manual resends and recoveries count.
 *
 * The endpoints come from the distinct endpoints of pending deliveries, one index step
 * each (a loose index scan of deliveries_due, written out as a recursive query), then
 * each one's oldest due delivery: the cost grows with the endpoints that have pending
 * deliveries, never with how many deliveries they owe. The joins are written as CROSS JOIN
 * because SQLite then keeps the pending endpoints as the outer loop: SQLite 3.54
 * (better-sqlite3 13) otherwise scanned every endpoint first. PostgreSQL plans them as
 * inner joins either way.
 */
export async function findDueEndpoints(
  ex: Executor,
  options: { now: number; limit: number; busy: readonly string[]; paused: readonly string[] },
): Promise<DueEndpoint[]> {
  const { now } = options;
  const list = (ids: readonly string[]) => sql.join(ids.map((id) => sql`${id}`));
  const notBusy = options.busy.length > 0 ? sql`and e.id not in (${list(options.busy)})` : sql``;
  const isPaused = options.paused.length > 0 ? sql`e.id in (${list(options.paused)})` : sql`1 = 0`;
  const { rows } = await sql<{ id: string; resends_only: number }>`
with recursive pending (endpoint_id) as (
  select (select d.endpoint_id from deliveries as d where d.status = 'pending' order by d.endpoint_id limit 1)
  union all
  select (select d.endpoint_id from deliveries as d where d.status = 'pending' and d.endpoint_id > p.endpoint_id order by d.endpoint_id limit 1)
  from pending as p where p.endpoint_id is not null
),
heads as (
  select e.id, case when ${isPaused} then 1 else 0 end as resends_only,
    case when ${isPaused}
      then (select r.next_attempt_at from deliveries as r where r.one_shot = 1 and r.endpoint_id = e.id and r.status = 'pending'
        and r.next_attempt_at <= ${now} order by r.next_attempt_at, r.seq limit 1)
      else (select d.next_attempt_at from deliveries as d where d.status = 'pending' and d.endpoint_id = e.id
        and d.next_attempt_at <= ${now} order by d.next_attempt_at, d.seq limit 1)
    end as due_at
  from pending as p cross join webhook_endpoints as e cross join endpoint_leases as l
  where e.id = p.endpoint_id and l.endpoint_id = e.id
    and e.enabled = 1 and e.removed_at is null and (l.locked_until is null or l.locked_until <= ${now}) ${notBusy}
)
select id, resends_only from heads where due_at is not null order by due_at, id limit ${options.limit}`.execute(ex);
  return rows.map((r) => ({ endpointId: r.id, resendsOnly: Number(r.resends_only) === 1 }));
}

// An endpoint's due deliveries, oldest due first, with what sending them needs.
function dueQuery(ex: Executor, endpointId: string, now: number, resendsOnly: boolean) {
  let query = ex
    .selectFrom("deliveries as d")
    .innerJoin("webhook_endpoints as e", "e.id", "d.endpoint_id")
    .innerJoin("events as v", (join) => join.onRef("v.workspace_id", "=", "d.workspace_id").onRef("v.env", "=", "d.env").onRef("v.id", "=", "d.event_id"))
    .select([
      "d.id",
      "d.endpoint_id",
      "d.event_id",
      "d.attempts",
      "d.one_shot",
      "d.retry_at",
      "d.created_at",
      "d.seq",
      "e.url",
      "e.secret_sealed",
      "e.previous_secret_sealed",
      "e.previous_secret_expires_at",
      "v.body",
    ])
    .where("d.status", "=", sql.lit("pending"))
    .where("d.endpoint_id", "=", endpointId)
    .where("d.next_attempt_at", "<=", now)
    .where("e.enabled", "=", 1)
    .where("e.removed_at", "is", null);
  // The literal lets both engines use the partial index deliveries_one_shot.
  if (resendsOnly) query = query.where("d.one_shot", "=", sql.lit(1));
  return query.orderBy("d.next_attempt_at").orderBy("d.seq");
}

// The same prepared (arguments: endpoint, now, limit), for the claims that leave nothing
// out, which are all but a run's follow-up claims. When reports come one at a time each
// claim reads an endpoint's one or two deliveries, and building this query with Kysely
// each time was most of the claim's cost (seventh session in bench/journal.md).
const dueDeliveries = prepared((ex, p) => dueQuery(ex, p<string>(0), p<number>(1), false).limit(p<number>(2)));
const dueResends = prepared((ex, p) => dueQuery(ex, p<string>(0), p<number>(1), true).limit(p<number>(2)));

/**
 * Leases each given endpoint that no other worker holds to this worker until
 * `leaseUntil`, and answers up to `perEndpoint` of its due deliveries, oldest due first,
 * leaving out `inFlight` ones (sent by this worker, their attempts not yet recorded). An
 * endpoint with nothing due is not leased. On PostgreSQL the lease rows are locked with
 * SKIP LOCKED, so concurrent workers in other processes take different endpoints; SQLite
 * has one writer at a time anyway. A disabled or removed endpoint's deliveries stay
 * where they are: a resend or an event written while it was being disabled waits for it
 * to be enabled again.
 *
 * The lease is the endpoint's, not each delivery's: an endpoint's deliveries go one at a
 * time in order anyway, and a claim then writes one row instead of one per delivery
 * (migration 012).
 */
export async function claimDueDeliveries(
  ex: Executor,
  options: {
    workerId: string;
    now: number;
    leaseUntil: number;
    endpoints: readonly DueEndpoint[];
    perEndpoint: number;
    skipLocked: boolean;
    inFlight?: readonly string[];
  },
): Promise<DueDelivery[]> {
  const { now, workerId } = options;
  if (options.endpoints.length === 0) return [];
  const readDue = (trx: Executor, { endpointId, resendsOnly }: DueEndpoint) => {
    const inFlight = options.inFlight ?? [];
    if (inFlight.length === 0) return (resendsOnly ? dueResends : dueDeliveries)(trx, [endpointId, now, options.perEndpoint]);
    return dueQuery(trx, endpointId, now, resendsOnly).where("d.id", "not in", inFlight).limit(options.perEndpoint).execute();
  };
  const claim = async (trx: Executor) => {
    // PostgreSQL: an endpoint's due deliveries are read in index order (deliveries_due) up
    // to the limit, never collected and sorted. Statistics lag a burst of events: measured
    // with a backlog of 100,000 and statistics from before it, the planner chose a bitmap
    // scan of every pending row and a sort, 0.6 s a claim with the database's CPU
    // saturated, where the index walk takes about 1 ms.
    if (options.skipLocked) {
      await sql`set local enable_sort = off`.execute(trx);
      await sql`set local enable_bitmapscan = off`.execute(trx);
    }
    let free = trx
      .selectFrom("endpoint_leases")
      .select("endpoint_id")
      .where(
        "endpoint_id",
        "in",
        options.endpoints.map((e) => e.endpointId),
      )
      .where((eb) => eb.or([eb("locked_until", "is", null), eb("locked_until", "<=", now), eb("locked_by", "=", workerId)]));
    if (options.skipLocked) free = free.forUpdate().skipLocked();
    const leasable = new Set((await free.execute()).map((r) => r.endpoint_id));
    const due = [];
    for (const endpoint of options.endpoints) if (leasable.has(endpoint.endpointId)) due.push(...(await readDue(trx, endpoint)));
    const leased = [...new Set(due.map((d) => d.endpoint_id))];
    if (leased.length > 0) {
      await trx.updateTable("endpoint_leases").set({ locked_until: options.leaseUntil, locked_by: workerId }).where("endpoint_id", "in", leased).execute();
    }
    return due;
  };
  const rows = ex.isTransaction ? await claim(ex) : await ex.transaction().execute(claim);
  // Each endpoint's claimed deliveries are sent in this order: creation.
  rows.sort((a, b) => Number(a.seq) - Number(b.seq));
  return rows.map((r) => ({
    id: r.id,
    endpointId: r.endpoint_id,
    eventId: r.event_id,
    attempts: r.attempts,
    oneShot: r.one_shot === 1,
    retryAt: r.retry_at === null ? null : Number(r.retry_at),
    url: r.url,
    secretSealed: r.secret_sealed,
    previousSecret: previousSecretOf(r),
    body: r.body,
    createdAt: Number(r.created_at),
  }));
}

/**
 * Extends this worker's lease on an endpoint before an attempt that could outlast it;
 * false when the lease ran out and another worker has taken the endpoint, or it was
 * enabled again (then this one must not send to it).
 */
export async function renewLease(ex: Executor, endpointId: string, workerId: string, leaseUntil: number): Promise<boolean> {
  const result = await ex
    .updateTable("endpoint_leases")
    .set({ locked_until: leaseUntil })
    .where("endpoint_id", "=", endpointId)
    .where("locked_by", "=", workerId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Gives back this worker's leases on endpoints (their runs ended, or it is stopping), so any worker can take them now. */
export async function releaseLeases(ex: Executor, endpointIds: readonly string[], workerId: string): Promise<void> {
  if (endpointIds.length === 0) return;
  await ex
    .updateTable("endpoint_leases")
    .set({ locked_until: null, locked_by: null })
    .where("endpoint_id", "in", endpointIds)
    .where("locked_by", "=", workerId)
    .execute();
}

// SQLite records attempts one statement each (a statement is a function call there),
// prepared, and run at once on the transaction's connection (directSqlite, db/database.ts).
const insertAttemptRow = prepared((ex, p) =>
  ex.insertInto("delivery_attempts").values({
    id: p<string>(0),
    delivery_id: p<string>(1),
    attempted_at: p<number>(2),
    duration_ms: p<number>(3),
    status_code: p<number | null>(4),
    response_body: p<string | null>(5),
    error: p<string | null>(6),
    manual: p<number>(7),
  }),
);

// Arguments: status, next attempt, attempted at, status code, last error, delivery, what
// the attempt adds to `attempts` (0 for a manual one), then (for a failure) the worker.
const finishAttemptUpdate = (ex: Executor, p: Placeholder) =>
  ex
    .updateTable("deliveries")
    .set((eb) => ({
      status: p<DeliveryStatus>(0),
      attempts: eb("attempts", "+", p<number>(6)),
      one_shot: 0,
      retry_at: null,
      next_attempt_at: p<number | null>(1),
      last_attempt_at: p<number>(2),
      last_status_code: p<number | null>(3),
      last_error: p<string | null>(4),
    }))
    .where("id", "=", p<string>(5))
    .returning("id");
const finishSucceeded = prepared((ex, p) => finishAttemptUpdate(ex, p));
const finishFailed = prepared((ex, p) =>
  finishAttemptUpdate(ex, p)
    .where("status", "=", "pending")
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom("endpoint_leases as l")
          .select("l.endpoint_id")
          .whereRef("l.endpoint_id", "=", "deliveries.endpoint_id")
          .where("l.locked_by", "=", p<string>(7)),
      ),
    ),
);

// PostgreSQL records a batch of attempts in one statement: inside a transaction every
// statement is a round trip, and a batch of 32 attempts written two statements each
// held the batch's transaction (and the attempts behind it) for 30 ms. The arguments
// are one array per column, a row per attempt.
const recordAttemptsTogether = preparedRaw<{ id: string }>(
  (p) => sql`with v as (
  select * from unnest(${p<string[]>(0)}::text[], ${p<string[]>(1)}::text[], ${p<number[]>(2)}::bigint[], ${p<number[]>(3)}::integer[],
    ${p<(number | null)[]>(4)}::integer[], ${p<(string | null)[]>(5)}::text[], ${p<(string | null)[]>(6)}::text[], ${p<number[]>(7)}::integer[],
    ${p<DeliveryStatus[]>(8)}::text[], ${p<(number | null)[]>(9)}::bigint[], ${p<(string | null)[]>(10)}::text[], ${p<string[]>(11)}::text[])
    with ordinality as v (id, delivery_id, attempted_at, duration_ms, status_code, response_body, error, manual, status, next_attempt_at, last_error, worker_id, n)
),
attempts as (
  insert into delivery_attempts (id, delivery_id, attempted_at, duration_ms, status_code, response_body, error, manual)
  select id, delivery_id, attempted_at, duration_ms, status_code, response_body, error, manual from v order by n
)
update deliveries as d set status = v.status, attempts = d.attempts + 1 - v.manual, one_shot = 0, retry_at = null, next_attempt_at = v.next_attempt_at,
  last_attempt_at = v.attempted_at, last_status_code = v.status_code, last_error = v.last_error
from v
where d.id = v.delivery_id and (v.status = 'succeeded' or (d.status = 'pending'
  and exists (select 1 from endpoint_leases as l where l.endpoint_id = d.endpoint_id and l.locked_by = v.worker_id)))
returning d.id`,
);

/** An attempt made, and where it leaves its delivery. */
export interface AttemptOutcome {
  attempt: Attempt;
  /** The worker that made it. */
  workerId: string;
  /** succeeded, failed (no attempt left), or pending again at `nextAttemptAt`. */
  status: DeliveryStatus;
  nextAttemptAt: number | null;
  /** The delivery's last error: null after a success. */
  lastError: string | null;
}

/**
 * Logs each attempt and settles its delivery: done, failed, or due again. A failure
 * changes the delivery only while it is pending and the worker still leases its
 * endpoint: the lease may have run out and another worker taken the endpoint, or the
 * endpoint was disabled (its deliveries failed) and enabled again, which frees its lease,
 * and the delivery resent; settling it then would cut across the other worker's attempt
 * or the resend, or revive a delivery that was failed on purpose. A success is recorded
 * whatever happened meanwhile: the receiver has the event. The attempt itself is logged
 * either way: the request went out. Answers, for each, whether its delivery was changed.
 */
export async function recordAttempts(ex: Executor, outcomes: readonly AttemptOutcome[]): Promise<boolean[]> {
  if (outcomes.length === 0) return [];
  if (dialectOf(ex) === "postgres") {
    const column = <T>(f: (o: AttemptOutcome) => T) => outcomes.map(f);
    const updated = await recordAttemptsTogether(ex, [
      column((o) => o.attempt.id),
      column((o) => o.attempt.deliveryId),
      column((o) => o.attempt.attemptedAt),
      column((o) => o.attempt.durationMs),
      column((o) => o.attempt.statusCode),
      column((o) => o.attempt.responseBody),
      column((o) => o.attempt.error),
      column((o) => (o.attempt.manual ? 1 : 0)),
      column((o) => o.status),
      column((o) => o.nextAttemptAt),
      column((o) => o.lastError),
      column((o) => o.workerId),
    ]);
    const ids = new Set(updated.map((row) => row.id));
    return outcomes.map((o) => ids.has(o.attempt.deliveryId));
  }
  const changed: boolean[] = [];
  for (const { attempt, workerId, status, nextAttemptAt, lastError } of outcomes) {
    await insertAttemptRow(ex, [
      attempt.id,
      attempt.deliveryId,
      attempt.attemptedAt,
      attempt.durationMs,
      attempt.statusCode,
      attempt.responseBody,
      attempt.error,
      attempt.manual ? 1 : 0,
    ]);
    const args = [status, nextAttemptAt, attempt.attemptedAt, attempt.statusCode, lastError, attempt.deliveryId, attempt.manual ? 0 : 1];
    const updated = status === "succeeded" ? await finishSucceeded(ex, args) : await finishFailed(ex, [...args, workerId]);
    changed.push(updated.length === 1);
  }
  return changed;
}

/** Every pending delivery of an endpoint fails at once (the endpoint was disabled or removed). */
export async function failPendingDeliveries(ex: Executor, endpointId: string, reason: string): Promise<void> {
  await ex
    .updateTable("deliveries")
    .set({ status: "failed", next_attempt_at: null, retry_at: null, last_error: reason })
    .where("endpoint_id", "=", endpointId)
    // The literal lets both engines use deliveries_due, which holds pending deliveries only.
    .where("status", "=", sql.lit("pending"))
    .execute();
}

/**
 * Queues one manual attempt now for each given delivery. A delivery still being retried
 * keeps its scheduled retry in `retry_at`, to go back to should the manual attempt fail;
 * one with a manual attempt queued already is left as it is (resending twice queues one).
 */
export async function queueResends(ex: Executor, deliveryIds: readonly string[], now: number): Promise<void> {
  if (deliveryIds.length === 0) return;
  await ex
    .updateTable("deliveries")
    .set({ status: "pending", one_shot: 1, next_attempt_at: now, retry_at: sql<number | null>`case when status = 'pending' then next_attempt_at end` })
    .where("id", "in", deliveryIds)
    .where((eb) => eb.or([eb("status", "!=", "pending"), eb("one_shot", "=", 0)]))
    .execute();
}

const DELIVERY_COLUMNS = [
  "id",
  "workspace_id",
  "env",
  "endpoint_id",
  "event_id",
  "status",
  "attempts",
  "one_shot",
  "next_attempt_at",
  "last_attempt_at",
  "last_status_code",
  "last_error",
  "created_at",
] as const;

type DeliveryRow = Pick<DeliveriesTable, (typeof DELIVERY_COLUMNS)[number]>;

function toDelivery(r: DeliveryRow): Delivery {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    env: r.env,
    endpointId: r.endpoint_id,
    eventId: r.event_id,
    status: r.status,
    attempts: r.attempts,
    oneShot: r.one_shot === 1,
    nextAttemptAt: num(r.next_attempt_at),
    lastAttemptAt: num(r.last_attempt_at),
    lastStatusCode: r.last_status_code,
    lastError: r.last_error,
    createdAt: Number(r.created_at),
  };
}

export async function findDelivery(ex: Executor, workspaceId: string, env: Env, id: string): Promise<Delivery | null> {
  const row = await ex
    .selectFrom("deliveries")
    .select(DELIVERY_COLUMNS)
    .where("id", "=", id)
    .where("workspace_id", "=", workspaceId)
    .where("env", "=", env)
    .executeTakeFirst();
  return row ? toDelivery(row) : null;
}

export interface DeliveryFilter {
  endpointId?: string;
  eventId?: string;
  status?: DeliveryStatus;
  /** Only deliveries created at or after this time. */
  since?: number;
  /** Only deliveries created before this time. */
  before?: number;
  /** Only deliveries of events about this person (the events' `person_id`, migration 046). */
  personId?: string;
}

/** Deliveries newest first, after a keyset position. */
export async function listDeliveriesPage(
  ex: Executor,
  workspaceId: string,
  env: Env,
  filter: DeliveryFilter,
  options: { after: { createdAt: number; id: string } | null; limit: number },
): Promise<Delivery[]> {
  let query = ex.selectFrom("deliveries").select(DELIVERY_COLUMNS).where("workspace_id", "=", workspaceId).where("env", "=", env);
  if (filter.endpointId) query = query.where("endpoint_id", "=", filter.endpointId);
  if (filter.eventId) query = query.where("event_id", "=", filter.eventId);
  // A person's events (events_person), then their deliveries (deliveries_event).
  if (filter.personId !== undefined) {
    const personId = filter.personId;
    query = query.where("event_id", "in", (eb) =>
      eb.selectFrom("events").select("id").where("workspace_id", "=", workspaceId).where("env", "=", env).where("person_id", "=", personId),
    );
  }
  // A literal, so that both engines may use the partial index of the status (migration 019).
  if (filter.status) query = query.where("status", "=", sql.lit(filter.status));
  if (filter.since !== undefined) query = query.where("created_at", ">=", filter.since);
  if (filter.before !== undefined) query = query.where("created_at", "<", filter.before);
  const { after } = options;
  if (after) {
    query = query.where((eb) => eb.or([eb("created_at", "<", after.createdAt), eb.and([eb("created_at", "=", after.createdAt), eb("id", "<", after.id)])]));
  }
  const rows = await query.orderBy("created_at", "desc").orderBy("id", "desc").limit(options.limit).execute();
  return rows.map(toDelivery);
}

/**
 * How many of an endpoint's deliveries are in `state`, among those created since each
 * given time: `failed` (retries ran out, or the endpoint was disabled), or `retrying`
 * (pending after at least one failed attempt: the schedule tries again later).
 */
export async function countUndeliveredSince<K extends string>(
  ex: Executor,
  workspaceId: string,
  env: Env,
  endpointId: string,
  state: "failed" | "retrying",
  since: Readonly<Record<K, number>>,
): Promise<Record<K, number>> {
  const windows = Object.entries(since) as [K, number][];
  const oldest = Math.min(...windows.map(([, at]) => at));
  let query = ex
    .selectFrom("deliveries")
    .select((eb) => windows.map(([, at], i) => eb.fn.sum<number>(eb.case().when("created_at", ">=", at).then(1).else(0).end()).as(`n${i}`)))
    .where("workspace_id", "=", workspaceId)
    .where("env", "=", env)
    .where("endpoint_id", "=", endpointId)
    .where("created_at", ">=", oldest);
  // Literals, so that both engines may use the partial index of the status (migration 020).
  // A retrying delivery with a resend queued ahead of its retry keeps that retry in retry_at;
  // a failed one resent (one_shot, no retry_at) is no longer on a schedule.
  query =
    state === "failed"
      ? query.where("status", "=", sql.lit("failed"))
      : query
          .where("status", "=", sql.lit("pending"))
          .where("attempts", ">", 0)
          .where((eb) => eb.or([eb("one_shot", "=", 0), eb("retry_at", "is not", null)]));
  const counts = (await query.executeTakeFirstOrThrow()) as Record<string, number | string | null>;
  return Object.fromEntries(windows.map(([name], i) => [name, Number(counts[`n${i}`] ?? 0)])) as Record<K, number>;
}

/** How many of an endpoint's deliveries wait to be sent (a first attempt or a retry): what disabling it fails. */
export async function countPendingDeliveries(ex: Executor, endpointId: string): Promise<number> {
  const row = await ex
    .selectFrom("deliveries")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("endpoint_id", "=", endpointId)
    .where("status", "=", sql.lit("pending"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function listAttempts(ex: Executor, deliveryIds: readonly string[]): Promise<Map<string, Attempt[]>> {
  const result = new Map<string, Attempt[]>(deliveryIds.map((id) => [id, []]));
  if (deliveryIds.length === 0) return result;
  const rows = await ex.selectFrom("delivery_attempts").selectAll().where("delivery_id", "in", deliveryIds).orderBy("seq").execute();
  for (const r of rows) {
    result.get(r.delivery_id)?.push({
      id: r.id,
      deliveryId: r.delivery_id,
      attemptedAt: Number(r.attempted_at),
      durationMs: r.duration_ms,
      statusCode: r.status_code,
      responseBody: r.response_body,
      error: r.error,
      manual: r.manual === 1,
    });
  }
  return result;
}
