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
  signInsPerAddressPerHour: number;
  signInsPerSourcePerHour: number;
  confirmationsPerSessionPerHour: number;
  devicesPerLicence: number;
  pageTicketsPerDevicePerMin: number;
}

export interface Config {
  port: number;
  host: string;
  /** postgres://… selects PostgreSQL; unset means the embedded SQLite file. */
  databaseUrl: string | null;
  /** Folder for the embedded database and other local state. */
  dataDir: string;
  /**
   * How much of the SQLite file is read through memory mapping (WARDEN_SQLITE_MMAP_MB, 0:
   * none): faster reads of a database larger than SQLite's own 16 MB cache, at the cost
   * of the mapped pages counting in the process's resident memory.
   */
  sqliteMmapMb: number;
  /** Megabytes of the in-process cache of retrieve and access-check answers (WARDEN_CACHE_MB; 0: none). */
  cacheMb: number;
  /**
   * The origin people reach Warden at (WARDEN_PUBLIC_URL, e.g. https://warden.example.com):
   * every link in a mail and the Stripe webhook URL are built from it, never from a
   * request's Host, which its sender writes. Required with NODE_ENV=production; otherwise
   * the local server's own address.
   */
  publicUrl: string;
  /**
   * How long `warden serve` keeps trying to reach PostgreSQL at start before it gives up
   * (WARDEN_DB_WAIT_SECONDS, 0: not at all): processes restarted by a supervisor while
   * the database is still coming up wait for it instead of exiting in a loop.
   */
  dbWaitSeconds: number;
  /** Workspace addresses are `<slug>.<domain>`; null means Host names no workspace. */
  domain: string | null;
  /**
   * Which hops of X-Forwarded-For to believe (Fastify's trustProxy), or false for none:
   * the client is the address that the proxies you run appended.
   */
  trustProxy: false | TrustProxy;
  logLevel: string;
  /** Seals webhook secrets, Stripe keys, licence keys and the token signing keys at rest; null means a development key kept in the data folder. */
  secretKey: string | null;
  /** Allow webhook endpoints on loopback and private networks (local development, tests). */
  allowPrivateWebhooks: boolean;
  /** Run the webhook delivery worker inside `warden serve` (one or more processes may). */
  deliveryWorker: boolean;
  /**
   * How long a claimed delivery stays this process's (WARDEN_DELIVERY_LEASE_MS): after a
   * crash, the time before another process sends what it had claimed. Longer than the
   * 15 s attempt timeout, or a slow attempt may be sent twice (at least once either way).
   */
  deliveryLeaseMs: number;
  /**
   * Where the `stripe` client sends its API calls (WARDEN_STRIPE_API_URL): null for
   * Stripe's own API; a local stand-in in tests, or stripe-mock in development.
   */
  stripeApiUrl: string | null;
  /**
   * Where Paddle's API calls go (WARDEN_PADDLE_API_URL): null for Paddle's own (its sandbox
   * for the test environment, production for live); a local stand-in in tests.
   */
  paddleApiUrl: string | null;
  /** Where sign-in mail goes out (SMTP_URL, e.g. smtps://user:pass@mail.example.com); null writes it to the log and `<dataDir>/outbox/`. */
  smtpUrl: string | null;
  /** The From of sign-in mail (WARDEN_MAIL_FROM). */
  mailFrom: string;
  /**
   * Web origins besides browser extensions' that may call the client API from a page
   * (WARDEN_CLIENT_ORIGINS, comma-separated, e.g. https://app.example.com).
   */
  clientOrigins: readonly string[];
  /**
   * The bearer token that opens GET /metrics (WARDEN_METRICS_TOKEN); null: no metrics
   * route at all (404). On the main port, so a deployment has one port to expose.
   */
  metricsToken: string | null;
  /**
   * Days that events, deliveries and their attempts, and Stripe's event ids are kept
   * (WARDEN_RETENTION_DAYS, 0: forever). Recovering an endpoint goes back at most 30
   * days, so fewer than 35 days can leave a recovery with less to send than it says.
   */
  retentionDays: number;
  /**
   * Minutes between the reconciles with Stripe that `warden serve` runs for every
   * environment with a secret key (WARDEN_STRIPE_RECONCILE_MINUTES); 0, the default, runs none.
   */
  stripeReconcileMinutes: number;
  /** As `stripeReconcileMinutes`, for every environment with a Paddle API key (WARDEN_PADDLE_RECONCILE_MINUTES). */
  paddleReconcileMinutes: number;
  limits: Readonly<Limits>;
}

const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  keyRequestsPerMin: 600,
  wrongKeysPerMin: 30,
  listPagesPerMin: 30,
  rowsReadPerDay: 300_000,
  lookupsPerDay: 20_000,
  grantsPerToolPerDay: 1_000,
  additionsPerDay: 20_000,
  hobbyPasses: 100,
  exampleEventsPerDay: 100,
  signInsPerAddressPerHour: 5,
  signInsPerSourcePerHour: 30,
  // One mail per dangerous action (codes are bound to their action): an owner setting up
  // live in one sitting (keys, endpoints, Stripe, co-owners) needs more than 5.
  confirmationsPerSessionPerHour: 20,
  devicesPerLicence: 5,
  // An extension asks one ticket per page it opens, on a person's click: 30 a minute is
  // far past any person, and bounds the rows a stolen device token can have written.
  pageTicketsPerDevicePerMin: 30,
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
  signInsPerAddressPerHour: "WARDEN_LIMIT_SIGN_INS_PER_ADDRESS_PER_HOUR",
  signInsPerSourcePerHour: "WARDEN_LIMIT_SIGN_INS_PER_SOURCE_PER_HOUR",
  confirmationsPerSessionPerHour: "WARDEN_LIMIT_CONFIRMATIONS_PER_SESSION_PER_HOUR",
  devicesPerLicence: "WARDEN_LIMIT_DEVICES_PER_LICENCE",
  pageTicketsPerDevicePerMin: "WARDEN_LIMIT_PAGE_TICKETS_PER_DEVICE_PER_MIN",
};

export class ConfigError extends Error {}

type Env = Readonly<Record<string, string | undefined>>;

function readReconcileMinutes(env: Env, name: "WARDEN_STRIPE_RECONCILE_MINUTES" | "WARDEN_PADDLE_RECONCILE_MINUTES"): number {
  const minutes = readInteger(env, name, 0, 0, 10_080);
  if (minutes > 0 && minutes < 5) throw new ConfigError(`${name} must be 0 (off) or at least 5`);
  return minutes;
}

function readInteger(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

/** Fastify's trust function: whether the address `hop` steps from the socket is a proxy of ours. */
export type TrustProxy = (address: string, hop: number) => boolean;

// Trusting every hop would take the left-most X-Forwarded-For entry, which the client
// writes itself when the proxy appends to the header (nginx, most load balancers):
// anyone could pick a fresh source address per request and dodge the wrong-key limit.
// So `true` means the one proxy you run, and a chain of them is given as a number of
// hops. A function, because Fastify 5 reads a bare number as "trust nothing".
function readTrustProxy(env: Env): false | TrustProxy {
  const name = "WARDEN_TRUST_PROXY";
  const raw = env[name];
  if (raw === undefined || raw === "" || raw === "false") return false;
  const hops = raw === "true" ? 1 : /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(hops >= 0 && hops <= 10)) throw new ConfigError(`${name} must be true, false or a number of proxies (0 to 10), got "${raw}"`);
  if (hops === 0) return false;
  const trust: TrustProxy = (_address, hop) => hop < hops;
  return trust;
}

/** The address a local `warden serve` answers at, from HOST and PORT. */
function localUrl(host: string, port: number): string {
  const shown = host === "0.0.0.0" || host === "::" ? "localhost" : host.includes(":") ? `[${host}]` : host;
  return `http://${shown}:${port}`;
}

function readPublicUrl(env: Env, host: string, port: number): string {
  const name = "WARDEN_PUBLIC_URL";
  const raw = env[name]?.trim();
  if (raw === undefined || raw === "") {
    if (env.NODE_ENV === "production") {
      throw new ConfigError(`${name} is required in production (NODE_ENV=production): the origin owners reach Warden at, such as https://warden.example.com`);
    }
    return localUrl(host, port);
  }
  let url: URL | null = null;
  try {
    url = new URL(raw);
  } catch {}
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:") || url.origin !== raw.replace(/\/$/, "")) {
    throw new ConfigError(`${name} must be an origin such as https://warden.example.com (scheme, host and port only), got "${raw}"`);
  }
  return url.origin;
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

function readApiUrl(env: Env, name: "WARDEN_STRIPE_API_URL" | "WARDEN_PADDLE_API_URL"): string | null {
  const raw = env[name];
  if (raw === undefined || raw === "") return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL such as http://127.0.0.1:12111, got "${raw}"`);
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || (url.pathname !== "/" && url.pathname !== "")) {
    throw new ConfigError(`${name} must be an http(s) address with no path, got "${raw}"`);
  }
  return url.origin;
}

function readSmtpUrl(env: Env): string | null {
  const raw = env.SMTP_URL;
  if (raw === undefined || raw === "") return null;
  if (!/^smtps?:\/\/[^/]/.test(raw)) throw new ConfigError("SMTP_URL must be an smtp:// or smtps:// URL such as smtps://user:pass@mail.example.com");
  return raw;
}

function readClientOrigins(env: Env): readonly string[] {
  const name = "WARDEN_CLIENT_ORIGINS";
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return Object.freeze([]);
  const origins = raw.split(",").map((entry) => {
    const value = entry.trim();
    let url: URL | null = null;
    try {
      url = new URL(value);
    } catch {}
    if (!url || (url.protocol !== "https:" && url.protocol !== "http:") || url.origin !== value) {
      throw new ConfigError(`${name} must list origins such as https://app.example.com (scheme, host and port only), got "${value}"`);
    }
    return value;
  });
  return Object.freeze(origins);
}

function readFlag(env: Env, name: string): boolean {
  const raw = env[name];
  if (raw === undefined || raw === "" || raw === "0" || raw === "false") return false;
  if (raw === "1" || raw === "true") return true;
  throw new ConfigError(`${name} must be 1/true or 0/false, got "${raw}"`);
}

function readSecretKey(env: Env): string | null {
  const raw = env.WARDEN_SECRET_KEY;
  if (raw === undefined || raw === "") return null;
  if (raw.length < 32) throw new ConfigError("WARDEN_SECRET_KEY must be at least 32 characters (e.g. openssl rand -base64 32)");
  return raw;
}

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

function readLogLevel(env: Env): string {
  const raw = env.LOG_LEVEL;
  if (raw === undefined || raw === "") return "info";
  if (!LOG_LEVELS.includes(raw)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}, got "${raw}"`);
  return raw;
}

function readMetricsToken(env: Env): string | null {
  const raw = env.WARDEN_METRICS_TOKEN;
  if (raw === undefined || raw === "") return null;
  // Long enough not to be guessed at the rate the main port answers.
  if (raw.length < 16) throw new ConfigError("WARDEN_METRICS_TOKEN must be at least 16 characters (e.g. openssl rand -hex 16)");
  return raw;
}

export function parseConfig(env: Env): Readonly<Config> {
  const limits = {} as Limits;
  for (const [key, variable] of Object.entries(LIMIT_VARIABLES) as [keyof Limits, string][]) {
    limits[key] = readInteger(env, variable, DEFAULT_LIMITS[key], 0, 1_000_000_000);
  }
  const port = readInteger(env, "PORT", 8080, 0, 65_535);
  const host = env.HOST || "127.0.0.1";
  return Object.freeze({
    port,
    host,
    publicUrl: readPublicUrl(env, host, port),
    databaseUrl: readDatabaseUrl(env),
    dataDir: env.WARDEN_DATA_DIR || "./data",
    // SQLite maps at most 2 GB (its SQLITE_MAX_MMAP_SIZE as better-sqlite3 builds it).
    sqliteMmapMb: readInteger(env, "WARDEN_SQLITE_MMAP_MB", 0, 0, 2047),
    cacheMb: readInteger(env, "WARDEN_CACHE_MB", 64, 0, 65_536),
    dbWaitSeconds: readInteger(env, "WARDEN_DB_WAIT_SECONDS", 60, 0, 3_600),
    domain: readDomain(env),
    trustProxy: readTrustProxy(env),
    logLevel: readLogLevel(env),
    secretKey: readSecretKey(env),
    allowPrivateWebhooks: readFlag(env, "WARDEN_ALLOW_PRIVATE_WEBHOOKS"),
    deliveryWorker: env.WARDEN_DELIVERY_WORKER === undefined || env.WARDEN_DELIVERY_WORKER === "" ? true : readFlag(env, "WARDEN_DELIVERY_WORKER"),
    deliveryLeaseMs: readInteger(env, "WARDEN_DELIVERY_LEASE_MS", 60_000, 1_000, 3_600_000),
    stripeApiUrl: readApiUrl(env, "WARDEN_STRIPE_API_URL"),
    paddleApiUrl: readApiUrl(env, "WARDEN_PADDLE_API_URL"),
    smtpUrl: readSmtpUrl(env),
    mailFrom: env.WARDEN_MAIL_FROM || "Warden <no-reply@localhost>",
    clientOrigins: readClientOrigins(env),
    metricsToken: readMetricsToken(env),
    retentionDays: readInteger(env, "WARDEN_RETENTION_DAYS", 35, 0, 36_500),
    // At least 5 minutes: each run reads the account's subscriptions whole (a page per 100).
    stripeReconcileMinutes: readReconcileMinutes(env, "WARDEN_STRIPE_RECONCILE_MINUTES"),
    paddleReconcileMinutes: readReconcileMinutes(env, "WARDEN_PADDLE_RECONCILE_MINUTES"),
    limits: Object.freeze(limits),
  });
}
