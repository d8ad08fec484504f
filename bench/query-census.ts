// Where a request's time goes, in process: every statement that retrieve-a-customer,
// create-a-grant, a Stripe report of a paid checkout (ingest) and a spend of one unit run, with its share of
// the time, and (on SQLite) what the cache of prepared statements saves. It drives Warden's own app (buildApp over
// createServices, as `warden serve` builds them) with app.inject, so the network and
// the load generator are out of the picture. Used to explain the benchmark's misses;
// it changes nothing in src/.
//
//   node --import tsx bench/query-census.ts [--customers 20000] [--engine sqlite|postgres] [--requests 2000] [--rounds 3]
//        [--paths retrieve,grant,ingest,spend] [--no-uncached] [--profile <folder>]
//
// --profile writes a CPU profile of each path's measured requests (its last round) to
// the folder, for bench/profile-summary.ts: the seeding and warm-up are left out.
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import SQLite from "better-sqlite3";
import { Kysely, type LogEvent, SqliteDialect } from "kysely";
import pg from "pg";
import { buildApp } from "../src/app.js";
import { systemClock } from "../src/clock.js";
import { parseConfig } from "../src/config.js";
import { type Dialect, migrateToLatest, openStorage, type Storage } from "../src/db/database.js";
import type { Database } from "../src/db/schema.js";
import { DatabaseAvailability } from "../src/db/storage-faults.js";
import { createServices } from "../src/services.js";
import { connectStripe } from "../src/stripe/stripe-account.service.js";
import { addMeter } from "../src/usage/terms.service.js";
import { BENCH, emailOf } from "./customer-mix.js";
import { BENCH_LIMITS, PG_URL } from "./engine-run.js";
import { ROOT } from "./processes.js";
import { type BenchWorkspace, seedCustomers, setUpWorkspace } from "./seed.js";
import { SPEND_METER, SPENDER } from "./spend.js";
import { STRIPE_PATH, signedCheckoutReport } from "./stripe-report.js";

type Kind = "retrieve" | "grant" | "ingest" | "spend";
const TITLES: Record<Kind, string> = {
  retrieve: "Retrieve a customer",
  grant: "Create a grant",
  ingest: "Ingest a Stripe report of a paid checkout",
  spend: "Spend one unit of one person's credits, with an Idempotency-Key",
};
const KINDS = Object.keys(TITLES) as Kind[];
const spendPath = `/api/v1/tools/${BENCH.tool}/customers/${encodeURIComponent(SPENDER)}`;
/** The Stripe signing secret the census connects with, for its ingest reports. */
const STRIPE_SECRET = `whsec_${randomBytes(24).toString("base64url")}`;

interface Recorded {
  sql: string;
  ms: number;
}

/**
 * Storage as `warden serve` opens it (openStorage: the SQLite statement cache, PostgreSQL's
 * named statements), timing every statement; or, for comparison, SQLite without the
 * statement cache (as before 721a240).
 */
function openCensusStorage(engine: Dialect, where: string, options: { cacheStatements: boolean }, record: (r: Recorded) => void): Storage {
  const onQuery = (sql: string, _parameters: readonly unknown[], ms: number) => record({ sql, ms });
  if (engine === "postgres") return openStorage({ databaseUrl: PG_URL, pgSchema: where, onQuery });
  if (options.cacheStatements) return openStorage({ databaseUrl: null, sqliteFile: join(where, "warden.sqlite"), onQuery });
  const sqlite = new SQLite(join(where, "warden.sqlite"));
  // As openStorage sets them.
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("busy_timeout = 5000");
  sqlite.pragma("synchronous = NORMAL");
  sqlite.pragma("foreign_keys = ON");
  const log = (event: LogEvent) => {
    if (event.level === "query") record({ sql: event.query.sql, ms: event.queryDurationMillis });
  };
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }), log });
  return {
    db,
    dialect: "sqlite",
    availability: new DatabaseAvailability(),
    boundStatements: () => {},
    checkpointInBackground: () => null,
    close: () => db.destroy(),
  };
}

/** SQL text with its literal lists folded, so that `in (?, ?)` and `in (?)` count as one statement. */
const shapeOf = (sql: string) => sql.replace(/\((?:\?|\$\d+)(?:, (?:\?|\$\d+))*\)/g, "(…)").replace(/\s+/g, " ");

interface PathCensus {
  requests: number;
  usPerRequest: number;
  statementsPerRequest: number;
  /** Time inside the driver (prepare and run, or the round trip) per request, µs. */
  driverUsPerRequest: number;
  statements: { sql: string; perRequest: number; usEach: number }[];
}

async function census(
  storage: Storage,
  record: Recorded[],
  ws: BenchWorkspace,
  customers: number,
  requests: number,
  kind: Kind,
  profileTo: string | null,
): Promise<PathCensus> {
  const config = parseConfig(Object.fromEntries(Object.entries(BENCH_LIMITS).map(([k, v]) => [k, String(v)])));
  const services = await createServices(config, { clock: systemClock, storage });
  const app = await buildApp(services, { logger: false });
  const headers = { authorization: `Bearer ${ws.key}` };
  // A series of its own per run, so that every grant is for a new address and every report a new sale.
  const series = `c${Date.now().toString(36)}`;
  let n = 0;
  const one = async () => {
    n += 1;
    let response: Awaited<ReturnType<typeof app.inject>>;
    if (kind === "retrieve") {
      response = await app.inject({
        method: "GET",
        url: `/api/v1/tools/${BENCH.tool}/customers/${encodeURIComponent(emailOf((n * 7919) % customers))}`,
        headers,
      });
    } else if (kind === "grant") {
      response = await app.inject({
        method: "POST",
        url: `/api/v1/tools/${BENCH.tool}/grants`,
        headers,
        payload: { email: `census.${series}.${n}@bench.example.com`, days: 30 },
      });
    } else if (kind === "spend") {
      response = await app.inject({
        method: "POST",
        url: `${spendPath}/usage`,
        headers: { ...headers, "idempotency-key": `${series}-${n}` },
        payload: { meter: SPEND_METER, quantity: 1 },
      });
    } else {
      const { payload, signature } = signedCheckoutReport(series, n, STRIPE_SECRET);
      response = await app.inject({
        method: "POST",
        url: STRIPE_PATH,
        headers: { "content-type": "application/json", "stripe-signature": signature },
        payload,
      });
      // A 200 that ignored the report would measure nothing.
      if (!response.body.includes('"outcome":"applied"')) throw new Error(`a Stripe report was not applied: ${response.body.slice(0, 300)}`);
    }
    if (response.statusCode >= 300) throw new Error(`${kind} answered ${response.statusCode}: ${response.body}`);
  };
  if (kind === "spend") {
    const added = await app.inject({
      method: "POST",
      url: `${spendPath}/credits`,
      headers,
      payload: { meter: SPEND_METER, amount: 1_000_000_000, note: "census" },
    });
    if (added.statusCode !== 201) throw new Error(`adding credits answered ${added.statusCode}: ${added.body}`);
  }
  for (let i = 0; i < Math.min(500, requests); i++) await one();
  record.length = 0;
  const session = profileTo === null ? null : new Session();
  if (session) {
    session.connect();
    await session.post("Profiler.enable");
    await session.post("Profiler.start");
  }
  const started = performance.now();
  for (let i = 0; i < requests; i++) await one();
  const elapsed = performance.now() - started;
  if (session && profileTo !== null) {
    const { profile } = await session.post("Profiler.stop");
    writeFileSync(profileTo, JSON.stringify(profile));
    session.disconnect();
  }
  const byShape = new Map<string, { count: number; ms: number }>();
  let driverMs = 0;
  for (const r of record) {
    const shape = shapeOf(r.sql);
    const entry = byShape.get(shape) ?? { count: 0, ms: 0 };
    entry.count += 1;
    entry.ms += r.ms;
    driverMs += r.ms;
    byShape.set(shape, entry);
  }
  await app.close();
  await services.close();
  return {
    requests,
    usPerRequest: (elapsed * 1000) / requests,
    statementsPerRequest: record.length / requests,
    driverUsPerRequest: (driverMs * 1000) / requests,
    statements: [...byShape]
      .map(([sql, e]) => ({ sql, perRequest: e.count / requests, usEach: (e.ms * 1000) / e.count }))
      .sort((a, b) => b.perRequest * b.usEach - a.perRequest * a.usEach),
  };
}

function render(title: string, c: PathCensus): string {
  const lines = [
    `### ${title}`,
    "",
    `${c.requests} requests through app.inject, one at a time: **${c.usPerRequest.toFixed(0)} µs a request**, ${c.statementsPerRequest.toFixed(1)} statements a request, ${c.driverUsPerRequest.toFixed(0)} µs of them in the driver (${((c.driverUsPerRequest / c.usPerRequest) * 100).toFixed(0)}%); the rest is Kysely building and compiling queries, Fastify, and Warden's own code.`,
    "",
    "| Statement | Per request | µs each (driver) |",
    "|---|---:|---:|",
    ...c.statements.map((s) => `| \`${s.sql.length > 150 ? `${s.sql.slice(0, 150)}…` : s.sql}\` | ${s.perRequest.toFixed(2)} | ${s.usEach.toFixed(0)} |`),
    "",
  ];
  return lines.join("\n");
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      customers: { type: "string", default: "20000" },
      engine: { type: "string", default: "sqlite" },
      requests: { type: "string", default: "2000" },
      rounds: { type: "string", default: "3" },
      paths: { type: "string", default: "retrieve,grant" },
      "no-uncached": { type: "boolean", default: false },
      profile: { type: "string" },
    },
  });
  const paths = values.paths.split(",").map((p) => {
    if (!KINDS.includes(p as Kind)) throw new Error(`--paths lists ${KINDS.join(", ")}`);
    return p as Kind;
  });
  if (values.profile) mkdirSync(values.profile, { recursive: true });
  const engine = values.engine as Dialect;
  const customers = Number(values.customers);
  const requests = Number(values.requests);
  const rounds = Number(values.rounds);
  const dir = join(ROOT, "bench", "tmp", `census-${Date.now().toString(36)}`);
  mkdirSync(dir, { recursive: true });
  const schema = `census_${process.pid}`;
  const where = engine === "sqlite" ? dir : schema;
  if (engine === "postgres") {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`create schema ${schema}`);
    await client.end();
  }
  const record: Recorded[] = [];
  try {
    let storage = openCensusStorage(engine, where, { cacheStatements: false }, () => {});
    await migrateToLatest(storage.db, storage.dialect);
    const ws = await setUpWorkspace(storage);
    await seedCustomers(storage, ws, { from: 0, to: customers, now: Date.now() });
    if (paths.includes("spend")) {
      await addMeter(storage.db, systemClock, { workspace: BENCH.workspace, tool: BENCH.tool, id: SPEND_METER, name: "Summaries", unit: "summaries" });
    }
    await storage.close();
    if (paths.includes("ingest")) {
      storage = openCensusStorage(engine, where, { cacheStatements: true }, () => {});
      const config = parseConfig(Object.fromEntries(Object.entries(BENCH_LIMITS).map(([k, v]) => [k, String(v)])));
      const services = await createServices(config, { clock: systemClock, storage });
      await connectStripe(services, { workspace: BENCH.workspace, env: ws.env, webhookSecret: STRIPE_SECRET });
      await services.close();
    }

    // Variants alternate over several rounds and each keeps its best round: on a shared
    // machine, other work only ever makes a round slower.
    const out: string[] = [`## Query census: ${engine}, ${customers.toLocaleString("en")} customers`, ""];
    const variants = engine === "sqlite" && !values["no-uncached"] ? [false, true] : [true];
    const best = new Map<string, { title: string; result: PathCensus }>();
    for (let round = 1; round <= rounds; round++) {
      for (const cacheStatements of variants) {
        const label = !cacheStatements
          ? "without the statement cache (as before 721a240)"
          : engine === "sqlite"
            ? "with the statement cache (as openStorage since 721a240)"
            : "as openStorage opens it";
        for (const kind of paths) {
          storage = openCensusStorage(engine, where, { cacheStatements }, (r) => record.push(r));
          const profileTo =
            values.profile && round === rounds ? join(values.profile, `${engine}-${kind}-${cacheStatements ? "cached" : "uncached"}.cpuprofile`) : null;
          const result = await census(storage, record, ws, customers, kind === "retrieve" ? requests : Math.ceil(requests / 3), kind, profileTo);
          const title = `${TITLES[kind]}, ${label}`;
          const earlier = best.get(title);
          if (!earlier || result.usPerRequest < earlier.result.usPerRequest) best.set(title, { title, result });
          process.stdout.write(`round ${round}, ${kind} ${label}: ${result.usPerRequest.toFixed(0)} µs a request\n`);
        }
      }
    }
    out.push(`Best of ${rounds} rounds for each.`, "");
    for (const { title, result } of best.values()) out.push(render(title, result));
    process.stdout.write(`\n${out.join("\n")}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    if (engine === "postgres") {
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`drop schema ${schema} cascade`);
      await client.end();
    }
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
