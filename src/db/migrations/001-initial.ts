import type { Kysely } from "kysely";

// Times are bigint epoch milliseconds and flags 0/1 integers so that one set of queries
// reads the same on SQLite and PostgreSQL.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("owners")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("email", "text", (c) => c.notNull())
    .addColumn("email_norm", "text", (c) => c.notNull().unique())
    .addColumn("suspended_at", "bigint")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("workspaces")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("slug", "text", (c) => c.notNull().unique())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("plan", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("workspace_owners")
    .addColumn("workspace_id", "text", (c) => c.notNull().references("workspaces.id"))
    .addColumn("owner_id", "text", (c) => c.notNull().references("owners.id"))
    .addPrimaryKeyConstraint("workspace_owners_pk", ["workspace_id", "owner_id"])
    .execute();
  await db.schema.createIndex("workspace_owners_owner").on("workspace_owners").column("owner_id").execute();

  await db.schema
    .createTable("tools")
    .addColumn("workspace_id", "text", (c) => c.notNull().references("workspaces.id"))
    .addColumn("id", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("tools_pk", ["workspace_id", "id"])
    .execute();

  await db.schema
    .createTable("bundles")
    .addColumn("workspace_id", "text", (c) => c.notNull().references("workspaces.id"))
    .addColumn("id", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("bundles_pk", ["workspace_id", "id"])
    .execute();

  await db.schema
    .createTable("bundle_tools")
    .addColumn("workspace_id", "text", (c) => c.notNull())
    .addColumn("bundle_id", "text", (c) => c.notNull())
    .addColumn("tool_id", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("bundle_tools_pk", ["workspace_id", "bundle_id", "tool_id"])
    .execute();
  await db.schema.createIndex("bundle_tools_tool").on("bundle_tools").columns(["workspace_id", "tool_id"]).execute();

  await db.schema
    .createTable("plans")
    .addColumn("workspace_id", "text", (c) => c.notNull().references("workspaces.id"))
    .addColumn("product_kind", "text", (c) => c.notNull())
    .addColumn("product_id", "text", (c) => c.notNull())
    .addColumn("id", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("billing", "text", (c) => c.notNull())
    .addColumn("amount_cents", "bigint")
    .addColumn("currency", "text", (c) => c.notNull())
    .addColumn("interval", "text")
    .addColumn("is_default", "integer", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("plans_pk", ["workspace_id", "product_kind", "product_id", "id"])
    .execute();

  await db.schema
    .createTable("api_keys")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("workspace_id", "text", (c) => c.notNull().references("workspaces.id"))
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("name", "text")
    .addColumn("hash", "text", (c) => c.notNull().unique())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("revoked_at", "bigint")
    .execute();

  await db.schema
    .createTable("settings")
    .addColumn("name", "text", (c) => c.primaryKey())
    .addColumn("value", "text", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("counters")
    .addColumn("scope", "text", (c) => c.primaryKey())
    .addColumn("window_end", "bigint", (c) => c.notNull())
    .addColumn("count", "bigint", (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("people")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("workspace_id", "text", (c) => c.notNull().references("workspaces.id"))
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("email", "text", (c) => c.notNull())
    .addColumn("email_norm", "text", (c) => c.notNull())
    .addColumn("signed_in_at", "bigint")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addUniqueConstraint("people_email_unique", ["workspace_id", "env", "email_norm"])
    .execute();

  await db.schema
    .createTable("licences")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("workspace_id", "text", (c) => c.notNull().references("workspaces.id"))
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("person_id", "text", (c) => c.notNull().references("people.id"))
    .addColumn("product_kind", "text", (c) => c.notNull())
    .addColumn("product_id", "text", (c) => c.notNull())
    .addColumn("plan_id", "text")
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("purchased_at", "bigint", (c) => c.notNull())
    .addColumn("amount_cents", "bigint")
    .addColumn("currency", "text")
    .addColumn("payment_intent", "text")
    .addColumn("checkout_session", "text")
    .addColumn("seats", "integer")
    .addColumn("team_licence_id", "text")
    .addColumn("team_subscription_id", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("licences_person").on("licences").columns(["person_id", "product_kind", "product_id"]).execute();
  await db.schema.createIndex("licences_team").on("licences").columns(["team_licence_id"]).execute();
  await db.schema.createIndex("licences_team_subscription").on("licences").columns(["team_subscription_id"]).execute();
  await db.schema.createIndex("licences_passes").on("licences").columns(["workspace_id", "env", "status"]).execute();

  await db.schema
    .createTable("subscriptions")
    .addColumn("workspace_id", "text", (c) => c.notNull().references("workspaces.id"))
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("id", "text", (c) => c.notNull())
    .addColumn("person_id", "text", (c) => c.notNull().references("people.id"))
    .addColumn("product_kind", "text", (c) => c.notNull())
    .addColumn("product_id", "text", (c) => c.notNull())
    .addColumn("plan_id", "text")
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("current_period_start", "bigint", (c) => c.notNull())
    .addColumn("current_period_end", "bigint", (c) => c.notNull())
    .addColumn("cancel_at_period_end", "integer", (c) => c.notNull())
    .addColumn("cancel_at", "bigint")
    .addColumn("ended_at", "bigint")
    .addColumn("seats", "integer")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("subscriptions_pk", ["workspace_id", "env", "id"])
    .execute();
  await db.schema.createIndex("subscriptions_person").on("subscriptions").columns(["person_id", "product_kind", "product_id"]).execute();
  await db.schema.createIndex("subscriptions_passes").on("subscriptions").columns(["workspace_id", "env", "ended_at", "status"]).execute();

  await db.schema
    .createTable("grants")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("workspace_id", "text", (c) => c.notNull().references("workspaces.id"))
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("tool_id", "text", (c) => c.notNull())
    .addColumn("person_id", "text", (c) => c.notNull().references("people.id"))
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("starts_at", "bigint", (c) => c.notNull())
    .addColumn("ends_at", "bigint")
    .addColumn("revoked_at", "bigint")
    .addColumn("note", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("grants_person").on("grants").columns(["person_id", "tool_id", "created_at"]).execute();
  await db.schema.createIndex("grants_passes").on("grants").columns(["workspace_id", "env", "revoked_at", "ends_at"]).execute();

  await db.schema
    .createTable("devices")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("workspace_id", "text", (c) => c.notNull().references("workspaces.id"))
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("tool_id", "text", (c) => c.notNull())
    .addColumn("person_id", "text", (c) => c.notNull().references("people.id"))
    .addColumn("licence_id", "text")
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("platform", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("last_active_at", "bigint")
    .addColumn("signed_out_at", "bigint")
    .execute();
  await db.schema.createIndex("devices_person").on("devices").columns(["person_id", "tool_id"]).execute();

  await db.schema
    .createTable("customers")
    .addColumn("workspace_id", "text", (c) => c.notNull())
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("tool_id", "text", (c) => c.notNull())
    .addColumn("person_id", "text", (c) => c.notNull().references("people.id"))
    .addColumn("since", "bigint", (c) => c.notNull())
    .addColumn("signed_in", "integer", (c) => c.notNull())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("held_until", "bigint")
    .addPrimaryKeyConstraint("customers_pk", ["workspace_id", "env", "tool_id", "person_id"])
    .execute();
  // Listing walks this index newest first, per kind; no offsets, no scans.
  await db.schema.createIndex("customers_list").on("customers").columns(["workspace_id", "env", "tool_id", "kind", "since", "person_id"]).execute();
  // Finds holders whose timed access has run out since the last look.
  await db.schema.createIndex("customers_expiry").on("customers").columns(["workspace_id", "env", "tool_id", "kind", "held_until"]).execute();

  await db.schema
    .createTable("idempotency_keys")
    .addColumn("workspace_id", "text", (c) => c.notNull())
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("key", "text", (c) => c.notNull())
    .addColumn("request_hash", "text", (c) => c.notNull())
    .addColumn("status", "integer", (c) => c.notNull())
    .addColumn("response_body", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("idempotency_keys_pk", ["workspace_id", "env", "key"])
    .execute();
}
