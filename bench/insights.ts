// Insights at scale (issue 34, point 3): seeds one workspace environment with `--people`
// people (a third paying by licence, a tenth by subscription, trials and grants), two
// years of daily roll-ups, and `--active-days` person-days of access checks (the rows the
// use figures and lists read), then times each of the four Insights functions, as a page
// calls them, over 30 days by day and 12 months by month, for every tool and for one; then
// the most-active-unpaid list read from its windows (migration 036) against the walk of the
// months and the count, the windows job's moves (a day, the turn of a month) and what the
// windows add to the activity flush.
//
//   node --import tsx bench/insights.ts [--engine sqlite|postgres] [--people 1000000] [--active-days 10000000] [--runs 20] [--spread even|skewed]
//     [--only peopleInsights,…]   (time only these functions, and the lists only when useInsights is among them)
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { sql } from "kysely";
import { type Db, migrateToLatest, openStorage } from "../src/db/database.js";
import { ActivityCounter } from "../src/insights/activity.js";
import { peopleInsights, revenueInsights, subscriptionInsights, useInsights } from "../src/insights/insights.service.js";
import { mostActiveUnpaid, scopesOfTool } from "../src/insights/insights.store.js";
import type { InsightsQuery } from "../src/insights/insights.types.js";
import { type Activity, DAILY_ONLY, recordActivities } from "../src/insights/rollup.store.js";
import { countInWindows, SPANS, stepWindow, windowStart, windowsToMove } from "../src/insights/windows.store.js";
import { PG_URL, runOnPg } from "./engine-run.js";
import { ROOT } from "./processes.js";

const { values } = parseArgs({
  options: {
    engine: { type: "string", default: "sqlite" },
    people: { type: "string", default: "1000000" },
    "active-days": { type: "string", default: "10000000" },
    runs: { type: "string", default: "20" },
    spread: { type: "string", default: "even" },
    only: { type: "string" },
  },
});
const PEOPLE = Number(values.people);
const ACTIVE_DAYS = Number(values["active-days"]);
const RUNS = Number(values.runs);
/** even: each person active every 73 days or so (every count ties); skewed: a few people use it most days, most rarely. */
const SKEWED = values.spread === "skewed";
const ONLY = values.only ? new Set(values.only.split(",")) : null;
const DAYS = 730;
const DAY = 86_400_000;
const TODAY = Date.parse("2026-11-26T00:00:00Z");
const FIRST = TODAY - (DAYS - 1) * DAY;
const WS = "ws_insightsbench";
const ENV = "live" as const;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** 0 … n-1 as a table `s(i)`, in either engine. */
const series = (postgres: boolean, n: number) =>
  postgres
    ? sql.raw(`(select i from generate_series(0, ${n - 1}) as g(i)) s`)
    : sql.raw(`(with recursive c(i) as (select 0 union all select i + 1 from c where i < ${n - 1}) select i from c) s`);

async function seed(db: Db, postgres: boolean): Promise<void> {
  const log = (what: string, started: number) => process.stdout.write(`  seeded ${what} in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  const mod = (a: string, b: number) => (postgres ? `(${a} % ${b})` : `(${a} % ${b})`);
  const text = (e: string) => (postgres ? `(${e})::text` : `cast(${e} as text)`);
  const dayExpr = (e: string) =>
    postgres ? `to_char(to_timestamp((${e}) / 1000.0) at time zone 'UTC', 'YYYY-MM-DD')` : `strftime('%Y-%m-%d', (${e}) / 1000, 'unixepoch')`;
  const F = sql.raw(`cast(${FIRST} as bigint)`);
  const D = sql.raw(`cast(${DAY} as bigint)`);
  let t = performance.now();
  await sql`insert into workspaces (id, slug, name, plan, created_at) values (${WS}, 'insights-bench', 'Insights bench', 'pro', 0)`.execute(db);
  await sql`insert into tools (workspace_id, id, name, created_at) values (${WS}, 'tool0', 'Tool 0', 0), (${WS}, 'tool1', 'Tool 1', 0), (${WS}, 'tool2', 'Tool 2', 0)`.execute(
    db,
  );
  await sql`insert into bundles (workspace_id, id, name, created_at) values (${WS}, 'suite', 'Suite', 0)`.execute(db);
  await sql`insert into bundle_tools (workspace_id, bundle_id, tool_id) values (${WS}, 'suite', 'tool0'), (${WS}, 'suite', 'tool1')`.execute(db);
  await sql`insert into plans (workspace_id, product_kind, product_id, id, name, billing, amount_cents, currency, interval, is_default, created_at)
    values (${WS}, 'tool', 'tool0', 'lifetime', 'Lifetime', 'one_time', 4900, 'eur', null, 1, 0),
           (${WS}, 'tool', 'tool0', 'monthly', 'Monthly', 'subscription', 500, 'eur', 'month', 0, 0)`.execute(db);
  await sql`insert into people (id, workspace_id, env, email, email_norm, signed_in_at, created_at)
    select 'p' || ${sql.raw(text("i"))}, ${WS}, ${ENV}, 'p' || ${sql.raw(text("i"))} || '@example.com', 'p' || ${sql.raw(text("i"))} || '@example.com', null, ${F} + ${sql.raw(mod("i", DAYS))} * ${D}
    from ${series(postgres, PEOPLE)}`.execute(db);
  log(`${PEOPLE} people`, t);
  t = performance.now();
  // Three in ten pay once, one in ten by subscription; one in ten had a trial, one in twenty a grant.
  await sql`insert into licences (id, workspace_id, env, person_id, product_kind, product_id, plan_id, status, purchased_at, amount_cents, currency, created_at)
    select 'l' || ${sql.raw(text("i"))}, ${WS}, ${ENV}, 'p' || ${sql.raw(text("i"))}, 'tool', 'tool' || ${sql.raw(text(mod("i", 3)))}, 'lifetime', 'active',
      ${F} + ${sql.raw(mod("i", DAYS))} * ${D}, 4900, 'eur', ${F} + ${sql.raw(mod("i", DAYS))} * ${D}
    from ${series(postgres, PEOPLE)} where ${sql.raw(mod("i", 10))} < 3`.execute(db);
  await sql`insert into subscriptions (workspace_id, env, id, person_id, product_kind, product_id, plan_id, status, current_period_start, current_period_end, cancel_at_period_end, seats, created_at)
    select ${WS}, ${ENV}, 's' || ${sql.raw(text("i"))}, 'p' || ${sql.raw(text("i"))}, 'tool', 'tool0', 'monthly', 'active', ${sql.raw(`cast(${TODAY} as bigint)`)}, ${sql.raw(`cast(${TODAY + 30 * DAY} as bigint)`)}, 0, null, ${F}
    from ${series(postgres, PEOPLE)} where ${sql.raw(mod("i", 10))} = 3`.execute(db);
  await sql`insert into grants (id, workspace_id, env, tool_id, person_id, kind, starts_at, ends_at, revoked_at, note, created_at)
    select 'g' || ${sql.raw(text("i"))}, ${WS}, ${ENV}, 'tool' || ${sql.raw(text(mod("i", 3)))}, 'p' || ${sql.raw(text("i"))},
      case when ${sql.raw(mod("i", 20))} = 4 then 'grant' else 'trial' end,
      ${F} + ${sql.raw(mod("i", DAYS))} * ${D}, ${F} + ${sql.raw(mod("i", DAYS))} * ${D} + 14 * ${D}, null, null, ${F} + ${sql.raw(mod("i", DAYS))} * ${D}
    from ${series(postgres, PEOPLE)} where ${sql.raw(mod("i", 10))} = 4`.execute(db);
  log("licences, subscriptions, trials and grants", t);
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
    const distinct = metric === "new_customers" || metric.startsWith("active_people") || metric.startsWith("trial_paid_");
    const scopes = ["tool:tool0", "tool:tool1", "tool:tool2", ...(money ? ["bundle:suite"] : []), ...(distinct ? ["*"] : [])];
    for (const scope of scopes) {
      for (const currency of money ? ["eur", "usd"] : [""]) {
        await sql`insert into insight_days (workspace_id, env, metric, day, scope, currency, plan_id, value)
          select ${WS}, ${ENV}, ${metric}, ${sql.raw(dayExpr(`cast(${FIRST} as bigint) + i * cast(${DAY} as bigint)`))}, ${scope}, ${currency}, ${planned ? "lifetime" : ""}, 1 + ${sql.raw(mod("i", 97))}
          from ${series(postgres, DAYS)}`.execute(db);
      }
    }
  }
  log("two years of daily figures", t);
  t = performance.now();
  // The access checks' person-days over the two years, over every tool ("*"): about ACTIVE_DAYS / 730 people a day, the paying ones among them.
  const perDay = Math.ceil(ACTIVE_DAYS / DAYS);
  const step = 1_000_000;
  for (let from = 0; from < ACTIVE_DAYS; from += step) {
    const n = Math.min(step, ACTIVE_DAYS - from);
    const r = mod(`(cast(i as bigint) + ${from}) * 7919`, PEOPLE);
    // Skewed: person r³/PEOPLE², so the first 1% of people take a fifth of the person-days (repeats of a day dropped).
    const person = SKEWED ? `((${r} * ${r} / ${PEOPLE}) * ${r} / ${PEOPLE})` : r;
    await sql`insert into insight_active_days (workspace_id, env, scope, person_id, day)
      select ${WS}, ${ENV}, '*', 'p' || ${sql.raw(text(person))}, ${sql.raw(dayExpr(`cast(${FIRST} as bigint) + ((i + ${from}) / ${perDay}) * cast(${DAY} as bigint)`))}
      from ${series(postgres, n)} where true on conflict do nothing`.execute(db);
  }
  await sql`insert into insight_last_active (workspace_id, env, scope, person_id, day)
    select workspace_id, env, scope, person_id, max(day) from insight_active_days group by workspace_id, env, scope, person_id`.execute(db);
  log(`${ACTIVE_DAYS} active person-days`, t);
  t = performance.now();
  // What the writers keep beside those (migration 034): each figure's month, each person's active days per month.
  await sql`insert into insight_months (workspace_id, env, metric, month, scope, currency, plan_id, value)
    select workspace_id, env, metric, substr(day, 1, 7), scope, currency, plan_id, sum(value) from insight_days
    where metric not in (${sql.join([...DAILY_ONLY])})
    group by workspace_id, env, metric, substr(day, 1, 7), scope, currency, plan_id`.execute(db);
  await sql`insert into insight_active_months (workspace_id, env, scope, month, person_id, days)
    select workspace_id, env, scope, substr(day, 1, 7), person_id, count(*) from insight_active_days
    group by workspace_id, env, scope, person_id, substr(day, 1, 7)`.execute(db);
  log("month rows and active days per person and month", t);
  t = performance.now();
  // The windows as the flush and the job keep them (migration 036), ending today.
  for (const span of SPANS) {
    const start = windowStart(span, dayOf(TODAY));
    await sql`insert into insight_window_starts (workspace_id, env, scope, span, start) values (${WS}, ${ENV}, '*', ${span}, ${start})`.execute(db);
    await sql`insert into insight_active_windows (workspace_id, env, scope, span, person_id, days)
      select workspace_id, env, scope, ${sql.lit(span)}, person_id, count(*) from insight_active_days
      where workspace_id = ${WS} and env = ${ENV} and scope = '*' and day >= ${start}
      group by workspace_id, env, scope, person_id`.execute(db);
  }
  log("the most-active-unpaid windows", t);
  if (postgres) await sql`analyze`.execute(db);
  else await sql`analyze`.execute(db);
}

async function time(fn: () => Promise<unknown>): Promise<{ median: number; p95: number }> {
  await fn();
  const ms: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await fn();
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  return { median: ms[Math.floor(ms.length / 2)] as number, p95: ms[Math.min(ms.length - 1, Math.ceil(ms.length * 0.95) - 1)] as number };
}

async function main(): Promise<void> {
  const postgres = values.engine === "postgres";
  const schema = `bench_insights_${process.pid}`;
  const dir = join(ROOT, "bench", "tmp", `insights-${process.pid}`);
  if (postgres) await runOnPg(`create schema ${schema}`);
  else mkdirSync(dir, { recursive: true });
  const storage = postgres
    ? openStorage({ databaseUrl: PG_URL, pgSchema: schema, poolSize: 4 })
    : openStorage({ databaseUrl: null, sqliteFile: join(dir, "warden.sqlite") });
  try {
    await migrateToLatest(storage.db, storage.dialect);
    process.stdout.write(`Insights on ${storage.dialect}: ${PEOPLE} people, ${ACTIVE_DAYS} active person-days spread ${SKEWED ? "skewed" : "even"}\n`);
    await seed(storage.db, postgres);
    const now = new Date(TODAY + 12 * 3_600_000);
    // Nothing is noted here: the use figures flush an empty counter.
    const activity = new ActivityCounter(storage.db);
    const ranges: [string, Pick<InsightsQuery, "from" | "to" | "grain">][] = [
      ["30 days by day", { from: dayOf(TODAY - 29 * DAY), to: dayOf(TODAY), grain: "day" }],
      // As the page asks it (dashboard/insights/insights.range.ts): from the first of the month 11 months ago.
      ["12 months by month", { from: "2025-12-01", to: dayOf(TODAY), grain: "month" }],
    ];
    process.stdout.write("| Function | Range | Tools | Median ms | p95 ms |\n|---|---|---|---|---|\n");
    for (const [label, range] of ranges) {
      for (const toolId of [null, "tool0"]) {
        const q: InsightsQuery = { workspaceId: WS, env: ENV, toolId, ...range };
        for (const [name, fn] of [
          ["revenueInsights", () => revenueInsights(storage.db, q)],
          ["subscriptionInsights", () => subscriptionInsights(storage.db, q)],
          ["peopleInsights", () => peopleInsights(storage.db, q)],
          ["useInsights", () => useInsights({ db: storage.db, activity }, q, now)],
        ] as const) {
          if (ONLY && !ONLY.has(name)) continue;
          const { median, p95 } = await time(fn);
          process.stdout.write(`| ${name} | ${label} | ${toolId ?? "all"} | ${median.toFixed(1)} | ${p95.toFixed(1)} |\n`);
        }
      }
    }
    // The most-active-unpaid list as the page reads it (from the window), as the walk of the
    // months finds it, and counted from every person-day of the range: the same answer.
    const listRanges: [string, string][] = [
      ["7 days", dayOf(TODAY - 6 * DAY)],
      ["30 days", dayOf(TODAY - 29 * DAY)],
      ["90 days", dayOf(TODAY - 89 * DAY)],
      ["12 months", "2025-12-01"],
    ];
    if (ONLY && !ONLY.has("useInsights")) return;
    process.stdout.write("\n| Most active unpaid | Range | Tools | Window ms | Walk ms | Count ms | Same answer |\n|---|---|---|---|---|---|---|\n");
    for (const [label, from] of listRanges) {
      for (const toolId of [null, "tool0"]) {
        const scope = { workspaceId: WS, env: ENV, scopes: toolId === null ? null : await scopesOfTool(storage.db, WS, toolId) } as const;
        const activity = toolId === null ? "*" : `tool:${toolId}`;
        const list = (today: string | null, walk = {}) => mostActiveUnpaid(storage.db, scope, activity, toolId, from, dayOf(TODAY), 20, today, walk);
        const windowed = await time(() => list(dayOf(TODAY)));
        const answer = await list(dayOf(TODAY));
        let t = performance.now();
        const walked = await list(null);
        const walkMs = performance.now() - t;
        t = performance.now();
        const counted = await list(null, { max: 0 });
        const countMs = performance.now() - t;
        const same = JSON.stringify(answer) === JSON.stringify(walked) && JSON.stringify(walked) === JSON.stringify(counted);
        process.stdout.write(
          `| | ${label} | ${toolId ?? "all"} | ${windowed.median.toFixed(1)} (p95 ${windowed.p95.toFixed(1)}) | ${walkMs.toFixed(1)} | ${countMs.toFixed(1)} | ${same ? "yes" : "NO"} |\n`,
        );
      }
    }

    // What the windows add to the activity flush: 1,000 people's first check of tomorrow,
    // the whole flush (its days, figures and windows) and the windows' part alone.
    const tomorrow = TODAY + DAY;
    process.stdout.write("\n| Flush of 1,000 new person-days | Run | Whole flush ms | Windows' part ms |\n|---|---|---|---|\n");
    for (let run = 0; run < 5; run++) {
      const checks: Activity[] = Array.from({ length: 1000 }, (_, k) => {
        const person = `p${((run * 1000 + k) * 97) % PEOPLE}`;
        return { workspaceId: WS, env: ENV, toolId: "tool1", personId: person, deviceId: `bench-${run}-${k}`, at: tomorrow + 3_600_000 };
      });
      let t = performance.now();
      await storage.db.transaction().execute((trx) => recordActivities(trx, checks));
      const whole = performance.now() - t;
      const days = checks.map((c) => ({ workspaceId: WS, env: ENV, scope: "*", personId: `${c.personId}x`, day: dayOf(tomorrow) }));
      t = performance.now();
      await storage.db.transaction().execute((trx) => countInWindows(trx, days));
      const part = performance.now() - t;
      process.stdout.write(`| | ${run + 1} | ${whole.toFixed(1)} | ${part.toFixed(1)} |\n`);
    }

    // The windows job: a day (7, 30 and 90 days move one day), then the turn of the month
    // (those four more days, and the 12 months a month: 2025-12 leaves), a transaction a step.
    process.stdout.write("\n| Windows job | Moves | Steps | Total ms | Longest step ms |\n|---|---|---|---|---|\n");
    for (const [label, today] of [
      ["to the next day", dayOf(TODAY + DAY)],
      ["to the first of the month", "2026-12-01"],
    ] as const) {
      let steps = 0;
      let longest = 0;
      const started = performance.now();
      for (const w of await windowsToMove(storage.db, today)) {
        for (;;) {
          const t = performance.now();
          const moved = await storage.db.transaction().execute((trx) => stepWindow(trx, w, windowStart(w.span, today)));
          if (moved === null) break;
          steps++;
          longest = Math.max(longest, performance.now() - t);
        }
      }
      process.stdout.write(`| | ${label} | ${steps} | ${(performance.now() - started).toFixed(1)} | ${longest.toFixed(1)} |\n`);
    }
  } finally {
    await storage.close();
    if (postgres) await runOnPg(`drop schema ${schema} cascade`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

await main();
