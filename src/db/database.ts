import { mkdirSync } from "node:fs";
import { join } from "node:path";
import SQLite from "better-sqlite3";
import { Kysely, type LogConfig, type LogEvent, Migrator, PostgresDialect, type SqliteDatabase, SqliteDialect, sql, type Transaction } from "kysely";
import pg from "pg";
import { migrations } from "./migrations/index.js";
import type { Database } from "./schema.js";

export type Dialect = "sqlite" | "postgres";
export type Db = Kysely<Database>;
export type Trx = Transaction<Database>;
/** Either a database handle or an open transaction: what every store function takes first. */
export type Executor = Db | Trx;

export interface Storage {
  db: Db;
  dialect: Dialect;
  close(): Promise<void>;
}

export interface StorageOptions {
  /** postgres://… or null for SQLite. */
  databaseUrl: string | null;
  /** SQLite file, or ":memory:". Ignored for PostgreSQL. */
  sqliteFile?: string;
  dataDir?: string;
  /** PostgreSQL schema to use (tests give each file its own). */
  pgSchema?: string;
  poolSize?: number;
  /** Called with every query that runs (tests use it to check query plans). */
  onQuery?: (sql: string, parameters: readonly unknown[]) => void;
}

// node-pg returns int8 as a string because it can exceed 2^53; our int8 columns hold
// epoch milliseconds and counts, far below that, so they are read as numbers.
const INT8_OID = 20;
const pgTypes = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

function queryLogger(options: StorageOptions): LogConfig | undefined {
  const { onQuery } = options;
  if (!onQuery) return undefined;
  return (event: LogEvent) => {
    if (event.level === "query") onQuery(event.query.sql, event.query.parameters);
  };
}

/**
 * Kysely prepares every query anew; SQLite then parses and plans the same text again
 * and again. Warden's queries are a few hundred distinct texts, so each is prepared
 * once and reused (better-sqlite3 statements are reusable, and calls are synchronous).
 */
function withStatementCache(sqlite: SQLite.Database): SqliteDatabase {
  const statements = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(sql: string) {
      let statement = statements.get(sql);
      if (!statement) {
        statement = sqlite.prepare(sql);
        if (statements.size < 1000) statements.set(sql, statement);
      }
      return statement;
    },
  };
}

export function openStorage(options: StorageOptions): Storage {
  if (options.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.poolSize ?? 10,
      types: pgTypes,
      ...(options.pgSchema ? { options: `-c search_path=${options.pgSchema}` } : {}),
    });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log: queryLogger(options) });
    return { db, dialect: "postgres", close: () => db.destroy() };
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
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }), log: queryLogger(options) });
  return { db, dialect: "sqlite", close: () => db.destroy() };
}

/**
 * Whether every migration is recorded already. Checked first because Kysely's migrator
 * introspects every schema of the database, which is slow and, while another process
 * drops a schema, can fail; a started service usually finds nothing to do.
 */
async function isUpToDate(db: Db, schema: string | undefined): Promise<boolean> {
  const table = schema ? sql.table(`${schema}.kysely_migration`) : sql.table("kysely_migration");
  try {
    const applied = await sql<{ name: string }>`select name from ${table}`.execute(db);
    const names = new Set(applied.rows.map((r) => r.name));
    return Object.keys(migrations).every((name) => names.has(name));
  } catch {
    return false;
  }
}

/** Brings the schema up to date; forward only, each migration in its own transaction. */
export async function migrateToLatest(db: Db, dialect: Dialect): Promise<void> {
  // Kysely looks for its bookkeeping tables in any schema unless told which; with
  // several schemas in one database (one per test file, or per tenant) it must be ours.
  const migrationTableSchema =
    dialect === "postgres" ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema : undefined;
  if (await isUpToDate(db, migrationTableSchema)) return;
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations }, ...(migrationTableSchema ? { migrationTableSchema } : {}) });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === "Error")?.migrationName ?? "unknown";
    throw new Error(`database migration ${failed} failed: ${String(error)}`, { cause: error });
  }
}
