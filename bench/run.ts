// `npm run bench` (a few minutes), `npm run bench:full` (1,000,000 customers) and
// `npm run bench:smoke` (seconds; what CI runs so that the suite cannot rot). Each
// scenario runs on SQLite and then on PostgreSQL; the table is printed and written as
// Markdown and JSON under bench/results/ (smoke runs under bench/tmp/results/).
//
//   node --import tsx bench/run.ts [--size smoke|default|full] [--engines sqlite,postgres]
//        [--sizes 10000,100000] [--duration S] [--scenarios 1,2,3,4,5,7,8,9,10] [--events N] [--profile] [--keep]
//
// The script runs Warden from the compiled code (bin/warden.js → dist/, copied at the
// start so that a rebuild during the run changes nothing); the npm scripts build first.
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { sql } from "kysely";
import { type Dialect, openStorage } from "../src/db/database.js";
import { type EngineResult, PG_URL, type Preset, runEngine, SCENARIOS, type Scenario } from "./engine-run.js";
import { pinning, pinSelfToLoadCore, ROOT, snapshotWarden } from "./processes.js";
import { profileFiles, renderProfile, summariseProfile } from "./profile-summary.js";
import { checkTargets, type RunInfo, renderMarkdown } from "./report.js";

const PRESETS: Record<Preset["name"], Preset> = {
  smoke: {
    name: "smoke",
    sizes: [1_000, 3_000],
    connections: 50,
    durationSec: 2,
    warmupSec: 1,
    scalingSec: 1,
    scalingRounds: 1,
    listWalks: 3,
    listPageSize: 500,
    webhookEvents: 500,
    patient: false,
    dashboardRequests: 10,
    dashboardWarmup: 2,
  },
  default: {
    name: "default",
    sizes: [10_000, 100_000],
    connections: 50,
    durationSec: 10,
    warmupSec: 3,
    scalingSec: 4,
    scalingRounds: 3,
    listWalks: 20,
    listPageSize: 500,
    // 5,000 keeps `npm run bench` to minutes; the issue's 20,000 is bench:full (or --events).
    webhookEvents: 5_000,
    patient: true,
    dashboardRequests: 200,
    dashboardWarmup: 20,
  },
  full: {
    name: "full",
    sizes: [10_000, 100_000, 1_000_000],
    connections: 50,
    durationSec: 20,
    warmupSec: 5,
    scalingSec: 8,
    scalingRounds: 3,
    listWalks: 30,
    listPageSize: 500,
    webhookEvents: 20_000,
    patient: true,
    dashboardRequests: 300,
    dashboardWarmup: 30,
  },
};

function parseOptions() {
  const { values } = parseArgs({
    options: {
      size: { type: "string", default: "default" },
      engines: { type: "string", default: "sqlite,postgres" },
      sizes: { type: "string" },
      duration: { type: "string" },
      scenarios: { type: "string", default: SCENARIOS.join(",") },
      events: { type: "string" },
      profile: { type: "boolean", default: false },
      keep: { type: "boolean", default: false },
      "warden-env": { type: "string", multiple: true, default: [] },
    },
  });
  const base = PRESETS[values.size as Preset["name"]];
  if (!base) throw new Error(`--size must be one of ${Object.keys(PRESETS).join(", ")}`);
  const preset: Preset = { ...base };
  if (values.sizes) preset.sizes = values.sizes.split(",").map((s) => Number(s.replaceAll("_", "")));
  if (values.duration) preset.durationSec = Number(values.duration);
  if (values.events) preset.webhookEvents = Number(values.events.replaceAll("_", ""));
  if (preset.sizes.some((s) => !Number.isInteger(s) || s < 100) || !(preset.durationSec > 0)) throw new Error("bad --sizes or --duration");
  if (!Number.isInteger(preset.webhookEvents) || preset.webhookEvents < 50) throw new Error("--events must be a whole number, at least 50");
  const engines = values.engines.split(",") as Dialect[];
  if (engines.some((e) => e !== "sqlite" && e !== "postgres")) throw new Error("--engines takes sqlite and/or postgres");
  const scenarios = values.scenarios.split(",").map(Number) as Scenario[];
  if (scenarios.length === 0 || scenarios.some((n) => !SCENARIOS.includes(n))) throw new Error(`--scenarios takes some of ${SCENARIOS.join(",")}`);
  // Settings a vendor may choose (WARDEN_SQLITE_MMAP_MB=2047, say), for every `warden serve`.
  const wardenEnv: Record<string, string> = {};
  for (const setting of values["warden-env"]) {
    const [, name, value] = /^(WARDEN_[A-Z0-9_]+)=(.*)$/.exec(setting) ?? [];
    if (name === undefined || value === undefined) throw new Error(`--warden-env takes NAME=VALUE with a WARDEN_ name, got "${setting}"`);
    wardenEnv[name] = value;
  }
  return { preset, engines, scenarios, profile: values.profile, keep: values.keep, wardenEnv };
}

const run = (command: string, args: string[]) => spawnSync(command, args, { cwd: ROOT, encoding: "utf8" }).stdout?.trim() ?? "";

async function versionOf(engine: Dialect): Promise<string | null> {
  const storage = openStorage(engine === "sqlite" ? { databaseUrl: null, sqliteFile: ":memory:" } : { databaseUrl: PG_URL });
  try {
    // PostgreSQL's memory settings with its version: at 1M customers they decide whether
    // the data stays in its buffers (bench/journal.md, seventh session).
    const pgVersion = sql`current_setting('server_version') || ', shared_buffers ' || current_setting('shared_buffers') || ', huge_pages ' || current_setting('huge_pages')`;
    const query = engine === "sqlite" ? sql<{ v: string }>`select sqlite_version() as v` : sql<{ v: string }>`select ${pgVersion} as v`;
    return (await query.execute(storage.db)).rows[0]?.v ?? null;
  } catch (error) {
    if (engine === "postgres") return null;
    throw error;
  } finally {
    await storage.close();
  }
}

async function main(): Promise<void> {
  const { preset, engines, scenarios, profile, keep, wardenEnv } = parseOptions();
  pinSelfToLoadCore();
  if (!existsSync(join(ROOT, "dist", "cli.js"))) throw new Error("dist/ is missing: run `npm run build` first (the npm bench scripts do).");
  const startedAt = new Date().toISOString();
  const stamp = startedAt.replace(/[:.]/g, "-");
  const workDir = join(ROOT, "bench", "tmp", stamp);
  const profileDir = profile ? join(ROOT, "bench", "tmp", "profiles", stamp) : null;
  mkdirSync(workDir, { recursive: true });
  const wardenCommand = snapshotWarden(join(workDir, "app"));

  const postgres = engines.includes("postgres") ? await versionOf("postgres") : null;
  if (engines.includes("postgres") && postgres === null) throw new Error(`PostgreSQL is not answering at ${PG_URL} (set BENCH_PG_URL, or --engines sqlite)`);
  const info: RunInfo = {
    startedAt,
    preset,
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model.trim() ?? "unknown CPU",
      memoryGb: Math.round(totalmem() / 2 ** 30),
      node: process.versions.node,
      sqlite: (await versionOf("sqlite")) ?? "?",
      postgres,
    },
    pinning: pinning
      ? `Server under test pinned to core ${pinning.server}, load generator to core ${pinning.load} (taskset); PostgreSQL unpinned.`
      : "No pinning (taskset missing or one core): figures include the load generator's share of the CPU.",
    commit: run("git", ["rev-parse", "--short", "HEAD"]) || "unknown",
    uncommitted: run("git", ["status", "--porcelain", "--", "src"]).split("\n").filter(Boolean),
    profiled: profile,
    scenarios,
    wardenEnv,
  };
  process.stdout.write(
    `Warden benchmark (${preset.name}), scenarios ${scenarios.join(", ")}: ${preset.sizes.map((s) => s.toLocaleString("en")).join(" → ")} customers, ${preset.webhookEvents.toLocaleString("en")} webhook events, on ${engines.join(" and ")}\n${info.pinning}\n`,
  );

  const results: EngineResult[] = [];
  for (const engine of engines) {
    process.stdout.write(`\n${engine}\n`);
    results.push(await runEngine(engine, preset, { workDir, wardenCommand, profileDir, keep, scenarios, wardenEnv }));
  }

  const checks = checkTargets(results, preset);
  let markdown = renderMarkdown(info, results, checks);
  const profiles = profileDir ? results.flatMap((r) => r.profiles).flatMap((dir) => (existsSync(dir) ? profileFiles(dir) : [])) : [];
  if (profiles.length > 0) {
    markdown += "\n## CPU profiles of the Warden process\n\n";
    for (const file of profiles) markdown += `${renderProfile(summariseProfile(file), file.slice(ROOT.length))}\n`;
  }

  const outDir = preset.name === "smoke" ? join(ROOT, "bench", "tmp", "results") : join(ROOT, "bench", "results");
  mkdirSync(outDir, { recursive: true });
  const partial = SCENARIOS.some((n) => !scenarios.includes(n));
  const configured = Object.keys(wardenEnv).length > 0;
  const base = join(
    outDir,
    `${stamp}-${preset.name}${partial ? `-scenarios-${scenarios.join("")}` : ""}${configured ? "-configured" : ""}${profile ? "-profiled" : ""}`,
  );
  writeFileSync(`${base}.json`, `${JSON.stringify({ info, results, targets: checks }, null, 2)}\n`);
  writeFileSync(`${base}.md`, markdown);
  // latest.md is the last complete, unprofiled measured run with the default settings.
  if (preset.name !== "smoke" && !profile && !partial && !configured) copyFileSync(`${base}.md`, join(outDir, "latest.md"));
  process.stdout.write(`\n${markdown}\nWritten ${base.slice(ROOT.length)}.{json,md}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
