import { resolve } from "node:path";
import type { Config } from "../config.js";
import { SchemaTooNewError } from "../db/database.js";

interface SystemError {
  code?: unknown;
  errors?: unknown;
  message?: unknown;
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

/**
 * Why `warden serve` could not start, in one line for an operator (no stack: the cause is
 * outside the code). The usual causes get their remedy; anything else its own message.
 */
export function describeStartFailure(error: unknown, config: Readonly<Config>): string {
  if (error instanceof SchemaTooNewError) return `refusing to start: ${error.message}`;
  const code = codeOf(error);
  const where = config.databaseUrl ? `PostgreSQL at ${describePostgres(config.databaseUrl)}` : `the SQLite database in ${resolve(config.dataDir)}`;
  switch (code) {
    case "EADDRINUSE":
      return `port ${config.port} on ${config.host} is in use by another process: stop it or set PORT to another port`;
    case "EACCES":
    case "EPERM":
      if ((error as SystemError).message && String((error as SystemError).message).includes("listen")) {
        return `not allowed to listen on port ${config.port} on ${config.host}: ports below 1024 need privileges; set PORT`;
      }
      return `cannot open ${where}: permission denied (${String((error as SystemError).message)})`;
    case "EADDRNOTAVAIL":
      return `cannot listen on ${config.host}: this machine has no such address; set HOST`;
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
  }
  const message = error instanceof Error ? error.message : String(error);
  return `could not start: ${message.split("\n")[0]}`;
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
