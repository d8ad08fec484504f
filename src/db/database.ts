import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import SQLite from "better-sqlite3";
import {
  Kysely,
  type LogConfig,
  type LogEvent,
  PostgresAdapter,
  PostgresDialect,
  type PostgresPool,
  type PostgresPoolClient,
  type SqliteDatabase,
  SqliteDialect,
  SqliteQueryCompiler,
  type SqliteStatement,
  sql,
  type Transaction,
} from "kysely";
import type pg from "pg";
import { migrations } from "./migrations/index.js";
import type { Database } from "./schema.js";
import { preparedStatementName } from "./statement-names.js";
import { DatabaseAvailability, DatabaseUnavailableError, isUnreachableDriverError, sqliteStorageFault } from "./storage-faults.js";
import { WalCheckpointer } from "./wal-checkpointer.js";

export type Dialect = "sqlite" | "postgres";
export type Db = Kysely<Database>;
export type Trx = Transaction<Database>;
/** Either a database handle or an open transaction: what every store function takes first. */
export type Executor = Db | Trx;

export interface Storage {
  db: Db;
  dialect: Dialect;
  /** The PostgreSQL pool's connections, for the metrics; absent on SQLite. */
  poolStats?: () => PoolStats;
  /** Whether PostgreSQL answers, as the statements find it; SQLite's is always available. */
  availability: DatabaseAvailability;
  /**
   * Bounds every statement from now on (PostgreSQL): one that has not answered in
   * `ms` fails as the database being unreachable and its connection is dropped.
   * `warden serve` sets it once migrated: a migration may rightly take longer.
   */
  boundStatements(ms: number): void;
  /**
   * Moves SQLite's log checkpoints off the connection that writes, to a worker thread
   * (wal-checkpointer.ts); `warden serve` calls it. Answers the checkpointer, or null on
   * PostgreSQL and for a database in memory.
   */
  checkpointInBackground(): WalCheckpointer | null;
  close(): Promise<void>;
}

export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

export interface StorageOptions {
  /** postgres://… or null for SQLite. */
  databaseUrl: string | null;
  /** SQLite file, or ":memory:". Ignored for PostgreSQL. */
  sqliteFile?: string;
  dataDir?: string;
  /** Megabytes of the SQLite file read through memory mapping (Config.sqliteMmapMb). */
  sqliteMmapMb?: number;
  /** PostgreSQL schema to use (tests give each file its own). */
  pgSchema?: string;
  poolSize?: number;
  /** Called with every query that runs and its time in the driver (tests check query plans with it, the query census times them). */
  onQuery?: (sql: string, parameters: readonly unknown[], ms: number) => void;
  /** Called when a statement fails (the metrics count them). */
  onStatementError?: () => void;
  /** Called when a statement or a connection fails because PostgreSQL is unreachable (the metrics count them). */
  onUnavailable?: () => void;
}

/**
 * How long a connection to PostgreSQL may take: a request waits no longer for a database
 * that does not answer (a dropped network, a host that is down) before it is told 503.
 */
export const CONNECT_TIMEOUT_MS = 2_000;

/**
 * How long a request may wait for one of the pool's connections to be free while the
 * database answers. Apart from the connection's own bound: a burst of writes that queue
 * on one row (20 grants at once against a daily limit) keeps every connection busy for a
 * moment, and the database is there; waiting is right, a 503 would not be. Once a
 * statement has found the database away, waits are bounded like a connection (2 s).
 */
const POOL_WAIT_MS = 10_000;

// The PostgreSQL driver is loaded when a PostgreSQL database is opened, not with this
// module: on SQLite it was a fifth of the time every `warden admin` command took to start.
// (pg is a CommonJS package, so it is required, and openStorage stays synchronous.)
const loadPg = () => createRequire(import.meta.url)("pg") as typeof pg;

// node-pg returns int8 as a string because it can exceed 2^53; our int8 columns hold
// epoch milliseconds and counts, far below that, so they are read as numbers.
const INT8_OID = 20;

function poolOptions(driver: typeof pg): Pick<pg.PoolConfig, "types" | "Client"> {
  /** pg-pool bounds waiting for a free connection and connecting with one option; this bounds the connecting alone. */
  class BoundedClient extends driver.Client {
    constructor(config?: pg.ClientConfig) {
      super({ ...config, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
    }
  }
  const getTypeParser = ((oid: number, format?: "text" | "binary") =>
    oid === INT8_OID ? (value: string) => Number(value) : driver.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser;
  return { types: { getTypeParser }, Client: BoundedClient };
}

function queryLogger(options: StorageOptions): LogConfig | undefined {
  const { onQuery, onStatementError } = options;
  if (!onQuery && !onStatementError) return undefined;
  return (event: LogEvent) => {
    if (event.level === "query") onQuery?.(event.query.sql, event.query.parameters, event.queryDurationMillis);
    else onStatementError?.();
  };
}

/** Which engine runs a query, for the few statements written differently for each. */
export function dialectOf(ex: Executor): Dialect {
  return ex.getExecutor().adapter instanceof PostgresAdapter ? "postgres" : "sqlite";
}

const HOLD_WRITE_LOCK = "delete from warden_migrations where 0 = 1";

/**
 * Takes SQLite's write lock at the start of a transaction that reads long before it
 * writes (BEGIN IMMEDIATE, which Kysely cannot open). A deferred transaction that has
 * read fails with SQLITE_BUSY_SNAPSHOT at its first write if another process (a running
 * `warden serve`) committed meanwhile; holding the lock, the others wait instead (up to
 * the busy timeout). A write that matches no row takes the lock all the same. PostgreSQL
 * locks rows as they are written: nothing to do.
 */
export async function holdWriteLock(trx: Trx): Promise<void> {
  if (dialectOf(trx) !== "sqlite") return;
  // At once on the transaction's connection (directSqlite), without building the query: every spend batch starts so.
  if (!directSqlite(trx)?.(HOLD_WRITE_LOCK, [])) await sql.raw(HOLD_WRITE_LOCK).execute(trx);
}

/** Runs one SQL statement at once on an SQLite connection, or answers null when it must wait its turn. */
export type DirectSqlite = (sql: string, parameters: readonly unknown[]) => unknown[] | null;

interface DirectPaths {
  outside: DirectSqlite;
  inside: DirectSqlite;
}

// By adapter: a database and the transactions opened on it share theirs.
const directSqliteOf = new WeakMap<object, DirectPaths>();

/**
 * The synchronous path to the SQLite connection under `ex`, for the hot paths' prepared
 * queries; undefined for PostgreSQL. Kysely serialises every query through a mutex and a
 * chain of promises per statement: about a sixth of a retrieve's CPU at 50 connections,
 * and in the delivery worker's batches (two statements an attempt) a tenth of its time.
 *
 * Outside a transaction a statement run synchronously cannot interleave with anything,
 * so it needs no mutex, except while a transaction is open on the connection (between
 * its awaits): then the statement would run inside another request's transaction, so
 * the caller is told to wait for the mutex after all. Inside a transaction the caller
 * holds the one connection (Kysely's mutex let it open the transaction), so its
 * statements run at once, as long as the transaction is still open.
 */
export function directSqlite(ex: Executor): DirectSqlite | undefined {
  const paths = directSqliteOf.get(ex.getExecutor().adapter);
  return ex.isTransaction ? paths?.inside : paths?.outside;
}

function makeDirectSqlite(sqlite: SQLite.Database, database: SqliteDatabase, { onQuery, onStatementError }: StorageOptions): DirectPaths {
  const run = (text: string, parameters: readonly unknown[]) => {
    const started = onQuery ? performance.now() : 0;
    let rows: unknown[] = [];
    try {
      const statement = database.prepare(text);
      if (statement.reader) rows = statement.all(parameters);
      else statement.run(parameters);
    } catch (error) {
      onStatementError?.();
      throw error;
    }
    onQuery?.(text, parameters, performance.now() - started);
    return rows;
  };
  return {
    outside: (text, parameters) => (sqlite.inTransaction ? null : run(text, parameters)),
    inside: (text, parameters) => (sqlite.inTransaction ? run(text, parameters) : null),
  };
}

/**
 * Kysely prepares every query anew; SQLite then parses and plans the same text again
 * and again. Warden's queries are a few hundred distinct texts, so each is prepared
 * once and reused (better-sqlite3 statements are reusable, and calls are synchronous).
 *
 * A statement that fails because the disk is full throws a StorageFullError (the
 * folder's free space is read then, and only then: storage-faults.ts). And a write
 * that fails so makes SQLite roll its whole transaction back at once: Kysely's own
 * `rollback` then failed with "no transaction is active", and that error, not the full
 * disk, reached the error handler. A rollback with no transaction open does nothing.
 */
function withStatementCache(sqlite: SQLite.Database, folder: string | null): SqliteDatabase {
  const statements = new Map<string, SqliteStatement>();
  const guarded = (statement: SQLite.Statement): SqliteStatement => ({
    reader: statement.reader,
    all(parameters) {
      try {
        return statement.all(parameters);
      } catch (error) {
        throw sqliteStorageFault(error, folder) ?? error;
      }
    },
    run(parameters) {
      try {
        return statement.run(parameters);
      } catch (error) {
        throw sqliteStorageFault(error, folder) ?? error;
      }
    },
    iterate: (parameters) => statement.iterate(parameters) as IterableIterator<unknown>,
  });
  const rollback: SqliteStatement = {
    reader: false,
    all: () => [],
    run: () => (sqlite.inTransaction ? sqlite.prepare("rollback").run() : { changes: 0, lastInsertRowid: 0 }),
    iterate: () => [][Symbol.iterator](),
  };
  return {
    close: () => sqlite.close(),
    prepare(sql: string) {
      if (sql === "rollback") return rollback;
      let statement = statements.get(sql);
      if (!statement) {
        statement = guarded(sqlite.prepare(sql));
        if (statements.size < 1000) statements.set(sql, statement);
      }
      return statement;
    },
  };
}

/**
 * The hot paths' queries (those of `prepared`) run as named statements on PostgreSQL:
 * each connection parses and plans them once, instead of once per request (planning
 * took 0.1 to 0.5 ms of a 1 ms licence query). Only those few texts are named, so a
 * connection keeps a bounded set, and ad-hoc queries (`select *`, variable `in` lists)
 * never hold a plan that a later migration could make stale.
 */
function withNamedStatements(pool: pg.Pool, availability: DatabaseAvailability, bound: { statementMs: number | undefined }): PostgresPool {
  const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  // The driver's error, classified once here: the rest of the code sees a DatabaseUnavailableError.
  const fault = (error: unknown) => {
    if (!isUnreachableDriverError(error)) return error;
    availability.failed(error);
    return new DatabaseUnavailableError(error);
  };
  const wrap = (client: pg.PoolClient): PostgresPoolClient => {
    let wrapper = wrappers.get(client);
    if (!wrapper) {
      // pg-pool listens for a client's errors only while it is idle, and Kysely never
      // does: a server that goes away while a client is checked out made it emit an
      // unhandled 'error' and killed the process. The query under way fails by itself.
      client.on("error", () => {});
      // A connection whose statement failed for want of the server is not given back to
      // the pool: a statement past its bound may still be running on it.
      let broken = false;
      // Kysely passes either SQL and its values, or a cursor (streams), which goes through as is.
      const query = async (text: unknown, values?: readonly unknown[]) => {
        const name = typeof text === "string" ? preparedStatementName(text) : undefined;
        const timeout = bound.statementMs === undefined ? {} : { query_timeout: bound.statementMs };
        const ticket = availability.begin();
        try {
          const result =
            typeof text !== "string"
              ? await client.query(text as string, values as unknown[])
              : await client.query({ ...(name === undefined ? {} : { name }), text, values: values as unknown[], ...timeout });
          availability.succeeded(ticket);
          return result;
        } catch (error) {
          const thrown = fault(error);
          if (thrown !== error) broken = true;
          throw thrown;
        }
      };
      const release = () => {
        const destroy = broken;
        broken = false;
        client.release(destroy);
      };
      wrapper = { query, release } as unknown as PostgresPoolClient;
      wrappers.set(client, wrapper);
    }
    return wrapper;
  };
  return {
    connect: async () => {
      try {
        const pending = pool.connect();
        // While the database is known to be away, no request waits for a busy pool's
        // connection longer than a new connection may take: the 503 comes within that.
        return wrap(await (availability.isAvailable ? pending : withinConnectBound(pending)));
      } catch (error) {
        throw fault(error);
      }
    },
    end: () => pool.end(),
  };
}

/** `pending`, or pg-pool's own timeout error after CONNECT_TIMEOUT_MS; a connection that comes later goes back to the pool. */
function withinConnectBound(pending: Promise<pg.PoolClient>): Promise<pg.PoolClient> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("timeout exceeded when trying to connect")), CONNECT_TIMEOUT_MS);
  });
  return Promise.race([pending, late])
    .finally(() => clearTimeout(timer))
    .catch((error: unknown) => {
      pending.then(
        (client) => client.release(),
        () => {},
      );
      throw error;
    });
}

/**
 * Log pages past which the connection that writes checkpoints itself (SQLite's default is
 * 1,000): by then the worker has copied most of them, so that checkpoint is short, and the
 * log starts over. A longer log would slow every read, which searches it: a checkpointer
 * that let the log reach 16 MB and more made retrieve slower (bench/journal.md, 2026-11-23).
 * 4,000 pages is one block of the log's index.
 */
const WRITER_CHECKPOINT_PAGES = 4_000;
const SQLITE_CHECKPOINT_PAGES = 1_000;
/** How often the background checkpointer looks at an idle log, and at one that grows. */
const CHECKPOINT_EVERY_MS = 1_000;
const CHECKPOINT_BUSY_MS = 20;

export function openStorage(options: StorageOptions): Storage {
  if (options.databaseUrl) {
    const driver = loadPg();
    const pool = new driver.Pool({
      connectionString: options.databaseUrl,
      max: options.poolSize ?? 10,
      ...poolOptions(driver),
      connectionTimeoutMillis: POOL_WAIT_MS,
      ...(options.pgSchema ? { options: `-c search_path=${options.pgSchema}` } : {}),
    });
    // An idle connection that the server drops (a restart) is taken out of the pool by
    // pg-pool; without a listener its 'error' event would end the process.
    pool.on("error", () => {});
    // No JIT compilation: Warden's statements are short walks of an index, but PostgreSQL
    // compiles one whenever its cost estimate passes jit_above_cost, which an estimate made
    // for a whole scan that a LIMIT stops early does. The compile costs 100 to 200 ms: the
    // Insights most-active-unpaid list at a million people took 144 ms with it and 0.3 ms
    // without, a retention batch 227 ms with 19 of them JIT (bench/README.md). Sent first
    // on each new connection: the client runs its queries in order.
    pool.on("connect", (client) => {
      client.query("set jit = off").catch(() => {});
    });
    const availability = new DatabaseAvailability(options.onUnavailable);
    const bound: { statementMs: number | undefined } = { statementMs: undefined };
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: withNamedStatements(pool, availability, bound) }), log: queryLogger(options) });
    const poolStats = () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount });
    return {
      db,
      dialect: "postgres",
      poolStats,
      availability,
      boundStatements: (ms) => {
        bound.statementMs = ms;
      },
      checkpointInBackground: () => null,
      close: () => db.destroy(),
    };
  }
  let file = options.sqliteFile;
  if (!file) {
    const dir = options.dataDir ?? "./data";
    mkdirSync(dir, { recursive: true });
    file = join(dir, "warden.sqlite");
  }
  const sqlite = new SQLite(file);
  // WAL lets readers go on while one writer commits; the busy timeout makes a second
  // process wait for the write lock instead of failing at once.
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma("busy_timeout = 5000");
  sqlite.pragma("synchronous = NORMAL");
  sqlite.pragma("foreign_keys = ON");
  // Each page read is then a memory access instead of a read() call: retrieve at 1M
  // customers 7,793 -> 12,089 req/s (bench/README.md), its resident memory 154 -> 739 MB.
  if (options.sqliteMmapMb) sqlite.pragma(`mmap_size = ${options.sqliteMmapMb * 1024 * 1024}`);
  const database = withStatementCache(sqlite, file === ":memory:" ? null : dirname(file));
  const db = new Kysely<Database>({ dialect: new StablePlanSqliteDialect({ database }), log: queryLogger(options) });
  directSqliteOf.set(db.getExecutor().adapter, makeDirectSqlite(sqlite, database, options));
  let checkpointer: WalCheckpointer | null = null;
  const inFile = file;
  // A statement on SQLite runs in this process: there is no server to be away, nor a statement to bound.
  return {
    db,
    dialect: "sqlite",
    availability: new DatabaseAvailability(),
    boundStatements: () => {},
    checkpointInBackground() {
      if (inFile === ":memory:") return null;
      if (!checkpointer) {
        // The writer's own checkpoint only when the worker falls this far behind.
        sqlite.pragma(`wal_autocheckpoint = ${WRITER_CHECKPOINT_PAGES}`);
        checkpointer = new WalCheckpointer(inFile, CHECKPOINT_EVERY_MS, CHECKPOINT_BUSY_MS, (error) => {
          // Without the worker the writer checkpoints at SQLite's own bound again, as before `warden serve` moved them.
          sqlite.pragma(`wal_autocheckpoint = ${SQLITE_CHECKPOINT_PAGES}`);
          process.emitWarning(`SQLite's checkpoint worker stopped (${error.message}): the writer checkpoints the log itself again`);
        });
      }
      return checkpointer;
    },
    close: async () => {
      await checkpointer?.close();
      await db.destroy();
    },
  };
}

/**
 * Every value is bound as `+?`, not `?`. The SQLite in better-sqlite3 13 (3.54, built with
 * STAT4) marks a statement with a join to be planned again whenever a value is bound to a
 * parameter its planner looked at, and better-sqlite3 binds on every run: a two-table
 * join took 50 µs of CPU a run instead of 5, and a retrieve at a million customers
 * (the person with their sources, three joins) about ten times what its parts take
 * alone. The unary plus is a no-op on the value (same value, type and lack of affinity),
 * and the planner still uses it for an index lookup, but it is an expression, so the
 * plan no longer depends on the bound value. Warden never runs ANALYZE (there are no
 * statistics for a value to refine), and its SQLite statements take no LIKE or GLOB
 * pattern as a parameter (customer search uses FTS5), so no plan loses anything.
 * bench/journal.md, "2026-11-27, later: the SQLite statements planned on every run".
 */
class StablePlanCompiler extends SqliteQueryCompiler {
  protected override getCurrentParameterPlaceholder(): string {
    return "+?";
  }
}

class StablePlanSqliteDialect extends SqliteDialect {
  override createQueryCompiler(): SqliteQueryCompiler {
    return new StablePlanCompiler();
  }
}

// Kysely's own Migrator introspects every table of every schema before it starts; on
// PostgreSQL that fails when another process drops a schema at the same moment (tests
// do, one schema per file), and it is slow. Warden's runner needs only its own table.
const MIGRATION_LOCK = 7_294_061;

async function appliedMigrations(ex: Executor): Promise<Set<string>> {
  const rows = await sql<{ name: string }>`select name from warden_migrations`.execute(ex);
  return new Set(rows.rows.map((r) => r.name));
}

/** The migrations this code knows and the database lacks, and those it has that this code does not know. */
export async function readMigrationState(ex: Executor): Promise<{ pending: string[]; unknown: string[] }> {
  const applied = await appliedMigrations(ex);
  return {
    pending: Object.keys(migrations)
      .sort()
      .filter((name) => !applied.has(name)),
    unknown: [...applied].filter((name) => !Object.hasOwn(migrations, name)).sort(),
  };
}

/** The database was migrated by a newer Warden: this code must not run on it. */
export class SchemaTooNewError extends Error {
  constructor(readonly unknown: readonly string[]) {
    super(`the database has migrations this version of Warden does not know (${unknown.join(", ")}): run the newer version`);
    this.name = "SchemaTooNewError";
  }
}

/**
 * Brings the schema up to date: forward only, in name order, each migration in its own
 * transaction together with its record. On PostgreSQL an advisory lock lets one process
 * migrate while others that start at the same time wait, then find nothing to do. A
 * database that a newer Warden has migrated is refused: old code on a new schema could
 * write what the new code no longer reads (a rolled-back deploy must roll back its data too).
 */
export async function migrateToLatest(db: Db, dialect: Dialect): Promise<void> {
  const pending = async (ex: Executor) => {
    const applied = await appliedMigrations(ex);
    return Object.keys(migrations)
      .sort()
      .filter((name) => !applied.has(name));
  };
  const lock = async (trx: Trx) => {
    if (dialect === "postgres") await sql`select pg_advisory_xact_lock(${MIGRATION_LOCK})`.execute(trx);
  };
  await db.transaction().execute(async (trx) => {
    await lock(trx);
    await sql`create table if not exists warden_migrations (name text primary key, applied_at bigint not null)`.execute(trx);
  });
  const { unknown } = await readMigrationState(db);
  if (unknown.length > 0) throw new SchemaTooNewError(unknown);
  if ((await pending(db)).length === 0) return;
  for (;;) {
    const done = await db.transaction().execute(async (trx) => {
      await lock(trx);
      const [next] = await pending(trx);
      if (next === undefined) return true;
      const migration = migrations[next];
      try {
        await migration?.up(trx as unknown as Kysely<unknown>);
      } catch (error) {
        throw new Error(`database migration ${next} failed: ${String(error)}`, { cause: error });
      }
      // Bookkeeping for operators, not domain time: the wall clock is right here.
      await sql`insert into warden_migrations (name, applied_at) values (${next}, ${Date.now()})`.execute(trx);
      return false;
    });
    if (done) return;
  }
}
