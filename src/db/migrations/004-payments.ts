import type { Kysely } from "kysely";

// Payments: the Stripe connection of each workspace environment, the Stripe events
// already handled (idempotency by Stripe event id, and the events held back until the
// buyer of a subscription is known), what a checkout tells about a subscription's buyer,
// which payment belongs to which subscription, disputes, and the columns that keep the
// licence and subscription life cycles exact whatever order Stripe's events arrive in.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("stripe_accounts")
    .addColumn("workspace_id", "text", (c) => c.notNull().references("workspaces.id"))
    .addColumn("env", "text", (c) => c.notNull())
    // Sealed with the secret box, like webhook endpoint secrets.
    .addColumn("webhook_secret_sealed", "text", (c) => c.notNull())
    .addColumn("secret_key_sealed", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("stripe_accounts_pk", ["workspace_id", "env"])
    .execute();

  // One row per workspace environment, locked by every payment transaction (Stripe
  // deliveries and vendor actions alike) so that they apply one at a time.
  await db.schema
    .createTable("billing_locks")
    .addColumn("workspace_id", "text", (c) => c.notNull())
    .addColumn("env", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("billing_locks_pk", ["workspace_id", "env"])
    .execute();

  await db.schema
    .createTable("stripe_events")
    .addColumn("workspace_id", "text", (c) => c.notNull())
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("id", "text", (c) => c.notNull())
    .addColumn("type", "text", (c) => c.notNull())
    // Stripe's `created`, in epoch milliseconds: orders a deferred subscription's events.
    .addColumn("stripe_created", "bigint", (c) => c.notNull())
    .addColumn("received_at", "bigint", (c) => c.notNull())
    // applied | ignored | deferred; `reason` says why an event was ignored or deferred.
    .addColumn("outcome", "text", (c) => c.notNull())
    .addColumn("reason", "text")
    .addColumn("subscription_id", "text")
    // The raw event, kept only while it is deferred.
    .addColumn("payload", "text")
    .addPrimaryKeyConstraint("stripe_events_pk", ["workspace_id", "env", "id"])
    .execute();
  await db.schema.createIndex("stripe_events_deferred").on("stripe_events").columns(["workspace_id", "env", "subscription_id", "outcome"]).execute();

  await db.schema
    .createTable("subscription_buyers")
    .addColumn("workspace_id", "text", (c) => c.notNull())
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("subscription_id", "text", (c) => c.notNull())
    .addColumn("email", "text")
    .addColumn("account_person_id", "text")
    .addColumn("checkout_session", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("subscription_buyers_pk", ["workspace_id", "env", "subscription_id"])
    .execute();

  await db.schema
    .createTable("subscription_payments")
    .addColumn("workspace_id", "text", (c) => c.notNull())
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("payment_intent", "text", (c) => c.notNull())
    .addColumn("subscription_id", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("subscription_payments_pk", ["workspace_id", "env", "payment_intent"])
    .execute();

  await db.schema
    .createTable("disputes")
    .addColumn("workspace_id", "text", (c) => c.notNull().references("workspaces.id"))
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("id", "text", (c) => c.notNull())
    .addColumn("licence_id", "text")
    .addColumn("subscription_id", "text")
    .addColumn("product_kind", "text", (c) => c.notNull())
    .addColumn("product_id", "text", (c) => c.notNull())
    .addColumn("payment_intent", "text", (c) => c.notNull())
    .addColumn("amount_cents", "bigint", (c) => c.notNull())
    .addColumn("currency", "text", (c) => c.notNull())
    .addColumn("reason", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("respond_by", "bigint")
    .addColumn("opened_at", "bigint", (c) => c.notNull())
    .addColumn("closed_at", "bigint")
    .addPrimaryKeyConstraint("disputes_pk", ["workspace_id", "env", "id"])
    .execute();
  await db.schema.createIndex("disputes_id").on("disputes").column("id").execute();

  // SQLite adds one column per statement.
  await db.schema.alterTable("licences").addColumn("refunded_at", "bigint").execute();
  await db.schema.createIndex("licences_payment_intent").on("licences").columns(["workspace_id", "env", "payment_intent"]).execute();
  await db.schema.createIndex("licences_checkout_session").on("licences").columns(["workspace_id", "env", "checkout_session"]).execute();

  // Stripe's time of the state last applied: an older event never overwrites a newer one.
  await db.schema.alterTable("subscriptions").addColumn("processor_at", "bigint").execute();
  // The UTC day (YYYY-MM-DD) of the last subscription.cancelled with immediately false.
  await db.schema.alterTable("subscriptions").addColumn("cancel_notified_day", "text").execute();
  // The buyer's account (person id) when bought signed in: the events' user_id.
  await db.schema.alterTable("subscriptions").addColumn("account_person_id", "text").execute();
  await db.schema.createIndex("subscriptions_id").on("subscriptions").column("id").execute();
}
