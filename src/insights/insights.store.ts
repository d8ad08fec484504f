import { sql } from "kysely";
import type { Executor } from "../db/database.js";
import type { Env } from "../db/schema.js";
import { ALL_TOOLS, type Metric } from "./rollup.store.js";

// The reads behind Insights: the roll-ups (migration 031) for every chart, and, for the
// lists of people (at risk, most active unpaid) and trial outcomes, the rows themselves
// bounded by the workspace environment and the range.

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

/** The figures of these metrics over the scopes, days from…to, added up per day or per month and currency. */
export async function figures(ex: Executor, scope: Scope, metrics: readonly Metric[], from: string, to: string, by: "day" | "month"): Promise<Figure[]> {
  const date = by === "day" ? sql<string>`day` : sql<string>`substr(day, 1, 7)`;
  let q = ex
    .selectFrom("insight_days")
    .select(["metric", date.as("date"), "currency", (eb) => eb.fn.sum<number>("value").as("value")])
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("metric", "in", metrics)
    .where("day", ">=", from)
    .where("day", "<=", to);
  q = scope.scopes === null ? q.where("scope", "<>", ALL_TOOLS) : q.where("scope", "in", scope.scopes);
  const rows = await q.groupBy(["metric", date, "currency"]).execute();
  return rows.map((r) => ({ metric: r.metric, date: r.date, currency: r.currency, value: Number(r.value) }));
}

/** Revenue and refunds per product scope, plan and currency, days from…to. */
export async function planTotals(
  ex: Executor,
  scope: Scope,
  from: string,
  to: string,
): Promise<{ metric: string; scope: string; planId: string; currency: string; value: number }[]> {
  let q = ex
    .selectFrom("insight_days")
    .select(["metric", "scope", "plan_id", "currency", (eb) => eb.fn.sum<number>("value").as("value")])
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("metric", "in", ["gross_one_time", "gross_subscription", "refunds"])
    .where("day", ">=", from)
    .where("day", "<=", to)
    .where("plan_id", "<>", "");
  q = scope.scopes === null ? q.where("scope", "<>", ALL_TOOLS) : q.where("scope", "in", scope.scopes);
  const rows = await q.groupBy(["metric", "scope", "plan_id", "currency"]).execute();
  return rows.map((r) => ({ metric: r.metric, scope: r.scope, planId: r.plan_id, currency: r.currency, value: Number(r.value) }));
}

/** The sum of these metrics' changes before a day, per metric and currency: a level (MRR, active count) at its start. */
export async function levelsBefore(
  ex: Executor,
  scope: Scope,
  metrics: readonly Metric[],
  before: string,
): Promise<{ metric: string; currency: string; value: number }[]> {
  let q = ex
    .selectFrom("insight_days")
    .select(["metric", "currency", (eb) => eb.fn.sum<number>("value").as("value")])
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("metric", "in", metrics)
    .where("day", "<", before);
  q = scope.scopes === null ? q.where("scope", "<>", ALL_TOOLS) : q.where("scope", "in", scope.scopes);
  const rows = await q.groupBy(["metric", "currency"]).execute();
  return rows.map((r) => ({ metric: r.metric, currency: r.currency, value: Number(r.value) }));
}

/** The names of the workspace's plans, by "<kind>:<product>:<plan>". */
export async function planNames(ex: Executor, workspaceId: string): Promise<Map<string, string>> {
  const rows = await ex.selectFrom("plans").select(["product_kind", "product_id", "id", "name"]).where("workspace_id", "=", workspaceId).execute();
  return new Map(rows.map((r) => [`${r.product_kind}:${r.product_id}:${r.id}`, r.name]));
}

const productIn = (scopes: string[] | null, kindCol: string, idCol: string) =>
  scopes === null ? sql<boolean>`1 = 1` : sql<boolean>`(${sql.ref(kindCol)} || ':' || ${sql.ref(idCol)}) in (${sql.join(scopes)})`;

/** Trials started in the range (by their creation) and whether their person bought the tool within the trial, or within 30 days after. */
export async function trialOutcomes(
  ex: Executor,
  scope: Scope,
  toolId: string | null,
  fromMs: number,
  toMs: number,
): Promise<{ started: number; paidWithinTrial: number; paidWithin30DaysAfter: number }> {
  const thirty = 30 * 86_400_000;
  const bought = (lo: string, hi: string) => sql<number>`case when exists (
      select 1 from licences l where l.workspace_id = g.workspace_id and l.env = g.env and l.person_id = g.person_id
        and l.amount_cents is not null and ${productIn(scope.scopes, "l.product_kind", "l.product_id")}
        and l.purchased_at >= ${sql.raw(lo)} and l.purchased_at < ${sql.raw(hi)}
    ) or exists (
      select 1 from subscriptions s where s.workspace_id = g.workspace_id and s.env = g.env and s.person_id = g.person_id
        and ${productIn(scope.scopes, "s.product_kind", "s.product_id")}
        and s.created_at >= ${sql.raw(lo)} and s.created_at < ${sql.raw(hi)}
    ) then 1 else 0 end`;
  const end = "coalesce(g.ends_at, g.starts_at)";
  let q = ex
    .selectFrom("grants as g")
    .select([
      (eb) => eb.fn.countAll<number>().as("started"),
      sql<number>`coalesce(sum(${bought("g.starts_at", end)}), 0)`.as("within"),
      sql<number>`coalesce(sum(${bought(end, `${end} + ${thirty}`)}), 0)`.as("after"),
    ])
    .where("g.workspace_id", "=", scope.workspaceId)
    .where("g.env", "=", scope.env)
    .where("g.kind", "=", "trial")
    .where("g.created_at", ">=", fromMs)
    .where("g.created_at", "<", toMs);
  if (toolId !== null) q = q.where("g.tool_id", "=", toolId);
  const r = await q.executeTakeFirstOrThrow();
  return { started: Number(r.started), paidWithinTrial: Number(r.within), paidWithin30DaysAfter: Number(r.after) };
}

const payingPeople = (scope: Scope) => sql`(
    select person_id, product_kind || ':' || product_id as product from licences
      where workspace_id = ${scope.workspaceId} and env = ${scope.env} and status = 'active' and amount_cents is not null
        and ${productIn(scope.scopes, "product_kind", "product_id")}
    union
    select person_id, product_kind || ':' || product_id as product from subscriptions
      where workspace_id = ${scope.workspaceId} and env = ${scope.env} and status in ('active', 'past_due') and ended_at is null
        and ${productIn(scope.scopes, "product_kind", "product_id")}
  )`;

const paysIn = (scope: Scope, person: string) => sql<boolean>`(exists (
    select 1 from licences l where l.person_id = ${sql.ref(person)} and l.workspace_id = ${scope.workspaceId} and l.env = ${scope.env}
      and l.status = 'active' and l.amount_cents is not null and ${productIn(scope.scopes, "l.product_kind", "l.product_id")}
  ) or exists (
    select 1 from subscriptions s where s.person_id = ${sql.ref(person)} and s.workspace_id = ${scope.workspaceId} and s.env = ${scope.env}
      and s.status in ('active', 'past_due') and s.ended_at is null and ${productIn(scope.scopes, "s.product_kind", "s.product_id")}
  ))`;

const holdingOf = (scope: Scope, person: string) => sql<string>`coalesce(
    (select min(l.product_kind || ':' || l.product_id) from licences l where l.person_id = ${sql.ref(person)} and l.workspace_id = ${scope.workspaceId}
      and l.env = ${scope.env} and l.status = 'active' and l.amount_cents is not null and ${productIn(scope.scopes, "l.product_kind", "l.product_id")}),
    (select min(s.product_kind || ':' || s.product_id) from subscriptions s where s.person_id = ${sql.ref(person)} and s.workspace_id = ${scope.workspaceId}
      and s.env = ${scope.env} and s.status in ('active', 'past_due') and s.ended_at is null and ${productIn(scope.scopes, "s.product_kind", "s.product_id")}))`;

type Lapsed = { personId: string; email: string; lastActiveAt: number | null; holding: string };
type LapsedRow = { person_id: string; email: string; last_active_at: number | null; holding: string };
const toLapsed = (r: LapsedRow): Lapsed => ({
  personId: r.person_id,
  email: r.email,
  lastActiveAt: r.last_active_at === null ? null : Number(r.last_active_at),
  holding: r.holding,
});

/**
 * Paying people with no active day since `sinceDay` (at most `limit`, newest lapse first),
 * with the product they pay for: the newest active days before the cut-off, walked down
 * their index until enough of them pay; then, if the list is short, payers never active.
 */
export async function lapsedPayers(ex: Executor, scope: Scope, activityScope: string, sinceDay: string, limit: number): Promise<Lapsed[]> {
  const lastActive = sql<number | null>`(select max(d.last_active_at) from devices d where d.person_id = pe.id)`;
  const lapsed = await sql<LapsedRow>`
    select la.person_id, pe.email, ${lastActive} as last_active_at, ${holdingOf(scope, "la.person_id")} as holding
    from insight_last_active la join people pe on pe.id = la.person_id
    where la.workspace_id = ${scope.workspaceId} and la.env = ${scope.env} and la.scope = ${activityScope} and la.day < ${sinceDay}
      and ${paysIn(scope, "la.person_id")}
    order by la.day desc, la.person_id
    limit ${limit}`.execute(ex);
  const found = lapsed.rows.map(toLapsed);
  if (found.length >= limit) return found;
  const never = await sql<LapsedRow>`
    select p.person_id, pe.email, ${lastActive} as last_active_at, min(p.product) as holding
    from ${payingPeople(scope)} p join people pe on pe.id = p.person_id
    where not exists (select 1 from insight_last_active la where la.workspace_id = ${scope.workspaceId} and la.env = ${scope.env}
      and la.scope = ${activityScope} and la.person_id = p.person_id)
    group by p.person_id, pe.email, pe.id
    order by p.person_id
    limit ${limit - found.length}`.execute(ex);
  return [...found, ...never.rows.map(toLapsed)];
}

/** People who pay for nothing in the scope with the most active days from…to (at most `limit`), and whether a trial or grant gave them access. */
export async function mostActiveUnpaid(
  ex: Executor,
  scope: Scope,
  activityScope: string,
  toolId: string | null,
  from: string,
  to: string,
  limit: number,
): Promise<{ personId: string; email: string; activeDays: number; source: "trial" | "grant" | "free" }[]> {
  const toolFilter = toolId === null ? sql`` : sql`and g.tool_id = ${toolId}`;
  const rows = await sql<{ person_id: string; email: string; days: number; trial: number; grant: number }>`
    select a.person_id, pe.email, count(distinct a.day) as days,
      max(case when g.kind = 'trial' then 1 else 0 end) as trial,
      max(case when g.kind = 'grant' then 1 else 0 end) as ${sql.ref("grant")}
    from insight_active_days a
    join people pe on pe.id = a.person_id
    left join grants g on g.workspace_id = a.workspace_id and g.env = a.env and g.person_id = a.person_id ${toolFilter}
    where a.workspace_id = ${scope.workspaceId} and a.env = ${scope.env} and a.scope = ${activityScope}
      and a.day >= ${from} and a.day <= ${to}
      and a.person_id not in (select person_id from ${payingPeople(scope)} paying)
    group by a.person_id, pe.email
    order by count(distinct a.day) desc, a.person_id
    limit ${limit}`.execute(ex);
  return rows.rows.map((r) => ({
    personId: r.person_id,
    email: r.email,
    activeDays: Number(r.days),
    source: Number(r.trial) === 1 ? "trial" : Number(r.grant) === 1 ? "grant" : "free",
  }));
}
