// How long `warden` takes to start (issue 49, point 2): the compiled command as an operator
// runs it, each case `--runs` times under /usr/bin/time, on a fresh SQLite folder that an
// admin command first migrates. Cases: Node.js alone (`node -e 0`, the floor), `warden
// --version`, `warden help`, an admin command's `--help` (no database), and `warden admin
// owner list`, which opens the database (the services, the migrations' check) and reads
// it. It reports the median and the fastest wall and CPU (user + system) times, and how
// busy the rest of the machine was meanwhile: on a shared 2-core machine a busy neighbour
// shows as a slow wall time, while the CPU time is the command's own.
//
//   npm run build && node --import tsx bench/cli-start.ts [--runs 20]
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { machineCpuSeconds, ROOT, snapshotWarden } from "./processes.js";

const { values } = parseArgs({ options: { runs: { type: "string", default: "20" } } });
const RUNS = Number(values.runs);
if (!(RUNS >= 1)) throw new Error("--runs takes a whole number of at least 1");

const stamp = new Date().toISOString().replace(/[:.]/g, "-");
const workDir = join(ROOT, "bench", "tmp", `cli-start-${stamp}`);
mkdirSync(workDir, { recursive: true });
const warden = snapshotWarden(join(workDir, "warden"));
const dataDir = join(workDir, "data");
// No inherited WARDEN_ or DATABASE_URL settings: the embedded SQLite database in dataDir.
const env = { PATH: process.env.PATH ?? "", HOME: workDir, WARDEN_DATA_DIR: dataDir };

interface Sample {
  wallMs: number;
  cpuMs: number;
}

function timed(args: string[]): Sample {
  const result = spawnSync("/usr/bin/time", ["-f", "%e %U %S", process.execPath, ...args], { env, encoding: "utf8" });
  if (result.status !== 0) throw new Error(`${args.join(" ")} failed (${result.status ?? result.signal}): ${result.stderr}`);
  const [wall = Number.NaN, user = Number.NaN, system = Number.NaN] = (result.stderr.trim().split("\n").pop() ?? "").split(" ").map(Number);
  return { wallMs: wall * 1000, cpuMs: (user + system) * 1000 };
}

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

// The database exists before the first timed run: a first command also creates and migrates it.
timed([warden, "admin", "owner", "create", "--email", "bench@example.com"]);

const cases: [string, string[]][] = [
  ["node -e 0 (Node.js alone)", ["-e", "0"]],
  ["warden --version", [warden, "--version"]],
  ["warden help", [warden, "help"]],
  ["warden admin tool list --help", [warden, "admin", "tool", "list", "--help"]],
  ["warden admin owner list (SQLite)", [warden, "admin", "owner", "list"]],
];

const rows: string[] = [];
for (const [name, args] of cases) {
  timed(args); // warm the file cache
  const before = machineCpuSeconds();
  const samples = Array.from({ length: RUNS }, () => timed(args));
  const after = machineCpuSeconds();
  const ownCpu = samples.reduce((sum, s) => sum + s.cpuMs, 0) / 1000;
  const elsewhere = Math.max(0, after.busy - before.busy - ownCpu) / Math.max(1e-9, after.total - before.total);
  const wall = samples.map((s) => s.wallMs);
  const cpu = samples.map((s) => s.cpuMs);
  rows.push(
    `| ${name} | ${median(wall).toFixed(0)} | ${Math.min(...wall).toFixed(0)} | ${median(cpu).toFixed(0)} | ${Math.min(...cpu).toFixed(0)} | ${(elsewhere * 100).toFixed(0)} % |`,
  );
  console.log(rows[rows.length - 1]);
}

const markdown = [
  `# warden's start, ${RUNS} runs a case (${new Date().toISOString()}, Node.js ${process.version})`,
  "",
  "| Command | Wall median (ms) | Wall fastest (ms) | CPU median (ms) | CPU fastest (ms) | Rest of the machine busy |",
  "|---|--:|--:|--:|--:|--:|",
  ...rows,
  "",
].join("\n");
const out = join(ROOT, "bench", "results", `${stamp}-cli-start.md`);
writeFileSync(out, markdown);
console.log(`\n${markdown}\nWritten to ${out}`);
