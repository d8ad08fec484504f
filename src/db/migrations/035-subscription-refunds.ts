import type { Kysely } from "kysely";

// What Stripe refunded of each subscription payment (its charge's `amount_refunded`, which
// adds up every partial refund): a repeated or later `charge.refunded` counts only what is
// new, and a refund reported before its subscription is stored is counted when it is.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("subscription_payments")
    .addColumn("refunded_cents", "bigint", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable("subscription_payments").addColumn("refunded_at", "bigint").execute();
}
