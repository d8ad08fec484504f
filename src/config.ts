// Configuration is read from the environment once, checked, and frozen. Nothing else
// in Warden reads process.env: entry points pass the parsed Config down.

export interface Limits {
  keyRequestsPerMin: number;
  wrongKeysPerMin: number;
  listPagesPerMin: number;
  rowsReadPerDay: number;
  lookupsPerDay: number;
  grantsPerToolPerDay: number;
  additionsPerDay: number;
  hobbyPasses: number;
  exampleEventsPerDay: number;
}

export interface Config {
  port: number;
  host: string;
  /** postgres://… selects PostgreSQL; unset means the embedded SQLite file. */
  databaseUrl: string | null;
  /** Folder for the embedded database and other local state. */
  dataDir: string;
  /** Workspace addresses are `<slug>.<domain>`; null means Host names no workspace. */
  domain: string | null;
  /** Trust the left-most X-Forwarded-For address as the client's (only behind a proxy you run). */
  trustProxy: boolean;
  logLevel: string;
  limits: Readonly<Limits>;
}

export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  keyRequestsPerMin: 600,
  wrongKeysPerMin: 30,
  listPagesPerMin: 30,
  rowsReadPerDay: 300_000,
  lookupsPerDay: 20_000,
  grantsPerToolPerDay: 1_000,
  additionsPerDay: 20_000,
  hobbyPasses: 100,
  exampleEventsPerDay: 100,
});

const LIMIT_VARIABLES: Record<keyof Limits, string> = {
  keyRequestsPerMin: "WARDEN_LIMIT_KEY_REQUESTS_PER_MIN",
  wrongKeysPerMin: "WARDEN_LIMIT_WRONG_KEYS_PER_MIN",
  listPagesPerMin: "WARDEN_LIMIT_LIST_PAGES_PER_MIN",
  rowsReadPerDay: "WARDEN_LIMIT_ROWS_READ_PER_DAY",
  lookupsPerDay: "WARDEN_LIMIT_LOOKUPS_PER_DAY",
  grantsPerToolPerDay: "WARDEN_LIMIT_GRANTS_PER_TOOL_PER_DAY",
  additionsPerDay: "WARDEN_LIMIT_ADDITIONS_PER_DAY",
  hobbyPasses: "WARDEN_LIMIT_HOBBY_PASSES",
  exampleEventsPerDay: "WARDEN_LIMIT_EXAMPLE_EVENTS_PER_DAY",
};

export class ConfigError extends Error {}

type Env = Readonly<Record<string, string | undefined>>;

function readInteger(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function readBoolean(env: Env, name: string): boolean {
  const raw = env[name];
  if (raw === undefined || raw === "" || raw === "0" || raw === "false") return false;
  if (raw === "1" || raw === "true") return true;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function readDatabaseUrl(env: Env): string | null {
  const raw = env.DATABASE_URL;
  if (raw === undefined || raw === "") return null;
  if (!/^postgres(ql)?:\/\//.test(raw)) {
    throw new ConfigError("DATABASE_URL must be a postgres:// URL (leave it unset for the embedded SQLite database)");
  }
  return raw;
}

function readDomain(env: Env): string | null {
  const raw = env.WARDEN_DOMAIN?.trim().toLowerCase();
  if (!raw) return null;
  if (!/^[a-z0-9.-]+$/.test(raw) || raw.startsWith(".") || raw.endsWith(".")) {
    throw new ConfigError(`WARDEN_DOMAIN must be a host name such as warden.example.com, got "${raw}"`);
  }
  return raw;
}

export function parseConfig(env: Env): Readonly<Config> {
  const limits = {} as Limits;
  for (const [key, variable] of Object.entries(LIMIT_VARIABLES) as [keyof Limits, string][]) {
    limits[key] = readInteger(env, variable, DEFAULT_LIMITS[key], 0, 1_000_000_000);
  }
  return Object.freeze({
    port: readInteger(env, "PORT", 8080, 0, 65_535),
    host: env.HOST || "127.0.0.1",
    databaseUrl: readDatabaseUrl(env),
    dataDir: env.WARDEN_DATA_DIR || "./data",
    domain: readDomain(env),
    trustProxy: readBoolean(env, "WARDEN_TRUST_PROXY"),
    logLevel: env.LOG_LEVEL || "info",
    limits: Object.freeze(limits),
  });
}
