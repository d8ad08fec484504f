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

export interface DayFigure {
  metric: string;
  scope: string;
  day: string;
  currency: string;
  planId: string;
  value: number;
}

/** The scopes of a tool: its own and its bundles' (a bundle's sale counts for each tool in it). */
export async function scopesOfTool(ex: Executor, workspaceId: string, toolId: string): Promise<string[]> {
  const bundles = await ex.selectFrom("bundle_tools").select("bundle_id").where("workspace_id", "=", workspaceId).where("tool_id", "=", toolId).execute();
  return [`tool:${toolId}`, ...bundles.map((b) => `bundle:${b.bundle_id}`)];
}

/** The figures of these metrics, per day, currency and plan, over the scopes, days from…to. */
export async function figuresByDay(ex: Executor, scope: Scope, metrics: readonly Metric[], from: string, to: string): Promise<DayFigure[]> {
  let q = ex
    .selectFrom("insight_days")
    .select(["metric", "day", "scope", "currency", "plan_id", (eb) => eb.fn.sum<number>("value").as("value")])
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("metric", "in", metrics)
    .where("day", ">=", from)
    .where("day", "<=", to);
  q = scope.scopes === null ? q.where("scope", "<>", ALL_TOOLS) : q.where("scope", "in", scope.scopes);
  const rows = await q.groupBy(["metric", "day", "scope", "currency", "plan_id"]).execute();
  return rows.map((r) => ({ metric: r.metric, day: r.day, scope: r.scope, currency: r.currency, planId: r.plan_id, value: Number(r.value) }));
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

/** Paying people with no active day since `sinceDay` (at most `limit`, newest lapse first), with the product they pay for. */
export async function lapsedPayers(
  ex: Executor,
  scope: Scope,
  activityScope: string,
  sinceDay: string,
  limit: number,
): Promise<{ personId: string; email: string; lastActiveAt: number | null; holding: string }[]> {
  const rows = await sql<{ person_id: string; email: string; last_active_at: number | null; holding: string }>`
    select p.person_id, pe.email, min(p.product) as holding,
      (select max(d.last_active_at) from devices d where d.person_id = p.person_id) as last_active_at
    from ${payingPeople(scope)} p
    join people pe on pe.id = p.person_id
    left join insight_active_days a on a.workspace_id = ${scope.workspaceId} and a.env = ${scope.env}
      and a.scope = ${activityScope} and a.person_id = p.person_id
    group by p.person_id, pe.email
    having max(a.day) is null or max(a.day) < ${sinceDay}
    order by case when max(a.day) is null then 1 else 0 end, max(a.day) desc, p.person_id
    limit ${limit}`.execute(ex);
  return rows.rows.map((r) => ({
    personId: r.person_id,
    email: r.email,
    lastActiveAt: r.last_active_at === null ? null : Number(r.last_active_at),
    holding: r.holding,
  }));
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
