import { type Kysely, sql } from "kysely";

// Pruning (src/retention/) deletes the oldest rows of each table a batch at a time; each
// batch finds its rows by age with a range scan of one of these indexes instead of a
// walk of the whole table. The settled deliveries' index is partial, like the due
// indexes of 009: a delivery enters it when it is settled, so creating one costs nothing
// more, and the pending ones, which are never pruned, are not in it to be stepped over.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex("events_age").on("events").column("created_at").execute();
  await db.schema.createIndex("deliveries_settled_age").on("deliveries").column("created_at").where(sql.ref("status"), "<>", sql.lit("pending")).execute();
  await db.schema.createIndex("stripe_events_age").on("stripe_events").column("received_at").execute();
  await db.schema.createIndex("idempotency_keys_age").on("idempotency_keys").column("created_at").execute();
  await db.schema.createIndex("sign_in_codes_expiry").on("sign_in_codes").column("expires_at").execute();
  await db.schema.createIndex("counters_window_end").on("counters").column("window_end").execute();
}
