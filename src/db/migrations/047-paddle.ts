import type { Kysely } from "kysely";

// Paddle Billing (issue 47): each workspace environment's Paddle connection (an API key
// and the notification destination's secret key, sealed like Stripe's), the Paddle
// events already handled (idempotency by Paddle's event_id: a replay changes nothing),
// and the refunds approved on each transaction, whose sum is what a transaction has had
// refunded (Paddle reports each adjustment alone, where Stripe reports a charge's total).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("paddle_accounts")
    .addColumn("workspace_id", "text", (c) => c.notNull().references("workspaces.id"))
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("webhook_secret_sealed", "text", (c) => c.notNull())
    .addColumn("api_key_sealed", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("paddle_accounts_pk", ["workspace_id", "env"])
    .execute();

  await db.schema
    .createTable("paddle_events")
    .addColumn("workspace_id", "text", (c) => c.notNull())
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("id", "text", (c) => c.notNull())
    .addColumn("type", "text", (c) => c.notNull())
    // Paddle's occurred_at, in epoch milliseconds.
    .addColumn("occurred_at", "bigint", (c) => c.notNull())
    .addColumn("received_at", "bigint", (c) => c.notNull())
    // applied | ignored; `reason` says why an event was ignored.
    .addColumn("outcome", "text", (c) => c.notNull())
    .addColumn("reason", "text")
    .addPrimaryKeyConstraint("paddle_events_pk", ["workspace_id", "env", "id"])
    .execute();
  await db.schema.createIndex("paddle_events_received").on("paddle_events").columns(["workspace_id", "env", "received_at"]).execute();

  await db.schema
    .createTable("paddle_refunds")
    .addColumn("workspace_id", "text", (c) => c.notNull())
    .addColumn("env", "text", (c) => c.notNull())
    // The adjustment's id: each approved refund counts once, whatever reports it again.
    .addColumn("adjustment_id", "text", (c) => c.notNull())
    .addColumn("transaction_id", "text", (c) => c.notNull())
    .addColumn("amount_cents", "bigint", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("paddle_refunds_pk", ["workspace_id", "env", "adjustment_id"])
    .execute();
  await db.schema.createIndex("paddle_refunds_transaction").on("paddle_refunds").columns(["workspace_id", "env", "transaction_id"]).execute();
}
