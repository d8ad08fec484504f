// What one spend costs Warden's process in CPU, in process: scenario 10's request (one unit
// of one person's credits, each with an Idempotency-Key of its own) through Warden's own app
// (buildApp over createServices, as `warden serve` builds them) with app.inject, in waves of
// `--concurrency` at once so that spends queue on the person's meter and share batches as
// they do under load. CPU time, not throughput: on a shared machine other work makes a run
// slower, but hardly changes the CPU it takes. On PostgreSQL the database server's CPU is
// not counted (it is another process).
//
//   node --import tsx bench/spend-cpu.ts [--engine sqlite,postgres] [--spends 6000] [--concurrency 50] [--rounds 3] [--profile <folder>]
//
// --profile writes a CPU profile of each engine's last round to the folder, for
// bench/profile-summary.ts (the seeding and warm-up left out).
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { buildApp } from "../src/app.js";
import { systemClock } from "../src/clock.js";
import { parseConfig } from "../src/config.js";
import { type Dialect, migrateToLatest, openStorage, type Storage } from "../src/db/database.js";
import { createServices } from "../src/services.js";
import { KeyedBatches } from "../src/usage/meter-queue.js";
import { addMeter } from "../src/usage/terms.service.js";
import { BENCH } from "./customer-mix.js";
import { BENCH_LIMITS, PG_URL } from "./engine-run.js";
import { ROOT } from "./processes.js";
import { setUpWorkspace } from "./seed.js";
import { SPEND_METER, SPENDER } from "./spend.js";

const spendPath = `/api/v1/tools/${BENCH.tool}/customers/${encodeURIComponent(SPENDER)}`;

// The sizes of the batches the meter queue takes, seen from outside: its `take` wrapped
// (the bench's own instrument; Warden keeps no such count).
const batchSizes: number[] = [];
{
  const proto = KeyedBatches.prototype as unknown as { take: (queue: unknown) => unknown[] };
  const take = proto.take;
  proto.take = function (this: unknown, queue: unknown) {
    const taken = take.call(this, queue);
    batchSizes.push(taken.length);
    return taken;
  };
}

// Statements run, by their text with lists folded (`in (?, ?)` as `in (…)`).
const statements = new Map<string, number>();
const shapeOf = (sql: string) => sql.replace(/\((?:\?|\$\d+)(?:, (?:\?|\$\d+))*\)/g, "(…)").replace(/\s+/g, " ");
const onQuery = (sql: string) => {
  const shape = shapeOf(sql);
  statements.set(shape, (statements.get(shape) ?? 0) + 1);
};

function openBenchStorage(engine: Dialect, where: string): Storage {
  if (engine === "postgres") return openStorage({ databaseUrl: PG_URL, pgSchema: where, onQuery });
  return openStorage({ databaseUrl: null, sqliteFile: join(where, "warden.sqlite"), onQuery });
}

interface Round {
  usPerSpend: number;
  statementsPerSpend: number;
  /** The statements most run, by text, with how many a spend. */
  top: [string, number][];
  /** Batch size → how many batches had it. */
  batches: Map<number, number>;
}

async function measure(engine: Dialect, where: string, spends: number, concurrency: number, rounds: number, profileTo: string | null): Promise<Round[]> {
  let storage = openBenchStorage(engine, where);
  await migrateToLatest(storage.db, storage.dialect);
  const ws = await setUpWorkspace(storage);
  await addMeter(storage.db, systemClock, { workspace: BENCH.workspace, tool: BENCH.tool, id: SPEND_METER, name: "Summaries", unit: "summaries" });
  await storage.close();
  storage = openBenchStorage(engine, where);
  const config = parseConfig(Object.fromEntries(Object.entries(BENCH_LIMITS).map(([k, v]) => [k, String(v)])));
  const services = await createServices(config, { clock: systemClock, storage });
  // As the benchmark starts `warden serve` (LOG_LEVEL=warn): a spend answered writes no line.
  const app = await buildApp(services, { logger: { level: "warn" } });
  // As `warden serve` starts it: while the access-change feed is read, the answer cache keeps the tool's terms.
  services.accessWatch.start();
  const headers = { authorization: `Bearer ${ws.key}` };
  const added = await app.inject({
    method: "POST",
    url: `${spendPath}/credits`,
    headers,
    payload: { meter: SPEND_METER, amount: 1_000_000_000, note: "bench" },
  });
  if (added.statusCode !== 201) throw new Error(`adding credits answered ${added.statusCode}: ${added.body}`);
  const series = `s${Date.now().toString(36)}`;
  let n = 0;
  const one = async () => {
    n += 1;
    const response = await app.inject({
      method: "POST",
      url: `${spendPath}/usage`,
      headers: { ...headers, "idempotency-key": `${series}-${n}` },
      payload: { meter: SPEND_METER, quantity: 1 },
    });
    if (response.statusCode !== 200) throw new Error(`a spend answered ${response.statusCode}: ${response.body}`);
  };
  const wave = () => Promise.all(Array.from({ length: concurrency }, one));
  const results: Round[] = [];
  try {
    // Warm-up: the JIT, the statement caches, the answer cache of the tool's terms.
    for (let i = 0; i < Math.ceil(1000 / concurrency); i++) await wave();
    for (let round = 0; round < rounds; round++) {
      batchSizes.length = 0;
      statements.clear();
      const session = profileTo !== null && round === rounds - 1 ? new Session() : null;
      if (session) {
        session.connect();
        await session.post("Profiler.enable");
        await session.post("Profiler.start");
      }
      const waves = Math.ceil(spends / concurrency);
      const before = process.cpuUsage();
      for (let i = 0; i < waves; i++) await wave();
      const used = process.cpuUsage(before);
      if (session && profileTo !== null) {
        const { profile } = await session.post("Profiler.stop");
        writeFileSync(profileTo, JSON.stringify(profile));
        session.disconnect();
      }
      const batches = new Map<number, number>();
      for (const size of batchSizes) batches.set(size, (batches.get(size) ?? 0) + 1);
      const sent = waves * concurrency;
      const top = [...statements].sort((a, b) => b[1] - a[1]).map(([sql, count]): [string, number] => [sql, count / sent]);
      const statementsPerSpend = top.reduce((sum, [, perSpend]) => sum + perSpend, 0);
      results.push({ usPerSpend: (used.user + used.system) / sent, statementsPerSpend, top: top.slice(0, 12), batches });
    }
    // Exact: every spend took one unit (the credits added less what was spent).
    const left = await storage.db.selectFrom("meter_credits").select("remaining").executeTakeFirstOrThrow();
    if (1_000_000_000 - Number(left.remaining) !== n)
      throw new Error(`${n} spends answered 200 but ${1_000_000_000 - Number(left.remaining)} units were taken`);
  } finally {
    await app.close();
    await services.accessWatch.stop();
    await services.close();
  }
  return results;
}

function render(engine: Dialect, rounds: Round[]): string {
  const best = rounds.reduce((a, b) => (b.usPerSpend < a.usPerSpend ? b : a));
  const sizes = [...best.batches].sort((a, b) => b[0] - a[0]);
  const total = sizes.reduce((sum, [, count]) => sum + count, 0);
  return [
    `${engine}: ${best.usPerSpend.toFixed(0)} µs of CPU a spend (best of ${rounds.length}: ${rounds.map((r) => r.usPerSpend.toFixed(0)).join(", ")})`,
    `  batches (size×count, ${total} batches): ${sizes.map(([size, count]) => `${size}×${count}`).join(" ")}`,
    `  ${best.statementsPerSpend.toFixed(2)} statements a spend; the most run, a spend:`,
    ...best.top.map(([sql, perSpend]) => `    ${perSpend.toFixed(3)}  ${sql.length > 140 ? `${sql.slice(0, 140)}…` : sql}`),
  ].join("\n");
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      engine: { type: "string", default: "sqlite,postgres" },
      spends: { type: "string", default: "6000" },
      concurrency: { type: "string", default: "50" },
      rounds: { type: "string", default: "3" },
      profile: { type: "string" },
    },
  });
  if (values.profile) mkdirSync(values.profile, { recursive: true });
  for (const engine of values.engine.split(",") as Dialect[]) {
    const dir = join(ROOT, "bench", "tmp", `spend-cpu-${Date.now().toString(36)}`);
    const schema = `spend_cpu_${process.pid}`;
    if (engine === "sqlite") mkdirSync(dir, { recursive: true });
    else {
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`create schema ${schema}`);
      await client.end();
    }
    try {
      const rounds = await measure(
        engine,
        engine === "sqlite" ? dir : schema,
        Number(values.spends),
        Number(values.concurrency),
        Number(values.rounds),
        values.profile ? join(values.profile, `${engine}-spend.cpuprofile`) : null,
      );
      process.stdout.write(`${render(engine, rounds)}\n`);
    } finally {
      if (engine === "sqlite") rmSync(dir, { recursive: true, force: true });
      else {
        const client = new pg.Client({ connectionString: PG_URL });
        await client.connect();
        await client.query(`drop schema ${schema} cascade`);
        await client.end();
      }
    }
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
