// Runs the load generator (bench/load-worker.ts) in its own process, pinned to the load
// core, and measures the server's CPU over exactly the measured part of the run.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import type { LoadResult, LoadSpec } from "./load-worker.js";
import { commandFor, machineCpuSeconds, ROOT, readCpuSeconds, type ServerProcess, waitForQuietMachine } from "./processes.js";

export interface Measured extends LoadResult {
  /** CPU used by the server under test during the measured run, in % of one core. */
  serverCpuPercent: number;
  /** CPU used by the database server's processes serving Warden (PostgreSQL backends), in % of one core. */
  dbCpuPercent: number;
  /**
   * CPU used by everything else on the machine during the measured run (other work on
   * a shared machine), in % of one core; and how busy the machine was just before.
   */
  otherCpuPercent: number;
  busyBeforePercent: number;
  /** Measured runs made: more than one when other work disturbed the earlier ones. */
  attempts: number;
}

/** The processes of the database that serve the server under test (none for SQLite). */
export type DatabasePids = () => Promise<number[]>;

export async function databaseCpu(pids: DatabasePids | undefined): Promise<Map<number, number>> {
  const cpu = new Map<number, number>();
  for (const pid of pids ? await pids() : []) {
    try {
      cpu.set(pid, readCpuSeconds(pid));
    } catch {}
  }
  return cpu;
}

// Before each run, wait up to this long for the machine to be this quiet (% of one core).
const QUIET_PERCENT = 10;
const QUIET_WAIT_SEC = 60;

/**
 * Runs bench/load-worker.ts with `spec` in its own process (on the load core when `pin`)
 * and answers its result; `onMeasuring` is called when the measured part starts, after
 * the warm-up.
 */
export async function runLoadGenerator(spec: LoadSpec, options: { pin: boolean; onMeasuring?: () => void }): Promise<LoadResult> {
  const workerArgs = ["--import", "tsx", "bench/load-worker.ts", JSON.stringify(spec)];
  const [command, args] = options.pin ? commandFor("load", process.execPath, workerArgs) : [process.execPath, workerArgs];
  const child = spawn(command, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  // Set by the line handler; a holder, because TypeScript does not follow assignments made in callbacks.
  const outcome: { result: LoadResult | null } = { result: null };
  let failure: unknown = null;
  const lines = createInterface({ input: child.stdout });
  lines.on("line", (line) => {
    try {
      const message = JSON.parse(line) as { event: "measuring" } | { event: "done"; result: LoadResult };
      if (message.event === "measuring") options.onMeasuring?.();
      else outcome.result = message.result;
    } catch (error) {
      failure ??= error;
      child.kill();
    }
  });
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  if (failure) throw failure;
  if (code !== 0 || outcome.result === null) throw new Error(`load generator failed (exit ${code}):\n${stderr}`);
  return outcome.result;
}

/** One measured run (after waiting for a quiet machine). */
async function measureOnce(server: ServerProcess, spec: Omit<LoadSpec, "url">, pids: DatabasePids | undefined, patient: boolean): Promise<Measured> {
  const busyBeforePercent = await waitForQuietMachine(QUIET_PERCENT, patient ? QUIET_WAIT_SEC : 0);
  if (patient && busyBeforePercent > QUIET_PERCENT) {
    process.stdout.write(`  (the machine is busy with other work: ${Math.round(busyBeforePercent)}% of a core; measuring anyway)\n`);
  }
  let cpuAtStart = 0;
  let machineAtStart = machineCpuSeconds();
  let startedAt = 0;
  let dbAtStart: Promise<Map<number, number>> = Promise.resolve(new Map());
  const result = await runLoadGenerator(
    { ...spec, url: server.url },
    {
      pin: true,
      onMeasuring: () => {
        cpuAtStart = server.cpuSeconds();
        machineAtStart = machineCpuSeconds();
        dbAtStart = databaseCpu(pids);
        startedAt = performance.now();
      },
    },
  );
  const seconds = (performance.now() - startedAt) / 1000;
  const serverCpu = server.cpuSeconds() - cpuAtStart;
  const machineBusy = machineCpuSeconds().busy - machineAtStart.busy;
  const [dbStart, dbEnd] = [await dbAtStart, await databaseCpu(pids)];
  let dbCpu = 0;
  for (const [pid, cpu] of dbEnd) dbCpu += cpu - (dbStart.get(pid) ?? 0);
  const percent = (cpuSeconds: number) => (cpuSeconds / seconds) * 100;
  const serverCpuPercent = percent(serverCpu);
  const dbCpuPercent = percent(dbCpu);
  const otherCpuPercent = Math.max(0, percent(machineBusy) - serverCpuPercent - dbCpuPercent - result.loadCpuPercent);
  return { ...result, serverCpuPercent, dbCpuPercent, otherCpuPercent, busyBeforePercent, attempts: 1 };
}

// A measured run during which other work used more than this (% of one core) is repeated.
const DISTURBED_PERCENT = 25;
const MAX_ATTEMPTS = 3;

/**
 * Measures `spec` against the server. When `patient` (not in smoke runs, which only
 * check that the suite works), it first waits for a quiet machine, and a run that other
 * work disturbed is repeated (up to three runs); the least disturbed one is kept.
 */
export async function measureLoad(server: ServerProcess, spec: Omit<LoadSpec, "url">, options: { patient: boolean; pids?: DatabasePids }): Promise<Measured> {
  let best: Measured | null = null;
  const attempts = options.patient ? MAX_ATTEMPTS : 1;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const run = await measureOnce(server, spec, options.pids, options.patient);
    if (!best || run.otherCpuPercent < best.otherCpuPercent) best = { ...run, attempts: attempt };
    if (run.otherCpuPercent <= DISTURBED_PERCENT) break;
    process.stdout.write(
      `  (other work used ${Math.round(run.otherCpuPercent)}% of a core during the run${attempt < MAX_ATTEMPTS ? "; measuring again" : ""})\n`,
    );
  }
  return best as Measured;
}
