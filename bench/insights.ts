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
import { migrateToLatest, openStorage } from "../src/db/database.js";
import { ActivityCounter } from "../src/insights/activity.js";
import { peopleInsights, revenueInsights, subscriptionInsights, useInsights } from "../src/insights/insights.service.js";
import { mostActiveUnpaid, scopesOfTool } from "../src/insights/insights.store.js";
import type { InsightsQuery } from "../src/insights/insights.types.js";
import { type Activity, recordActivities } from "../src/insights/rollup.store.js";
import { countInWindows, stepWindow, windowStart, windowsToMove } from "../src/insights/windows.store.js";
import { PG_URL, runOnPg } from "./engine-run.js";
import { historyPersonId, seedInsightsHistory } from "./insights-history.js";
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
const DAY = 86_400_000;
const TODAY = Date.parse("2026-11-26T00:00:00Z");
const WS = "ws_insightsbench";
const ENV = "live" as const;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

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
    await sql`insert into workspaces (id, slug, name, plan, created_at) values (${WS}, 'insights-bench', 'Insights bench', 'pro', 0)`.execute(storage.db);
    const history = { workspaceId: WS, env: ENV, people: PEOPLE, activeDays: ACTIVE_DAYS, today: TODAY, skewed: SKEWED, idPrefix: "" };
    await seedInsightsHistory(storage.db, postgres, history, (line) => process.stdout.write(`${line}\n`));
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
        const person = historyPersonId("", ((run * 1000 + k) * 97) % PEOPLE);
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
