// A full disk in a storage test, raised by each engine itself: on SQLite a trigger that
// needs pages past `max_page_count` (SQLITE_FULL, as a disk with no room answers), on
// PostgreSQL one that raises `disk_full` (53100, as its server does when it cannot
// extend a file). The fault suite fills a real disk (faults/disk-full.test.ts).
import { sql } from "kysely";
import type { Db, Dialect } from "../db/database.js";
import { unique } from "./harness.js";

/**
 * Makes every insert or update of `table` fail as on a full disk; with `scopeLike`, only
 * the rows whose `scope` matches it (SQL `like`: counters). Answers the function that
 * gives the room back.
 */
export async function fillDiskFor(db: Db, dialect: Dialect, table: string, scopeLike?: string): Promise<() => Promise<void>> {
  const name = `full_${unique("t").replace(/-/g, "_")}`;
  const when = scopeLike === undefined ? "" : `when new.scope like '${scopeLike.replace(/'/g, "''")}'`;
  if (dialect === "sqlite") {
    // Room for the triggers themselves, when an earlier call has already filled the file.
    await sql.raw("pragma max_page_count = 1073741823").execute(db);
    await sql`create table if not exists disk_filler (b blob)`.execute(db);
    for (const event of ["insert", "update"]) {
      await sql
        .raw(`create trigger ${name}_${event} after ${event} on ${table} ${when} begin insert into disk_filler values (zeroblob(1000000)); end`)
        .execute(db);
    }
    const pages = await sql<{ page_count: number }>`pragma page_count`.execute(db);
    await sql.raw(`pragma max_page_count = ${pages.rows[0]?.page_count}`).execute(db);
    return async () => {
      for (const event of ["insert", "update"]) await sql.raw(`drop trigger ${name}_${event}`).execute(db);
      await sql.raw("pragma max_page_count = 1073741823").execute(db);
    };
  }
  await sql
    .raw(`create function ${name}() returns trigger language plpgsql as $$ begin raise exception 'could not extend file' using errcode = 'disk_full'; end $$`)
    .execute(db);
  const pgWhen = scopeLike === undefined ? "" : `when (new.scope like '${scopeLike.replace(/'/g, "''")}')`;
  await sql.raw(`create trigger ${name} before insert or update on ${table} for each row ${pgWhen} execute function ${name}()`).execute(db);
  return async () => {
    await sql.raw(`drop trigger ${name} on ${table}`).execute(db);
    await sql.raw(`drop function ${name}()`).execute(db);
  };
}
