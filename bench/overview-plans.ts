// The Overview's statements at scale (issue 50): on each engine, a workspace with two years
// of dense roll-ups (insights-history.ts: the same rows at any number of customers, as they
// are per day) and N webhook events over the last 30 days (1 in 20 a purchase, cancellation
// or refund: the recent activity walks past the rest). Records every statement the
// Overview's three use cases run (figures, setup checklist, recent activity), prints each
// one's plan (PostgreSQL: EXPLAIN ANALYZE; SQLite: EXPLAIN QUERY PLAN) and times the three
// use cases together, p50 and p99 of `--rounds` runs. Not a scenario of run.ts: a look at
// the plans, run by hand:
//   node --import tsx bench/overview-plans.ts [--events 1000000] [--rounds 50] [--engines sqlite,postgres]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { sql } from "kysely";
import { recentActivity } from "../src/billing/recent-activity.service.js";
import { ManualClock } from "../src/clock.js";
import { parseConfig } from "../src/config.js";
import { type Dialect, openStorage } from "../src/db/database.js";
import { overviewInsights } from "../src/insights/insights.service.js";
import { createServices } from "../src/services.js";
import { setupChecklist } from "../src/workspaces/setup.service.js";
import { createOwner, createWorkspace } from "../src/workspaces/workspace.service.js";
import { PG_URL, runOnPg } from "./engine-run.js";
import { seedInsightsHistory } from "./insights-history.js";

const { values } = parseArgs({
  options: {
    events: { type: "string", default: "1000000" },
    rounds: { type: "string", default: "50" },
    engines: { type: "string", default: "sqlite,postgres" },
  },
});
const EVENTS = Number(values.events);
const ROUNDS = Number(values.rounds);
const DAY = 86_400_000;

async function run(engine: Dialect): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "warden-overview-"));
  const queries = new Map<string, readonly unknown[]>();
  let recording = false;
  const schema = `overview_${process.pid}`;
  if (engine === "postgres") await runOnPg(`create schema ${schema}`);
  const storage = openStorage({
    ...(engine === "sqlite" ? { databaseUrl: null, dataDir: dir } : { databaseUrl: PG_URL, pgSchema: schema, poolSize: 4 }),
    onQuery: (text, parameters) => {
      if (recording && !/^(explain|pragma)/i.test(text)) queries.set(text, parameters);
    },
  });
  const today = Date.parse(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`);
  const clock = new ManualClock(today + 12 * 3_600_000);
  const services = await createServices(parseConfig({}), { clock, storage });
  const { db } = services;
  await createOwner(db, clock, { email: "owner@example.com" });
  const ws = await createWorkspace(db, clock, { slug: "overview", name: "Overview", ownerEmail: "owner@example.com", plan: "pro" });
  const log = (line: string) => console.log(`${engine}: ${line}`);
  await seedInsightsHistory(
    db,
    engine === "postgres",
    { workspaceId: ws.id, env: "live", people: 10_000, activeDays: 100_000, today, skewed: false, idPrefix: "ov_" },
    log,
  );
  let t = performance.now();
  const types = [
    "access.granted",
    "access.revoked",
    "grant.created",
    "subscription.renewed",
    "purchase.completed",
    "subscription.cancelled",
    "payment.refunded",
  ];
  const step = 100_000;
  for (let from = 0; from < EVENTS; from += step) {
    const n = Math.min(step, EVENTS - from);
    const series =
      engine === "postgres"
        ? sql.raw(`(select i from generate_series(${from}, ${from + n - 1}) as g(i)) s`)
        : sql.raw(`(with recursive c(i) as (select ${from} union all select i + 1 from c where i < ${from + n - 1}) select i from c) s`);
    // 1 in 20 of the three kinds the activity lists, the rest other types; spread over 30 days.
    const type = sql.raw(
      `case when i % 20 = 0 then '${types[4]}' when i % 20 = 10 then '${types[5]}' when i % 200 = 5 then '${types[6]}' else (case i % 4 when 0 then '${types[0]}' when 1 then '${types[1]}' when 2 then '${types[2]}' else '${types[3]}' end) end`,
    );
    const id = engine === "postgres" ? sql.raw(`'evt_ov' || lpad(i::text, 18, '0')`) : sql.raw(`'evt_ov' || substr('000000000000000000' || i, -18)`);
    await sql`insert into events (workspace_id, env, id, type, body, example, created_at)
      select ${ws.id}, 'live', ${id}, ${type}, '{"data":{"email":"a@example.com","amount":4900,"currency":"eur","tool":"tool0"}}', 0,
        ${today - 30 * DAY} + cast(i as bigint) * ${Math.floor((30 * DAY) / EVENTS)}
      from ${series}`.execute(db);
  }
  // PostgreSQL's autovacuum keeps statistics. Warden never runs SQLite's ANALYZE, which the
  // history's seeding ran (for its own reads); its statistics of a database of one workspace
  // made the planner scan the setup probes' small tables, so they are dropped and reloaded.
  if (engine === "postgres") await sql`analyze`.execute(db);
  else {
    await sql`delete from sqlite_stat1`.execute(db);
    await sql`analyze sqlite_schema`.execute(db);
  }
  log(`seeded ${EVENTS.toLocaleString("en")} events in ${((performance.now() - t) / 1000).toFixed(1)} s`);

  // The workspace of the history, and a new one beside it with nothing yet (every setup step
  // missing, no events): a probe that finds nothing must not walk the other's rows.
  const fresh = await createWorkspace(db, clock, { slug: "fresh", name: "Fresh", ownerEmail: "owner@example.com", plan: "pro" });
  for (const [label, workspaceId] of [
    ["the workspace of the history", ws.id],
    ["a new workspace beside it", fresh.id],
  ] as const) {
    const scope = { workspaceId, env: "live" as const };
    const overview = () =>
      Promise.all([overviewInsights(services, scope, new Date(clock.now())), setupChecklist(services, scope), recentActivity(services, scope)]);
    queries.clear();
    recording = true;
    const [figures, , activity] = await overview();
    recording = false;
    log(`${label}: MRR ${JSON.stringify(figures.mrr)}; recent activity ${activity.length} rows`);
    for (const [text, parameters] of queries) {
      console.log(`\n--- ${engine}, ${label}: ${text}`);
      const explain = engine === "postgres" ? `explain (analyze, buffers, costs off) ${text}` : `explain query plan ${text}`;
      const plan = await sql.raw(explain).compile(db);
      const rows = (await db.executeQuery({ ...plan, parameters })).rows as Record<string, unknown>[];
      for (const row of rows) console.log(`    ${engine === "postgres" ? row["QUERY PLAN"] : row.detail}`);
    }
    const times: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      t = performance.now();
      await overview();
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    const at = (q: number) => (times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? 0).toFixed(1);
    log(`${label}: the three use cases together, ${ROUNDS} rounds: p50 ${at(0.5)} ms, p99 ${at(0.99)} ms (${queries.size} distinct statements)`);
  }
  await services.close();
  if (engine === "postgres") await runOnPg(`drop schema ${schema} cascade`);
  rmSync(dir, { recursive: true, force: true });
}

for (const engine of values.engines.split(",") as Dialect[]) await run(engine);
process.exit(0);
