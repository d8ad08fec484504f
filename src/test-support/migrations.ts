// Migration tests: an empty database per engine, and the migrations applied up to one of
// them as the runner applies them, so a test can write rows as that schema's code did and
// then run the rest.
import { sql } from "kysely";
import { type Db, type Dialect, openStorage, type Storage } from "../db/database.js";
import { migrations } from "../db/migrations/index.js";
import { createPgSchema, PG_URL } from "./harness.js";

/** A database with no table yet (SQLite in memory, a private PostgreSQL schema); the test closes it. */
export async function emptyStorage(dialect: Dialect): Promise<Storage> {
  return dialect === "sqlite"
    ? openStorage({ databaseUrl: null, sqliteFile: ":memory:" })
    : openStorage({ databaseUrl: PG_URL, pgSchema: await createPgSchema(), poolSize: 2 });
}

/** Applies the migrations up to and including `last`, recorded as the runner records them. */
export async function migrateThrough(db: Db, last: string): Promise<void> {
  await sql`create table warden_migrations (name text primary key, applied_at bigint not null)`.execute(db);
  for (const name of Object.keys(migrations).sort()) {
    if (name > last) break;
    await db.transaction().execute(async (trx) => {
      await migrations[name]?.up(trx as never);
      await sql`insert into warden_migrations (name, applied_at) values (${name}, 0)`.execute(trx);
    });
  }
}
