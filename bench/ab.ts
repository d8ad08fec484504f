// Compares two builds of Warden on one request at the same moment: both servers run at
// once, pinned to the server core, each loaded by its own autocannon on the load core.
// The scheduler shares the core between them, so whatever the machine's speed does
// during a round it does to both, and their requests per second compare as a ratio. Runs
// one after the other could not tell a 5% change: this machine's speed moved by half from
// minute to minute (2026-11-25: one build measured 2,606 to 5,821 req/s in alternate runs
// of one minute), while two copies of one build at once came out 1.00–1.03 apart.
//
//   npm run build && cp -r bin dist /tmp/a/   (a build; node_modules must be found above it)
//   node --import tsx bench/ab.ts --a /tmp/a --b /tmp/b [--request retrieve|grant|ingest|access|plans|manage] [--engine sqlite|postgres]
//        [--seed-each] [--apart] [--customers 10000] [--rounds 8] [--duration 6] [--connections 25] [--profile <folder>] [--lang de]
//
// The request: retrieve a random seeded customer (the default), create a grant for a new
// address (`POST /api/v1/tools/tabmaster/grants`, as scenario 2), ingest a Stripe
// report of a paid checkout, a new sale each (as scenario 5 writes its backlog: a buyer,
// a licence and purchase.completed; the workspace has no webhook endpoints here, so no
// deliveries are written), or the client API's access check by a random seeded device
// with its session token, the answer signed (as scenario 8's first run; a device drawn
// again in a later round is checked again the same day), or a hosted page: the tool's
// Plans page signed out, or Manage signed in as a seeded person (a web session opened by
// the seed), with `--lang` as the browser's Accept-Language (a build before the buyer's
// language ignores it: the same page in English is what it had to show).
//
// Each build gets a database of its own, seeded alike (SQLite: a copy of one seeded file;
// PostgreSQL: a schema each, dropped at the end), so neither waits on the other's locks.
// With --seed-each, each build's database is seeded by that build's own code (its folder
// must then be a checkout with src/ and bench/, such as a git worktree): an older build
// refuses a database that newer code has migrated. PostgreSQL is shared by both, as the
// one machine's. Which load starts first alternates by round. With --profile, each
// server writes a V8 CPU profile of its whole run into <folder>/a and <folder>/b, for
// bench/profile-summary.ts: where a ratio below 1 comes from.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { SeedSpec } from "./ab-seed.js";
import { BENCH } from "./customer-mix.js";
import { BENCH_LIMITS, PG_URL, runOnPg } from "./engine-run.js";
import type { LoadRequest, LoadResult, LoadSpec } from "./load-worker.js";
import { commandFor, ROOT, runWardenCommand, type ServerProcess, startWarden, type WardenOptions } from "./processes.js";
import { STRIPE_PATH, signedCheckoutReport } from "./stripe-report.js";

const { values } = parseArgs({
  options: {
    a: { type: "string" },
    b: { type: "string" },
    request: { type: "string", default: "retrieve" },
    customers: { type: "string", default: "10000" },
    rounds: { type: "string", default: "8" },
    duration: { type: "string", default: "6" },
    connections: { type: "string", default: "25" },
    engine: { type: "string", default: "sqlite" },
    apart: { type: "boolean", default: false },
    "seed-each": { type: "boolean", default: false },
    profile: { type: "string" },
    lang: { type: "string" },
  },
});
if (values.engine !== "sqlite" && values.engine !== "postgres") throw new Error("--engine is sqlite or postgres");
const KINDS = ["retrieve", "grant", "ingest", "access", "plans", "manage"] as const;
const found = KINDS.find((k) => k === values.request);
if (found === undefined) throw new Error("--request is retrieve, grant, ingest, access, plans or manage");
const kind: (typeof KINDS)[number] = found;
const postgres = values.engine === "postgres";
if (!values.a || !values.b)
  throw new Error(
    "usage: bench/ab.ts --a <folder with bin/ and dist/> --b <folder> [--request retrieve|grant|ingest|access|plans|manage] [--engine sqlite|postgres] [--seed-each] [--apart] [--customers n] [--rounds n] [--duration s] [--connections n] [--profile folder] [--lang tag]",
  );
const builds = { a: resolve(values.a), b: resolve(values.b) };
const customers = Number(values.customers);
type Build = keyof typeof builds;

const work = mkdtempSync(join(tmpdir(), "warden-ab-"));
process.on("exit", () => rmSync(work, { recursive: true, force: true }));
const schemas = { a: `bench_ab_a_${process.pid}`, b: `bench_ab_b_${process.pid}` };
const stripeSecret = `whsec_${randomBytes(24).toString("base64url")}`;

/** How each build is started and its commands run: its own data folder or schema. */
function wardenOptions(name: Build): Omit<WardenOptions, "logFile"> {
  return {
    command: join(builds[name], "bin", "warden.js"),
    databaseUrl: postgres ? `${PG_URL}?options=${encodeURIComponent(`-c search_path=${schemas[name]}`)}` : null,
    dataDir: join(work, name),
    limits: BENCH_LIMITS,
    env: { WARDEN_DELIVERY_WORKER: "0" },
  };
}

/** Each build's web session for Manage (bench/ab-seed.ts opens one in its database). */
const sessions: Record<Build, string> = { a: "", b: "" };

/** Seeds a database with the code of the checkout `root` (bench/ab-seed.ts); answers the live key (and, for Manage, a web session). */
async function seed(root: string, target: Pick<SeedSpec, "dataDir" | "pg">): Promise<{ key: string; session: string }> {
  const spec: SeedSpec = { root, customers, ...target, session: kind === "manage" };
  const child = spawn(process.execPath, ["--import", "tsx", "bench/ab-seed.ts", JSON.stringify(spec)], { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  const code = await new Promise((done) => child.once("close", done));
  const lines = out.trim().split("\n");
  const key = lines.at(-1);
  if (code !== 0 || !key) throw new Error(`seeding with the code of ${root} failed (exit ${code})`);
  return { key, session: lines.find((l) => l.startsWith("session "))?.slice("session ".length) ?? "" };
}

/** Each build's database, seeded; answers each build's live key. */
async function seedBoth(): Promise<Record<Build, string>> {
  const keys = { a: "", b: "" };
  const shared = join(work, "seed");
  for (const name of ["a", "b"] as const) {
    const dataDir = join(work, name);
    mkdirSync(dataDir);
    const root = values["seed-each"] ? builds[name] : ROOT;
    let seeded: { key: string; session: string } | null = null;
    if (postgres) {
      await runOnPg(`create schema ${schemas[name]}`);
      seeded = await seed(root, { pg: { url: PG_URL, schema: schemas[name] } });
    } else if (values["seed-each"]) {
      seeded = await seed(root, { dataDir });
    } else {
      if (name === "a") seeded = await seed(root, { dataDir: shared });
      cpSync(join(shared, "warden.sqlite"), join(dataDir, "warden.sqlite"));
    }
    if (seeded) {
      keys[name] = seeded.key;
      sessions[name] = seeded.session;
    } else {
      keys.b = keys.a;
      sessions.b = sessions.a;
    }
    // Connected with the build's own CLI, as an operator connects Stripe.
    if (kind === "ingest")
      runWardenCommand(wardenOptions(name), ["admin", "stripe", "connect", "--workspace", BENCH.workspace, "--env", "live", "--webhook-secret", stripeSecret]);
  }
  return keys;
}

function requestOf(name: Build, round: number): LoadRequest {
  if (kind === "retrieve" || kind === "access") return { kind, tool: BENCH.tool, customers };
  if (kind === "plans" || kind === "manage") {
    return {
      kind: "page",
      path: `/c/${BENCH.workspace}/live/${BENCH.tool}/${kind}`,
      ...(kind === "manage" ? { cookie: `warden_customer_${BENCH.workspace}_live=${sessions[name]}` } : {}),
      ...(values.lang ? { acceptLanguage: values.lang } : {}),
    };
  }
  // A series of its own per load, so that every grant is for a new address and every report a new sale.
  const tag = `ab${name}${round}`;
  return kind === "grant" ? { kind, tool: BENCH.tool, note: "bench ab", tag } : { kind, tag, secret: stripeSecret };
}

function load(name: Build, server: ServerProcess, key: string, round: number): Promise<LoadResult> {
  const spec: LoadSpec = {
    url: server.url,
    key,
    connections: Number(values.connections),
    durationSec: Number(values.duration),
    warmupSec: 1,
    request: requestOf(name, round),
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
      if (code !== 0 || !line?.result) return fail(new Error(`the load on ${server.url} failed (exit ${code})`));
      if (line.result.errors > 0 || line.result.ok === 0)
        return fail(new Error(`the load on ${server.url} had answers other than 2xx: ${JSON.stringify(line.result.statuses)}`));
      done(line.result);
    }),
  );
}

/** One report before the load, which must be applied: a 200 that ignored it would measure nothing. */
async function checkIngest(server: ServerProcess): Promise<void> {
  const { payload, signature } = signedCheckoutReport("abcheck", 0, stripeSecret);
  const response = await fetch(`${server.url}${STRIPE_PATH}`, {
    method: "POST",
    headers: { "content-type": "application/json", "stripe-signature": signature },
    body: payload,
  });
  const text = await response.text();
  if (response.status !== 200 || !text.includes('"outcome":"applied"')) throw new Error(`a Stripe report answered ${response.status}: ${text.slice(0, 300)}`);
}

const servers: Partial<Record<Build, ServerProcess>> = {};
try {
  const keys = await seedBoth();
  for (const name of ["a", "b"] as const) {
    const cpuProfileDir = values.profile ? join(resolve(values.profile), name) : undefined;
    const server = await startWarden({ ...wardenOptions(name), logFile: join(work, `${name}.log`), ...(cpuProfileDir ? { cpuProfileDir } : {}) });
    servers[name] = server;
    if (kind === "ingest") await checkIngest(server);
  }
  const { a, b } = servers as Record<Build, ServerProcess>;
  const loadA = (round: number) => load("a", a, keys.a, round);
  const loadB = (round: number) => load("b", b, keys.b, round);
  const latency = (r: LoadResult) => `p50 ${r.latencyMs.p50.toFixed(1)} ms, p99 ${r.latencyMs.p99.toFixed(1)} ms`;
  const ratios: number[] = [];
  let sumA = 0;
  let sumB = 0;
  for (let round = 0; round < Number(values.rounds); round++) {
    let ra: LoadResult;
    let rb: LoadResult;
    if (values.apart && round % 2 === 0) [ra, rb] = [await loadA(round), await loadB(round)];
    else if (values.apart) [rb, ra] = [await loadB(round), await loadA(round)];
    else if (round % 2 === 0) [ra, rb] = await Promise.all([loadA(round), loadB(round)]);
    else [rb, ra] = await Promise.all([loadB(round), loadA(round)]);
    sumA += ra.reqPerSec;
    sumB += rb.reqPerSec;
    ratios.push(rb.reqPerSec / ra.reqPerSec);
    console.log(
      `round ${round + 1}: a ${Math.round(ra.reqPerSec)} req/s (${latency(ra)}), b ${Math.round(rb.reqPerSec)} req/s (${latency(rb)}), b/a ${(rb.reqPerSec / ra.reqPerSec).toFixed(3)}`,
    );
  }
  ratios.sort((x, y) => x - y);
  console.log(
    `${kind}: b/a ${(sumB / sumA).toFixed(3)} over ${ratios.length} rounds (median ${ratios[Math.floor(ratios.length / 2)]?.toFixed(3)}; a ${builds.a}, b ${builds.b})`,
  );
} finally {
  await Promise.all(Object.values(servers).map((server) => server.stop()));
  if (postgres) for (const schema of Object.values(schemas)) await runOnPg(`drop schema if exists ${schema} cascade`);
}
