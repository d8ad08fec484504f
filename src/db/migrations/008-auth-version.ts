import { type Kysely, PostgresAdapter, sql } from "kysely";

// What an API key authenticates as (the key, its workspace, the workspace's owners) is
// read on every request; the join was a fifth of a retrieve's CPU on SQLite. Every write
// to those four tables now adds one to `auth_version`, in the writing transaction, by
// trigger: whoever writes (a use case, the CLI in another process, an operator's SQL).
// A process may then reuse a key's lookup while the version it was read at is current,
// checked by one small read per request (auth/key.store.ts).
const WATCHED = ["api_keys", "workspaces", "workspace_owners", "owners"] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .createTable("auth_version")
    .addColumn("id", "integer", (c) => c.primaryKey().check(sql`id = 1`))
    .addColumn("version", "bigint", (c) => c.notNull())
    .execute();
  await sql`insert into auth_version (id, version) values (1, 0)`.execute(db);
  const bump = sql`update auth_version set version = version + 1 where id = 1`;
  if (postgres) {
    await sql`create function warden_bump_auth_version() returns trigger language plpgsql as $$
begin ${bump}; return null; end $$`.execute(db);
    for (const table of WATCHED) {
      await sql`create trigger ${sql.id(`${table}_auth_version`)} after insert or update or delete or truncate on ${sql.table(table)}
        for each statement execute function warden_bump_auth_version()`.execute(db);
    }
    return;
  }
  for (const table of WATCHED) {
    for (const operation of ["insert", "update", "delete"] as const) {
      await sql`create trigger ${sql.id(`${table}_${operation}_auth_version`)} after ${sql.raw(operation)} on ${sql.table(table)}
        begin ${bump}; end`.execute(db);
    }
  }
}
