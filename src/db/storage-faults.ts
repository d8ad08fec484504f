// Which storage failures are not bugs, decided in one place: the database being away
// (503 database_unavailable with Retry-After, logged once when it goes and once when it
// is back; the background loops wait and try again) and its storage being full (503
// storage_full; the counters kept in memory meanwhile, limits/held-counts.ts, and the
// access checks' activity times agree on it).
import { statfsSync } from "node:fs";

/**
 * The database could not be reached (refused, reset, shut down, not answering): the
 * driver's error, classified once where it is thrown (database.ts), so that nothing
 * else has to recognise the driver's many ways of saying it. Its `code` is the cause's,
 * for the start-up line (ops/start-up.ts).
 */
export class DatabaseUnavailableError extends Error {
  readonly code: string | undefined;

  constructor(cause: unknown) {
    super(`the database is unreachable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = "DatabaseUnavailableError";
    this.code = codeOf(cause);
  }
}

// Node's socket errors: the server is down, restarting or cut off.
const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN"]);
// PostgreSQL's: class 08 (connection exception), and a server shutting down or starting up.
const POSTGRES_CODES = new Set(["57P01", "57P02", "57P03"]);
// node-pg's and pg-pool's own errors carry no code, only these words.
const DRIVER_MESSAGES = ["Connection terminated", "timeout expired", "timeout exceeded when trying to connect", "Query read timeout", "is not queryable"];

function codeOf(error: unknown): string | undefined {
  const e = error as { code?: unknown; errors?: unknown } | null;
  if (typeof e?.code === "string") return e.code;
  // Connecting to "localhost" tries each of its addresses; Node then throws an AggregateError of them.
  if (Array.isArray(e?.errors)) return codeOf(e.errors[0]);
  return undefined;
}

/** Whether a PostgreSQL driver's error says the database is away (not a bad statement, nor a constraint). */
export function isUnreachableDriverError(error: unknown): boolean {
  const code = codeOf(error);
  if (code !== undefined && (NETWORK_CODES.has(code) || POSTGRES_CODES.has(code) || code.startsWith("08"))) return true;
  const message = error instanceof Error ? error.message : "";
  return DRIVER_MESSAGES.some((words) => message.includes(words));
}

/**
 * Whether `error`, or one of its causes, is SQLite's busy answer: another process (a
 * `warden admin stripe reconcile`, an import) held the write lock past the busy timeout,
 * or committed since this transaction read. The database is there and will be free: the
 * caller waits and tries again, as for a lock in PostgreSQL; nothing for an operator.
 */
export function isDatabaseBusy(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && code.startsWith("SQLITE_BUSY")) return true;
  }
  return false;
}

/** Whether `error`, or one of its causes, is a DatabaseUnavailableError. */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof DatabaseUnavailableError) return true;
  }
  return false;
}

/**
 * Whether the database answers, as the statements find it: one call of `onChange` when
 * the first statement fails because it is away, and one when a statement succeeds again
 * (the log's one warning each way, not one per request); `onFailure` at every such
 * failure (the metric). Only a statement begun after the last failure can say the
 * database is back: one already under way when the server went may still finish (seen:
 * a success 19 ms after the first failure, while the server was shutting down).
 */
export class DatabaseAvailability {
  private available = true;
  private begun = 0;
  private lastFailureAfter = 0;
  private readonly listeners = new Set<(available: boolean, error?: unknown) => void>();

  constructor(private readonly onFailure: () => void = () => {}) {}

  get isAvailable(): boolean {
    return this.available;
  }

  onChange(listener: (available: boolean, error?: unknown) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A statement or a connection begins: its ticket, for `succeeded`. */
  begin(): number {
    return ++this.begun;
  }

  failed(error: unknown): void {
    this.onFailure();
    this.lastFailureAfter = this.begun;
    if (!this.available) return;
    this.available = false;
    for (const listener of this.listeners) listener(false, error);
  }

  succeeded(ticket: number): void {
    if (this.available || ticket <= this.lastFailureAfter) return;
    this.available = true;
    for (const listener of this.listeners) listener(true);
  }
}

/** A write the database refused for want of room; `cause` is the driver's error. */
export class StorageFullError extends Error {
  constructor(cause: unknown) {
    super("the database's storage is full", { cause });
    this.name = "StorageFullError";
  }
}

// SQLite maps ENOSPC to SQLITE_FULL where it appends to a file (the database, the WAL),
// but not where it grows one: the WAL index (`-shm`, extended a page at a time as the
// WAL grows: SHMSIZE), a size hint or truncation (WRITE, TRUNCATE). Those carry only
// "disk I/O error", and better-sqlite3 does not expose the errno: the folder's free
// space tells them apart from a failing disk.
const SQLITE_GROWTH_ERRORS = new Set(["SQLITE_IOERR_WRITE", "SQLITE_IOERR_SHMSIZE", "SQLITE_IOERR_TRUNCATE"]);

// Below this much free space an I/O error while growing a file is taken for a full
// disk: one commit writes at most a few megabytes of WAL frames, so a write that failed
// for want of room leaves less than this behind; a broken disk with more free space
// stays an internal error.
const NEARLY_FULL_BYTES = 64 * 1024 * 1024;

function freeBytes(folder: string): number | null {
  try {
    const stats = statfsSync(folder);
    return stats.bavail * stats.bsize;
  } catch {
    return null;
  }
}

/**
 * The SQLite driver's error as a StorageFullError when it says the disk is full, null
 * otherwise. `folder` holds the database file (null for an in-memory database).
 */
export function sqliteStorageFault(error: unknown, folder: string | null): StorageFullError | null {
  const code = codeOf(error);
  if (code === "SQLITE_FULL") return new StorageFullError(error);
  if (typeof code !== "string" || !SQLITE_GROWTH_ERRORS.has(code) || folder === null) return null;
  const free = freeBytes(folder);
  return free !== null && free < NEARLY_FULL_BYTES ? new StorageFullError(error) : null;
}

/**
 * Whether a failure is the database's storage being full: SQLite's, as classified when
 * the statement failed (database.ts), or PostgreSQL's `disk_full` (53100), which its
 * server raises when it cannot extend a table or its WAL.
 */
export function isStorageFull(error: unknown): boolean {
  return error instanceof StorageFullError || codeOf(error) === "SQLITE_FULL" || codeOf(error) === "53100";
}
