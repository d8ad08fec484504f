// Every scenario on one database engine: a database seeded to each size, Warden started
// afresh for each run (so that peak RSS and CPU profiles belong to one scenario), and the
// bare node:http baseline measured under the same load settings just before Warden's own
// run. The sizes of scenario 4 take turns in rounds, each with a database of its own, so
// that the machine's speed, which moves by half within minutes, moves every size alike.
import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { sql } from "kysely";
import pg from "pg";
import { type Dialect, migrateToLatest, openStorage, type Storage } from "../src/db/database.js";
import { BENCH, devicesOf, deviceTokenOf, emailOf, hash32 } from "./customer-mix.js";
import { type DashboardResult, type DashboardSeed, measureDashboard, type PageRun, type PageTiming, seedDashboard, signInOwner } from "./dashboard-pages.js";
import { type InsightsResult, type InsightsSeed, measureInsights, seedInsightsWorkspace } from "./insights-pages.js";
import { type ListWalkResult, measureListWalk } from "./list-walk.js";
import { type DatabasePids, type Measured, measureLoad } from "./load.js";
import type { LoadRequest } from "./load-worker.js";
import { commandFor, onInterrupt, ROOT, runWardenCommand, type ServerProcess, startBaseline, startWarden } from "./processes.js";
import { type BenchWorkspace, countLoadGrants, seedCustomers, setUpWorkspace, verifySeed } from "./seed.js";
import { runSpendScenario, type SpendResult } from "./spend.js";
import { runWebhookScenario, type WebhookResult } from "./webhook-delivery.js";

export interface Preset {
  name: "smoke" | "default" | "full";
  /** Customers at each scaling point; the last is the size of scenarios 1 to 3. */
  sizes: number[];
  connections: number;
  durationSec: number;
  warmupSec: number;
  /** Seconds of each run of scenario 4 (at the preset's connections and at one), at each size in each round. */
  scalingSec: number;
  /** Rounds of scenario 4: every size once a round, in the opposite order the next; medians are reported. */
  scalingRounds: number;
  listWalks: number;
  listPageSize: number;
  /** Events of each webhook delivery run (scenario 5), each fanned out to 10 receivers. */
  webhookEvents: number;
  /** Wait for a quiet machine before each run and repeat disturbed runs (not for smoke runs). */
  patient: boolean;
  /** Scenarios 7 and 9: requests timed per page, after this many unmeasured ones. */
  dashboardRequests: number;
  dashboardWarmup: number;
}

/**
 * The scenarios this run measures (6, both engines, is --engines; 7, the dashboard, came
 * with issue 24; 8, the access check, with issue 25; 9, the Insights pages, with issue 34;
 * 10, spending a unit, with issue 46).
 */
export type Scenario = 1 | 2 | 3 | 4 | 5 | 7 | 8 | 9 | 10;
export const SCENARIOS: readonly Scenario[] = [1, 2, 3, 4, 5, 7, 8, 9, 10];
/** Scenarios that need the seeded customers (5 makes its own buyers, 9 its own workspace's people). */
const SEEDED_SCENARIOS: readonly Scenario[] = [1, 2, 3, 4, 7, 8];

// Quotas high enough not to trip, through the documented variables: every request is
// still counted, in the same transactions, against the same rows.
export const BENCH_LIMITS: Record<string, number> = {
  WARDEN_LIMIT_KEY_REQUESTS_PER_MIN: 1_000_000_000,
  WARDEN_LIMIT_LOOKUPS_PER_DAY: 1_000_000_000,
  WARDEN_LIMIT_LIST_PAGES_PER_MIN: 1_000_000_000,
  WARDEN_LIMIT_ROWS_READ_PER_DAY: 1_000_000_000,
  WARDEN_LIMIT_GRANTS_PER_TOOL_PER_DAY: 1_000_000_000,
  WARDEN_LIMIT_ADDITIONS_PER_DAY: 1_000_000_000,
};

export const PG_URL = process.env.BENCH_PG_URL || "postgres://postgres@127.0.0.1:5432/test";

export interface ScalingPoint {
  customers: number;
  /** Retrieve at the preset's connections: the round with the median p50. */
  loaded: Measured;
  /** Retrieve at one connection, the service time without queueing: the round with the median p50. */
  single: Measured;
  /** p50 of every round, in the order run. */
  roundsP50Ms: { loaded: number[]; single: number[] };
}

export interface GrantRun extends Measured {
  ratio: number;
  peakRssMb: number;
  /** Grants stored by the load, read back after Warden stopped. */
  stored: number;
  /** 201 answers received (warm-up and measured run). */
  acknowledged: number;
  /** Counter values after the run: each must equal the grants created through the API. */
  counters: Record<string, number>;
  /** Every acknowledged grant is stored, and every stored grant was counted once on each quota. */
  consistent: boolean;
}

/** One engine's figures; a scenario not selected (--scenarios) has none. */
export interface EngineResult {
  engine: Dialect;
  /** Customers in the workspace when scenarios 1 to 3 and 8 ran (0 when none of them or 4 was selected). */
  customers: number;
  /** Each size seeded into a database of its own, from none. */
  seeding: { customers: number; seconds: number; rows: Record<string, number> }[];
  retrieveBodyBytes?: number;
  baselineRetrieve?: Measured;
  retrieve?: Measured & { ratio: number; peakRssMb: number };
  /** Scenario 4: retrieve at every size (empty when not selected). */
  scaling: ScalingPoint[];
  list?: ListWalkResult & { peakRssMb: number };
  grantBodyBytes?: number;
  baselineGrant?: Measured;
  grants?: GrantRun;
  webhooks?: WebhookResult;
  /** Scenario 10: spending one unit for one person, and its baseline. */
  spend?: SpendResult;
  dashboard?: DashboardResult;
  insights?: InsightsResult;
  /** Scenario 8: the client API's access check, each answer with its token signed. */
  accessBodyBytes?: number;
  baselineAccess?: Measured;
  access?: Measured & { ratio: number; peakRssMb: number };
  /**
   * The same devices checked again in the same process and day: the first run is every
   * device's first check of the day (its day written, its answer not yet in memory); an
   * installed extension's checks are mostly later ones.
   */
  accessAgain?: Measured & { ratio: number; peakRssMb: number };
  /** Signing alone, on the server's core with the same Node, measured before the access check's runs. */
  signing?: SigningRate;
  profiles: string[];
}

export interface SigningRate {
  /** node:crypto's Ed25519 signature of a token's signing input. */
  signaturesPerSec: number;
  /** Warden's whole token: claims to JSON, base64url, signature. */
  tokensPerSec: number;
  tokenBytes: number;
}

export interface Database {
  storage(): Storage;
  wardenUrl: string | null;
  dataDir: string;
  /** The PostgreSQL backends serving Warden, whose CPU counts as the database's. */
  pids?: DatabasePids;
  drop(): Promise<void>;
}

export async function runOnPg(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

export async function createDatabase(engine: Dialect, workDir: string, label: string): Promise<Database> {
  const dataDir = join(workDir, `${engine}-${label}`);
  mkdirSync(dataDir, { recursive: true });
  if (engine === "sqlite") {
    return {
      storage: () => openStorage({ databaseUrl: null, dataDir }),
      wardenUrl: null,
      dataDir,
      drop: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const schema = `bench_${process.pid}_${Date.now().toString(36)}_${label}`;
  await runOnPg(`create schema ${schema}`);
  // Warden's connections carry this name, so that their backends' CPU is told apart from other work.
  const applicationName = `warden_${schema}`;
  const monitor = new pg.Pool({ connectionString: PG_URL, max: 1 });
  return {
    storage: () => openStorage({ databaseUrl: PG_URL, pgSchema: schema, poolSize: 2 }),
    wardenUrl: `${PG_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}&application_name=${applicationName}`,
    dataDir,
    pids: async () =>
      (await monitor.query<{ pid: number }>("select pid from pg_stat_activity where application_name = $1", [applicationName])).rows.map((r) => r.pid),
    drop: async () => {
      await monitor.end();
      await runOnPg(`drop schema ${schema} cascade`);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** After a bulk load: PostgreSQL's statistics as autovacuum would have them within a minute; SQLite's WAL folded in. */
export async function settle(storage: Storage): Promise<void> {
  if (storage.dialect === "postgres") {
    for (const table of ["people", "licences", "subscriptions", "grants", "devices", "customers"]) await sql.raw(`analyze ${table}`).execute(storage.db);
  } else {
    await sql`pragma wal_checkpoint(TRUNCATE)`.execute(storage.db);
  }
}

const log = (message: string) => process.stdout.write(`${message}\n`);
const int = (value: number) => Math.round(value).toLocaleString("en");

/** Mean body size of Warden's answer to `count` random retrieve requests; fails on any non-200. */
async function sampleRetrieveBodies(warden: ServerProcess, ws: BenchWorkspace, customers: number, count: number): Promise<number> {
  let bytes = 0;
  for (let n = 0; n < count; n++) {
    const i = hash32(n, 99) % customers;
    const response = await fetch(`${warden.url}/api/v1/tools/${BENCH.tool}/customers/${encodeURIComponent(emailOf(i))}`, {
      headers: { authorization: `Bearer ${ws.key}` },
    });
    const body = await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`retrieve of customer ${i} answered ${response.status}: ${Buffer.from(body).toString()}`);
    bytes += body.byteLength;
  }
  return Math.round(bytes / count);
}

/** Mean body size of Warden's answer to `count` access checks by random seeded devices; fails on any non-200. */
async function sampleAccessBodies(warden: ServerProcess, customers: number, count: number): Promise<number> {
  let bytes = 0;
  let sampled = 0;
  for (let n = 0; sampled < count; n++) {
    const i = hash32(n, 98) % customers;
    if (devicesOf(i) === 0) continue;
    const response = await fetch(`${warden.url}/api/client/v1/tools/${BENCH.tool}/access`, { headers: { authorization: `Bearer ${deviceTokenOf(i, 0)}` } });
    const body = await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`the access check of customer ${i} answered ${response.status}: ${Buffer.from(body).toString()}`);
    bytes += body.byteLength;
    sampled += 1;
  }
  return Math.round(bytes / count);
}

/** Ed25519 signatures per second on the server's core, by the Node that runs Warden (bench/sign-rate.ts). */
function measureSigning(seconds: number): SigningRate {
  const [command, args] = commandFor("server", process.execPath, ["--import", "tsx", "bench/sign-rate.ts", String(seconds)]);
  const run = spawnSync(command, args, { cwd: ROOT, encoding: "utf8" });
  if (run.status !== 0) throw new Error(`bench/sign-rate.ts failed (exit ${run.status}):\n${run.stderr}`);
  return JSON.parse(run.stdout) as SigningRate;
}

async function sampleGrantBody(warden: ServerProcess, ws: BenchWorkspace): Promise<number> {
  const response = await fetch(`${warden.url}/api/v1/tools/${BENCH.tool}/grants`, {
    method: "POST",
    headers: { authorization: `Bearer ${ws.key}`, "content-type": "application/json" },
    body: JSON.stringify({ email: "grant.sample@bench.example.com", days: 30, note: "bench-sample" }),
  });
  const body = await response.arrayBuffer();
  if (response.status !== 201) throw new Error(`create grant answered ${response.status}: ${Buffer.from(body).toString()}`);
  return body.byteLength;
}

function assertAllOk(what: string, result: Measured): void {
  const bad = Object.entries(result.statuses).filter(([status]) => !status.startsWith("2"));
  if (bad.length > 0 || result.errors > 0 || result.ok === 0) {
    throw new Error(`${what}: answers ${JSON.stringify(result.statuses)}, ${result.errors} errors, ${result.timeouts} timeouts`);
  }
}

const summary = (m: Measured) =>
  `${Math.round(m.reqPerSec)} req/s, p50 ${m.latencyMs.p50.toFixed(2)} ms, p99 ${m.latencyMs.p99.toFixed(2)} ms, CPU server ${Math.round(m.serverCpuPercent)}% / db ${Math.round(m.dbCpuPercent)}% / load ${Math.round(m.loadCpuPercent)}% / rest ${Math.round(m.otherCpuPercent)}%`;

/** The run of `runs` whose p50 is the median (the lower of the two middle ones for an even count). */
function medianRun(runs: readonly Measured[]): Measured {
  const sorted = [...runs].sort((a, b) => a.latencyMs.p50 - b.latencyMs.p50);
  const median = sorted[Math.floor((sorted.length - 1) / 2)];
  if (!median) throw new Error("no runs");
  return median;
}

/** A database seeded to one size, with its workspace. */
interface Seeded {
  database: Database;
  ws: BenchWorkspace;
  customers: number;
}

export async function runEngine(
  engine: Dialect,
  preset: Preset,
  options: {
    workDir: string;
    wardenCommand: string;
    profileDir: string | null;
    keep: boolean;
    scenarios: readonly Scenario[];
    wardenEnv: Record<string, string>;
  },
): Promise<EngineResult> {
  const wants = (scenario: Scenario) => options.scenarios.includes(scenario);
  const databases: Database[] = [];
  const unregister = onInterrupt(async () => {
    if (!options.keep) for (const database of databases) await database.drop();
  });
  const profiles: string[] = [];
  let wardenCount = 0;
  const wardenOptionsOf = (database: Database) => ({
    command: options.wardenCommand,
    databaseUrl: database.wardenUrl,
    dataDir: database.dataDir,
    limits: BENCH_LIMITS,
  });
  const launchWarden = async (database: Database, scenario: string, env: Record<string, string> = {}): Promise<ServerProcess> => {
    wardenCount += 1;
    const cpuProfileDir = options.profileDir ? join(options.profileDir, `${engine}-${scenario}`) : undefined;
    if (cpuProfileDir) profiles.push(cpuProfileDir);
    return startWarden({
      ...wardenOptionsOf(database),
      env: { ...options.wardenEnv, ...env },
      logFile: join(options.workDir, `warden-${engine}-${wardenCount}-${scenario}.log`),
      ...(cpuProfileDir ? { cpuProfileDir } : {}),
    });
  };
  const load = (request: LoadRequest, key: string, connections = preset.connections, durationSec = preset.durationSec) => ({
    key,
    connections,
    durationSec,
    warmupSec: preset.warmupSec,
    request,
  });
  const result: EngineResult = { engine, customers: 0, seeding: [], scaling: [], profiles };

  /** A fresh database with the workspace, seeded with `size` customers (none: scenario 5 makes its own buyers). */
  const seeded = async (size: number): Promise<Seeded> => {
    const database = await createDatabase(engine, options.workDir, String(size));
    databases.push(database);
    const storage = database.storage();
    try {
      await migrateToLatest(storage.db, storage.dialect);
      const ws = await setUpWorkspace(storage);
      if (size === 0) return { database, ws, customers: 0 };
      const started = performance.now();
      let shown = 0;
      const rows = await seedCustomers(storage, ws, { from: 0, to: size, now: Date.now() }, (done) => {
        if (done - shown >= 100_000 || done === size) {
          log(`  [${engine}] seeded ${done.toLocaleString("en")} customers`);
          shown = done;
        }
      });
      await settle(storage);
      await verifySeed(
        storage,
        ws,
        Array.from({ length: 50 }, (_, n) => hash32(n, size) % size),
      );
      const seconds = (performance.now() - started) / 1000;
      result.seeding.push({ customers: size, seconds, rows });
      log(`  [${engine}] ${size.toLocaleString("en")} customers seeded and checked against syncCustomer in ${seconds.toFixed(1)} s`);
      return { database, ws, customers: size };
    } finally {
      await storage.close();
    }
  };

  const retrieveOf = (size: number): LoadRequest => ({ kind: "retrieve", tool: BENCH.tool, customers: size });

  /** One retrieve run in a fresh Warden process, after `before` (given the process, idle); its peak RSS with it. */
  const measureRetrieve = async (
    target: Seeded,
    scenario: string,
    connections: number,
    durationSec: number,
    before?: (warden: ServerProcess) => Promise<void>,
  ) => {
    const warden = await launchWarden(target.database, scenario);
    try {
      await before?.(warden);
      const measured = await measureLoad(warden, load(retrieveOf(target.customers), target.ws.key, connections, durationSec), {
        patient: preset.patient,
        pids: target.database.pids,
      });
      assertAllOk(`retrieve at ${target.customers}, ${connections} connections`, measured);
      log(`  [${engine}] retrieve at ${target.customers.toLocaleString("en")} customers, ${connections} connections: ${summary(measured)}`);
      return { measured, peakRssMb: warden.peakRssMb() };
    } finally {
      await warden.stop();
    }
  };

  /** A page scenario (7, 9) in a fresh Warden process, as the owner signed in through a login link. */
  const pagesRun = async (database: Database, scenario: string, measure: (run: PageRun) => Promise<PageTiming[]>) => {
    const warden = await launchWarden(database, scenario);
    try {
      const loginLink = () => runWardenCommand(wardenOptionsOf(database), ["admin", "login-link", "--email", BENCH.ownerEmail]);
      const pages = await measure({
        warden,
        cookie: await signInOwner(warden, loginLink),
        requests: preset.dashboardRequests,
        warmup: preset.dashboardWarmup,
        patient: preset.patient,
        ...(database.pids ? { pids: database.pids } : {}),
        log: (line) => log(`  [${engine}]${line}`),
      });
      return { pages, peakRssMb: warden.peakRssMb() };
    } finally {
      await warden.stop();
    }
  };

  try {
    // Scenarios 1 to 4 and 8 need the customers; scenario 5 makes its own buyers.
    const sizes = SEEDED_SCENARIOS.some(wants) ? preset.sizes : [];
    const largest = sizes[sizes.length - 1] ?? 0;
    // Scenario 4's smaller sizes first, each in a database of its own, then the largest,
    // which every other scenario uses.
    const smaller: Seeded[] = [];
    if (wants(4)) for (const size of sizes.slice(0, -1)) smaller.push(await seeded(size));
    const main = await seeded(largest);
    result.customers = largest;
    const { ws } = main;

    // Scenario 1: retrieve a customer at the largest size, against the baseline just before.
    if (wants(1) && largest > 0) {
      let baselineRetrieve: Measured | undefined;
      // The answer's size is sampled from Warden itself; the baseline then answers as many bytes.
      const { measured, peakRssMb } = await measureRetrieve(main, `retrieve-${largest}`, preset.connections, preset.durationSec, async (warden) => {
        const retrieveBodyBytes = await sampleRetrieveBodies(warden, ws, largest, 200);
        const baseline = await startBaseline({ bodyBytes: retrieveBodyBytes, status: 200, logFile: join(options.workDir, "baseline.log") });
        try {
          baselineRetrieve = await measureLoad(baseline, load(retrieveOf(largest), ws.key), { patient: preset.patient });
        } finally {
          await baseline.stop();
        }
        assertAllOk("baseline", baselineRetrieve);
        log(`  [${engine}] baseline node:http GET, ${retrieveBodyBytes} B body: ${summary(baselineRetrieve)}`);
        result.retrieveBodyBytes = retrieveBodyBytes;
      });
      if (!baselineRetrieve) throw new Error("the baseline was not measured");
      log(`  [${engine}] peak RSS ${peakRssMb.toFixed(0)} MB`);
      result.baselineRetrieve = baselineRetrieve;
      result.retrieve = { ...measured, ratio: measured.reqPerSec / baselineRetrieve.reqPerSec, peakRssMb };
    }

    // Scenario 4: every size in each round, the order reversed from round to round.
    if (wants(4) && largest > 0) {
      const points = [...smaller, main];
      const runs = new Map(points.map((point) => [point, { loaded: [] as Measured[], single: [] as Measured[] }]));
      for (let round = 0; round < preset.scalingRounds; round++) {
        for (const point of round % 2 === 0 ? points : [...points].reverse()) {
          const mine = runs.get(point);
          if (!mine) continue;
          mine.loaded.push((await measureRetrieve(point, `scaling-${point.customers}`, preset.connections, preset.scalingSec)).measured);
          mine.single.push((await measureRetrieve(point, `scaling-single-${point.customers}`, 1, preset.scalingSec)).measured);
        }
      }
      for (const [point, { loaded, single }] of runs) {
        result.scaling.push({
          customers: point.customers,
          loaded: medianRun(loaded),
          single: medianRun(single),
          roundsP50Ms: { loaded: loaded.map((m) => m.latencyMs.p50), single: single.map((m) => m.latencyMs.p50) },
        });
      }
    }

    // Scenario 8: the access check at the largest size, each answer signed, against the
    // baseline just before; and signing alone, on the same core with the same Node.
    if (wants(8) && largest > 0) {
      const signing = measureSigning(preset.patient ? 5 : 1);
      log(
        `  [${engine}] signing alone: ${int(signing.signaturesPerSec)} Ed25519 signatures/s, ${int(signing.tokensPerSec)} whole tokens/s (${signing.tokenBytes} B) on one core`,
      );
      result.signing = signing;
      const accessLoad = (devices: { start?: number; repeat?: number } = {}): LoadRequest => ({
        kind: "access",
        tool: BENCH.tool,
        customers: largest,
        ...devices,
      });
      const warden = await launchWarden(main.database, `access-${largest}`);
      try {
        const accessBodyBytes = await sampleAccessBodies(warden, largest, 200);
        const baseline = await startBaseline({ bodyBytes: accessBodyBytes, status: 200, logFile: join(options.workDir, "baseline.log") });
        let baselineAccess: Measured;
        try {
          baselineAccess = await measureLoad(baseline, load(accessLoad(), ws.key), { patient: preset.patient });
        } finally {
          await baseline.stop();
        }
        assertAllOk("baseline of the access check", baselineAccess);
        log(`  [${engine}] baseline node:http GET, ${accessBodyBytes} B body: ${summary(baselineAccess)}`);
        const measured = await measureLoad(warden, load(accessLoad(), ws.key), { patient: preset.patient, pids: main.database.pids });
        assertAllOk(`access check at ${largest}`, measured);
        const peakRssMb = warden.peakRssMb();
        log(
          `  [${engine}] access check at ${largest.toLocaleString("en")} customers: ${summary(measured)}; ${(measured.reqPerSec / baselineAccess.reqPerSec).toFixed(2)}× the baseline`,
        );
        result.accessBodyBytes = accessBodyBytes;
        result.baselineAccess = baselineAccess;
        result.access = { ...measured, ratio: measured.reqPerSec / baselineAccess.reqPerSec, peakRssMb };
        // The first run's devices (warm-up and measured) in its order, each checked again.
        const { devices } = measured;
        if (!devices) throw new Error("the access check's load did not say which devices it checked");
        const again = await measureLoad(warden, load(accessLoad({ start: devices.start, repeat: devices.requests }), ws.key), {
          patient: preset.patient,
          pids: main.database.pids,
        });
        assertAllOk(`access check at ${largest}, again the same day`, again);
        log(`  [${engine}] access check again the same day: ${summary(again)}; ${(again.reqPerSec / baselineAccess.reqPerSec).toFixed(2)}× the baseline`);
        result.accessAgain = { ...again, ratio: again.reqPerSec / baselineAccess.reqPerSec, peakRssMb: warden.peakRssMb() };
      } finally {
        await warden.stop();
      }
    }

    if (largest > 0) {
      // Scenario 3: list customers, 500 rows a page, first page to last reachable page.
      if (wants(3)) {
        const warden = await launchWarden(main.database, "list");
        try {
          const walk = await measureListWalk({
            url: warden.url,
            key: ws.key,
            tool: BENCH.tool,
            walks: preset.listWalks,
            warmupWalks: 2,
            pageSize: preset.listPageSize,
          });
          result.list = { ...walk, peakRssMb: warden.peakRssMb() };
          log(
            `  [${engine}] list walk: ${walk.rowsPerWalk} rows in ${walk.pagesPerWalk} pages, first page ${walk.firstPageMs.p50.toFixed(1)} ms, last ${walk.lastPageMs.p50.toFixed(1)} ms, whole walk ${walk.walkMs.p50.toFixed(0)} ms`,
          );
        } finally {
          await warden.stop();
        }
      }

      // Scenario 2: create a grant, each for a new address, counted and stored.
      if (wants(2)) {
        const warden = await launchWarden(main.database, "grants");
        const note = `bench-load-${Date.now().toString(36)}`;
        const grantRequest: LoadRequest = { kind: "grant", tool: BENCH.tool, note, tag: Date.now().toString(36) };
        let grantBodyBytes: number;
        let baselineGrant: Measured;
        let grantLoad: Measured;
        let grantRss: number;
        try {
          grantBodyBytes = await sampleGrantBody(warden, ws);
          const baseline = await startBaseline({ bodyBytes: grantBodyBytes, status: 201, logFile: join(options.workDir, "baseline.log") });
          try {
            baselineGrant = await measureLoad(baseline, load({ ...grantRequest, note: "baseline" }, ws.key), { patient: preset.patient });
          } finally {
            await baseline.stop();
          }
          assertAllOk("baseline POST", baselineGrant);
          log(`  [${engine}] baseline node:http POST, ${grantBodyBytes} B body: ${summary(baselineGrant)}`);
          grantLoad = await measureLoad(warden, load(grantRequest, ws.key), { patient: preset.patient, pids: main.database.pids });
          assertAllOk("create grant", grantLoad);
          grantRss = warden.peakRssMb();
        } finally {
          await warden.stop();
        }
        // Read back after Warden has stopped: what it acknowledged is in the database.
        const storage = main.database.storage();
        const check = await countLoadGrants(storage, ws, note);
        await storage.close();
        const acknowledged = grantLoad.warmupOk + grantLoad.ok;
        const createdThroughApi = check.grants + 1; // and the sample grant
        const consistent = check.grants >= acknowledged && Object.values(check.counters).every((count) => count === createdThroughApi);
        result.grantBodyBytes = grantBodyBytes;
        result.baselineGrant = baselineGrant;
        result.grants = {
          ...grantLoad,
          ratio: grantLoad.reqPerSec / baselineGrant.reqPerSec,
          peakRssMb: grantRss,
          stored: check.grants,
          acknowledged,
          counters: check.counters,
          consistent,
        };
        log(
          `  [${engine}] create grant: ${summary(grantLoad)}; ${acknowledged} acknowledged, ${check.grants} stored, counters ${JSON.stringify(check.counters)} ${consistent ? "(consistent)" : "(INCONSISTENT)"}`,
        );
      }
    }

    // Scenario 10: spend one unit for one person, each a request of its own.
    if (wants(10)) {
      result.spend = await runSpendScenario({
        ws,
        wardenCommand: (args) => runWardenCommand(wardenOptionsOf(main.database), args),
        launchWarden: () => launchWarden(main.database, "spend"),
        startBaseline: (bodyBytes) => startBaseline({ bodyBytes, status: 200, logFile: join(options.workDir, "baseline.log") }),
        measure: (server, spec, pids) => measureLoad(server, spec, { patient: preset.patient, ...(pids ? { pids } : {}) }),
        load: (request, key) => load(request, key),
        storage: () => main.database.storage(),
        ...(main.database.pids ? { pids: main.database.pids } : {}),
        assertAllOk,
      });
      const { baseline, spend, bodyBytes } = result.spend;
      log(`  [${engine}] baseline node:http POST, ${bodyBytes} B body: ${summary(baseline)}`);
      log(
        `  [${engine}] spend one unit: ${summary(spend)}; ${spend.spent} units spent, ${spend.recorded} spends recorded, ${spend.acknowledged} acknowledged ${spend.exact ? "(exact)" : "(NOT EXACT)"}`,
      );
    }

    // Scenario 5: webhook delivery, after the others (it adds buyers to the workspace).
    if (wants(5)) {
      result.webhooks = await runWebhookScenario({
        engine,
        ws,
        workDir: options.workDir,
        events: preset.webhookEvents,
        latencySec: preset.durationSec,
        patient: preset.patient,
        storage: () => main.database.storage(),
        launchWarden: (scenario, env) => launchWarden(main.database, scenario, env),
        wardenCommand: (args) => runWardenCommand(wardenOptionsOf(main.database), args),
        ...(main.database.pids ? { pids: main.database.pids } : {}),
        log,
      });
    }

    // Scenario 7: the dashboard's pages, with as many events as customers; last, so that
    // its million events change nothing the other scenarios measure.
    if (wants(7) && largest > 0) {
      const storage = main.database.storage();
      let seed: DashboardSeed;
      try {
        seed = await seedDashboard(storage, ws, largest, Date.now(), (line) => log(`  [${engine}]${line}`));
      } finally {
        await storage.close();
      }
      log(
        `  [${engine}] ${largest.toLocaleString("en")} events and ${seed.auditEntries.toLocaleString("en")} audit entries seeded in ${seed.seconds.toFixed(1)} s`,
      );
      const { pages, peakRssMb } = await pagesRun(main.database, "dashboard", (run) => measureDashboard({ ...run, customers: largest, events: largest }));
      result.dashboard = { customers: largest, seed, pages, peakRssMb };
    }

    // Scenario 9: the Insights pages, in a workspace of their own with as many people as the
    // largest size (beside the benchmark's customers when another scenario seeded them).
    const insightsPeople = preset.sizes[preset.sizes.length - 1] ?? 0;
    if (wants(9) && insightsPeople > 0) {
      const storage = main.database.storage();
      let seed: InsightsSeed;
      try {
        seed = await seedInsightsWorkspace(storage, insightsPeople, (line) => log(`  [${engine}]${line}`));
      } finally {
        await storage.close();
      }
      log(
        `  [${engine}] Insights: ${insightsPeople.toLocaleString("en")} people and ${seed.activeDays.toLocaleString("en")} person-days seeded in ${seed.seconds.toFixed(1)} s`,
      );
      const { pages, peakRssMb } = await pagesRun(main.database, "insights", measureInsights);
      result.insights = { customers: largest, seed, pages, peakRssMb };
    }
    return result;
  } finally {
    unregister();
    if (!options.keep) for (const database of databases) await database.drop();
  }
}
