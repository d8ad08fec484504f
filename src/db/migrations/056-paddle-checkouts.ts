import type { Kysely } from "kysely";

// The Paddle transactions Warden created for its checkouts, per workspace environment,
// with the person each was made for (null: bought signed out). The thank-you page asks
// Paddle only about a transaction listed here for the person signed in, so that a made-up
// or another's `txn_` id costs no call to Paddle. Pruned by age with Paddle's event ids
// (retention/, WARDEN_RETENTION_DAYS), through the age index: by then the purchase has
// long arrived, and the page reads it from the licence or subscription instead.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("paddle_checkouts")
    .addColumn("workspace_id", "text", (c) => c.notNull().references("workspaces.id"))
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("transaction_id", "text", (c) => c.notNull())
    .addColumn("person_id", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("paddle_checkouts_pk", ["workspace_id", "env", "transaction_id"])
    .execute();
  await db.schema.createIndex("paddle_checkouts_age").on("paddle_checkouts").column("created_at").execute();
}
