// The processes of a run: the server under test (Warden as a user starts it, or the bare
// node:http baseline) and the load generator. On a machine with two or more cores the
// server is pinned to core 1 and everything of ours on this side (the orchestrator, the
// seeder, autocannon) to core 0, so that the generator never steals the server's core
// and the baseline and Warden are measured under the same conditions. PostgreSQL is
// not pinned: it is shared, as it is in production.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { closeSync, cpSync, openSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));

export type Role = "load" | "server";

const canPin = availableParallelism() >= 2 && spawnSync("taskset", ["-c", "0", "true"]).status === 0;

/** Whether processes are pinned (taskset found and at least two cores). */
export const pinning = canPin ? { load: "0", server: "1" } : null;

/** Pins this process and its threads to the load generator's core. */
export function pinSelfToLoadCore(): void {
  if (pinning) spawnSync("taskset", ["-a", "-cp", pinning.load, String(process.pid)], { stdio: "ignore" });
}

/** The command line for a process in a role, behind taskset when pinning. */
export function commandFor(role: Role, command: string, args: string[]): [string, string[]] {
  return pinning ? ["taskset", ["-c", pinning[role], command, ...args]] : [command, args];
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

// Variables that would point Warden at another database or change its behaviour if
// they leaked from the shell that runs the benchmark.
const INHERITED_BLOCKLIST = /^(DATABASE_URL|PORT|HOST|LOG_LEVEL|WARDEN_.*|NODE_OPTIONS)$/;

function childEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !INHERITED_BLOCKLIST.test(name)) env[name] = value;
  return { ...env, ...extra };
}

export interface ServerProcess {
  name: string;
  pid: number;
  url: string;
  logFile: string;
  /** Peak resident set since the process started (VmHWM), in MB. */
  peakRssMb(): number;
  /** CPU time used so far (user + system), in seconds. */
  cpuSeconds(): number;
  /** How the process ended, or null while it runs. */
  exitStatus(): string | null;
  stop(): Promise<void>;
}

const CLOCK_TICKS = 100; // USER_HZ on Linux

function readPeakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = /VmHWM:\s+(\d+) kB/.exec(status)?.[1];
  return kb === undefined ? Number.NaN : Number(kb) / 1024;
}

export function readCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

async function waitForHttp(url: string, child: ChildProcess, logFile: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  child.once("exit", () => {
    exited = true;
  });
  while (Date.now() < deadline) {
    if (exited) break;
    try {
      const response = await fetch(url);
      await response.arrayBuffer();
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  let log = "";
  try {
    log = readFileSync(logFile, "utf8").slice(-4000);
  } catch {}
  throw new Error(`${url} did not answer${exited ? " (the process exited)" : ""}; log:\n${log}`);
}

async function startServer(
  name: string,
  args: string[],
  env: Record<string, string>,
  port: number,
  readyPath: string,
  logFile: string,
  pinned = true,
): Promise<ServerProcess> {
  const log = openSync(logFile, "a");
  const [command, commandArgs] = pinned ? commandFor("server", process.execPath, args) : [process.execPath, args];
  const child = spawn(command, commandArgs, { cwd: ROOT, env: childEnv(env), stdio: ["ignore", log, log] });
  closeSync(log);
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${name} did not start`);
  const url = `http://127.0.0.1:${port}`;
  let exitStatus: string | null = null;
  const unregister = onInterrupt(async () => {
    child.kill("SIGKILL");
  });
  const exit = new Promise<void>((resolve) =>
    child.once("exit", (code, signal) => {
      exitStatus = signal ? `killed by ${signal}` : `exited with code ${code}`;
      unregister();
      resolve();
    }),
  );
  const alive = <T>(read: () => T): T => {
    try {
      return read();
    } catch (error) {
      let tail = "";
      try {
        tail = readFileSync(logFile, "utf8").slice(-2000);
      } catch {}
      throw new Error(`${name} (pid ${pid}) is gone (${exitStatus ?? "no exit seen yet"}); log ${logFile}:\n${tail}`, { cause: error });
    }
  };
  try {
    await waitForHttp(`${url}${readyPath}`, child, logFile, 60_000);
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
  return {
    name,
    pid,
    url,
    logFile,
    peakRssMb: () => alive(() => readPeakRssMb(pid)),
    cpuSeconds: () => alive(() => readCpuSeconds(pid)),
    exitStatus: () => exitStatus,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
      await exit;
      clearTimeout(timer);
    },
  };
}

export interface WardenOptions {
  /** The installed command to run: a snapshot of bin/warden.js beside its dist/ (see snapshotWarden). */
  command: string;
  /** DATABASE_URL, or null for SQLite in `dataDir`. */
  databaseUrl: string | null;
  dataDir: string;
  limits: Record<string, number>;
  logFile: string;
  /** Write a V8 CPU profile of the whole run into this folder (node --cpu-prof). */
  cpuProfileDir?: string;
  /** More documented variables, e.g. WARDEN_DELIVERY_WORKER=0 or WARDEN_ALLOW_PRIVATE_WEBHOOKS=1. */
  env?: Record<string, string>;
  /** Pinned to the server's core (the default); false lets it run on any core, as two processes sharing the machine do. */
  pinned?: boolean;
}

/**
 * Copies bin/ and dist/ into `into`, so that the run keeps one build of Warden from start
 * to end: on a shared checkout another `npm run build` may replace dist/ halfway through
 * a long run (and a server built from other code may refuse the seeded database). The
 * copy resolves its dependencies from the checkout's node_modules, as bin/ does.
 */
export function snapshotWarden(into: string): string {
  cpSync(join(ROOT, "bin"), join(into, "bin"), { recursive: true });
  cpSync(join(ROOT, "dist"), join(into, "dist"), { recursive: true });
  // The files the compiled code reads beside it: the dashboard's stylesheet, the version.
  cpSync(join(ROOT, "src", "dashboard", "assets"), join(into, "src", "dashboard", "assets"), { recursive: true });
  cpSync(join(ROOT, "package.json"), join(into, "package.json"));
  return join(into, "bin", "warden.js");
}

function wardenEnv(options: Omit<WardenOptions, "logFile" | "cpuProfileDir">): Record<string, string> {
  const env: Record<string, string> = {
    LOG_LEVEL: "warn",
    WARDEN_DATA_DIR: options.dataDir,
    WARDEN_SECRET_KEY: "bench-secret-key-0123456789abcdefghijklmnopqrstuvwxyz",
    ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {}),
    // A preload for Warden's processes alone (bench/README.md), e.g. the statement timer.
    ...(process.env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {}),
  };
  for (const [name, value] of Object.entries(options.limits)) env[name] = String(value);
  return { ...env, ...options.env };
}

/** `node --max-semi-space-size=8 bin/warden.js serve` (a snapshot of it), the installed command on the compiled code, as `npm start` starts it. */
export async function startWarden(options: WardenOptions): Promise<ServerProcess> {
  const port = await freePort();
  const env = { ...wardenEnv(options), PORT: String(port), HOST: "127.0.0.1" };
  const profile = options.cpuProfileDir ? ["--cpu-prof", `--cpu-prof-dir=${options.cpuProfileDir}`] : [];
  // With Node's young generation bounded as `npm start` and the container bound it (docs/decisions.md, "Answers from memory").
  return startServer(
    "warden",
    [...profile, "--max-semi-space-size=8", options.command, "serve"],
    env,
    port,
    "/api/v1/openapi.json",
    options.logFile,
    options.pinned ?? true,
  );
}

/** One `warden …` command (e.g. `admin stripe connect`) with the server's environment, as an operator runs it; answers its --json output. */
export function runWardenCommand(options: Omit<WardenOptions, "logFile" | "cpuProfileDir">, args: string[]): unknown {
  const result = spawnSync(process.execPath, [options.command, ...args, "--json"], { cwd: ROOT, env: childEnv(wardenEnv(options)), encoding: "utf8" });
  if (result.status !== 0) throw new Error(`warden ${args.slice(0, 3).join(" ")} failed (${result.status ?? result.signal}): ${result.stderr}`);
  return JSON.parse(result.stdout);
}

/** The bare node:http server answering `bodyBytes` bytes with `status` to everything. */
export async function startBaseline(options: { bodyBytes: number; status: number; logFile: string }): Promise<ServerProcess> {
  const port = await freePort();
  const args = ["bench/baseline-server.mjs", String(port), String(options.bodyBytes), String(options.status)];
  return startServer("baseline", args, {}, port, "/", options.logFile);
}

/** CPU time of the whole machine so far, in seconds: busy (all but idle and iowait) and total. */
export function machineCpuSeconds(): { busy: number; total: number } {
  const line = readFileSync("/proc/stat", "utf8").split("\n", 1)[0] ?? "";
  const ticks = line.trim().split(/\s+/).slice(1).map(Number);
  const total = ticks.reduce((a, b) => a + b, 0);
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
  return { busy: (total - idle) / CLOCK_TICKS, total: total / CLOCK_TICKS };
}

/**
 * Waits until the machine is quiet (under `maxBusyPercent` of one core busy over a
 * second) for up to `maxWaitSec`: other work on a 2-core machine (a test run, a build)
 * would be measured as Warden's slowness. Answers the busy share last seen.
 */
export async function waitForQuietMachine(maxBusyPercent: number, maxWaitSec: number): Promise<number> {
  const deadline = Date.now() + maxWaitSec * 1000;
  // A short look when not waiting: the figure is only reported.
  const sampleMs = maxWaitSec > 0 ? 1000 : 250;
  for (;;) {
    const before = machineCpuSeconds();
    const started = performance.now();
    await new Promise((resolve) => setTimeout(resolve, sampleMs));
    const busy = ((machineCpuSeconds().busy - before.busy) / ((performance.now() - started) / 1000)) * 100;
    if (busy <= maxBusyPercent || Date.now() >= deadline) return busy;
  }
}

const interruptCleanups = new Set<() => Promise<void>>();
let interruptHandled = false;

/** Runs `cleanup` if the run is interrupted (Ctrl-C, SIGTERM); answers a function that unregisters it. */
export function onInterrupt(cleanup: () => Promise<void>): () => void {
  if (!interruptHandled) {
    interruptHandled = true;
    const handler = (signal: NodeJS.Signals) => {
      process.stderr.write(`\n${signal}: cleaning up\n`);
      Promise.allSettled([...interruptCleanups].map((fn) => fn())).then(() => process.exit(130));
    };
    process.once("SIGINT", handler);
    process.once("SIGTERM", handler);
  }
  interruptCleanups.add(cleanup);
  return () => interruptCleanups.delete(cleanup);
}
