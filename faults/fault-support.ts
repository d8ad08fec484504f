// What every fault test shares: the run's size, the checks every answer must pass, and
// Warden as separate `warden serve` processes over one database, seeded from this process.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { after } from "node:test";
import { DAY_MS, MINUTE_MS, systemClock } from "../src/clock.js";
import { parseConfig } from "../src/config.js";
import type { Dialect } from "../src/db/database.js";
import { createServices, type Services } from "../src/services.js";
import { privateDatabaseEnv } from "../src/test-support/harness.js";
import { freePort, type RunningWarden } from "../src/test-support/serve.js";
import { createKey } from "../src/workspaces/workspace.service.js";

type Size = "smoke" | "default" | "large";

/** FAULTS_SIZE: smoke (CI, about 3 minutes), default (reviewers), large (an hour's worth of fuzzing). */
export const SIZE: Size = (() => {
  const raw = process.env.FAULTS_SIZE ?? "default";
  if (raw !== "smoke" && raw !== "default" && raw !== "large") throw new Error(`FAULTS_SIZE must be smoke, default or large, got "${raw}"`);
  return raw;
})();

// Cleanups registered at the file's top level: `after` called inside a hook or a test
// would run when that hook or test ends, killing the servers the next tests need.
const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

export const bySize = <T>(sizes: Record<Size, T>): T => sizes[SIZE];

/** Requests a burst keeps in flight: the figure the limits are promised at. */
export const IN_FLIGHT = 50;

export const SECRET_KEY = "faults-secret-key-0123456789abcdefghijklmnop";

export const ERROR_TYPES = new Set([
  "invalid_request_error",
  "authentication_error",
  "usage_limit_error",
  "plan_limit_error",
  "not_found",
  "rate_limit_error",
  "api_error",
]);

// What an answer must never show: the insides of the service. Patterns of the server's own
// making only, so that a fuzzed value echoed back in a message cannot trip them.
const LEAKS: [string, RegExp][] = [
  // A V8 frame: "at fn (/path/file.js:1:2)", "at /path/file.js:1:2", "at node:internal/…:1:2".
  // Not any "at … 03:00:00": the OpenAPI document says "created at or after … (2026-11-26T03:00:00Z)".
  ["stack trace", /\bat (?:(?:async )?[\w.<>$[\] ]+ \()?(?:file:\/\/|\/|node:|[A-Za-z]:\\)[^\n"()]*:\d+:\d+\)?|\n\s+at (async )?[\w.<>]+ \(/],
  ["file path", new RegExp(`${escapeRegExp(process.cwd())}|node_modules/|/src/[a-z-]+/[a-z.-]+\\.[jt]s|file://`)],
  [
    "SQL",
    /SQLITE_[A-Z]+|syntax error at or near|violates (unique|foreign key|check) constraint|relation "[a-z_]+"|invalid byte sequence for encoding|\bselect\b[^"]{0,80}\bfrom\b\s+"?[a-z_]+"?\s+where\b|insert into "?[a-z_]+"?/i,
  ],
  ["library error", /StripeSignatureVerificationError|No signatures found matching|FST_ERR_[A-Z_]+|TypeError:|RangeError:|ReferenceError:/],
];

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

export interface Answer {
  status: number;
  headers: Record<string, unknown>;
  body: string;
}

/**
 * The promises every answer keeps, whatever was sent: never a 5xx, a Request-Id, an error
 * in the catalogue's shape on every answer that is not 2xx (3xx included: a client
 * reading the body must find the shape), and nothing of the service's insides.
 * Answers the problems found, empty when there are none.
 */
export function problemsWith(answer: Answer, options: { head?: boolean } = {}): string[] {
  const problems: string[] = [];
  if (answer.status >= 500) problems.push(`status ${answer.status}`);
  const requestId = answer.headers["request-id"];
  if (typeof requestId !== "string" || !/^req_[0-9A-Za-z]+$/.test(requestId)) problems.push(`Request-Id header ${JSON.stringify(requestId)}`);
  if (answer.status >= 300 && !options.head) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(answer.body);
    } catch {
      parsed = undefined;
    }
    const error = (parsed as { error?: { type?: unknown; message?: unknown } } | undefined)?.error;
    if (!error || typeof error.message !== "string" || typeof error.type !== "string") problems.push("body not {error:{type,message}}");
    else if (!ERROR_TYPES.has(error.type)) problems.push(`error type ${error.type} not in the catalogue`);
  }
  for (const [what, pattern] of LEAKS) if (pattern.test(answer.body)) problems.push(`${what} in the body`);
  return problems;
}

/** A short, printable picture of a request for a failure message. */
export function describeRequest(request: { method: string; url: string; headers?: Record<string, unknown>; payload?: unknown }): string {
  const payload = typeof request.payload === "string" ? request.payload : JSON.stringify(request.payload ?? "");
  return JSON.stringify({ method: request.method, url: request.url.slice(0, 300), headers: request.headers, payload: payload?.slice(0, 300) });
}

/**
 * Figures for faults/README.md: each test appends its counts as a line of JSON to the file
 * named by FAULTS_FIGURES (nothing when unset), so a run can be summed up afterwards.
 */
export function recordFigures(name: string, figures: Record<string, unknown>): void {
  const file = process.env.FAULTS_FIGURES;
  const line = JSON.stringify({ name, size: SIZE, at: new Date().toISOString(), ...figures });
  if (file) appendFileSync(file, `${line}\n`);
  console.log(`# figures ${line}`);
}

/** Per-minute limits use calendar minutes: a burst must not straddle one, or it rightly gets twice the limit. */
export async function awayFromWindowEdges(burstMs = 15_000): Promise<void> {
  const now = Date.now();
  const intoMinute = now % MINUTE_MS;
  const intoDay = now % DAY_MS;
  let wait = 0;
  if (intoMinute > MINUTE_MS - burstMs) wait = MINUTE_MS - intoMinute + 200;
  if (intoDay > DAY_MS - burstMs - MINUTE_MS) wait = DAY_MS - intoDay + 200;
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}

/** Settles every promise, IN_FLIGHT at a time at most (all at once when there are fewer). */
export async function inFlight<T>(tasks: (() => Promise<T>)[], width = IN_FLIGHT): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(width, tasks.length) }, async () => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await (tasks[index] as () => Promise<T>)();
    }
  });
  await Promise.all(lanes);
  return results;
}

export interface HttpAnswer extends Answer {
  json: unknown;
}

/** One request over a real socket; the body parsed when it is JSON. */
export async function http(
  baseUrl: string,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<HttpAnswer> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    headers["content-type"] ??= "application/json";
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
  }
  const response = await fetch(`${baseUrl}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: Object.fromEntries(response.headers), body: text, json };
}

/**
 * Warden as an operator runs it with more than one process: `count` processes of
 * `warden serve` over one database (a private PostgreSQL schema, or one SQLite file),
 * and services in this process over the same database, to seed it.
 */
const children = new Set<ChildProcess>();
// Whatever happens to the test, no server outlives the file.
process.on("exit", () => {
  for (const child of children) child.kill("SIGKILL");
});

/**
 * `warden serve` exactly as an operator starts it: bin/warden.js over the built dist/
 * (`npm run test:faults` builds first). It starts in about half the time of the
 * TypeScript sources through tsx, which counts when a test kills and restarts it.
 */
export interface BuiltWarden extends RunningWarden {
  /** What the process has logged so far (warn and above, JSON lines of pino). */
  log(): string;
}

export async function startBuiltWarden(env: Record<string, string>): Promise<BuiltWarden> {
  const port = await freePort();
  const child = spawn(process.execPath, [join(import.meta.dirname, "..", "bin", "warden.js"), "serve"], {
    env: { ...process.env, LOG_LEVEL: "warn", ...env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  child.on("exit", () => children.delete(child));
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr += String(chunk);
  });
  // pino writes to stdout.
  let stdout = "";
  child.stdout?.on("data", (chunk) => {
    stdout += String(chunk);
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  const kill = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGKILL");
    });
  for (let i = 0; i < 1_200; i++) {
    try {
      await fetch(`${baseUrl}/api/v1/openapi.json`);
      return { baseUrl, child, kill, log: () => stdout };
    } catch {
      if (child.exitCode !== null) throw new Error(`warden serve exited: ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  await kill();
  throw new Error(`warden serve did not start in 60 s: ${stderr}`);
}

export interface SharedDatabase {
  env: Record<string, string>;
  services: Services;
  servers: BuiltWarden[];
  /** A fresh key of the workspace's test environment. */
  newKey(slug: string): Promise<string>;
  /** SIGKILLs every server. */
  killAll(): Promise<void>;
  /** Starts the servers again after killAll (same database, new ports). */
  restart(): Promise<void>;
}

export async function sharedDatabase(dialect: Dialect, count: number, extraEnv: Record<string, string> = {}): Promise<SharedDatabase> {
  const env = { ...(await privateDatabaseEnv(dialect)), WARDEN_SECRET_KEY: SECRET_KEY, WARDEN_DOMAIN: "warden.test", ...extraEnv };
  // The services here seed and read, under the default limits: the lowered ones are the servers' to keep.
  const config = parseConfig(Object.fromEntries(Object.entries({ ...env, WARDEN_DELIVERY_WORKER: "0" }).filter(([name]) => !name.startsWith("WARDEN_LIMIT_"))));
  // Migrate before the servers start, so that they do not race to create the schema.
  const services = await createServices(config, { clock: systemClock });
  cleanups.push(() => services.close());
  const start = () => Promise.all(Array.from({ length: count }, () => startBuiltWarden(env)));
  const shared: SharedDatabase = {
    env,
    services,
    servers: await start(),
    newKey: async (slug) => (await createKey(services.db, systemClock, { workspace: slug, env: "test" })).key,
    async killAll() {
      await Promise.all(shared.servers.map((server) => server.kill()));
    },
    async restart() {
      shared.servers = await start();
    },
  };
  cleanups.push(() => shared.killAll());
  return shared;
}

export function assertNoProblems(found: { request: string; problems: string[] }[], what: string): void {
  assert.deepEqual(
    found.slice(0, 10).map((f) => `${f.problems.join(", ")} <- ${f.request}`),
    [],
    `${what}: ${found.length} answers broke a promise (first 10 shown)`,
  );
}
