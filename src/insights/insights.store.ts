import { sql } from "kysely";
import { utcDayOf } from "../clock.js";
import { dialectOf, type Executor } from "../db/database.js";
import type { Env } from "../db/schema.js";
import { ALL_TOOLS, DAILY_ONLY, type Metric } from "./rollup.store.js";
import { activeAfter, type Span, spanOf, startOfWindow } from "./windows.store.js";

// The reads behind Insights: the roll-ups (migration 031) for every chart and trial
// outcomes, and, for the lists of people (at risk, most active unpaid), the rows
// themselves bounded by the workspace environment and the range.

export interface Scope {
  workspaceId: string;
  env: Env;
  /** The roll-up scopes to add up; null: every scope but "*". */
  scopes: string[] | null;
}

export interface Figure {
  metric: string;
  /** The day, or the month ('YYYY-MM') when read by month. */
  date: string;
  currency: string;
  value: number;
}

/** The scopes of a tool: its own and its bundles' (a bundle's sale counts for each tool in it). */
export async function scopesOfTool(ex: Executor, workspaceId: string, toolId: string): Promise<string[]> {
  const bundles = await ex.selectFrom("bundle_tools").select("bundle_id").where("workspace_id", "=", workspaceId).where("tool_id", "=", toolId).execute();
  return [`tool:${toolId}`, ...bundles.map((b) => `bundle:${b.bundle_id}`)];
}

const DAY = 86_400_000;
const dayMs = (day: string) => Date.parse(`${day}T00:00:00Z`);
/** The first day of the month `by` months after `month` ('YYYY-MM'), as a day. */
const monthStart = (month: string, by = 0) => {
  const d = new Date(`${month}-01T00:00:00Z`);
  return utcDayOf(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + by, 1));
};

/**
 * A range of days as the whole months in it (read from insight_months, first…last month)
 * and the days of its partial months around them (from insight_days).
 */
function monthsAndDays(from: string, to: string): { months: [string, string] | null; days: [string, string][] } {
  const first = from.endsWith("-01") ? from.slice(0, 7) : monthStart(from.slice(0, 7), 1).slice(0, 7);
  const last = utcDayOf(dayMs(to) + DAY).endsWith("-01") ? to.slice(0, 7) : monthStart(to.slice(0, 7), -1).slice(0, 7);
  if (first > last) return { months: null, days: [[from, to]] };
  const days: [string, string][] = [];
  if (from < `${first}-01`) days.push([from, utcDayOf(dayMs(`${first}-01`) - DAY)]);
  const after = monthStart(last, 1);
  if (after <= to) days.push([after, to]);
  return { months: [first, last], days };
}

type Period = { table: "insight_days" | "insight_months"; from: string; to: string };

/** The periods that make up from…to: days only, or whole months and the days around them (additive metrics only). */
function periods(metrics: readonly string[], from: string, to: string): Period[] {
  if (metrics.some((m) => DAILY_ONLY.has(m))) return [{ table: "insight_days", from, to }];
  const { months, days } = monthsAndDays(from, to);
  const out: Period[] = days.map(([a, b]) => ({ table: "insight_days", from: a, to: b }));
  if (months) out.push({ table: "insight_months", from: months[0], to: months[1] });
  return out;
}

/** Rows of insight_days or insight_months in a period, for these metrics and scopes; `at` is the day or month column. */
function rowsIn(ex: Executor, scope: Scope, metrics: readonly string[], p: Period) {
  const at = p.table === "insight_days" ? "day" : "month";
  let q = ex
    .selectFrom(p.table as "insight_days")
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("metric", "in", metrics)
    .where(at as "day", ">=", p.from)
    .where(at as "day", "<=", p.to);
  q = scope.scopes === null ? q.where("scope", "<>", ALL_TOOLS) : q.where("scope", "in", scope.scopes);
  return { q, at };
}

/**
 * The figures of these metrics over the scopes, days from…to, added up per day or per
 * month and currency; only those of these plans ("<kind>:<product>:<plan>") when given.
 */
export async function figures(
  ex: Executor,
  scope: Scope,
  metrics: readonly Metric[],
  from: string,
  to: string,
  by: "day" | "month",
  plans: readonly string[] | null = null,
): Promise<Figure[]> {
  if (plans !== null && plans.length === 0) return [];
  const parts = await Promise.all(
    (by === "day" ? [{ table: "insight_days" as const, from, to }] : periods(metrics, from, to)).map(async (p) => {
      const { q: all, at } = rowsIn(ex, scope, metrics, p);
      const q = plans === null ? all : all.where(sql<boolean>`(scope || ':' || plan_id) in (${sql.join(plans)})`);
      const date = by === "day" ? sql<string>`day` : sql<string>`substr(${sql.ref(at)}, 1, 7)`;
      const rows = await q
        .select(["metric", date.as("date"), "currency", (eb) => eb.fn.sum<number>("value").as("value")])
        .groupBy(["metric", date, "currency"])
        .execute();
      return rows.map((r) => ({ metric: r.metric, date: r.date, currency: r.currency, value: Number(r.value) }));
    }),
  );
  return parts.flat();
}

/** Revenue and refunds per product scope, plan and currency, days from…to. */
export async function planTotals(
  ex: Executor,
  scope: Scope,
  from: string,
  to: string,
): Promise<{ metric: string; scope: string; planId: string; currency: string; value: number }[]> {
  const metrics = ["gross_one_time", "gross_subscription", "refunds"];
  const parts = await Promise.all(
    periods(metrics, from, to).map((p) =>
      rowsIn(ex, scope, metrics, p)
        .q.where("plan_id", "<>", "")
        .select(["metric", "scope", "plan_id", "currency", (eb) => eb.fn.sum<number>("value").as("value")])
        .groupBy(["metric", "scope", "plan_id", "currency"])
        .execute(),
    ),
  );
  const by = new Map<string, { metric: string; scope: string; planId: string; currency: string; value: number }>();
  for (const r of parts.flat()) {
    const key = JSON.stringify([r.metric, r.scope, r.plan_id, r.currency]);
    const held = by.get(key) ?? { metric: r.metric, scope: r.scope, planId: r.plan_id, currency: r.currency, value: 0 };
    held.value += Number(r.value);
    by.set(key, held);
  }
  return [...by.values()];
}

/** The sum of these metrics' changes before a day, per metric and currency: a level (MRR, active count) at its start. */
export async function levelsBefore(
  ex: Executor,
  scope: Scope,
  metrics: readonly Metric[],
  before: string,
): Promise<{ metric: string; currency: string; value: number }[]> {
  // Every whole month before the day's month, then that month's days before it.
  const month = before.slice(0, 7);
  const parts = await Promise.all(
    [
      { table: "insight_months" as const, from: "", to: monthStart(month, -1).slice(0, 7) },
      { table: "insight_days" as const, from: `${month}-01`, to: utcDayOf(dayMs(before) - DAY) },
    ]
      .filter((p) => p.from <= p.to)
      .map((p) =>
        rowsIn(ex, scope, metrics, p)
          .q.select(["metric", "currency", (eb) => eb.fn.sum<number>("value").as("value")])
          .groupBy(["metric", "currency"])
          .execute(),
      ),
  );
  const by = new Map<string, { metric: string; currency: string; value: number }>();
  for (const r of parts.flat()) {
    const key = JSON.stringify([r.metric, r.currency]);
    const held = by.get(key) ?? { metric: r.metric, currency: r.currency, value: 0 };
    held.value += Number(r.value);
    by.set(key, held);
  }
  return [...by.values()];
}

/** The workspace's credit packs, as "<kind>:<product>:<plan>": plans whose terms add credits, for any tool. */
export async function packPlans(ex: Executor, workspaceId: string): Promise<string[]> {
  const rows = await ex
    .selectFrom("plan_terms")
    .select(["product_kind", "product_id", "plan_id"])
    .distinct()
    .where("workspace_id", "=", workspaceId)
    .where("credits", "<>", "{}")
    .execute();
  return rows.map((r) => `${r.product_kind}:${r.product_id}:${r.plan_id}`).sort();
}

/** The meters the tools declare (one tool's, or every tool's of the workspace), by tool then id. */
export async function metersOf(
  ex: Executor,
  workspaceId: string,
  toolId: string | null,
): Promise<{ toolId: string; id: string; name: string; unit: string }[]> {
  let q = ex.selectFrom("tool_meters").select(["tool_id", "id", "name", "unit"]).where("workspace_id", "=", workspaceId);
  if (toolId !== null) q = q.where("tool_id", "=", toolId);
  const rows = await q.execute();
  return rows
    .map((r) => ({ toolId: r.tool_id, id: r.id, name: r.name, unit: r.unit }))
    .sort((a, b) => (a.toolId < b.toolId ? -1 : a.toolId > b.toolId ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Units spent per tool, meter and day, days from…to (migration 044). */
export async function meterDays(
  ex: Executor,
  where: { workspaceId: string; env: Env; toolId: string | null },
  from: string,
  to: string,
): Promise<{ toolId: string; meterId: string; day: string; used: number }[]> {
  let q = ex
    .selectFrom("insight_meter_days")
    .select((eb) => ["tool_id", "meter_id", "day", eb.fn.sum<number>("used").as("used")])
    .where("workspace_id", "=", where.workspaceId)
    .where("env", "=", where.env)
    .where("day", ">=", from)
    .where("day", "<=", to);
  if (where.toolId !== null) q = q.where("tool_id", "=", where.toolId);
  // A day's figure is spread over rows (usage.store.ts, countMeterDay).
  const rows = await q.groupBy(["tool_id", "meter_id", "day"]).execute();
  return rows.map((r) => ({ toolId: r.tool_id, meterId: r.meter_id, day: r.day, used: Number(r.used) }));
}

export interface RunOut {
  personId: string;
  email: string;
  toolId: string;
  meterId: string;
  ranOutAt: number;
  resetsAt: number;
}

/** Allowances that ran out at or after `since` and before `until`, newest first (then by person), at most `limit`. */
export async function runOuts(
  ex: Executor,
  where: { workspaceId: string; env: Env; toolId: string | null },
  since: number,
  until: number,
  limit: number,
): Promise<RunOut[]> {
  let q = ex
    .selectFrom("allowance_runouts as r")
    .innerJoin("people as p", "p.id", "r.person_id")
    .select(["r.person_id", "p.email", "r.tool_id", "r.meter_id", "r.ran_out_at", "r.resets_at"])
    .where("r.workspace_id", "=", where.workspaceId)
    .where("r.env", "=", where.env)
    .where("r.ran_out_at", ">=", since)
    .where("r.ran_out_at", "<", until);
  if (where.toolId !== null) q = q.where("r.tool_id", "=", where.toolId);
  const rows = await q.orderBy("r.ran_out_at", "desc").orderBy(byteOrder(ex, "r.person_id")).orderBy("r.meter_id").orderBy("r.tool_id").limit(limit).execute();
  return rows.map((r) => ({
    personId: r.person_id,
    email: r.email,
    toolId: r.tool_id,
    meterId: r.meter_id,
    ranOutAt: Number(r.ran_out_at),
    resetsAt: Number(r.resets_at),
  }));
}

/** The names of the workspace's plans, by "<kind>:<product>:<plan>". */
export async function planNames(ex: Executor, workspaceId: string): Promise<Map<string, string>> {
  const rows = await ex.selectFrom("plans").select(["product_kind", "product_id", "id", "name"]).where("workspace_id", "=", workspaceId).execute();
  return new Map(rows.map((r) => [`${r.product_kind}:${r.product_id}:${r.id}`, r.name]));
}

const productIn = (scopes: string[] | null, kindCol: string, idCol: string) =>
  scopes === null ? sql<boolean>`1 = 1` : sql<boolean>`(${sql.ref(kindCol)} || ':' || ${sql.ref(idCol)}) in (${sql.join(scopes)})`;

/**
 * A person id compared in byte order, as the lists rank ties and as JavaScript compares
 * strings: SQLite's own; PostgreSQL's default collation may be a locale's (migration 034
 * gives the indexes walked this way the same "C" collation).
 */
const byteOrder = (ex: Executor, column: string) =>
  dialectOf(ex) === "postgres" ? sql<string>`${sql.ref(column)} collate "C"` : sql<string>`${sql.ref(column)}`;

/** Licence `l` pays in scope now (and was bought before `startedBefore`, when given). */
const licencePays = (scope: Scope, startedBefore: number | null = null) =>
  sql<boolean>`l.workspace_id = ${scope.workspaceId} and l.env = ${scope.env} and l.status = 'active' and l.amount_cents is not null
    and ${productIn(scope.scopes, "l.product_kind", "l.product_id")}${startedBefore === null ? sql`` : sql` and l.purchased_at < ${startedBefore}`}`;

/** Subscription `s` pays in scope now (and was created before `startedBefore`, when given). */
const subscriptionPays = (scope: Scope, startedBefore: number | null = null) =>
  sql<boolean>`s.workspace_id = ${scope.workspaceId} and s.env = ${scope.env} and s.status in ('active', 'past_due') and s.ended_at is null
    and ${productIn(scope.scopes, "s.product_kind", "s.product_id")}${startedBefore === null ? sql`` : sql` and s.created_at < ${startedBefore}`}`;

// Each side a subquery that stops at its first row, not an exists: PostgreSQL answered two
// exists joined by `or` by reading every subscription of the workspace into a hash first
// ("hashed SubPlan"; 30 of the 65 ms of the at-risk list at a million people), where the
// lists only ask it of the few people they walk (4.5 ms; bench/journal.md, 2026-11-27).
const paysIn = (scope: Scope, person: string, startedBefore: number | null = null) => sql<boolean>`((
    select 1 from licences l where l.person_id = ${sql.ref(person)} and ${licencePays(scope, startedBefore)} limit 1
  ) is not null or (
    select 1 from subscriptions s where s.person_id = ${sql.ref(person)} and ${subscriptionPays(scope, startedBefore)} limit 1
  ) is not null)`;

const licenceHolding = (scope: Scope, person: string) =>
  sql<string | null>`(select min(l.product_kind || ':' || l.product_id) from licences l where l.person_id = ${sql.ref(person)} and ${licencePays(scope)})`;
const subscriptionHolding = (scope: Scope, person: string) =>
  sql<
    string | null
  >`(select min(s.product_kind || ':' || s.product_id) from subscriptions s where s.person_id = ${sql.ref(person)} and ${subscriptionPays(scope)})`;

const lastActiveOf = (person: string) => sql<number | null>`(select max(d.last_active_at) from devices d where d.person_id = ${sql.ref(person)})`;

type Lapsed = { personId: string; email: string; lastActiveAt: number | null; holding: string };

/**
 * Paying people with no active day since `sinceDay` (at most `limit`), with the product
 * they pay for: first the lapsed ones, newest lapse first (insight_last_active walked down
 * its index from the cut-off until enough of them pay), then those never active, by person.
 * A payer is listed only once they have paid for 14 days (a holding bought before
 * `sinceDay`): who bought today has not had time to install it.
 */
export async function lapsedPayers(ex: Executor, scope: Scope, activityScope: string, sinceDay: string, limit: number): Promise<Lapsed[]> {
  const startedBefore = dayMs(sinceDay);
  const lapsed = await sql<{ person_id: string; email: string; last_active_at: number | null; holding: string }>`
    select la.person_id, pe.email, ${lastActiveOf("pe.id")} as last_active_at,
      coalesce(${licenceHolding(scope, "la.person_id")}, ${subscriptionHolding(scope, "la.person_id")}) as holding
    from insight_last_active la join people pe on pe.id = la.person_id
    where la.workspace_id = ${scope.workspaceId} and la.env = ${scope.env} and la.scope = ${activityScope} and la.day < ${sinceDay}
      and ${paysIn(scope, "la.person_id", startedBefore)}
    order by la.day desc, ${byteOrder(ex, "la.person_id")}
    limit ${limit}`.execute(ex);
  const found: Lapsed[] = lapsed.rows.map((r) => ({
    personId: r.person_id,
    email: r.email,
    lastActiveAt: r.last_active_at === null ? null : Number(r.last_active_at),
    holding: r.holding,
  }));
  if (found.length >= limit) return found;
  // Never active: each kind of holding walked in person order (licences_by_person,
  // subscriptions_by_person), so only as many payers are read as it takes to find the rest.
  const wanted = limit - found.length;
  const neverActive = (person: string) => sql<boolean>`not exists (select 1 from insight_last_active la where la.workspace_id = ${scope.workspaceId}
    and la.env = ${scope.env} and la.scope = ${activityScope} and la.person_id = ${sql.ref(person)})`;
  const [licensed, subscribed] = await Promise.all([
    sql<{ person_id: string }>`select distinct ${byteOrder(ex, "l.person_id")} as person_id from licences l
      where ${licencePays(scope, startedBefore)} and ${neverActive("l.person_id")} order by 1 limit ${wanted}`.execute(ex),
    sql<{ person_id: string }>`select distinct ${byteOrder(ex, "s.person_id")} as person_id from subscriptions s
      where ${subscriptionPays(scope, startedBefore)} and ${neverActive("s.person_id")} order by 1 limit ${wanted}`.execute(ex),
  ]);
  const ids = [...new Set([...licensed.rows, ...subscribed.rows].map((r) => r.person_id))].sort().slice(0, wanted);
  if (ids.length === 0) return found;
  const details = await sql<{ person_id: string; email: string; last_active_at: number | null; licence: string | null; subscription: string | null }>`
    select pe.id as person_id, pe.email, ${lastActiveOf("pe.id")} as last_active_at,
      ${licenceHolding(scope, "pe.id")} as licence, ${subscriptionHolding(scope, "pe.id")} as subscription
    from people pe where pe.id in (${sql.join(ids)})`.execute(ex);
  const byId = new Map(details.rows.map((r) => [r.person_id, r]));
  for (const id of ids) {
    const r = byId.get(id);
    if (!r) continue;
    const holdings = [r.licence, r.subscription].filter((h): h is string => h !== null).sort();
    found.push({ personId: id, email: r.email, lastActiveAt: r.last_active_at === null ? null : Number(r.last_active_at), holding: holdings[0] ?? "" });
  }
  return found;
}

/** The months a range touches, each with how many of the range's days fall in it. */
function monthsOf(from: string, to: string): { month: string; days: number }[] {
  const out: { month: string; days: number }[] = [];
  for (let m = from.slice(0, 7); m <= to.slice(0, 7); m = monthStart(m, 1).slice(0, 7)) {
    const start = `${m}-01` < from ? from : `${m}-01`;
    const monthEnd = utcDayOf(dayMs(monthStart(m, 1)) - DAY);
    const end = monthEnd < to ? monthEnd : to;
    out.push({ month: m, days: (dayMs(end) - dayMs(start)) / DAY + 1 });
  }
  return out;
}

type Ranked = { personId: string; days: number };
/** How the walk reads: rows per month's list at a time, and how many in all before counting instead (tests make both small). */
type Walk = { batch?: number; max?: number };
const ranksBefore = (a: Ranked, b: Ranked) => b.days - a.days || (a.personId < b.personId ? -1 : a.personId > b.personId ? 1 : 0);

/** Rows read from each month's list at a time. */
const BATCH = 128;
/** Past this many rows of the months' lists without a proof, counting the range's person-days is no dearer. */
const MAX_WALK = 8_192;

/**
 * The people who pay for nothing in scope with the most active days from…to (at most
 * `limit`; most days first, then by person): the same answer as grouping every
 * person-day of the range, found by walking each month's people from the most active
 * down (insight_active_months) and counting each one met exactly, until nobody not yet
 * met can rank among them. Who was not met has, in each month, at most the next value of
 * that month's list (and no more than the range's days in it): when the last of the list
 * has more days than that bound (or as many, and sorts first, see below), the list is
 * final. A walk that proves nothing by MAX_WALK rows (activity spread evenly over many
 * months) counts the range's person-days instead.
 */
async function topUnpaid(ex: Executor, scope: Scope, activityScope: string, from: string, to: string, limit: number, walk: Walk): Promise<Ranked[]> {
  const { batch = BATCH, max = MAX_WALK } = walk;
  const where = { workspaceId: scope.workspaceId, env: scope.env, scope: activityScope };
  const lists = monthsOf(from, to).map((m) => ({ ...m, next: [] as Ranked[], more: true, last: null as Ranked | null }));
  const person = byteOrder(ex, "person_id");
  const month = (m: string) =>
    ex
      .selectFrom("insight_active_months")
      .select(["person_id", "days"])
      .where("workspace_id", "=", where.workspaceId)
      .where("env", "=", where.env)
      .where("scope", "=", where.scope)
      .where("month", "=", m);
  // The next rows after the last read, as two ranges of the index (days desc, person): the
  // rest of the last one's days, then fewer days.
  const fill = async (l: (typeof lists)[number]) => {
    if (l.next.length > 0 || !l.more) return;
    const after = l.last;
    const rows: { person_id: string; days: number }[] = after
      ? await month(l.month).where("days", "=", after.days).where(person, ">", after.personId).orderBy(person).limit(batch).execute()
      : [];
    if (rows.length < batch) {
      let fewer = month(l.month);
      if (after) fewer = fewer.where("days", "<", after.days);
      rows.push(
        ...(await fewer
          .orderBy("days", "desc")
          .orderBy(person)
          .limit(batch - rows.length)
          .execute()),
      );
    }
    l.next = rows.map((r) => ({ personId: r.person_id, days: Number(r.days) }));
    l.more = rows.length === batch;
    l.last = l.next.at(-1) ?? l.last;
  };
  const seen = new Set<string>();
  let top: Ranked[] = [];
  let read = 0;
  for (;;) {
    await Promise.all(lists.map(fill));
    const live = lists.filter((l) => l.next.length > 0);
    const heads = live.map((l) => ({ head: l.next[0] as Ranked, rangeDays: l.days }));
    // Most active days anyone not met yet can have in the range.
    const bound = heads.reduce((s, h) => s + Math.min(h.head.days, h.rangeDays), 0);
    if (bound === 0) break;
    const kth = top.length >= limit ? (top[limit - 1] as Ranked) : null;
    if (kth && kth.days > bound) break;
    if (kth && kth.days === bound) {
      // To reach the bound, someone not met needs each list's next value where it is within the
      // range's days: they come at or after that list's next person, so after the greatest of them.
      const floors = heads.filter((h) => h.head.days <= h.rangeDays).map((h) => h.head.personId);
      if (floors.length > 0 && kth.personId < floors.reduce((a, b) => (a > b ? a : b))) break;
    }
    if (read >= max) return groupedTopUnpaid(ex, scope, activityScope, from, to, limit);
    const met = new Set<string>();
    for (const l of live) {
      read += l.next.length;
      for (const r of l.next) if (!seen.has(r.personId)) met.add(r.personId);
      l.next = [];
    }
    if (met.size === 0) continue;
    const ids = [...met];
    for (const id of ids) seen.add(id);
    const [counts, payers] = await Promise.all([
      ex
        .selectFrom("insight_active_days")
        .select(["person_id", (eb) => eb.fn.countAll<number>().as("days")])
        .where("workspace_id", "=", where.workspaceId)
        .where("env", "=", where.env)
        .where("scope", "=", where.scope)
        .where("person_id", "in", ids)
        // By each person's key, never the index by day: a planner that took that one read every person-day of the range.
        .where(sql`substr(day, 1, 10)`, ">=", from)
        .where(sql`substr(day, 1, 10)`, "<=", to)
        .groupBy("person_id")
        .execute(),
      sql<{ person_id: string }>`select l.person_id from licences l where l.person_id in (${sql.join(ids)}) and ${licencePays(scope)}
        union select s.person_id from subscriptions s where s.person_id in (${sql.join(ids)}) and ${subscriptionPays(scope)}`.execute(ex),
    ]);
    const paying = new Set(payers.rows.map((r) => r.person_id));
    for (const c of counts) if (!paying.has(c.person_id)) top.push({ personId: c.person_id, days: Number(c.days) });
    top = top.sort(ranksBefore).slice(0, limit);
  }
  return top;
}

/** The same list by grouping every person-day of the range. */
async function groupedTopUnpaid(ex: Executor, scope: Scope, activityScope: string, from: string, to: string, limit: number): Promise<Ranked[]> {
  const rows = await sql<{ person_id: string; days: number }>`
    select a.person_id, count(*) as days from insight_active_days a
    where a.workspace_id = ${scope.workspaceId} and a.env = ${scope.env} and a.scope = ${activityScope}
      and a.day >= ${from} and a.day <= ${to} and not ${paysIn(scope, "a.person_id")}
    group by a.person_id
    order by count(*) desc, ${byteOrder(ex, "a.person_id")}
    limit ${limit}`.execute(ex);
  return rows.rows.map((r) => ({ personId: r.person_id, days: Number(r.days) }));
}

/**
 * The same list for a range the windows keep (migration 036, windows.store.ts): read down
 * the window's index, most days first, passing over payers; null when the window does not
 * start where the range does yet (the job has not moved it) or someone has a day after it.
 */
export async function windowedTopUnpaid(
  ex: Executor,
  scope: Scope,
  activityScope: string,
  span: Span,
  from: string,
  to: string,
  limit: number,
): Promise<Ranked[] | null> {
  const key = { workspaceId: scope.workspaceId, env: scope.env, scope: activityScope, span };
  const [start, after] = await Promise.all([startOfWindow(ex, key), activeAfter(ex, scope.workspaceId, scope.env, activityScope, to)]);
  if (start !== from || after) return null;
  const rows = await sql<{ person_id: string; days: number }>`
    select w.person_id, w.days from insight_active_windows w
    where w.workspace_id = ${scope.workspaceId} and w.env = ${scope.env} and w.scope = ${activityScope} and w.span = ${span}
      and not ${paysIn(scope, "w.person_id")}
    order by w.days desc, ${byteOrder(ex, "w.person_id")}
    limit ${limit}`.execute(ex);
  return rows.rows.map((r) => ({ personId: r.person_id, days: Number(r.days) }));
}

/**
 * People who pay for nothing in the scope with the most active days from…to (at most
 * `limit`), and whether a trial or grant gave them access. A range that ends `today` and
 * starts where one of the page's spans does is read from its window when the window is
 * there; any other, from the months (the same answer either way).
 */
export async function mostActiveUnpaid(
  ex: Executor,
  scope: Scope,
  activityScope: string,
  toolId: string | null,
  from: string,
  to: string,
  limit: number,
  today: string | null,
  walk: Walk = {},
): Promise<{ personId: string; email: string; activeDays: number; source: "trial" | "grant" | "free" }[]> {
  const span = today === null ? null : spanOf(from, to, today);
  const windowed = span === null ? null : await windowedTopUnpaid(ex, scope, activityScope, span, from, to, limit);
  const top = windowed ?? (await topUnpaid(ex, scope, activityScope, from, to, limit, walk));
  if (top.length === 0) return [];
  const toolFilter = toolId === null ? sql`` : sql`and g.tool_id = ${toolId}`;
  const rows = await sql<{ person_id: string; email: string; trial: number; grant: number }>`
    select pe.id as person_id, pe.email,
      coalesce(max(case when g.kind = 'trial' then 1 else 0 end), 0) as trial,
      coalesce(max(case when g.kind = 'grant' then 1 else 0 end), 0) as ${sql.ref("grant")}
    from people pe
    left join grants g on g.workspace_id = ${scope.workspaceId} and g.env = ${scope.env} and g.person_id = pe.id ${toolFilter}
    where pe.id in (${sql.join(top.map((t) => t.personId))})
    group by pe.id, pe.email`.execute(ex);
  const byId = new Map(rows.rows.map((r) => [r.person_id, r]));
  return top.flatMap((t) => {
    const r = byId.get(t.personId);
    if (!r) return [];
    const source = Number(r.trial) === 1 ? "trial" : Number(r.grant) === 1 ? "grant" : "free";
    return [{ personId: t.personId, email: r.email, activeDays: t.days, source: source as "trial" | "grant" | "free" }];
  });
}
