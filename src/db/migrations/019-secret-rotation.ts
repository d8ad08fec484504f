import type { Kysely } from "kysely";

// Rotating an endpoint's signing secret keeps the one it replaces for 24 hours, sealed
// like the current one, so that receivers can switch over while every delivery carries
// both signatures (webhooks/README.md). Past its expiry the previous secret is never used,
// whatever is still in the row.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("webhook_endpoints").addColumn("previous_secret_sealed", "text").execute();
  await db.schema.alterTable("webhook_endpoints").addColumn("previous_secret_expires_at", "bigint").execute();
}
