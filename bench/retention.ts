// Retention at scale, on SQLite (issue 23, point 5): seeds a database with `--events`
// settled webhook events 40 to 70 days old (each with one delivery and one attempt) and
// `--customers` customers, then measures
//   1. retrieve under load (`--connections`, `--duration` s) from `warden serve` with
//      WARDEN_RETENTION_DAYS=0 (no pruning), then from one that prunes the old rows from
//      its start (the default 35 days), while it prunes;
//   2. pruning's throughput in this process, on a copy of the seeded file, with no pause
//      between batches (rows a second), and the file's pages before and after;
//   3. the file's size under steady traffic, in an accelerated run on a ManualClock:
//      WARDEN_RETENTION_DAYS=1, events written at a steady rate each simulated hour,
//      pruned every simulated 10 minutes; the page count each simulated day.
//
//   npm run build && node --import tsx bench/retention.ts [--events 1000000] [--customers 10000] [--duration 20]
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { sql } from "kysely";
import { DAY_MS, ManualClock, MINUTE_MS, systemClock } from "../src/clock.js";
import { parseConfig } from "../src/config.js";
import { migrateToLatest, openStorage, type Storage } from "../src/db/database.js";
import { pruneExpired } from "../src/retention/retention.service.js";
import { createKey } from "../src/workspaces/workspace.service.js";
import { BENCH } from "./customer-mix.js";
import { BENCH_LIMITS, PG_URL, runOnPg } from "./engine-run.js";
import { measureLoad } from "./load.js";
import { ROOT, snapshotWarden, startWarden } from "./processes.js";
import { type BenchWorkspace, seedCustomers, setUpWorkspace } from "./seed.js";
import { addBenchEndpoint, seedEvents } from "./seed-events.js";

const { values } = parseArgs({
  options: {
    events: { type: "string", default: "1000000" },
    customers: { type: "string", default: "10000" },
    duration: { type: "string", default: "20" },
    connections: { type: "string", default: "50" },
    /** A earlier run's folder (bench/tmp/retention-…): measure retrieve on its database again, with no seeding and no parts 2 and 3. */
    reuse: { type: "string" },
    /** Part 2 alone, on PostgreSQL: seed `--events` into a schema of its own, prune them in this process, drop the schema. */
    postgres: { type: "boolean", default: false },
  },
});
const EVENTS = Number(values.events);
const CUSTOMERS = Number(values.customers);
const DURATION = Number(values.duration);
const CONNECTIONS = Number(values.connections);

const stamp = new Date().toISOString().replace(/[:.]/g, "-");
const dir = join(ROOT, "bench", "tmp", `retention-${stamp}`);
mkdirSync(dir, { recursive: true });
const lines: string[] = [];
const log = (line: string) => {
  lines.push(line);
  process.stdout.write(`${line}\n`);
};

/** Settled events with one delivery and one attempt each, created between 70 and 40 days before `now`. */
async function seedOldEvents(storage: Storage, ws: BenchWorkspace, count: number, now: number): Promise<void> {
  const endpointId = "ep_benchretention00000000000";
  await addBenchEndpoint(storage, ws, endpointId, now - 70 * DAY_MS);
  await seedEvents(storage, ws, { endpointId, count, oldest: now - 70 * DAY_MS, newest: now - 40 * DAY_MS, idPrefix: "bench" }, (done) =>
    process.stdout.write(`  seeded ${done.toLocaleString("en")} events\r`),
  );
}

async function pages(storage: Storage): Promise<{ pages: number; free: number; mb: number }> {
  const [count] = (await sql<{ page_count: number }>`pragma page_count`.execute(storage.db)).rows;
  const [free] = (await sql<{ freelist_count: number }>`pragma freelist_count`.execute(storage.db)).rows;
  const [size] = (await sql<{ page_size: number }>`pragma page_size`.execute(storage.db)).rows;
  const n = Number(count?.page_count);
  return { pages: n, free: Number(free?.freelist_count), mb: Math.round(((n * Number(size?.page_size)) / 1024 / 1024) * 10) / 10 };
}

async function countRows(storage: Storage, table: "events" | "deliveries" | "delivery_attempts"): Promise<number> {
  const row = await storage.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function main(): Promise<void> {
  const now = Date.now();
  const dataDir = join(dir, "data");
  log(
    `# Retention on ${values.postgres ? "PostgreSQL" : "SQLite"}: ${EVENTS.toLocaleString("en")} old events, ${CUSTOMERS.toLocaleString("en")} customers (${new Date(now).toISOString()})`,
  );
  log("");
  if (values.postgres) return measurePostgresThroughput(now);
  if (values.reuse) return measureRetrieve(join(values.reuse, "data"), await newKey(join(values.reuse, "data")), now);
  const seedStart = performance.now();
  const storage = openStorage({ databaseUrl: null, dataDir });
  await migrateToLatest(storage.db, "sqlite");
  const ws = await setUpWorkspace(storage);
  await seedCustomers(storage, ws, { from: 0, to: CUSTOMERS, now });
  await seedOldEvents(storage, ws, EVENTS, now);
  const seeded = await pages(storage);
  await storage.close();
  log(`Seeded in ${Math.round((performance.now() - seedStart) / 1000)} s: ${seeded.mb} MB (${seeded.pages} pages).`);
  // A copy for the throughput measurement, taken while no process has the file open.
  const copyDir = join(dir, "copy");
  mkdirSync(copyDir, { recursive: true });
  copyFileSync(join(dataDir, "warden.sqlite"), join(copyDir, "warden.sqlite"));

  await measureRetrieve(dataDir, ws.key, now);
  await measureThroughput(copyDir, now);
  await measureSteadyTraffic(now);
  writeResults();
}

/** The bench workspace's new live key, on a database seeded earlier (keys are shown once). */
async function newKey(dataDir: string): Promise<string> {
  const storage = openStorage({ databaseUrl: null, dataDir });
  const key = await createKey(storage.db, systemClock, { workspace: BENCH.workspace, env: "live", name: "retention" });
  await storage.close();
  return key.key;
}

function writeResults(suffix = ""): void {
  const out = join(ROOT, "bench", "results", `${stamp}-retention${suffix}.md`);
  writeFileSync(out, `${lines.join("\n")}\n`);
  log(`\nWritten to ${out}; the databases are in ${dir} (delete it when done).`);
}

/** 1. Retrieve under load, without and with the pruner at work. */
async function measureRetrieve(dataDir: string, key: string, now: number): Promise<void> {
  if (values.reuse) log(`Again on the database of ${values.reuse} (${new Date(now).toISOString()}), at the code of this checkout.`);
  const command = snapshotWarden(join(dir, "warden"));
  const spec = {
    key,
    connections: CONNECTIONS,
    durationSec: DURATION,
    warmupSec: 3,
    request: { kind: "retrieve" as const, tool: BENCH.tool, customers: CUSTOMERS },
  };
  // Alternated, two rounds each: on a shared machine other work comes and goes.
  const runs: { label: string; retention: string; p99: number }[] = [];
  for (const [round, label, retention] of [
    [1, "without pruning (WARDEN_RETENTION_DAYS=0)", "0"],
    [1, "while pruning (WARDEN_RETENTION_DAYS=35)", "35"],
    [2, "without pruning (WARDEN_RETENTION_DAYS=0)", "0"],
    [2, "while pruning (WARDEN_RETENTION_DAYS=35)", "35"],
  ] as const) {
    const server = await startWarden({
      command,
      databaseUrl: null,
      dataDir,
      limits: BENCH_LIMITS,
      logFile: join(dir, `warden-${retention}-${round}.log`),
      env: { WARDEN_RETENTION_DAYS: retention, WARDEN_DELIVERY_WORKER: "0", LOG_LEVEL: "info" },
    });
    const started = performance.now();
    const measured = await measureLoad(server, spec, { patient: false });
    const elapsed = (performance.now() - started) / 1000;
    await server.stop();
    const after = openStorage({ databaseUrl: null, dataDir });
    const left = await countRows(after, "events");
    const deliveriesLeft = await countRows(after, "deliveries");
    await after.close();
    runs.push({ label, retention, p99: measured.latencyMs.p99 });
    log(
      `Round ${round}, retrieve ${label}: ${Math.round(measured.reqPerSec)} req/s, p50 ${measured.latencyMs.p50.toFixed(2)} ms, p99 ${measured.latencyMs.p99.toFixed(2)} ms; ` +
        `left when the server stopped (${elapsed.toFixed(0)} s after its start): ${deliveriesLeft.toLocaleString("en")} deliveries and ${left.toLocaleString("en")} events of ${EVENTS.toLocaleString("en")} each; ` +
        `the machine's other work used ${Math.round(measured.otherCpuPercent)}% of a core during the run, Warden ${Math.round(measured.serverCpuPercent)}%`,
    );
  }
  for (const round of [0, 1]) {
    const without = runs[2 * round];
    const pruning = runs[2 * round + 1];
    if (without && pruning) log(`Round ${round + 1}: p99 while pruning / p99 without: ${(pruning.p99 / without.p99).toFixed(2)}`);
  }

  if (values.reuse) writeResults("-again");
}

/** 2. Throughput, in this process, no pause between batches. */
async function measureThroughput(copyDir: string, now: number): Promise<void> {
  const copy = openStorage({ databaseUrl: null, dataDir: copyDir });
  const config = parseConfig({ WARDEN_RETENTION_DAYS: "35" });
  const before = await pages(copy);
  const t0 = performance.now();
  const pruned = await pruneExpired({ db: copy.db, clock: { now: () => now }, config }, { batchSize: 500, pauseMs: 0, pauseFactor: 0 });
  const seconds = (performance.now() - t0) / 1000;
  const rows = pruned.deliveries * 2 + pruned.events; // each delivery had one attempt
  const afterPrune = await pages(copy);
  await copy.close();
  log(
    `Pruning in process, batches of 500, no pause: ${pruned.events.toLocaleString("en")} events, ${pruned.deliveries.toLocaleString("en")} deliveries and as many attempts ` +
      `in ${seconds.toFixed(1)} s: ${Math.round(rows / seconds).toLocaleString("en")} rows/s. File ${before.mb} MB; after: ${afterPrune.mb} MB, ${afterPrune.free} of ${afterPrune.pages} pages free for reuse.`,
  );
}

/** Part 2 on PostgreSQL: seeding and pruning through the same functions, in a schema of its own. */
async function measurePostgresThroughput(now: number): Promise<void> {
  const schema = `retention_${stamp.replace(/-/g, "_").toLowerCase()}`;
  await runOnPg(`create schema ${schema}`);
  try {
    const storage = openStorage({ databaseUrl: PG_URL, pgSchema: schema, poolSize: 2 });
    try {
      await migrateToLatest(storage.db, "postgres");
      const ws = await setUpWorkspace(storage);
      const seedStart = performance.now();
      await seedOldEvents(storage, ws, EVENTS, now);
      await sql`analyze`.execute(storage.db);
      log(`PostgreSQL: seeded in ${Math.round((performance.now() - seedStart) / 1000)} s.`);
      const config = parseConfig({ WARDEN_RETENTION_DAYS: "35" });
      const t0 = performance.now();
      const pruned = await pruneExpired({ db: storage.db, clock: { now: () => now }, config }, { batchSize: 500, pauseMs: 0, pauseFactor: 0 });
      const seconds = (performance.now() - t0) / 1000;
      const rows = pruned.deliveries * 2 + pruned.events;
      log(
        `PostgreSQL, pruning in process, batches of 500, no pause: ${pruned.events.toLocaleString("en")} events, ${pruned.deliveries.toLocaleString("en")} deliveries and as many attempts ` +
          `in ${seconds.toFixed(1)} s: ${Math.round(rows / seconds).toLocaleString("en")} rows/s.`,
      );
    } finally {
      await storage.close();
    }
  } finally {
    await runOnPg(`drop schema ${schema} cascade`);
  }
  writeResults("-postgres");
}

/** 3. Steady traffic with a short retention: the file stops growing. */
async function measureSteadyTraffic(now: number): Promise<void> {
  const steadyDir = join(dir, "steady");
  const steady = openStorage({ databaseUrl: null, dataDir: steadyDir });
  await migrateToLatest(steady.db, "sqlite");
  const steadyWs = await setUpWorkspace(steady);
  const clock = new ManualClock(now);
  const steadyConfig = parseConfig({ WARDEN_RETENTION_DAYS: "1" });
  const PER_HOUR = 2_000;
  const sizes: string[] = [];
  let written = 0;
  for (let hour = 1; hour <= 24 * 6; hour++) {
    for (let tenth = 0; tenth < 6; tenth++) {
      // Events of these 10 minutes, stamped with the simulated time (seedOldEvents spreads them back 40-70 days, so they are written here directly).
      await writeSteadyEvents(steady, steadyWs, PER_HOUR / 6, clock.now(), written);
      written += PER_HOUR / 6;
      clock.advance(10 * MINUTE_MS);
      await pruneExpired({ db: steady.db, clock, config: steadyConfig }, { batchSize: 500, pauseMs: 0, pauseFactor: 0 });
    }
    if (hour % 24 === 0) {
      const size = await pages(steady);
      sizes.push(
        `day ${hour / 24}: ${(await countRows(steady, "events")).toLocaleString("en")} events, ${size.mb} MB (${size.pages} pages, ${size.free} free)`,
      );
    }
  }
  await steady.close();
  log(
    `Steady traffic, ${PER_HOUR.toLocaleString("en")} events an hour (each with a delivery and an attempt), WARDEN_RETENTION_DAYS=1, pruned every 10 simulated minutes:`,
  );
  for (const line of sizes) log(`  ${line}`);
}

let steadyEndpoint: string | null = null;

async function writeSteadyEvents(storage: Storage, ws: BenchWorkspace, count: number, at: number, offset: number): Promise<void> {
  if (!steadyEndpoint) {
    steadyEndpoint = "ep_benchsteady00000000000000";
    await addBenchEndpoint(storage, ws, steadyEndpoint, at);
  }
  await seedEvents(storage, ws, { endpointId: steadyEndpoint, count, oldest: at, newest: at, idPrefix: "steady", firstNumber: offset });
}

await main();
