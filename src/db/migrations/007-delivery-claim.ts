import { type Kysely, sql } from "kysely";

// Claiming by endpoint. The claim walked every due delivery in due order and skipped
// those of endpoints it could not take (being sent to, or paused after a failure); with a
// backlog that walk ran through thousands of rows before it found one to take: a third
// of the delivery worker's time, measured. Each endpoint's due deliveries are now one
// range of this index, found through the endpoints that have pending deliveries.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("deliveries_due").execute();
  await db.schema.createIndex("deliveries_due").on("deliveries").columns(["status", "endpoint_id", "next_attempt_at", "seq"]).execute();
  // Manual resends and recoveries go even to an endpoint paused after a failure: a
  // handful of rows, found without walking the endpoint's scheduled ones.
  await db.schema
    .createIndex("deliveries_one_shot")
    .on("deliveries")
    .columns(["status", "endpoint_id", "next_attempt_at", "seq"])
    .where(sql.ref("one_shot"), "=", 1)
    .execute();
}
