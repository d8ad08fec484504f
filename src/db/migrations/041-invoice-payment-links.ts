import type { Kysely } from "kysely";

// Stripe's current API versions (2025-03-31 on) name an invoice's payment intents only
// under `invoice.payments`, which webhooks leave out unless expanded; `invoice_payment.paid`
// names them instead, with the invoice's id but not its subscription, in any order with
// `invoice.paid` (issue 44). A payment intent whose invoice Warden has not seen paid yet
// waits here, by invoice, until `invoice.paid` names the subscription; then it becomes
// that subscription's payment (`subscription_payments`) and its row goes.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("invoice_payment_links")
    .addColumn("workspace_id", "text", (c) => c.notNull())
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("payment_intent", "text", (c) => c.notNull())
    .addColumn("invoice_id", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("invoice_payment_links_pk", ["workspace_id", "env", "payment_intent"])
    .execute();
  await db.schema.createIndex("invoice_payment_links_invoice").on("invoice_payment_links").columns(["workspace_id", "env", "invoice_id"]).execute();
}
