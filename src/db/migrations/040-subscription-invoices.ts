import { type Kysely, sql } from "kysely";

// A subscription's revenue per invoice (issue 44), on the day Stripe was paid. Before, the
// invoice's amount sat on the row of its first payment intent (`subscription_payments`,
// migration 031) with the time the webhook arrived: an invoice delivered late, or before
// its subscription was stored, counted on the day it reached Warden, and an invoice whose
// event names no payment intent (Stripe's current API versions leave `payments` out of
// webhooks) could not be counted at all. Here each invoice is one row keyed by its id,
// with Stripe's paid time; `subscription_payments` keeps which payment intents paid a
// subscription (for refunds and disputes) and no longer an amount.
//
// The amounts counted before are moved here under their payment intent's id (the
// invoice's id was not kept): the ingest takes an invoice naming such a payment intent
// as counted already, so a reconcile reading an old invoice counts nothing twice. Their
// time is the one they were counted on.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("subscription_invoices")
    .addColumn("workspace_id", "text", (c) => c.notNull())
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("invoice_id", "text", (c) => c.notNull())
    .addColumn("subscription_id", "text", (c) => c.notNull())
    .addColumn("amount_cents", "bigint")
    .addColumn("currency", "text")
    .addColumn("paid_at", "bigint", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("subscription_invoices_pk", ["workspace_id", "env", "invoice_id"])
    .execute();
  // A subscription stored after its invoices counts them: read by subscription.
  await db.schema.createIndex("subscription_invoices_subscription").on("subscription_invoices").columns(["workspace_id", "env", "subscription_id"]).execute();
  await sql`insert into subscription_invoices (workspace_id, env, invoice_id, subscription_id, amount_cents, currency, paid_at, created_at)
    select workspace_id, env, payment_intent, subscription_id, amount_cents, currency, created_at, created_at
    from subscription_payments where amount_cents is not null`.execute(db);
  await db.schema.alterTable("subscription_payments").dropColumn("amount_cents").execute();
}
