// The history Insights reads (issue 34), written by the database in a few statements: one
// workspace environment's people (three in ten paying once, one in ten by subscription, one
// in ten with a trial, one in twenty with a grant), two years of daily roll-ups dense in
// every metric, scope and currency, person-days of access checks, and what the writers keep
// beside those (month rows, active days per month, the most-active-unpaid windows). Shared by
// bench/insights.ts (the functions in process) and scenario 9 (the pages through HTTP).
import { sql } from "kysely";
import type { Db } from "../src/db/database.js";
import type { Env } from "../src/db/schema.js";
import { DAILY_ONLY } from "../src/insights/rollup.store.js";
import { SPANS, windowStart } from "../src/insights/windows.store.js";

/** Days of history, ending with `today`. */
export const HISTORY_DAYS = 730;
export const INSIGHTS_TOOLS = ["tool0", "tool1", "tool2"] as const;
const DAY = 86_400_000;

export interface InsightsHistory {
  workspaceId: string;
  env: Env;
  people: number;
  /** Person-days of access checks over every tool, spread over the two years. */
  activeDays: number;
  /** UTC midnight of the history's last day, in ms. */
  today: number;
  /** even: each person active every 73 days or so (every count ties); skewed: a few people use it most days, most rarely. */
  skewed: boolean;
  /** Prepended to every id and address, so that two histories share a database. */
  idPrefix: string;
}

/** Person n's id in a history seeded with `idPrefix`. */
export const historyPersonId = (idPrefix: string, n: number) => `${idPrefix}p${n}`;

/** 0 … n-1 as a table `s(i)`, in either engine. */
const series = (postgres: boolean, n: number) =>
  postgres
    ? sql.raw(`(select i from generate_series(0, ${n - 1}) as g(i)) s`)
    : sql.raw(`(with recursive c(i) as (select 0 union all select i + 1 from c where i < ${n - 1}) select i from c) s`);

/** The tools (tool0 … tool2), a bundle of the first two, two plans, and the history; the workspace row must exist. */
export async function seedInsightsHistory(db: Db, postgres: boolean, h: InsightsHistory, log: (line: string) => void): Promise<void> {
  const done = (what: string, started: number) => log(`  seeded ${what} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const { workspaceId: WS, env: ENV, people: PEOPLE } = h;
  const first = h.today - (HISTORY_DAYS - 1) * DAY;
  const mod = (a: string, b: number) => `(${a} % ${b})`;
  const text = (e: string) => (postgres ? `(${e})::text` : `cast(${e} as text)`);
  const id = (letter: string, e: string) => sql.raw(`'${h.idPrefix}${letter}' || ${text(e)}`);
  const dayExpr = (e: string) =>
    postgres ? `to_char(to_timestamp((${e}) / 1000.0) at time zone 'UTC', 'YYYY-MM-DD')` : `strftime('%Y-%m-%d', (${e}) / 1000, 'unixepoch')`;
  const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  const F = sql.raw(`cast(${first} as bigint)`);
  const D = sql.raw(`cast(${DAY} as bigint)`);
  const atDay = (e: string) => sql`${F} + ${sql.raw(mod(e, HISTORY_DAYS))} * ${D}`;
  // The person-days go into two indexes in random order; SQLite's default page cache (2 MB)
  // made that a disk read per row at ten million. A gigabyte for this connection only.
  if (!postgres) await sql`pragma cache_size = -1048576`.execute(db);
  let t = performance.now();
  await sql`insert into tools (workspace_id, id, name, created_at) values (${WS}, 'tool0', 'Tool 0', 0), (${WS}, 'tool1', 'Tool 1', 0), (${WS}, 'tool2', 'Tool 2', 0)`.execute(
    db,
  );
  await sql`insert into bundles (workspace_id, id, name, created_at) values (${WS}, 'suite', 'Suite', 0)`.execute(db);
  await sql`insert into bundle_tools (workspace_id, bundle_id, tool_id) values (${WS}, 'suite', 'tool0'), (${WS}, 'suite', 'tool1')`.execute(db);
  await sql`insert into plans (workspace_id, product_kind, product_id, id, name, billing, amount_cents, currency, interval, is_default, created_at)
    values (${WS}, 'tool', 'tool0', 'lifetime', 'Lifetime', 'one_time', 4900, 'eur', null, 1, 0),
           (${WS}, 'tool', 'tool0', 'monthly', 'Monthly', 'subscription', 500, 'eur', 'month', 0, 0)`.execute(db);
  await sql`insert into people (id, workspace_id, env, email, email_norm, signed_in_at, created_at)
    select ${id("p", "i")}, ${WS}, ${ENV}, ${id("p", "i")} || '@example.com', ${id("p", "i")} || '@example.com', null, ${atDay("i")}
    from ${series(postgres, PEOPLE)}`.execute(db);
  done(`${PEOPLE.toLocaleString("en")} people`, t);
  t = performance.now();
  // Three in ten pay once, one in ten by subscription; one in ten had a trial, one in twenty a grant.
  await sql`insert into licences (id, workspace_id, env, person_id, product_kind, product_id, plan_id, status, purchased_at, amount_cents, currency, created_at)
    select ${id("l", "i")}, ${WS}, ${ENV}, ${id("p", "i")}, 'tool', 'tool' || ${sql.raw(text(mod("i", 3)))}, 'lifetime', 'active', ${atDay("i")}, 4900, 'eur', ${atDay("i")}
    from ${series(postgres, PEOPLE)} where ${sql.raw(mod("i", 10))} < 3`.execute(db);
  await sql`insert into subscriptions (workspace_id, env, id, person_id, product_kind, product_id, plan_id, status, current_period_start, current_period_end, cancel_at_period_end, seats, created_at)
    select ${WS}, ${ENV}, ${id("s", "i")}, ${id("p", "i")}, 'tool', 'tool0', 'monthly', 'active', ${sql.raw(`cast(${h.today} as bigint)`)}, ${sql.raw(`cast(${h.today + 30 * DAY} as bigint)`)}, 0, null, ${F}
    from ${series(postgres, PEOPLE)} where ${sql.raw(mod("i", 10))} = 3`.execute(db);
  await sql`insert into grants (id, workspace_id, env, tool_id, person_id, kind, starts_at, ends_at, revoked_at, note, created_at)
    select ${id("g", "i")}, ${WS}, ${ENV}, 'tool' || ${sql.raw(text(mod("i", 3)))}, ${id("p", "i")},
      case when ${sql.raw(mod("i", 20))} = 4 then 'grant' else 'trial' end, ${atDay("i")}, ${atDay("i")} + 14 * ${D}, null, null, ${atDay("i")}
    from ${series(postgres, PEOPLE)} where ${sql.raw(mod("i", 10))} = 4`.execute(db);
  done("licences, subscriptions, trials and grants", t);
  t = performance.now();
  // Every figure of every day: 4 scopes (+ "*" for distinct ones) × 2 currencies.
  const metrics = [
    ["gross_one_time", true, true],
    ["gross_subscription", true, true],
    ["refunds", true, true],
    ["mrr", true, false],
    ["mrr_new", true, false],
    ["mrr_expansion", true, false],
    ["mrr_contraction", true, false],
    ["mrr_churn", true, false],
    ["mrr_reactivation", true, false],
    ["active_subscriptions", false, false],
    // A count, but per currency and product as MRR is (and under "*", once per person): the flag means "per currency" here.
    ["paying_people", true, false],
    ["trials", false, false],
    ["trial_paid_within", false, false],
    ["trial_paid_after", false, false],
    ["grants", false, false],
    ["active_devices", false, false],
    ["new_customers", false, false],
    ["active_people", false, false],
    ["active_people_7", false, false],
    ["active_people_30", false, false],
  ] as const;
  for (const [metric, money, planned] of metrics) {
    // Trial outcomes are kept per tool and, for any product bought, under "*" as the distinct figures are.
    const distinct = metric === "new_customers" || metric === "paying_people" || metric.startsWith("active_people") || metric.startsWith("trial_paid_");
    const scopes = [...INSIGHTS_TOOLS.map((tool) => `tool:${tool}`), ...(money ? ["bundle:suite"] : []), ...(distinct ? ["*"] : [])];
    for (const scope of scopes) {
      for (const currency of money ? ["eur", "usd"] : [""]) {
        await sql`insert into insight_days (workspace_id, env, metric, day, scope, currency, plan_id, value)
          select ${WS}, ${ENV}, ${metric}, ${sql.raw(dayExpr(`cast(${first} as bigint) + i * cast(${DAY} as bigint)`))}, ${scope}, ${currency}, ${planned ? "lifetime" : ""}, 1 + ${sql.raw(mod("i", 97))}
          from ${series(postgres, HISTORY_DAYS)}`.execute(db);
      }
    }
  }
  done("two years of daily figures", t);
  t = performance.now();
  // The access checks' person-days over the two years, over every tool ("*"): about activeDays / 730 people a day, the paying ones among them.
  const perDay = Math.ceil(h.activeDays / HISTORY_DAYS);
  const step = 1_000_000;
  for (let from = 0; from < h.activeDays; from += step) {
    const n = Math.min(step, h.activeDays - from);
    const r = mod(`(cast(i as bigint) + ${from}) * 7919`, PEOPLE);
    // Skewed: person r³/PEOPLE², so the first 1% of people take a fifth of the person-days (repeats of a day dropped).
    const person = h.skewed ? `((${r} * ${r} / ${PEOPLE}) * ${r} / ${PEOPLE})` : r;
    await sql`insert into insight_active_days (workspace_id, env, scope, person_id, day)
      select ${WS}, ${ENV}, '*', ${id("p", person)}, ${sql.raw(dayExpr(`cast(${first} as bigint) + ((i + ${from}) / ${perDay}) * cast(${DAY} as bigint)`))}
      from ${series(postgres, n)} where true order by 4, 5 on conflict do nothing`.execute(db);
    if (h.activeDays > step) log(`  seeded ${(from + n).toLocaleString("en")} active person-days`);
  }
  await sql`insert into insight_last_active (workspace_id, env, scope, person_id, day)
    select workspace_id, env, scope, person_id, max(day) from insight_active_days
    where workspace_id = ${WS} and env = ${ENV} group by workspace_id, env, scope, person_id`.execute(db);
  done(`${h.activeDays.toLocaleString("en")} active person-days`, t);
  t = performance.now();
  // What the writers keep beside those (migration 034): each figure's month, each person's active days per month.
  await sql`insert into insight_months (workspace_id, env, metric, month, scope, currency, plan_id, value)
    select workspace_id, env, metric, substr(day, 1, 7), scope, currency, plan_id, sum(value) from insight_days
    where workspace_id = ${WS} and env = ${ENV} and metric not in (${sql.join([...DAILY_ONLY])})
    group by workspace_id, env, metric, substr(day, 1, 7), scope, currency, plan_id`.execute(db);
  await sql`insert into insight_active_months (workspace_id, env, scope, month, person_id, days)
    select workspace_id, env, scope, substr(day, 1, 7), person_id, count(*) from insight_active_days
    where workspace_id = ${WS} and env = ${ENV} group by workspace_id, env, scope, person_id, substr(day, 1, 7)`.execute(db);
  done("month rows and active days per person and month", t);
  t = performance.now();
  // The windows as the flush and the job keep them (migration 036), ending today.
  for (const span of SPANS) {
    const start = windowStart(span, dayOf(h.today));
    await sql`insert into insight_window_starts (workspace_id, env, scope, span, start) values (${WS}, ${ENV}, '*', ${span}, ${start})`.execute(db);
    await sql`insert into insight_active_windows (workspace_id, env, scope, span, person_id, days)
      select workspace_id, env, scope, ${sql.lit(span)}, person_id, count(*) from insight_active_days
      where workspace_id = ${WS} and env = ${ENV} and scope = '*' and day >= ${start}
      group by workspace_id, env, scope, person_id`.execute(db);
  }
  done("the most-active-unpaid windows", t);
  await sql`analyze`.execute(db);
  // Back to SQLite's default, which is what Warden runs with: bench/insights.ts times its reads on this connection.
  if (!postgres) await sql`pragma cache_size = -2000`.execute(db);
}
