import { type RawBuilder, sql } from "kysely";
import type { Dialect, Executor } from "../db/database.js";
import { perRowCount, prepared, preparedRaw } from "../db/prepared.js";

export interface CounterState {
  count: number;
  /** Epoch milliseconds at which the current window closes. */
  windowEnd: number;
}

/** One counter to add to: its scope, and where a window opened now would close. */
export interface CounterIncrement {
  scope: string;
  nextWindowEnd: number;
}

/** One counter to add to, with its own amount (a batch adds several requests' counts in one row). */
export interface CounterAddition extends CounterIncrement {
  by: number;
}

/**
 * Adds to several windowed counters in one statement (arguments: now, then scope, next
 * window end and amount for each). A window that has closed restarts at the amount. The
 * upsert locks the rows until the surrounding transaction ends, so counts are exact
 * across processes, and a rolled-back transaction takes its increments with it.
 */
// Statements are prepared per number of counters (one to a few: a key, a workspace, its owners).
const upsertCounters = perRowCount((rows) =>
  prepared((ex, p) =>
    ex
      .insertInto("counters")
      .values(Array.from({ length: rows }, (_, i) => ({ scope: p<string>(1 + 3 * i), window_end: p<number>(2 + 3 * i), count: p<number>(3 + 3 * i) })))
      .onConflict((oc) =>
        oc.column("scope").doUpdateSet({
          count: sql<number>`case when counters.window_end <= ${p<number>(0)} then excluded.count else counters.count + excluded.count end`,
          window_end: sql<number>`case when counters.window_end <= ${p<number>(0)} then excluded.window_end else counters.window_end end`,
        }),
      )
      .returning(["scope", "count", "window_end"]),
  ),
);

const REFUSED_MARK = "warden:over-limit";

/**
 * PostgreSQL, outside any transaction: the same upsert as one statement that is its own
 * transaction (arguments: now, then scope, next window end, limit and amount for each).
 * All or nothing: when a counter would pass its limit, the statement fails on purpose
 * (a cast of REFUSED_MARK that only a row over its limit evaluates), so PostgreSQL
 * undoes every increment of it; concurrent statements wait on the row locks and then see
 * the counts as they were. Its commit does not wait for the WAL flush (set_config local
 * to the statement's transaction): every process sees the count at once, so limits stay
 * exact; only a crash of the database server could forget the last milliseconds of counts.
 */
const upsertCountersAlone = perRowCount((rows) =>
  preparedRaw<{ scope: string; count: number; window_end: number }>((p) => {
    const values = Array.from(
      { length: rows },
      (_, i) => sql`(${p<string>(1 + 4 * i)}::text, ${p<number>(2 + 4 * i)}::bigint, ${p<number>(3 + 4 * i)}::bigint, ${p<number>(4 + 4 * i)}::bigint)`,
    );
    const now = sql`${p<number>(0)}::bigint`;
    return sql`with v (scope, window_end, lim, by) as (values ${sql.join(values)}),
up as (
  insert into counters (scope, window_end, count)
  select scope, window_end, by from v order by scope
  on conflict (scope) do update set
    count = case when counters.window_end <= ${now} then excluded.count else counters.count + excluded.count end,
    window_end = case when counters.window_end <= ${now} then excluded.window_end else counters.window_end end
  returning scope, count, window_end
)
select up.scope, up.count, up.window_end,
  set_config('synchronous_commit', 'off', true) as commit_mode,
  case when up.count > v.lim then (${sql.lit(`${REFUSED_MARK}:`)} || up.scope)::bigint end as refused
from up join v on v.scope = up.scope`;
  }),
);

/** True for the failure `upsertCountersAlone` raises on purpose. */
function isRefusal(error: unknown): boolean {
  return error instanceof Error && (error as Error & { code?: unknown }).code === "22P02" && error.message.includes(REFUSED_MARK);
}

// Rows are locked in scope order, the same in every statement, so that two statements
// counting overlapping scopes (two workspaces of one owner) cannot deadlock.
const byScope = <T extends { scope: string }>(a: T, b: T) => (a.scope < b.scope ? -1 : a.scope > b.scope ? 1 : 0);

function statesInOrder(increments: readonly { scope: string }[], rows: { scope: string; count: number; window_end: number }[]): CounterState[] {
  const byScopeRow = new Map(rows.map((r) => [r.scope, r]));
  return increments.map(({ scope }) => {
    const row = byScopeRow.get(scope);
    if (!row) throw new Error(`counter ${scope} was not written`);
    return { count: Number(row.count), windowEnd: Number(row.window_end) };
  });
}

async function addEach(ex: Executor, additions: readonly CounterAddition[], now: number): Promise<CounterState[]> {
  const sorted = [...additions].sort(byScope);
  const rows = await upsertCounters(sorted.length)(ex, [now, ...sorted.flatMap((c) => [c.scope, c.nextWindowEnd, c.by])]);
  return statesInOrder(additions, rows);
}

/** Adds `by` to each counter in one statement; answers their new states in the order given. */
function incrementCounters(ex: Executor, increments: readonly CounterIncrement[], by: number, now: number): Promise<CounterState[]> {
  return addEach(
    ex,
    increments.map((c) => ({ ...c, by })),
    now,
  );
}

/**
 * What `incrementCountersWithin` did: counted (`refused` false, the new states), or
 * refused and counted nothing, with the states when it saw them (null when the refusing
 * statement undid itself before answering).
 */
export interface CountOutcome {
  refused: boolean;
  states: CounterState[] | null;
}

/** A counter to add to unless it would pass its limit. */
export interface LimitedAddition extends CounterAddition {
  limit: number;
}

/**
 * Adds to each counter its amount unless one would pass its limit, in which case nothing
 * is added. Outside a transaction: one statement on PostgreSQL, a short transaction on
 * SQLite (in process, where a statement costs microseconds).
 */
export async function addEachWithin(ex: Executor, dialect: Dialect, additions: readonly LimitedAddition[], now: number): Promise<CountOutcome> {
  const outcome = (states: CounterState[]): CountOutcome => ({
    refused: states.some((state, i) => state.count > (additions[i]?.limit ?? 0)),
    states,
  });
  // In a caller's transaction, the caller's refusal rolls the increments back. One
  // counter raised by one on SQLite needs no transaction: a refused increment adds to a
  // count already at its limit, which uses no quota that another request could have had.
  // Not so for more than one (a batch of requests merged into one addition): refused, it
  // would keep its whole amount, and the requests counted again one by one found the
  // count already past the limit (50 concurrent requests on a key with room for 25: none
  // got through).
  if (ex.isTransaction || (dialect === "sqlite" && additions.length === 1 && additions[0]?.by === 1)) {
    return outcome(await addEach(ex, additions, now));
  }
  if (dialect === "sqlite") {
    let refused: CountOutcome | null = null;
    try {
      return await ex.transaction().execute(async (trx) => {
        const counted = outcome(await addEach(trx, additions, now));
        if (!counted.refused) return counted;
        refused = counted;
        throw new RefusedInTransaction();
      });
    } catch (error) {
      if (error instanceof RefusedInTransaction && refused) return refused;
      throw error;
    }
  }
  const sorted = [...additions].sort(byScope);
  try {
    const rows = await upsertCountersAlone(sorted.length)(ex, [now, ...sorted.flatMap((c) => [c.scope, c.nextWindowEnd, c.limit, c.by])]);
    return { refused: false, states: statesInOrder(additions, rows) };
  } catch (error) {
    if (isRefusal(error)) return { refused: true, states: null };
    throw error;
  }
}

class RefusedInTransaction extends Error {}

/**
 * Adds `by` to each counter with no limit to check (wrong keys, rows read), as one
 * statement that is its own transaction; on PostgreSQL its commit does not wait for the
 * WAL flush either (see upsertCountersAlone).
 */
export async function addToCounters(ex: Executor, dialect: Dialect, increments: readonly CounterIncrement[], by: number, now: number): Promise<CounterState[]> {
  if (ex.isTransaction || dialect === "sqlite") return incrementCounters(ex, increments, by, now);
  const sorted = [...increments].sort(byScope);
  const rows = await upsertCountersAlone(sorted.length)(ex, [now, ...sorted.flatMap((c) => [c.scope, c.nextWindowEnd, Number.MAX_SAFE_INTEGER, by])]);
  return statesInOrder(increments, rows);
}

/**
 * Adds to each counter its own amount with no limit to check (counts held in memory
 * while the storage was full: limits.held-counts.ts), as one statement that is its own
 * transaction, all or nothing.
 */
export async function addCounts(ex: Executor, dialect: Dialect, additions: readonly CounterAddition[], now: number): Promise<void> {
  if (ex.isTransaction || dialect === "sqlite") {
    await addEach(ex, additions, now);
    return;
  }
  const sorted = [...additions].sort(byScope);
  await upsertCountersAlone(sorted.length)(ex, [now, ...sorted.flatMap((c) => [c.scope, c.nextWindowEnd, Number.MAX_SAFE_INTEGER, c.by])]);
}

/** Reads a counter without changing it; a closed window reads as zero. */
const selectCounter = prepared((ex, p) => ex.selectFrom("counters").select(["count", "window_end"]).where("scope", "=", p<string>(0)));

export async function readCounter(ex: Executor, scope: string, now: number): Promise<CounterState> {
  const [row] = await selectCounter(ex, [scope]);
  if (!row || Number(row.window_end) <= now) return { count: 0, windowEnd: now };
  return { count: Number(row.count), windowEnd: Number(row.window_end) };
}

/** Counters as stored, closed windows included (what a window's end says of the past), by scope. */
export async function readStoredCounters(ex: Executor, scopes: readonly string[]): Promise<Map<string, CounterState>> {
  if (scopes.length === 0) return new Map();
  const rows = await ex.selectFrom("counters").select(["scope", "count", "window_end"]).where("scope", "in", scopes).execute();
  return new Map(rows.map((row) => [row.scope, { count: Number(row.count), windowEnd: Number(row.window_end) }]));
}

/**
 * The wrong-key counters (`wrong-keys:<address>`) that reached `atLeast` in a minute still
 * open, at most `limit` of them, by the partial index of migration 048 (its predicate is
 * the literal below, so the planner sees the query implies it on both engines).
 */
export async function readWrongKeyCountersReaching(ex: Executor, atLeast: number, now: number, limit: number): Promise<Map<string, CounterState>> {
  const rows = await ex
    .selectFrom("counters")
    .select(["scope", "count", "window_end"])
    .where(sql<boolean>`scope like 'wrong-keys:%'`)
    .where("window_end", ">", now)
    .where("count", ">=", atLeast)
    .limit(limit)
    .execute();
  return new Map(rows.map((row) => [row.scope, { count: Number(row.count), windowEnd: Number(row.window_end) }]));
}

/** Sets a counter to one for a window ending at `windowEnd` (a wait: refused while it is open). */
export async function setCounterWindow(ex: Executor, scope: string, windowEnd: number): Promise<void> {
  await ex
    .insertInto("counters")
    .values({ scope, window_end: windowEnd, count: 1 })
    .onConflict((oc) => oc.column("scope").doUpdateSet({ window_end: windowEnd, count: 1 }))
    .execute();
}

export async function deleteCounter(ex: Executor, scope: string): Promise<void> {
  await ex.deleteFrom("counters").where("scope", "=", scope).execute();
}

/** A block of a counter's quota to lease (limits/quota-leases.ts). */
export interface BlockRequest {
  scope: string;
  nextWindowEnd: number;
  limit: number;
  /** What the requests waiting for it need at least. */
  demand: number;
  /** The largest block. */
  maxBlock: number;
  /** What is left is split by this (twice the processes seen taking from the counter). */
  divisor: number;
  /** This process's bit among the counter's takers. */
  bit: number;
}

/** What a take did: the units it leased (0 when nothing was left), and the counter after it. */
export interface Taken {
  taken: number;
  count: number;
  windowEnd: number;
  takers: number;
}

/**
 * Leases a block as one upsert (arguments: now, scope, next window end, limit, demand,
 * largest block, divisor, bit). From what is left in the window (the limit less every
 * block taken and not given back) it takes the demand or a block of what is left divided
 * by the divisor (at least one, at most the largest block), whichever is more, and never
 * more than is left: the row's lock makes that exact across processes. A window that has
 * closed restarts with the block. The block's size is kept in `last_take`: RETURNING
 * sees only the row after the update.
 */
function blockTake(dialect: Dialect) {
  const [least, greatest] = dialect === "postgres" ? [sql.raw("least"), sql.raw("greatest")] : [sql.raw("min"), sql.raw("max")];
  const int = (value: RawBuilder<unknown>) => (dialect === "postgres" ? sql`${value}::bigint` : sql`cast(${value} as integer)`);
  return preparedRaw<{ count: number; window_end: number; takers: number; last_take: number }>((p) => {
    const [now, windowEnd, limit, demand, maxBlock, divisor, bit] = [0, 2, 3, 4, 5, 6, 7].map((i) => int(sql`${p<number>(i)}`));
    const take = (count: RawBuilder<unknown>) =>
      int(
        sql`${greatest}(0, ${least}(${limit} - ${count}, ${greatest}(${demand}, ${least}(${maxBlock}, ${greatest}(1, ${int(sql`(${limit} - ${count}) / ${divisor}`)})))))`,
      );
    const closed = sql`counters.window_end <= ${now}`;
    const upsert = sql`insert into counters (scope, window_end, count, takers, last_take)
  values (${p<string>(1)}, ${windowEnd}, ${take(sql`0`)}, ${bit}, ${take(sql`0`)})
  on conflict (scope) do update set
    count = case when ${closed} then excluded.count else counters.count + ${take(sql`counters.count`)} end,
    last_take = case when ${closed} then excluded.count else ${take(sql`counters.count`)} end,
    takers = case when ${closed} then excluded.takers else counters.takers | excluded.takers end,
    window_end = case when ${closed} then excluded.window_end else counters.window_end end
  returning count, window_end, takers, last_take`;
    // Its own transaction on PostgreSQL, committed without waiting for the WAL flush, as upsertCountersAlone.
    if (dialect === "postgres") return sql`with up as (${upsert}) select up.*, set_config('synchronous_commit', 'off', true) as commit_mode from up`;
    return upsert as RawBuilder<{ count: number; window_end: number; takers: number; last_take: number }>;
  });
}

const blockTakes = { sqlite: blockTake("sqlite"), postgres: blockTake("postgres") };

export async function takeBlock(ex: Executor, dialect: Dialect, block: BlockRequest, now: number): Promise<Taken> {
  const [row] = await blockTakes[dialect](ex, [now, block.scope, block.nextWindowEnd, block.limit, block.demand, block.maxBlock, block.divisor, block.bit]);
  if (!row) throw new Error(`counter ${block.scope} was not written`);
  return { taken: Number(row.last_take), count: Number(row.count), windowEnd: Number(row.window_end), takers: Number(row.takers) };
}

/** Gives back units of a block not spent, if the window they were taken in is still the counter's. */
export async function returnBlock(ex: Executor, scope: string, windowEnd: number, units: number): Promise<void> {
  await ex
    .updateTable("counters")
    .set({ count: sql<number>`count - ${units}` })
    .where("scope", "=", scope)
    .where("window_end", "=", windowEnd)
    .execute();
}
