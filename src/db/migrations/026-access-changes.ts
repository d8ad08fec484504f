import { type Kysely, PostgresAdapter, sql } from "kysely";

// A row for each time a person's access may have changed (a source written, a device
// signed out), in the transaction of that change: the feed that wakes the devices
// waiting on GET /tools/{tool}/access/changes, in whichever process they wait, and
// whichever process (or `warden` command) wrote the change. `seq` orders the feed: a
// sequence on PostgreSQL, AUTOINCREMENT on SQLite (never reused, even after pruning).
// Rows are kept minutes, not days (retention/).
export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  if (postgres) {
    await sql`create table access_changes (
      seq bigserial primary key,
      workspace_id text not null,
      env text not null,
      person_id text not null,
      changed_at bigint not null
    )`.execute(db);
  } else {
    await sql`create table access_changes (
      seq integer primary key autoincrement,
      workspace_id text not null,
      env text not null,
      person_id text not null,
      changed_at bigint not null
    )`.execute(db);
  }
  await db.schema.createIndex("access_changes_changed_at").on("access_changes").columns(["changed_at"]).execute();
}
