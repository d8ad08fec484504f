// Which failures of the database mean that its storage is full. One place decides, so
// that the error catalogue (`storage_full`), the counters kept in memory meanwhile
// (limits/held-counts.ts) and the access checks' activity times agree on it.
import { statfsSync } from "node:fs";

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

const codeOf = (error: unknown): unknown => (error instanceof Error ? (error as Error & { code?: unknown }).code : undefined);

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
