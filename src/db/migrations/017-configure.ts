import type { Kysely } from "kysely";

// The dashboard's Configure section. A plan can be retired: it stays for the licences
// and subscriptions that name it (their events and the customer's page still show it)
// and is no longer offered at checkout. The Stripe page shows a workspace
// environment's newest Stripe event, found by an index walk instead of a scan of every
// event the environment ever received.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("plans").addColumn("retired_at", "bigint").execute();
  await db.schema.createIndex("stripe_events_received").on("stripe_events").columns(["workspace_id", "env", "received_at"]).execute();
}
