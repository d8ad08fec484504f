import { type Kysely, sql } from "kysely";

// Settling an attempt moved its delivery's entries in two indexes that began with its
// status (deliveries_due, deliveries_endpoint): a delete from the pending part and an
// insert into the succeeded part of each, some 40 pages written by each commit of a
// batch of attempts in scenario 5 on SQLite, and most of the log that SQLite checkpoints.
// The due indexes now hold pending deliveries only (what the worker searches), so a
// settled delivery just leaves them, and they stay as small as the backlog; the
// endpoint's index no longer holds the status at all, so settling does not touch it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("deliveries_due").execute();
  await db.schema.dropIndex("deliveries_one_shot").execute();
  await db.schema.dropIndex("deliveries_endpoint").execute();
  await db.schema
    .createIndex("deliveries_due")
    .on("deliveries")
    .columns(["endpoint_id", "next_attempt_at", "seq"])
    .where(sql.ref("status"), "=", "pending")
    .execute();
  await db.schema
    .createIndex("deliveries_one_shot")
    .on("deliveries")
    .columns(["endpoint_id", "next_attempt_at", "seq"])
    .where(sql.ref("status"), "=", "pending")
    .where(sql.ref("one_shot"), "=", 1)
    .execute();
  // An endpoint's deliveries, newest first (the list filtered by endpoint).
  await db.schema.createIndex("deliveries_endpoint").on("deliveries").columns(["endpoint_id", "created_at", "id"]).execute();
}
