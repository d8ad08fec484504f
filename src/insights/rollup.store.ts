import { sql } from "kysely";
import { utcDayOf } from "../clock.js";
import { dialectOf, type Executor, holdWriteLock, type Trx } from "../db/database.js";
import { type Placeholder, perRowCount, preparedRaw } from "../db/prepared.js";
import type { Env, InsightDaysTable, ProductKind, TrialOutcome } from "../db/schema.js";
import { type ActiveDay, countInWindows } from "./windows.store.js";

// The writers of the Insights roll-ups (migration 031). Each is called in the transaction
// that writes the change it counts, so a figure never runs ahead of or behind its rows (the
// change's figures are pending until a fold, which every read runs first: migration 054).

export type Metric =
  | "gross_one_time"
  | "gross_subscription"
  | "refunds"
  | "earnings"
  | "new_customers"
  | "trials"
  | "trial_paid_within"
  | "trial_paid_after"
  | "grants"
  | "mrr"
  | "active_subscriptions"
  | "paying_people"
  | "mrr_new"
  | "mrr_expansion"
  | "mrr_contraction"
  | "mrr_churn"
  | "mrr_reactivation"
  | "active_people"
  | "active_people_7"
  | "active_people_30"
  | "active_devices";

export interface Bump {
  workspaceId: string;
  env: Env;
  metric: Metric;
  day: string;
  scope: string;
  currency?: string;
  planId?: string | null;
  value: number;
}

const DAY = 86_400_000;
export const productScope = (kind: ProductKind, id: string) => `${kind}:${id}`;
/** The scope of figures that count a person once over every tool. */
export const ALL_TOOLS = "*";
/** Counts per day that do not add up over days (distinct people or devices): no month row. */
export const DAILY_ONLY: ReadonlySet<string> = new Set<Metric>(["active_people", "active_people_7", "active_people_30", "active_devices"]);

// A figure's row: its key and the value to add ("day" holds the month for insight_months).
type FigureRow = Omit<InsightDaysTable, "day"> & { day: string };
const FIGURE_COLUMNS = 8;
const figureArgs = (r: FigureRow) => [r.workspace_id, r.env, r.metric, r.day, r.scope, r.currency, r.plan_id, r.value];

/** One upsert adding each row's value to its figure in `table`, the row's values from slot `from` on. */
function upsertFigures(table: "insight_days" | "insight_months", rows: number, p: Placeholder, from: number) {
  const at = sql.ref(table === "insight_days" ? "day" : "month");
  const values = Array.from({ length: rows }, (_, i) => {
    const slot = from + FIGURE_COLUMNS * i;
    return sql`(${sql.join(Array.from({ length: FIGURE_COLUMNS }, (_, c) => p(slot + c)))})`;
  });
  return sql`insert into ${sql.table(table)} (workspace_id, env, metric, ${at}, scope, currency, plan_id, value) values ${sql.join(values)}
  on conflict (workspace_id, env, metric, ${at}, scope, currency, plan_id) do update set value = ${sql.ref(`${table}.value`)} + excluded.value`;
}

// Prepared per number of day and month rows (src/db/prepared.ts): a grant or a sale adds
// one or a few figures, and building and compiling the upserts with Kysely at each change
// cost more than running them. On PostgreSQL the days and the months are one statement
// (the days' upsert a data-modifying WITH), one round trip the fewer while the change's
// rows are locked; SQLite cannot write in a WITH, and its statements cost no round trip.
const PREPARED_ROWS = 16;
/** Figure rows of one statement at most: eight parameters a row, far below either engine's bound. */
const FIGURE_ROWS_PER_STATEMENT = 1_000;
const upsertDays = perRowCount((days) => preparedRaw((p) => upsertFigures("insight_days", days, p, 0)));
const upsertMonths = perRowCount((months) => preparedRaw((p) => upsertFigures("insight_months", months, p, 0)));
const upsertDaysAndMonths = perRowCount((days) =>
  perRowCount((months) =>
    preparedRaw((p) => sql`with days as (${upsertFigures("insight_days", days, p, 0)}) ${upsertFigures("insight_months", months, p, FIGURE_COLUMNS * days)}`),
  ),
);

/** Each row's figures summed into one row per key, in key order, without the rows that add nothing. */
function summed(rows: Iterable<FigureRow>): FigureRow[] {
  const byKey = new Map<string, FigureRow>();
  for (const row of rows) {
    const key = JSON.stringify([row.workspace_id, row.env, row.metric, row.day, row.scope, row.currency, row.plan_id]);
    const held = byKey.get(key);
    if (held) held.value += row.value;
    else byKey.set(key, { ...row });
  }
  // Rows locked in one order by every writer, so that two changes adding to the same figures cannot deadlock on PostgreSQL.
  return [...byKey]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, row]) => row)
    .filter((row) => row.value !== 0);
}

/** A change's figure rows: one per figure (summed), in key order, without those that add nothing. */
function figureRows(rows: readonly Bump[]): FigureRow[] {
  return summed(
    rows.map((r) => ({
      workspace_id: r.workspaceId,
      env: r.env,
      metric: r.metric,
      day: r.day,
      scope: r.scope,
      currency: r.currency ?? "",
      plan_id: r.planId ?? "",
      value: r.value,
    })),
  );
}

/** One insert of `rows` figure rows into insight_pending, the values from slot 0 on. */
function pendingRows(rows: number, p: Placeholder) {
  const values = Array.from({ length: rows }, (_, i) => sql`(${sql.join(Array.from({ length: FIGURE_COLUMNS }, (_, c) => p(FIGURE_COLUMNS * i + c)))})`);
  return sql`insert into insight_pending (workspace_id, env, metric, day, scope, currency, plan_id, value) values ${sql.join(values)}`;
}
const appendPending = perRowCount((rows) => preparedRaw((p) => pendingRows(rows, p)));

/**
 * Adds each row's value to its figure, creating it at the value: by appending the change
 * to insight_pending (migration 054), which foldFigures adds to the figures, so that
 * concurrent changes never wait on each other's figure rows (PostgreSQL; SQLite takes the
 * same path, no slower).
 */
export async function bump(ex: Executor, rows: readonly Bump[]): Promise<void> {
  // One row per figure: fewer rows to append, and to add up at the fold.
  const days = figureRows(rows);
  if (days.length === 0) return;
  for (let i = 0; i < days.length; i += FIGURE_ROWS_PER_STATEMENT) {
    const part = days.slice(i, i + FIGURE_ROWS_PER_STATEMENT);
    const args = part.flatMap(figureArgs);
    // An import's batch: a statement of its own size, not worth keeping prepared.
    if (part.length > PREPARED_ROWS) await pendingRows(part.length, (j) => args[j] as never).execute(ex);
    else await appendPending(part.length)(ex, args);
  }
}

/**
 * Adds each row's value to its figure at once, in the caller's transaction, holding the
 * figure rows' locks until it ends: the access checks' flush (one writer a process, once a
 * second, its figures summed already).
 */
export async function addToFigures(ex: Executor, rows: readonly Bump[]): Promise<void> {
  await addFigures(ex, figureRows(rows));
}

/** Adds figure rows (summed, in key order) to their days and, for the additive ones, their months (migration 034). */
async function addFigures(ex: Executor, days: readonly FigureRow[]): Promise<void> {
  if (days.length === 0) return;
  // The month's row beside each day's, one per month like the days.
  const months = summed(days.filter((d) => !DAILY_ONLY.has(d.metric)).map((d) => ({ ...d, day: d.day.slice(0, 7) })));
  if (days.length > PREPARED_ROWS || months.length > PREPARED_ROWS) {
    // An import's batch or a fold: statements of their own size, not worth keeping prepared.
    // The months first, as the prepared statement below locks them on PostgreSQL (its main
    // upsert runs before the days' in its WITH): two writers adding to the same figures
    // must lock them in one order, or they can deadlock.
    await writeFigures(ex, "insight_months", months);
    await writeFigures(ex, "insight_days", days);
    return;
  }
  const args = [...days.flatMap(figureArgs), ...months.flatMap(figureArgs)];
  if (months.length === 0) await upsertDays(days.length)(ex, args);
  else if (dialectOf(ex) === "postgres") await upsertDaysAndMonths(days.length)(months.length)(ex, args);
  else {
    await upsertDays(days.length)(ex, args.slice(0, FIGURE_COLUMNS * days.length));
    await upsertMonths(months.length)(ex, args.slice(FIGURE_COLUMNS * days.length));
  }
}

async function writeFigures(ex: Executor, table: "insight_days" | "insight_months", rows: readonly FigureRow[]): Promise<void> {
  // In parts, so that a fold of many figures stays under the engines' bound on parameters; each part in key order after the last.
  for (let i = 0; i < rows.length; i += FIGURE_ROWS_PER_STATEMENT) {
    const args = rows.slice(i, i + FIGURE_ROWS_PER_STATEMENT).flatMap(figureArgs);
    await upsertFigures(table, args.length / FIGURE_COLUMNS, (j) => args[j] as never, 0).execute(ex);
  }
}

/** The fold's advisory lock on PostgreSQL: one fold at a time over every process. */
const FOLD_LOCK = 7_294_054;
/** Pending rows one transaction of SQLite's fold takes at most. */
const SQLITE_FOLD_ROWS = 5_000;

/**
 * Moves the figures' pending changes (migration 054) into the figures, in one transaction
 * (on SQLite one a part): each row is deleted by one fold only (on PostgreSQL they run one
 * at a time, under an advisory lock; SQLite has one writer), and a change's rows are there
 * once it committed, so a fold run after a change is read with it. Run once a second by `warden serve`
 * (fold.ts) and before every Insights read. Answers the figures changed.
 */
export async function foldFigures(ex: Executor): Promise<number> {
  // A look first: with nothing pending (most reads, an idle second) no transaction and no lock.
  const any = await sql`select 1 from insight_pending limit 1`.execute(ex);
  if (any.rows.length === 0) return 0;
  const inTransaction = <T>(run: (trx: Trx) => Promise<T>) => (ex.isTransaction ? run(ex as Trx) : ex.transaction().execute(run));
  if (dialectOf(ex) === "postgres") {
    return inTransaction(async (trx) => {
      await sql`select pg_advisory_xact_lock(${FOLD_LOCK})`.execute(trx);
      const { rows } = await sql<FigureRow>`with moved as (delete from insight_pending returning *)
        select workspace_id, env, metric, day, scope, currency, plan_id, sum(value) as value from moved
        group by workspace_id, env, metric, day, scope, currency, plan_id`.execute(trx);
      return addPending(trx, rows);
    });
  }
  // SQLite, in parts of rows, each its own transaction: after `warden admin import`, whose
  // customers triggers append a row or two a customer, a million rows pending would hold
  // the one writer's lock for all of them at once.
  let figures = 0;
  for (;;) {
    const part = await inTransaction(async (trx) => {
      // The lock first, so that what is summed is what is deleted.
      await holdWriteLock(trx);
      const last = await sql<{
        id: number | null;
      }>`select max(rowid) as id from (select rowid from insight_pending order by rowid limit ${SQLITE_FOLD_ROWS})`.execute(trx);
      const id = last.rows[0]?.id ?? null;
      if (id === null) return null;
      const { rows } = await sql<FigureRow>`select workspace_id, env, metric, day, scope, currency, plan_id, sum(value) as value from insight_pending
        where rowid <= ${id} group by workspace_id, env, metric, day, scope, currency, plan_id`.execute(trx);
      await sql`delete from insight_pending where rowid <= ${id}`.execute(trx);
      return addPending(trx, rows);
    });
    if (part === null) return figures;
    figures += part;
  }
}

/** Pending rows summed (per figure) added to the figures; answers the figures changed. */
async function addPending(trx: Executor, rows: readonly FigureRow[]): Promise<number> {
  const days = summed(rows.map((r) => ({ ...r, value: Number(r.value) })));
  await addFigures(trx, days);
  return days.length;
}

export interface Activity {
  workspaceId: string;
  env: Env;
  toolId: string;
  personId: string;
  deviceId: string;
  at: number;
}

const byBytes = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Rows of one multi-row statement of the flush at most: six parameters a row at most, far below SQLite's bound. */
const ROWS_PER_STATEMENT = 500;

const inParts = <T>(rows: readonly T[]): T[][] =>
  Array.from({ length: Math.ceil(rows.length / ROWS_PER_STATEMENT) }, (_, i) => rows.slice(i * ROWS_PER_STATEMENT, (i + 1) * ROWS_PER_STATEMENT));

/** Keys in byte order, so that every process writes the rows of one table in one order. */
function inKeyOrder<T>(rows: Iterable<T>, key: (row: T) => string): T[] {
  return [...rows]
    .map((row) => [key(row), row] as const)
    .sort(([a], [b]) => byBytes(a, b))
    .map(([, row]) => row);
}

const personDayKey = (d: ActiveDay) => `${d.workspaceId}\u0000${d.env}\u0000${d.scope}\u0000${d.personId}\u0000${d.day}`;
const personKey = (d: ActiveDay) => `${d.workspaceId}\u0000${d.env}\u0000${d.scope}\u0000${d.personId}`;

/**
 * Counts access checks (activity.ts notes them): a check counts only when it is its
 * device's first of its UTC day. Each step is a few multi-row statements for all the
 * checks (alone, nine statements a check made a day's first checks the slowest path of
 * all: bench/journal.md): the device-days inserted, those that were new; their person-days
 * (per tool and over all tools) inserted, those that were new; for those, the months'
 * counts, the last active days and the person's days around each; then the figures summed
 * into one write. Each insert decides across processes, as the insert of one row did.
 */
export async function recordActivities(ex: Executor, checks: readonly Activity[]): Promise<void> {
  // A device's first check of each day in the batch: the others change nothing.
  const firsts = new Map<string, Activity & { day: string }>();
  for (const a of [...checks].sort((x, y) => x.at - y.at)) {
    const day = utcDayOf(a.at);
    const key = `${a.deviceId}\u0000${day}`;
    if (!firsts.has(key)) firsts.set(key, { ...a, day });
  }
  const newDevices = await insertNewDeviceDays(
    ex,
    inKeyOrder(firsts.entries(), ([key]) => key).map(([, a]) => a),
  );
  if (newDevices.length === 0) return;
  const rows: Bump[] = newDevices.map((a) => ({
    workspaceId: a.workspaceId,
    env: a.env,
    metric: "active_devices",
    day: a.day,
    scope: `tool:${a.toolId}`,
    value: 1,
  }));
  const candidates = new Map<string, ActiveDay>();
  for (const a of newDevices) {
    for (const scope of [`tool:${a.toolId}`, ALL_TOOLS]) {
      const d: ActiveDay = { workspaceId: a.workspaceId, env: a.env, scope, personId: a.personId, day: a.day };
      candidates.set(personDayKey(d), d);
    }
  }
  const newDays = await insertNewActiveDays(ex, inKeyOrder(candidates.values(), personDayKey));
  if (newDays.length > 0) {
    await addActiveMonthDays(ex, newDays);
    await moveLastActiveDays(ex, newDays);
    rows.push(...(await windowFigures(ex, newDays)));
  }
  await addToFigures(ex, rows);
  await countInWindows(ex, newDays);
}

/** Inserts the checks' device-days (one per device and day, in key order); answers the checks whose day was new. */
async function insertNewDeviceDays<A extends Activity & { day: string }>(ex: Executor, firsts: readonly A[]): Promise<A[]> {
  const written = new Set<string>();
  for (const part of inParts(firsts)) {
    const rows = await ex
      .insertInto("insight_device_days")
      .values(part.map((a) => ({ device_id: a.deviceId, day: a.day })))
      .onConflict((oc) => oc.columns(["device_id", "day"]).doNothing())
      .returning(["device_id", "day"])
      .execute();
    for (const row of rows) written.add(`${row.device_id}\u0000${row.day}`);
  }
  return firsts.filter((a) => written.has(`${a.deviceId}\u0000${a.day}`));
}

/** Inserts the person-days (distinct, in key order); answers those that were new. */
async function insertNewActiveDays(ex: Executor, days: readonly ActiveDay[]): Promise<ActiveDay[]> {
  const written = new Set<string>();
  for (const part of inParts(days)) {
    const rows = await ex
      .insertInto("insight_active_days")
      .values(part.map((d) => ({ workspace_id: d.workspaceId, env: d.env, scope: d.scope, person_id: d.personId, day: d.day })))
      .onConflict((oc) => oc.columns(["workspace_id", "env", "scope", "person_id", "day"]).doNothing())
      .returning(["workspace_id", "env", "scope", "person_id", "day"])
      .execute();
    for (const r of rows) written.add(personDayKey({ workspaceId: r.workspace_id, env: r.env, scope: r.scope, personId: r.person_id, day: r.day }));
  }
  return days.filter((d) => written.has(personDayKey(d)));
}

/** Adds the new person-days to their people's months, one row per person and month. */
async function addActiveMonthDays(ex: Executor, days: readonly ActiveDay[]): Promise<void> {
  const months = new Map<string, { workspace_id: string; env: Env; scope: string; month: string; person_id: string; days: number }>();
  for (const d of days) {
    const month = d.day.slice(0, 7);
    const key = `${d.workspaceId}\u0000${d.env}\u0000${d.scope}\u0000${month}\u0000${d.personId}`;
    const held = months.get(key);
    if (held) held.days += 1;
    else months.set(key, { workspace_id: d.workspaceId, env: d.env, scope: d.scope, month, person_id: d.personId, days: 1 });
  }
  for (const part of inParts(inKeyOrder(months.entries(), ([key]) => key).map(([, row]) => row))) {
    await ex
      .insertInto("insight_active_months")
      .values(part)
      .onConflict((oc) =>
        oc.columns(["workspace_id", "env", "scope", "month", "person_id"]).doUpdateSet({ days: sql`insight_active_months.days + excluded.days` }),
      )
      .execute();
  }
}

/** Moves each person's last active day (per scope) to their newest new day, unless a later one is there. */
async function moveLastActiveDays(ex: Executor, days: readonly ActiveDay[]): Promise<void> {
  const newest = new Map<string, ActiveDay>();
  for (const d of days) {
    const held = newest.get(personKey(d));
    if (!held || held.day < d.day) newest.set(personKey(d), d);
  }
  for (const part of inParts(inKeyOrder(newest.values(), personKey))) {
    await ex
      .insertInto("insight_last_active")
      .values(part.map((d) => ({ workspace_id: d.workspaceId, env: d.env, scope: d.scope, person_id: d.personId, day: d.day })))
      .onConflict((oc) =>
        oc
          .columns(["workspace_id", "env", "scope", "person_id"])
          .doUpdateSet({ day: sql`excluded.day` })
          .where(sql<boolean>`insight_last_active.day < excluded.day`),
      )
      .execute();
  }
}

/**
 * The trailing 7 and 30-day windows that count the new person-days. Taken as if the days
 * came one by one, oldest first: a new day d adds one to each window ending on days
 * max(d, p + n) … min(d + n - 1, q - 1), with p the person's newest day before d (of
 * those already there, or new and older) and q the oldest after d of those already there
 * (a later check of an earlier day, from a process whose clock is behind, may find windows
 * already counted past d + n - 1). So each window counts a person once, whatever the days'
 * order.
 */
async function windowFigures(ex: Executor, days: readonly ActiveDay[]): Promise<Bump[]> {
  const groups = new Map<string, ActiveDay[]>();
  for (const d of days) groups.set(personKey(d), [...(groups.get(personKey(d)) ?? []), d]);
  const alone = [...groups.values()].filter((group) => group.length === 1).flat();
  // Alone in its group, a new day's nearest days are the ones already there.
  const around = await daysAround(ex, alone, []);
  // Several new days of one person and scope (checks on each side of a midnight): their
  // neighbours are read without the others, which come in by the order above.
  for (const group of groups.values()) {
    if (group.length === 1) continue;
    for (const [key, found] of await daysAround(
      ex,
      group,
      group.map((d) => d.day),
    ))
      around.set(key, found);
  }
  // Summed here, one row per figure: a day's first checks add the same days' windows for
  // every person (37 rows a person-day), and each of those rows cost bump() a key.
  const figures = new Map<string, Bump>();
  const dayText = new Map<number, string>();
  const add = (d: ActiveDay, metric: Metric, t: number) => {
    let day = dayText.get(t);
    if (day === undefined) {
      day = utcDayOf(t);
      dayText.set(t, day);
    }
    const key = `${d.workspaceId}\u0000${d.env}\u0000${d.scope}\u0000${metric}\u0000${day}`;
    const held = figures.get(key);
    if (held) held.value += 1;
    else figures.set(key, { workspaceId: d.workspaceId, env: d.env, metric, day, scope: d.scope, value: 1 });
  };
  for (const group of groups.values()) {
    let newer: string | null = null;
    for (const d of [...group].sort((x, y) => byBytes(x.day, y.day))) {
      const found = around.get(personDayKey(d));
      const before = [found?.before ?? null, newer].reduce<string | null>((m, day) => (day !== null && (m === null || day > m) ? day : m), null);
      const at = Date.parse(`${d.day}T00:00:00Z`);
      const p = before ? Date.parse(`${before}T00:00:00Z`) : Number.NEGATIVE_INFINITY;
      const q = found?.after ? Date.parse(`${found.after}T00:00:00Z`) : Number.POSITIVE_INFINITY;
      add(d, "active_people", at);
      for (const [metric, n] of [
        ["active_people_7", 7],
        ["active_people_30", 30],
      ] as const) {
        const last = Math.min(at + (n - 1) * DAY, q - DAY);
        for (let t = Math.max(at, p + n * DAY); t <= last; t += DAY) add(d, metric, t);
      }
      newer = d.day;
    }
  }
  return [...figures.values()];
}

/** Each person-day's nearest active days of its person and scope on either side, leaving out the days of `without`. */
async function daysAround(
  ex: Executor,
  days: readonly ActiveDay[],
  without: readonly string[],
): Promise<Map<string, { before: string | null; after: string | null }>> {
  const found = new Map<string, { before: string | null; after: string | null }>();
  const others = without.length > 0 ? sql`and a.day not in (${sql.join(without)})` : sql``;
  for (const part of inParts(days)) {
    const values = sql.join(part.map((d) => sql`(${d.workspaceId}, ${d.env}, ${d.scope}, ${d.personId}, ${d.day})`));
    // The person's days of the scope walked whole through the primary key, as one check's
    // read did: a nearest day taken with ORDER BY … LIMIT 1 let PostgreSQL walk the by-day
    // index across everyone's days instead.
    const { rows } = await sql<{ workspace_id: string; env: Env; scope: string; person_id: string; day: string; before: string | null; after: string | null }>`
with f (workspace_id, env, scope, person_id, day) as (values ${values})
select f.workspace_id, f.env, f.scope, f.person_id, f.day,
  max(case when a.day < f.day ${others} then a.day end) as before,
  min(case when a.day > f.day ${others} then a.day end) as after
from f left join insight_active_days as a
  on a.workspace_id = f.workspace_id and a.env = f.env and a.scope = f.scope and a.person_id = f.person_id
group by f.workspace_id, f.env, f.scope, f.person_id, f.day`.execute(ex);
    for (const r of rows) {
      found.set(personDayKey({ workspaceId: r.workspace_id, env: r.env, scope: r.scope, personId: r.person_id, day: r.day }), {
        before: r.before,
        after: r.after,
      });
    }
  }
  return found;
}

/** A subscription as MRR sees it. */
export interface SubscriptionFacts {
  workspaceId: string;
  env: Env;
  id: string;
  personId: string;
  productKind: ProductKind;
  productId: string;
  planId: string | null;
  status: string;
  endedAt: number | null;
  seats: number | null;
}

/** Statuses that bring money in: a trial has not paid yet, an unpaid or paused one has stopped. */
const PAYING = new Set(["active", "past_due"]);

/** A plan's recurring amount normalised to a month, times the seats; null for no recurring price. */
export function monthlyAmount(amountCents: number, interval: "month" | "year" | "week", seats: number | null): number {
  const perMonth = interval === "year" ? amountCents / 12 : interval === "week" ? (amountCents * 52) / 12 : amountCents;
  return Math.round(perMonth * Math.max(1, seats ?? 1));
}

/**
 * Moves MRR from what the subscription added before this change to what it adds now, on
 * the change's UTC day: new the first time it pays, reactivation when it pays again,
 * expansion or contraction when its amount changes while paying, churn when it stops.
 */
export async function recordSubscriptionMrr(ex: Executor, sub: SubscriptionFacts, at: number): Promise<void> {
  const plan = sub.planId
    ? await ex
        .selectFrom("plans")
        .select(["amount_cents", "currency", "interval"])
        .where("workspace_id", "=", sub.workspaceId)
        .where("product_kind", "=", sub.productKind)
        .where("product_id", "=", sub.productId)
        .where("id", "=", sub.planId)
        .executeTakeFirst()
    : undefined;
  const prior = await ex
    .selectFrom("insight_subscriptions")
    .select(["currency", "mrr", "contributed"])
    .where("workspace_id", "=", sub.workspaceId)
    .where("env", "=", sub.env)
    .where("subscription_id", "=", sub.id)
    .executeTakeFirst();
  const paying = PAYING.has(sub.status) && sub.endedAt === null && plan?.amount_cents != null && plan.interval !== null;
  const now = paying && plan?.amount_cents != null && plan.interval ? monthlyAmount(Number(plan.amount_cents), plan.interval, sub.seats) : 0;
  const was = prior ? Number(prior.mrr) : 0;
  const currency = plan?.currency ?? prior?.currency ?? "";
  const contributed = (prior?.contributed ?? 0) === 1 || now > 0;
  if (!prior) {
    await ex
      .insertInto("insight_subscriptions")
      .values({ workspace_id: sub.workspaceId, env: sub.env, subscription_id: sub.id, currency, mrr: now, contributed: contributed ? 1 : 0 })
      .execute();
  } else if (was !== now || prior.contributed !== (contributed ? 1 : 0)) {
    await ex
      .updateTable("insight_subscriptions")
      .set({ mrr: now, contributed: contributed ? 1 : 0 })
      .where("workspace_id", "=", sub.workspaceId)
      .where("env", "=", sub.env)
      .where("subscription_id", "=", sub.id)
      .execute();
  }
  if (was === now) return;
  const base = { workspaceId: sub.workspaceId, env: sub.env, day: utcDayOf(at), scope: productScope(sub.productKind, sub.productId), currency };
  const movement: Metric =
    was === 0 ? ((prior?.contributed ?? 0) === 1 ? "mrr_reactivation" : "mrr_new") : now === 0 ? "mrr_churn" : now > was ? "mrr_expansion" : "mrr_contraction";
  await bump(ex, [
    { ...base, metric: "mrr", value: now - was },
    { ...base, metric: movement, value: Math.abs(now - was) },
    { ...base, metric: "active_subscriptions", currency: "", value: (now > 0 ? 1 : 0) - (was > 0 ? 1 : 0) },
    ...(now > 0 === was > 0 ? [] : await payingPeopleMoves(ex, sub, base.day, currency, now > 0 ? 1 : -1)),
  ]);
}

/**
 * The paying people a subscription's start or stop of paying moves (docs/decisions.md,
 * Insights, "Revenue per paying customer"): the person counts once per currency under the
 * product's scope and under "*", so they move only when no other subscription of theirs
 * pays in that currency (for the product's scope: of that product). Called with the
 * subscription's own row already written, under the billing lock, so two changes of one
 * person never decide on the same state.
 */
async function payingPeopleMoves(ex: Executor, sub: SubscriptionFacts, day: string, currency: string, value: 1 | -1): Promise<Bump[]> {
  const others = await ex
    .selectFrom("subscriptions as s")
    .innerJoin("insight_subscriptions as i", (j) =>
      j.onRef("i.workspace_id", "=", "s.workspace_id").onRef("i.env", "=", "s.env").onRef("i.subscription_id", "=", "s.id"),
    )
    .select(["s.product_kind", "s.product_id"])
    .where("s.workspace_id", "=", sub.workspaceId)
    .where("s.env", "=", sub.env)
    .where("s.person_id", "=", sub.personId)
    .where("s.id", "!=", sub.id)
    .where("i.mrr", ">", 0)
    .where("i.currency", "=", currency)
    .execute();
  const base = { workspaceId: sub.workspaceId, env: sub.env, metric: "paying_people" as const, day, currency, value };
  const product = productScope(sub.productKind, sub.productId);
  return [
    ...(others.length === 0 ? [{ ...base, scope: ALL_TOOLS }] : []),
    ...(others.some((o) => productScope(o.product_kind, o.product_id) === product) ? [] : [{ ...base, scope: product }]),
  ];
}

/**
 * What a subscription's invoices paid, as subscription revenue on the day Stripe was paid
 * for each; and what the vendor earned of each where the processor said so (Paddle), as
 * earnings on the same day.
 */
export async function countSubscriptionRevenue(
  ex: Executor,
  sub: Pick<SubscriptionFacts, "workspaceId" | "env" | "productKind" | "productId" | "planId">,
  invoices: readonly { amountCents: number; currency: string; paidAt: number; earningsCents?: number | null }[],
): Promise<void> {
  await bump(
    ex,
    invoices.flatMap((p) => {
      const figure = {
        workspaceId: sub.workspaceId,
        env: sub.env,
        day: utcDayOf(p.paidAt),
        scope: productScope(sub.productKind, sub.productId),
        currency: p.currency,
        planId: sub.planId,
      };
      const earned = p.earningsCents == null ? [] : [{ ...figure, metric: "earnings" as const, value: p.earningsCents }];
      return [{ ...figure, metric: "gross_subscription" as const, value: p.amountCents }, ...earned];
    }),
  );
}

/**
 * What a refund or a chargeback took back of the vendor's earnings (negative: given back,
 * a chargeback reversed), as the processor said it (Paddle's adjustment), on the day the
 * processor made it, under the product the payment bought.
 */
export async function countEarningsTaken(
  ex: Executor,
  product: { workspaceId: string; env: Env; productKind: ProductKind; productId: string; planId: string | null },
  taken: { amountCents: number; currency: string; at: number },
): Promise<void> {
  await bump(ex, [
    {
      workspaceId: product.workspaceId,
      env: product.env,
      metric: "earnings",
      day: utcDayOf(taken.at),
      scope: productScope(product.productKind, product.productId),
      currency: taken.currency,
      planId: product.planId,
      value: -taken.amountCents,
    },
  ]);
}

/** What was refunded of a subscription's payments, as refunds on the day Stripe refunded each. */
export async function countSubscriptionRefunds(
  ex: Executor,
  sub: Pick<SubscriptionFacts, "workspaceId" | "env" | "productKind" | "productId" | "planId">,
  refunds: readonly { amountCents: number; currency: string; at: number }[],
): Promise<void> {
  await bump(
    ex,
    refunds.map((r) => ({
      workspaceId: sub.workspaceId,
      env: sub.env,
      metric: "refunds" as const,
      day: utcDayOf(r.at),
      scope: productScope(sub.productKind, sub.productId),
      currency: r.currency,
      planId: sub.planId,
      value: r.amountCents,
    })),
  );
}

/** How long after a trial's end a purchase still counts as its outcome. */
export const TRIAL_FOLLOW_UP = 30 * DAY;
/** People settled per statement (bind parameters stay well under either engine's limit). */
const SETTLE_BATCH = 500;

/** A purchase's first moment, within or after the trial, decides the trial; null when none counts. */
function outcomeOf(trial: { startsAt: number; endsAt: number | null }, firstAt: number | null): TrialOutcome | null {
  if (firstAt === null) return null;
  const end = trial.endsAt ?? trial.startsAt;
  return firstAt < end ? "within" : firstAt < end + TRIAL_FOLLOW_UP ? "after" : null;
}

/**
 * Decides the trials of these people from their purchases (licences with an amount,
 * subscriptions) and moves the trial outcome figures to match, on each trial's creation
 * day: called in the transaction that writes a trial or a purchase, so a trial counts at
 * most once, by its person's first purchase from the trial's start (an earlier purchase
 * written later moves it). Two outcomes per trial: of a product containing its tool (the
 * bundles' tools as they are at the purchase), under 'tool:<tool>'; of any product, under
 * ALL_TOOLS, as the page over every tool counts.
 */
export async function settleTrialOutcomes(ex: Executor, people: readonly { workspaceId: string; env: Env; personId: string }[]): Promise<void> {
  const groups = new Map<string, { workspaceId: string; env: Env; ids: Set<string> }>();
  for (const p of people) {
    const key = `${p.workspaceId} ${p.env}`;
    const g = groups.get(key) ?? { workspaceId: p.workspaceId, env: p.env, ids: new Set<string>() };
    g.ids.add(p.personId);
    groups.set(key, g);
  }
  for (const { workspaceId, env, ids } of groups.values()) {
    const all = [...ids];
    for (let i = 0; i < all.length; i += SETTLE_BATCH) await settleBatch(ex, workspaceId, env, all.slice(i, i + SETTLE_BATCH));
  }
}

async function settleBatch(ex: Executor, workspaceId: string, env: Env, personIds: string[]): Promise<void> {
  // By person alone (a person's id names one workspace and environment): with the workspace
  // and environment asked too, SQLite, which has no statistics, took grants_created for its
  // three equal columns and read every trial of the workspace on each purchase (12 ms a
  // Stripe sale at 10,000 customers; db/query-plans.test.ts).
  const trials = await ex
    .selectFrom("grants")
    .select(["id", "tool_id", "person_id", "starts_at", "ends_at", "created_at", "outcome", "outcome_any"])
    .where("person_id", "in", personIds)
    .where("kind", "=", "trial")
    .execute();
  if (trials.length === 0) return;
  const buyers = [...new Set(trials.map((t) => t.person_id))];
  const [licences, subscriptions, bundles] = await Promise.all([
    ex
      .selectFrom("licences")
      .select(["person_id", "product_kind", "product_id", "purchased_at as at"])
      .where("workspace_id", "=", workspaceId)
      .where("env", "=", env)
      .where("person_id", "in", buyers)
      .where("amount_cents", "is not", null)
      .execute(),
    ex
      .selectFrom("subscriptions")
      .select(["person_id", "product_kind", "product_id", "created_at as at"])
      .where("workspace_id", "=", workspaceId)
      .where("env", "=", env)
      .where("person_id", "in", buyers)
      .execute(),
    ex.selectFrom("bundle_tools").select(["bundle_id", "tool_id"]).where("workspace_id", "=", workspaceId).execute(),
  ]);
  const inBundle = new Set(bundles.map((b) => `${b.bundle_id} ${b.tool_id}`));
  const buys = [...licences, ...subscriptions].map((b) => ({ ...b, at: Number(b.at) }));
  const rows: Bump[] = [];
  const again = new Set<string>();
  for (const t of trials) {
    const trial = { startsAt: Number(t.starts_at), endsAt: t.ends_at === null ? null : Number(t.ends_at) };
    const mine = buys.filter((b) => b.person_id === t.person_id && b.at >= trial.startsAt);
    const first = (bs: typeof mine) => (bs.length === 0 ? null : Math.min(...bs.map((b) => b.at)));
    const forTool = mine.filter((b) => (b.product_kind === "tool" ? b.product_id === t.tool_id : inBundle.has(`${b.product_id} ${t.tool_id}`)));
    const outcome = outcomeOf(trial, first(forTool));
    const outcomeAny = outcomeOf(trial, first(mine));
    if (outcome === t.outcome && outcomeAny === t.outcome_any) continue;
    // Only from what was read: a transaction that decided the trial since (PostgreSQL, another
    // process's purchase) leaves nothing to update, and the person is decided again on what it wrote.
    const updated = await ex
      .updateTable("grants")
      .set({ outcome, outcome_any: outcomeAny })
      .where("id", "=", t.id)
      .where("outcome", t.outcome === null ? "is" : "=", t.outcome)
      .where("outcome_any", t.outcome_any === null ? "is" : "=", t.outcome_any)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) {
      again.add(t.person_id);
      continue;
    }
    const day = utcDayOf(Number(t.created_at));
    const move = (was: TrialOutcome | null, now: TrialOutcome | null, scope: string) => {
      if (was === now) return;
      if (was) rows.push({ workspaceId, env, metric: `trial_paid_${was}`, day, scope, value: -1 });
      if (now) rows.push({ workspaceId, env, metric: `trial_paid_${now}`, day, scope, value: 1 });
    };
    move(t.outcome, outcome, productScope("tool", t.tool_id));
    move(t.outcome_any, outcomeAny, ALL_TOOLS);
  }
  await bump(ex, rows);
  if (again.size > 0) await settleBatch(ex, workspaceId, env, [...again]);
}
