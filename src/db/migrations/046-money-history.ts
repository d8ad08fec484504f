import type { Kysely } from "kysely";

// A customer's money on their dashboard page (issue 50): every payment, refund and
// dispute, the subscription's plan and seat changes. What was missing to tell it:
// - `subscription_changes`: a subscription row holds only its plan and seats now; each
//   change the processor reports is kept here, with the processor's time, so the page can
//   say when it moved from which plan or count to which.
// - `licences.last_refund_at`: a licence's partial refund kept its amount (`refunded_cents`)
//   but no time (`refunded_at` is the full refund's, which revokes); null for a refund
//   recorded before this migration.
// - Indexes for the page's reads: a subscription's payments by subscription, and disputes
//   by the payment they dispute, so a customer with hundreds of payments costs index walks.
// - `events.person_id`: whom an event is about (the buyer, the refunded or disputed
//   payment's person, the person whose allowance ran out), so the Events and Deliveries
//   lists name the customer of a subscription's events (which carry no address) and filter
//   by customer with an index. Null for examples, and for events written before this
//   migration: those are named by their payload's address and not found by the filter.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("subscription_changes")
    .addColumn("workspace_id", "text", (c) => c.notNull())
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("subscription_id", "text", (c) => c.notNull())
    .addColumn("at", "bigint", (c) => c.notNull())
    .addColumn("plan_from", "text")
    .addColumn("plan_to", "text")
    .addColumn("seats_from", "integer")
    .addColumn("seats_to", "integer")
    .execute();
  await db.schema
    .createIndex("subscription_changes_subscription")
    .on("subscription_changes")
    .columns(["workspace_id", "env", "subscription_id", "at"])
    .execute();
  await db.schema.alterTable("licences").addColumn("last_refund_at", "bigint").execute();
  await db.schema.createIndex("subscription_payments_subscription").on("subscription_payments").columns(["workspace_id", "env", "subscription_id"]).execute();
  await db.schema.alterTable("events").addColumn("person_id", "text").execute();
  await db.schema.createIndex("events_person").on("events").columns(["workspace_id", "env", "person_id", "created_at", "id"]).execute();
  await db.schema.createIndex("disputes_payment").on("disputes").columns(["workspace_id", "env", "payment_intent"]).execute();
}
