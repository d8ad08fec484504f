import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import { after } from "node:test";
import { pathToFileURL } from "node:url";

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

/** `warden serve` as a user starts it, in its own process, on a free port. */
export async function startWarden(env: Record<string, string>): Promise<RunningWarden> {
  const port = await freePort();
  const cli = pathToFileURL(join(import.meta.dirname, "..", "cli.ts")).href;
  const script = `const { main } = await import(${JSON.stringify(cli)}); process.exitCode = await main(["serve"]);`;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
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
  for (let i = 0; i < 400; i++) {
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
      if (child.exitCode !== null) throw new Error(`warden serve exited: ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  child.kill("SIGKILL");
  throw new Error(`warden serve did not start: ${stderr}`);
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
