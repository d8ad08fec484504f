import { resolve } from "node:path";
import type { Config } from "../config.js";
import { SchemaTooNewError } from "../db/database.js";

interface SystemError {
  code?: unknown;
  errors?: unknown;
  message?: unknown;
  hostname?: unknown;
}

/** The PostgreSQL server named by DATABASE_URL, without the password: `host:port/database`. */
export function describePostgres(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    return `${url.hostname || "localhost"}:${url.port || "5432"}/${decodeURIComponent(url.pathname.slice(1)) || "(the user's database)"}`;
  } catch {
    return "(DATABASE_URL)";
  }
}

function codeOf(error: unknown): string | undefined {
  const e = error as SystemError | null;
  if (typeof e?.code === "string") return e.code;
  // Connecting to "localhost" tries each of its addresses; Node then throws an AggregateError of them.
  if (Array.isArray(e?.errors)) return codeOf(e.errors[0]);
  return undefined;
}

// Node's own messages run over several lines (a native module's mismatch is five); the
// operator gets all of them on one, since the cause is in the later lines.
function oneLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\s*\n\s*/g, " ").trim();
}

/**
 * Why the database that the configuration names cannot be opened, in one line with what
 * to do, for `warden serve` and every `warden admin` command alike; null when the error is
 * none of the known faults (a bug, whose stack is then wanted).
 */
export function describeDatabaseFailure(error: unknown, config: Readonly<Config>): string | null {
  if (error instanceof SchemaTooNewError) return `refusing to open the database: ${error.message}`;
  const code = codeOf(error);
  const where = config.databaseUrl ? `PostgreSQL at ${describePostgres(config.databaseUrl)}` : `the SQLite database in ${resolve(config.dataDir)}`;
  switch (code) {
    // better-sqlite3's compiled module does not load in this Node.js (built for another
    // version, platform or C library): Node's message says which; a reinstall with this
    // Node.js mends it (npm ci; npm rebuild for a module compiled in place).
    case "ERR_DLOPEN_FAILED":
      return `cannot load the SQLite driver (better-sqlite3) in Node.js ${process.version}: ${oneLine(error).replace(/\.$/, "")}; reinstall it for this Node.js: run npm ci (or npm rebuild better-sqlite3) in Warden's folder`;
    // The data folder (the SQLite file, the development key) on either engine; Node's
    // message names the path.
    case "EACCES":
    case "EPERM":
    case "EROFS":
    case "EEXIST":
    case "ENOTDIR":
      return `cannot use the data folder ${resolve(config.dataDir)}: ${oneLine(error)}; WARDEN_DATA_DIR must name a folder Warden can write to`;
    case "ECONNREFUSED":
    case "ETIMEDOUT":
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return `${where} does not answer (${code}): is it running, and is DATABASE_URL right?`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `${where}: the host name does not resolve (${code}); check DATABASE_URL`;
    // PostgreSQL's own codes (SQLSTATE).
    case "3D000":
      return `${where}: the database does not exist; create it (createdb) or fix DATABASE_URL`;
    case "28P01":
    case "28000":
      return `${where} refused the login (${code}): check the user and password in DATABASE_URL`;
    case "SQLITE_CANTOPEN":
    case "SQLITE_NOTADB":
    case "SQLITE_CORRUPT":
      return `cannot open ${where} (${code}): check WARDEN_DATA_DIR`;
    case "SQLITE_READONLY":
      return `cannot write to ${where} (${code}): check the permissions of WARDEN_DATA_DIR and its files`;
  }
  return null;
}

/**
 * Why `warden serve` could not start, in one line for an operator (no stack: the cause is
 * outside the code). The usual causes get their remedy; anything else its own message.
 */
export function describeStartFailure(error: unknown, config: Readonly<Config>): string {
  if (error instanceof SchemaTooNewError) return `refusing to start: ${error.message}`;
  const code = codeOf(error);
  const message = oneLine(error);
  switch (code) {
    case "EADDRINUSE":
      return `port ${config.port} on ${config.host} is in use by another process: stop it or set PORT to another port`;
    case "EACCES":
    case "EPERM":
      if (message.includes("listen")) return `not allowed to listen on port ${config.port} on ${config.host}: ports below 1024 need privileges; set PORT`;
      break;
    case "EADDRNOTAVAIL":
      return `cannot listen on ${config.host}: this machine has no such address; set HOST`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
      // The database is opened before the server listens, so a name that does not resolve
      // is HOST's when it is HOST (unless DATABASE_URL names the same host).
      if ((error as SystemError).hostname === config.host && !(config.databaseUrl && describePostgres(config.databaseUrl).startsWith(`${config.host}:`))) {
        return `cannot listen on ${config.host}: the host name does not resolve (${code}); set HOST to an address of this machine (0.0.0.0 for all)`;
      }
      break;
  }
  return describeDatabaseFailure(error, config) ?? `could not start: ${message}`;
}

/** The lines `warden serve` prints once it listens: where it answers, what it stores in, and what is unsafe. */
export function startSummary(config: Readonly<Config>, port: number): { info: string; warnings: string[] } {
  const anyAddress = config.host === "0.0.0.0" || config.host === "::";
  const host = anyAddress ? "localhost" : config.host.includes(":") ? `[${config.host}]` : config.host;
  const origin = `http://${host}:${port}`;
  const database = config.databaseUrl ? `PostgreSQL ${describePostgres(config.databaseUrl)}` : `SQLite ${resolve(config.dataDir, "warden.sqlite")}`;
  const metrics = config.metricsToken ? `${origin}/metrics (bearer token)` : "off (WARDEN_METRICS_TOKEN unset)";
  const info = [
    `Warden is serving${anyAddress ? ` on every address (${config.host})` : ""}.`,
    `API ${origin}/api/v1, docs ${origin}/api/v1/docs, health ${origin}/healthz and /readyz, metrics ${metrics}.`,
    `Data: ${database}.`,
    `Webhook delivery ${config.deliveryWorker ? "runs in this process" : "is off here (WARDEN_DELIVERY_WORKER=0)"}.`,
  ].join(" ");
  const warnings: string[] = [];
  if (config.secretKey === null) {
    warnings.push(
      `WARDEN_SECRET_KEY is not set: webhook secrets are sealed with a development key kept in ${resolve(config.dataDir, "secret.key")}. Set a real key in production.`,
    );
  }
  if (config.allowPrivateWebhooks) {
    warnings.push("WARDEN_ALLOW_PRIVATE_WEBHOOKS is on: webhook endpoints may point at loopback and private addresses. For development and tests only.");
  }
  return { info, warnings };
}
