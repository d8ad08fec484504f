// How far a second `warden serve` over the same PostgreSQL carries the two hot paths
// (issue 33): retrieve and the access check answered by one process, then by two on
// their own ports, under the same load. Nothing is pinned: the processes, PostgreSQL and
// the load generators share the machine's cores, as two processes on one host do. The
// load is always two generators of half the connections each, aimed at the one process
// or one at each, so that the generators cost the same in both runs. One and two take
// turns in rounds (the order reversed each round) and the medians are compared. Not part
// of `npm run bench`; build first:
//
//   npm run build && node --import tsx bench/two-processes.ts [--customers 10000] [--duration 10] [--rounds 3] [--connections 50]
//
// Prints each run and the ratios; bench/journal.md keeps the figures.
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { migrateToLatest } from "../src/db/database.js";
import { BENCH } from "./customer-mix.js";
import { BENCH_LIMITS, createDatabase, settle } from "./engine-run.js";
import { runLoadGenerator } from "./load.js";
import type { LoadRequest, LoadResult } from "./load-worker.js";
import { onInterrupt, ROOT, type ServerProcess, snapshotWarden, startWarden } from "./processes.js";
import { seedCustomers, setUpWorkspace } from "./seed.js";

const { values } = parseArgs({
  options: {
    customers: { type: "string", default: "10000" },
    duration: { type: "string", default: "10" },
    rounds: { type: "string", default: "3" },
    connections: { type: "string", default: "50" },
  },
});
const CUSTOMERS = Number(values.customers);
const DURATION_SEC = Number(values.duration);
const ROUNDS = Number(values.rounds);
const CONNECTIONS = Number(values.connections);

interface Run {
  processes: 1 | 2;
  reqPerSec: number;
  /** The slower generator's p50 and p99: what the worse-served half of the clients saw. */
  p50Ms: number;
  p99Ms: number;
  peakRssMb: number[];
}

const median = (xs: readonly number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? Number.NaN) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
};

function check(what: string, result: LoadResult): void {
  const bad = Object.keys(result.statuses).filter((status) => !status.startsWith("2"));
  if (bad.length > 0 || result.errors > 0 || result.ok === 0) throw new Error(`${what}: answers ${JSON.stringify(result.statuses)}, ${result.errors} errors`);
}

async function main() {
  // Under the checkout, so that the snapshot of Warden finds its packages in node_modules.
  const workDir = join(ROOT, "bench", "tmp", `two-processes-${Date.now().toString(36)}`);
  mkdirSync(workDir, { recursive: true });
  const command = snapshotWarden(join(workDir, "app"));
  const database = await createDatabase("postgres", workDir, "two");
  const unregister = onInterrupt(() => database.drop());
  try {
    const storage = database.storage();
    let key: string;
    try {
      await migrateToLatest(storage.db, storage.dialect);
      const ws = await setUpWorkspace(storage);
      key = ws.key;
      await seedCustomers(storage, ws, { from: 0, to: CUSTOMERS, now: Date.now() });
      await settle(storage);
    } finally {
      await storage.close();
    }
    process.stdout.write(
      `PostgreSQL, ${CUSTOMERS.toLocaleString("en")} customers seeded; ${CONNECTIONS} connections, ${DURATION_SEC} s runs, ${ROUNDS} rounds\n`,
    );

    const start = (n: number) =>
      startWarden({
        command,
        databaseUrl: database.wardenUrl,
        dataDir: database.dataDir,
        limits: BENCH_LIMITS,
        logFile: join(workDir, `warden-${n}.log`),
        pinned: false,
      });

    const measure = async (processes: 1 | 2, request: LoadRequest): Promise<Run> => {
      const servers: ServerProcess[] = [];
      try {
        for (let n = 0; n < processes; n++) servers.push(await start(n));
        const targets = processes === 1 ? [servers[0], servers[0]] : servers;
        const results = await Promise.all(
          targets.map((server) =>
            runLoadGenerator(
              { url: (server as ServerProcess).url, key, connections: CONNECTIONS / 2, durationSec: DURATION_SEC, warmupSec: 3, request },
              { pin: false },
            ),
          ),
        );
        for (const result of results) check(`${request.kind} with ${processes} process(es)`, result);
        return {
          processes,
          reqPerSec: results.reduce((sum, r) => sum + r.reqPerSec, 0),
          p50Ms: Math.max(...results.map((r) => r.latencyMs.p50)),
          p99Ms: Math.max(...results.map((r) => r.latencyMs.p99)),
          peakRssMb: servers.map((s) => Math.round(s.peakRssMb())),
        };
      } finally {
        for (const server of servers) await server.stop();
      }
    };

    const requests: LoadRequest[] = [
      { kind: "retrieve", tool: BENCH.tool, customers: CUSTOMERS },
      { kind: "access", tool: BENCH.tool, customers: CUSTOMERS },
    ];
    for (const request of requests) {
      const runs: Run[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        for (const processes of round % 2 === 0 ? ([1, 2] as const) : ([2, 1] as const)) {
          const run = await measure(processes, request);
          runs.push(run);
          process.stdout.write(
            `  ${request.kind}, ${processes} process(es), round ${round + 1}: ${Math.round(run.reqPerSec)} req/s, p50 ${run.p50Ms.toFixed(2)} ms, p99 ${run.p99Ms.toFixed(2)} ms, peak RSS ${run.peakRssMb.join(" + ")} MB\n`,
          );
        }
      }
      const one = runs.filter((r) => r.processes === 1);
      const two = runs.filter((r) => r.processes === 2);
      const ratios = one.map((r, i) => (two[i]?.reqPerSec ?? Number.NaN) / r.reqPerSec);
      process.stdout.write(
        `${request.kind}: one process ${Math.round(median(one.map((r) => r.reqPerSec)))} req/s, two ${Math.round(median(two.map((r) => r.reqPerSec)))} req/s; two ÷ one by round ${ratios.map((r) => r.toFixed(2)).join(", ")}, median ${median(ratios).toFixed(2)}×\n`,
      );
    }
  } finally {
    unregister();
    await database.drop();
    rmSync(workDir, { recursive: true, force: true });
  }
}

await main();
