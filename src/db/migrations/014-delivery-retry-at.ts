import type { Kysely } from "kysely";

// A manual resend of a delivery that is still being retried goes at once, ahead of its
// schedule; `retry_at` keeps the scheduled retry it went ahead of, which the delivery
// returns to when the manual attempt fails (webhooks/README.md).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("deliveries").addColumn("retry_at", "bigint").execute();
}
