// Compares two builds of Warden on retrieve-a-customer at the same moment: both servers
// run at once, pinned to the server core, each loaded by its own autocannon on the load
// core. The scheduler shares the core between them, so whatever the machine's speed does
// during a round it does to both, and their requests per second compare as a ratio. Runs
// one after the other could not tell a 5% change: this machine's speed moved by half from
// minute to minute (2026-11-25: one build measured 2,606 to 5,821 req/s in alternate runs
// of one minute), while two copies of one build at once came out 1.00–1.03 apart.
//
//   npm run build && cp -r bin dist /tmp/a/   (a build; node_modules must be found above it)
//   node --import tsx bench/ab.ts --a /tmp/a --b /tmp/b [--engine sqlite|postgres] [--apart] [--customers 10000] [--rounds 8] [--duration 6] [--connections 25]
//
// Each build gets a database of its own, seeded alike (SQLite: a copy of one seeded file;
// PostgreSQL: a schema each, dropped at the end), so neither waits on the other's locks.
// PostgreSQL is shared by both, as the one machine's. Which load starts first alternates by round.
import { type ChildProcess, spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { sql } from "kysely";
import { migrateToLatest, openStorage } from "../src/db/database.js";
import { BENCH_LIMITS, PG_URL, runOnPg } from "./engine-run.js";
import type { LoadResult, LoadSpec } from "./load-worker.js";
import { commandFor, freePort, ROOT } from "./processes.js";
import { seedCustomers, setUpWorkspace } from "./seed.js";

const { values } = parseArgs({
  options: {
    a: { type: "string" },
    b: { type: "string" },
    customers: { type: "string", default: "10000" },
    rounds: { type: "string", default: "8" },
    duration: { type: "string", default: "6" },
    connections: { type: "string", default: "25" },
    engine: { type: "string", default: "sqlite" },
    apart: { type: "boolean", default: false },
  },
});
if (values.engine !== "sqlite" && values.engine !== "postgres") throw new Error("--engine is sqlite or postgres");
const postgres = values.engine === "postgres";
if (!values.a || !values.b)
  throw new Error(
    "usage: bench/ab.ts --a <folder with bin/ and dist/> --b <folder> [--engine sqlite|postgres] [--apart] [--customers n] [--rounds n] [--duration s] [--connections n]",
  );
const builds = { a: resolve(values.a), b: resolve(values.b) };
const customers = Number(values.customers);

const work = mkdtempSync(join(tmpdir(), "warden-ab-"));
process.on("exit", () => rmSync(work, { recursive: true, force: true }));
const seeded = join(work, "seed");
const schemas = { a: `bench_ab_a_${process.pid}`, b: `bench_ab_b_${process.pid}` };

/** Seeds one database: the SQLite file that both builds copy, or a build's own schema. Answers the live key. */
async function seed(schema?: string): Promise<string> {
  if (schema) await runOnPg(`create schema ${schema}`);
  const storage = schema ? openStorage({ databaseUrl: PG_URL, pgSchema: schema, poolSize: 2 }) : openStorage({ databaseUrl: null, dataDir: seeded });
  try {
    await migrateToLatest(storage.db, storage.dialect);
    const ws = await setUpWorkspace(storage);
    await seedCustomers(storage, ws, { from: 0, to: customers, now: Date.now() });
    // As the bench does after its load: what autovacuum would do within a minute.
    if (schema) await sql`analyze`.execute(storage.db);
    return ws.key;
  } finally {
    await storage.close();
  }
}

const keys = postgres ? { a: await seed(schemas.a), b: await seed(schemas.b) } : await seed().then((key) => ({ a: key, b: key }));

async function startBuild(name: "a" | "b"): Promise<{ port: number; child: ChildProcess }> {
  const dataDir = join(work, name);
  mkdirSync(dataDir);
  if (!postgres) cpSync(join(seeded, "warden.sqlite"), join(dataDir, "warden.sqlite"));
  const port = await freePort();
  const env = {
    ...process.env,
    ...Object.fromEntries(Object.entries(BENCH_LIMITS).map(([k, v]) => [k, String(v)])),
    LOG_LEVEL: "warn",
    WARDEN_DATA_DIR: dataDir,
    ...(postgres ? { DATABASE_URL: `${PG_URL}?options=${encodeURIComponent(`-c search_path=${schemas[name]}`)}` } : {}),
    WARDEN_SECRET_KEY: "bench-secret-key-0123456789abcdefghijklmnopqrstuvwxyz",
    WARDEN_DELIVERY_WORKER: "0",
    PORT: String(port),
    HOST: "127.0.0.1",
  };
  const [command, args] = commandFor("server", process.execPath, [join(builds[name], "bin", "warden.js"), "serve"]);
  const child = spawn(command, args, { env, stdio: ["ignore", "ignore", "inherit"] });
  for (let tries = 0; ; tries++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/api/v1/openapi.json`)).ok) break;
    } catch (error) {
      if (tries > 200 || child.exitCode !== null) throw new Error(`build ${name} did not start: ${String(error)}`);
    }
    await new Promise((done) => setTimeout(done, 50));
  }
  return { port, child };
}

function load(name: "a" | "b", port: number): Promise<number> {
  const spec: LoadSpec = {
    url: `http://127.0.0.1:${port}`,
    key: keys[name],
    connections: Number(values.connections),
    durationSec: Number(values.duration),
    warmupSec: 1,
    request: { kind: "retrieve", tool: "tabmaster", customers },
  };
  const [command, args] = commandFor("load", process.execPath, ["--import", "tsx", "bench/load-worker.ts", JSON.stringify(spec)]);
  const child = spawn(command, args, { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  return new Promise((done, fail) =>
    child.on("close", (code) => {
      const line = out
        .split("\n")
        .filter(Boolean)
        .map((text) => JSON.parse(text) as { event: string; result?: LoadResult })
        .find((l) => l.event === "done");
      if (code !== 0 || !line?.result) return fail(new Error(`the load on port ${port} failed (exit ${code})`));
      if (line.result.errors > 0 || line.result.ok === 0)
        return fail(new Error(`the load on port ${port} had answers other than 2xx: ${JSON.stringify(line.result.statuses)}`));
      done(line.result.reqPerSec);
    }),
  );
}

const a = await startBuild("a");
const b = await startBuild("b");
try {
  const ratios: number[] = [];
  let sumA = 0;
  let sumB = 0;
  for (let round = 0; round < Number(values.rounds); round++) {
    let ra: number;
    let rb: number;
    if (values.apart && round % 2 === 0) [ra, rb] = [await load("a", a.port), await load("b", b.port)];
    else if (values.apart) [rb, ra] = [await load("b", b.port), await load("a", a.port)];
    else if (round % 2 === 0) [ra, rb] = await Promise.all([load("a", a.port), load("b", b.port)]);
    else [rb, ra] = await Promise.all([load("b", b.port), load("a", a.port)]);
    sumA += ra;
    sumB += rb;
    ratios.push(rb / ra);
    console.log(`round ${round + 1}: a ${Math.round(ra)} req/s, b ${Math.round(rb)} req/s, b/a ${(rb / ra).toFixed(3)}`);
  }
  ratios.sort((x, y) => x - y);
  console.log(
    `b/a ${(sumB / sumA).toFixed(3)} over ${ratios.length} rounds (median ${ratios[Math.floor(ratios.length / 2)]?.toFixed(3)}; a ${builds.a}, b ${builds.b})`,
  );
} finally {
  a.child.kill("SIGTERM");
  b.child.kill("SIGTERM");
  if (postgres) {
    await Promise.all([a.child, b.child].map((child) => new Promise((done) => (child.exitCode !== null ? done(null) : child.once("exit", done)))));
    for (const schema of Object.values(schemas)) await runOnPg(`drop schema ${schema} cascade`);
  }
}
