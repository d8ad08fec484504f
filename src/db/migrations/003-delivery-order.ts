import { type Kysely, PostgresAdapter, sql } from "kysely";

// Creation order for deliveries and attempts. Rows written in the same millisecond (the
// events of one state change, a resend right after an attempt) tied on created_at and
// fell back to their random ids, so an endpoint could get subscription.started before
// purchase.completed and the log could show a resend before the attempt it repeated.
// `seq` is assigned by the database on insert: a sequence on PostgreSQL, the rowid on
// SQLite (copied by a trigger, as ALTER TABLE cannot add an auto-increment column).
export async function up(db: Kysely<unknown>): Promise<void> {
  // Kysely hands migrations no dialect; the adapter is how its own migrator tells them apart.
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  for (const table of ["deliveries", "delivery_attempts"]) {
    if (postgres) {
      await db.schema
        .alterTable(table)
        .addColumn("seq", "bigserial", (c) => c.notNull())
        .execute();
    } else {
      await db.schema.alterTable(table).addColumn("seq", "integer").execute();
      await sql`update ${sql.table(table)} set seq = rowid`.execute(db);
      await sql`create trigger ${sql.id(`${table}_seq`)} after insert on ${sql.table(table)} when new.seq is null
        begin update ${sql.table(table)} set seq = new.rowid where rowid = new.rowid; end`.execute(db);
    }
  }
  await db.schema.dropIndex("deliveries_due").execute();
  // Claiming takes due rows in order of due time, then creation.
  await db.schema.createIndex("deliveries_due").on("deliveries").columns(["status", "next_attempt_at", "seq"]).execute();
  await db.schema.dropIndex("delivery_attempts_delivery").execute();
  await db.schema.createIndex("delivery_attempts_delivery").on("delivery_attempts").columns(["delivery_id", "seq"]).execute();
}
