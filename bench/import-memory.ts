// The import's peak memory and time at scale (issue 36, point 1): writes an NDJSON file of
// `--lines` lines, then runs `warden admin import` on it (the compiled command, as an
// operator runs it) under /usr/bin/time -v on a fresh SQLite folder and a fresh
// PostgreSQL schema, and reports its peak resident set, wall and CPU time, and how busy
// the rest of the machine was meanwhile. A second import of the same file is timed too
// (`--again`): every line is then found stored and skipped.
//
//   npm run build && node --import tsx bench/import-memory.ts [--lines 1000000] [--mix grants|mixed] [--engines sqlite,postgres] [--again]
//
// `grants`: one grant per line, each to its own address (the issue's file). `mixed`: per
// ten lines four grants, two accounts, two licences with ids, one trial and one device,
// so that every map the check keeps across lines (accounts, licence ids, trials) grows.
import { spawnSync } from "node:child_process";
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { PG_URL, runOnPg } from "./engine-run.js";
import { machineCpuSeconds, onInterrupt, ROOT, runWardenCommand, snapshotWarden } from "./processes.js";

const { values } = parseArgs({
  options: {
    lines: { type: "string", default: "1000000" },
    mix: { type: "string", default: "grants" },
    engines: { type: "string", default: "sqlite,postgres" },
    again: { type: "boolean", default: false },
  },
});
const LINES = Number(values.lines);
const MIX = values.mix === "mixed" ? "mixed" : "grants";
const ENGINES = (values.engines ?? "").split(",").filter((e): e is "sqlite" | "postgres" => e === "sqlite" || e === "postgres");

const stamp = new Date().toISOString().replace(/[:.]/g, "-");
const workDir = join(ROOT, "bench", "tmp", `import-${stamp}`);
mkdirSync(workDir, { recursive: true });
const command = snapshotWarden(join(workDir, "warden"));

const START = Date.parse("2025-01-01T00:00:00Z");
const iso = (i: number, days = 0) => new Date(START + ((i % 300) + days) * 86_400_000).toISOString();
const licenceIdOf = (i: number) => `lic_${String(i).padStart(24, "0")}`;

function lineOf(i: number): string {
  const email = `person${i}@example.com`;
  if (MIX === "grants") return JSON.stringify({ type: "grant", email, tool: "tabmaster", starts_at: iso(i), note: "moved from the old provider" });
  switch (i % 10) {
    case 0:
    case 1:
      return JSON.stringify({ type: "account", email, signed_in_at: iso(i), tools: ["tabmaster"] });
    case 2:
    case 3:
      return JSON.stringify({ type: "licence", id: licenceIdOf(i), email, tool: "tabmaster", purchased_at: iso(i), amount_cents: 2900, currency: "eur" });
    case 4:
      return JSON.stringify({ type: "trial", email, tool: "tabmaster", starts_at: iso(i), ends_at: iso(i, 14) });
    case 5:
      // The device of the licence two lines up, activated with it.
      return JSON.stringify({
        type: "device",
        email: `person${i - 2}@example.com`,
        tool: "tabmaster",
        name: "Chrome",
        created_at: iso(i),
        licence: licenceIdOf(i - 2),
      });
    default:
      return JSON.stringify({ type: "grant", email, tool: "tabmaster", starts_at: iso(i) });
  }
}

async function writeFile(path: string): Promise<void> {
  const out = createWriteStream(path);
  for (let i = 0; i < LINES; i++) {
    if (!out.write(`${lineOf(i)}\n`)) await new Promise<void>((resolve) => out.once("drain", () => resolve()));
  }
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
}

interface Run {
  seconds: number;
  peakRssMb: number;
  cpuSeconds: number;
  /** Other processes' CPU meanwhile, in cores (the machine has two). */
  othersCores: number;
  stdout: string;
  progress: string[];
}

function runImport(env: { databaseUrl: string | null; dataDir: string }, file: string): Run {
  const timeFile = join(workDir, "time.txt");
  const before = machineCpuSeconds();
  const started = performance.now();
  const result = spawnSync(
    "/usr/bin/time",
    ["-v", "-o", timeFile, process.execPath, command, "admin", "import", "--workspace", "bench", "--env", "live", file],
    {
      cwd: ROOT,
      encoding: "utf8",
      env: {
        PATH: process.env.PATH,
        LOG_LEVEL: "warn",
        WARDEN_DATA_DIR: env.dataDir,
        WARDEN_SECRET_KEY: "bench-secret-key-0123456789abcdefghijklmnopqrstuvwxyz",
        ...(env.databaseUrl ? { DATABASE_URL: env.databaseUrl } : {}),
      },
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  const seconds = (performance.now() - started) / 1000;
  const after = machineCpuSeconds();
  if (result.status !== 0) throw new Error(`warden admin import failed (${result.status ?? result.signal}): ${result.stderr.slice(-2000)}`);
  const time = readFileSync(timeFile, "utf8");
  const field = (name: string) => Number(new RegExp(`${name}: ([\\d.]+)`).exec(time)?.[1] ?? Number.NaN);
  const cpuSeconds = field("User time \\(seconds\\)") + field("System time \\(seconds\\)");
  return {
    seconds,
    peakRssMb: field("Maximum resident set size \\(kbytes\\)") / 1024,
    cpuSeconds,
    othersCores: Math.max(0, after.busy - before.busy - cpuSeconds) / seconds,
    stdout: result.stdout.trim(),
    progress: result.stderr.trim().split("\n"),
  };
}

const report: string[] = [];
const log = (line: string) => {
  report.push(line);
  process.stdout.write(`${line}\n`);
};

const file = join(workDir, `import-${MIX}-${LINES}.ndjson`);
if (!existsSync(file)) await writeFile(file);
log(`# warden admin import: ${LINES.toLocaleString("en-US")} lines (${MIX}), ${new Date().toISOString()}`);
log("");
log(`File: ${(readFileSync(file).length / 1024 / 1024).toFixed(0)} MB. Node ${process.version}.`);
log("");
log("| engine | run | wall s | lines/s | peak RSS MB | CPU s | other processes (cores of 2) | summary |");
log("|---|---|---|---|---|---|---|---|");

const details: string[] = [];
// Written after each engine, so that a run stopped on the second keeps the first's figures.
const save = () => writeFileSync(join(ROOT, "bench", "results", `${stamp}-import-${MIX}-${LINES}.md`), `${[...report, ...details].join("\n")}\n`);
for (const engine of ENGINES) {
  const dataDir = join(workDir, engine);
  mkdirSync(dataDir, { recursive: true });
  let databaseUrl: string | null = null;
  let schema: string | null = null;
  let unregister = () => {};
  if (engine === "postgres") {
    schema = `bench_import_${process.pid}_${Date.now()}`;
    await runOnPg(`create schema ${schema}`);
    databaseUrl = `${PG_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    const drop = schema;
    unregister = onInterrupt(() => runOnPg(`drop schema if exists ${drop} cascade`));
  }
  try {
    const options = { command, databaseUrl, dataDir, limits: {} };
    runWardenCommand(options, ["admin", "owner", "create", "--email", "owner@example.com"]);
    runWardenCommand(options, ["admin", "workspace", "create", "--slug", "bench", "--name", "Bench", "--owner", "owner@example.com", "--plan", "pro"]);
    runWardenCommand(options, ["admin", "tool", "create", "--workspace", "bench", "--id", "tabmaster", "--name", "Tab Master"]);
    const runs: [string, Run][] = [["first", runImport({ databaseUrl, dataDir }, file)]];
    if (values.again) runs.push(["again", runImport({ databaseUrl, dataDir }, file)]);
    for (const [name, run] of runs) {
      log(
        `| ${engine} | ${name} | ${run.seconds.toFixed(1)} | ${Math.round(LINES / run.seconds).toLocaleString("en-US")} | ${run.peakRssMb.toFixed(0)} | ${run.cpuSeconds.toFixed(1)} | ${run.othersCores.toFixed(2)} | ${run.stdout} |`,
      );
      details.push("", `${engine}, ${name}: the progress lines (stderr, not a terminal)`, "", "```", ...run.progress, "```");
    }
  } finally {
    if (schema) await runOnPg(`drop schema if exists ${schema} cascade`);
    unregister();
    rmSync(dataDir, { recursive: true, force: true });
    save();
  }
}
for (const line of details) process.stdout.write(`${line}\n`);
rmSync(file, { force: true });
