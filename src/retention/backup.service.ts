import { existsSync } from "node:fs";
import { rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import SQLite from "better-sqlite3";
import type { Config } from "../config.js";
import { ApiError } from "../errors/errors.js";
import { randomBase62 } from "../ids.js";

interface Backup {
  source: string;
  file: string;
  bytes: number;
  /** The file that seals webhook and Stripe secrets (and licence and signing keys) when WARDEN_SECRET_KEY is unset: the backup is of no use without it. */
  secretKeyFile: string | null;
}

// better-sqlite3 asks how many pages to copy next after a first step that copies none:
// all of them, in one step. SQLite restarts a backup whenever another connection writes
// between two steps, so under steady writes a copy a few pages a step of a large file
// might never end; one step reads the file in one read transaction, which in WAL mode
// no writer waits for.
const REST_IN_ONE_STEP = 2_147_483_647;

/**
 * Copies the embedded SQLite database to `file` with SQLite's online backup API, while
 * `warden serve` runs and writes: the copy is the database as one transaction left it,
 * with every transaction committed before the copy began. Written beside the target
 * under another name first and renamed, so that `file` is never a half copy; an
 * existing `file` is refused, never overwritten. The copy is 0600, as `secret.key` beside
 * the database: it holds people's addresses and the sealed secrets.
 */
export async function backupDatabase(config: Readonly<Config>, file: string): Promise<Backup> {
  if (config.databaseUrl) {
    throw new ApiError(
      "invalid_parameter",
      'warden admin backup copies the embedded SQLite database, and this Warden uses PostgreSQL (DATABASE_URL). Back it up with PostgreSQL\'s own tool, while Warden runs: pg_dump -Fc -f warden.dump "$DATABASE_URL"; restore with pg_restore (see "Backups" in the README).',
    );
  }
  const source = join(config.dataDir, "warden.sqlite");
  if (!existsSync(source)) throw new ApiError("not_found", `There is no database at ${source} (WARDEN_DATA_DIR) to back up.`);
  if (!existsSync(dirname(file))) throw new ApiError("invalid_parameter", `The folder of ${file} does not exist.`, { param: "FILE" });
  if (existsSync(file)) throw new ApiError("invalid_parameter", `${file} exists already; give the backup a new file name.`, { param: "FILE" });
  const partial = `${file}.partial-${randomBase62(8)}`;
  const db = new SQLite(source, { fileMustExist: true });
  try {
    db.pragma("busy_timeout = 5000");
    // Made empty and 0600 before SQLite writes into it: SQLite would create it 0644 (under
    // the usual umask), readable by every local user until a chmod; its journal takes
    // the database file's mode too.
    await writeFile(partial, "", { mode: 0o600, flag: "wx" });
    await db.backup(partial, { progress: () => REST_IN_ONE_STEP });
    await rename(partial, file);
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  } finally {
    db.close();
  }
  const secretKeyFile = config.secretKey === null ? join(config.dataDir, "secret.key") : null;
  return { source, file, bytes: (await stat(file)).size, secretKeyFile };
}
