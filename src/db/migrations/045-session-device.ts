import type { Kysely } from "kysely";

// Which device opened a hosted page (issue 49): a page ticket names the device that asked
// for it, and the web session it opens (or the session the browser already had) keeps it,
// so Manage marks that device "This device". Null for a sign-in by code on the page.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("customer_exchange_tokens").addColumn("device_id", "text").execute();
  await db.schema.alterTable("customer_sessions").addColumn("device_id", "text").execute();
}
