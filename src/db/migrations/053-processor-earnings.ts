import type { Kysely } from "kysely";

// What the vendor earns of a sale, where the processor says so (issue 47, point 3):
// Paddle's transaction `details.totals` gives `earnings` (what the vendor keeps: the total
// less tax and Paddle's fee), `fee` and `tax`, in the buyer's currency. They are kept
// beside the amount the buyer paid, on the licence of a one-time purchase and on a
// subscription's invoice, in whole minor units; null where the processor reports no fee
// (Stripe's Checkout Session and invoice do not: the fee is on Stripe's balance
// transaction) and for every row before this migration.
// `paddle_refunds` keeps every approved Paddle adjustment that moves money back
// (`action`: refund, chargeback, chargeback_reverse; rows before this are refunds), with
// the earnings it took back (Paddle's adjustment `totals.earnings`; null before this
// migration) and Paddle's time of it: the refunds alone still add up to a transaction's
// refunded amount.
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of ["licences", "subscription_invoices"]) {
    await db.schema.alterTable(table).addColumn("earnings_cents", "bigint").execute();
    await db.schema.alterTable(table).addColumn("fee_cents", "bigint").execute();
    await db.schema.alterTable(table).addColumn("tax_cents", "bigint").execute();
  }
  await db.schema
    .alterTable("paddle_refunds")
    .addColumn("action", "text", (c) => c.notNull().defaultTo("refund"))
    .execute();
  await db.schema.alterTable("paddle_refunds").addColumn("earnings_cents", "bigint").execute();
  await db.schema.alterTable("paddle_refunds").addColumn("adjusted_at", "bigint").execute();
}
