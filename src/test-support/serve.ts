import { type ChildProcess, spawn } from "node:child_process";
import { readdir, stat } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { after } from "node:test";

const running = new Set<ChildProcess>();
after(() => {
  for (const child of running) child.kill("SIGKILL");
});

/**
 * A port for a process the test starts (`warden serve`), found free now. Chosen below
 * the kernel's ephemeral range (32768 and up here): a port from `listen(0)` was free
 * only until released, and the receivers other test files bind with `listen(0)` could be
 * given it before the process bound it; the test then talked to another file's receiver
 * (seen once in CI: a delivery test's receiver got /healthz polls, and the kill test an
 * empty answer).
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (await canListen(port)) return port;
  }
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

export interface RunningWarden {
  baseUrl: string;
  child: ChildProcess;
  /** SIGKILL, and wait until the process is gone. */
  kill(): Promise<void>;
}

// The built `warden`, as a user runs it (`npm test` builds `dist/` first): under tsx each
// process compiled the sources again, seconds of CPU that a busy machine turned into a
// start past the old 20 s wait (issue 49).
const BIN = join(import.meta.dirname, "..", "..", "bin", "warden.js");
// How long a start may take before the test fails, saying so: not a budget for a quiet
// machine (it starts in about a second) but a bound for one that never answers.
const START_LIMIT_MS = 300_000;
// A line on the test's output while it waits this long, so a slow start is not silent.
const START_NOTE_MS = 30_000;

const SRC = join(import.meta.dirname, "..");
let built: Promise<void> | null = null;

/**
 * Fails when a source file is newer than the build: the test would run yesterday's code
 * and say nothing (`node scripts/run-tests.mjs <file>` builds nothing; `npm test` does).
 */
function assertBuilt(): Promise<void> {
  built ??= (async () => {
    const builtAt = (await stat(join(SRC, "..", "dist", "cli.js")).catch(() => null))?.mtimeMs ?? 0;
    const sources = (await readdir(SRC, { recursive: true })).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts") && !f.startsWith("test-support"));
    for (const file of sources) {
      if ((await stat(join(SRC, file))).mtimeMs > builtAt) {
        throw new Error(`dist/ is older than src/${file}: run npm run build (the tests start the built warden, as a user runs it)`);
      }
    }
  })();
  return built;
}

/** `warden serve` as a user starts it, in its own process, on a free port; waits for it to answer, however long that takes. */
export async function startWarden(env: Record<string, string>): Promise<RunningWarden> {
  await assertBuilt();
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, "serve"], {
    env: { ...process.env, LOG_LEVEL: "warn", ...env, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  running.add(child);
  child.on("exit", () => running.delete(child));
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr += String(chunk);
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  const started = Date.now();
  let noted = started;
  for (;;) {
    try {
      await fetch(`${baseUrl}/api/v1/openapi.json`);
      return {
        baseUrl,
        child,
        kill: () =>
          new Promise((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once("exit", () => resolve());
            child.kill("SIGKILL");
          }),
      };
    } catch {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`warden serve exited (${child.exitCode ?? child.signalCode}) before it answered: ${stderr}`);
      const waited = Date.now() - started;
      if (waited > START_LIMIT_MS) {
        child.kill("SIGKILL");
        throw new Error(`warden serve did not answer on ${baseUrl} in ${START_LIMIT_MS / 1000} s: ${stderr}`);
      }
      if (Date.now() - noted >= START_NOTE_MS) {
        noted = Date.now();
        process.stderr.write(`warden serve on ${baseUrl} has not answered after ${Math.round(waited / 1000)} s (a busy machine?); still waiting\n`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** A call to the vendor API of a running `warden serve` with a secret key. */
export async function callApi<T>(warden: RunningWarden, key: string, method: string, path: string, body?: object): Promise<{ status: number; json: T }> {
  const response = await fetch(`${warden.baseUrl}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, json: (await response.json()) as T };
}
