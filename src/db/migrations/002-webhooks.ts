import type { Kysely } from "kysely";

// The transactional outbox and its delivery log. Queue state lives in columns
// (status, attempts, next_attempt_at, locked_until) so that any process can claim work
// and a restart resumes exactly where the last one stopped.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("events")
    .addColumn("workspace_id", "text", (c) => c.notNull().references("workspaces.id"))
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("id", "text", (c) => c.notNull())
    .addColumn("type", "text", (c) => c.notNull())
    // The exact JSON text that is signed and sent, so every attempt sends the same bytes.
    .addColumn("body", "text", (c) => c.notNull())
    .addColumn("example", "integer", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("events_pk", ["workspace_id", "env", "id"])
    .execute();
  await db.schema.createIndex("events_list").on("events").columns(["workspace_id", "env", "created_at", "id"]).execute();

  await db.schema
    .createTable("webhook_endpoints")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("workspace_id", "text", (c) => c.notNull().references("workspaces.id"))
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("url", "text", (c) => c.notNull())
    // JSON array of event types, or null for every type.
    .addColumn("event_types", "text")
    .addColumn("secret_sealed", "text", (c) => c.notNull())
    .addColumn("enabled", "integer", (c) => c.notNull())
    .addColumn("disabled_reason", "text")
    .addColumn("disabled_at", "bigint")
    .addColumn("last_success_at", "bigint")
    .addColumn("failing_since", "bigint")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("removed_at", "bigint")
    .execute();
  await db.schema.createIndex("webhook_endpoints_workspace").on("webhook_endpoints").columns(["workspace_id", "env"]).execute();

  await db.schema
    .createTable("deliveries")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("workspace_id", "text", (c) => c.notNull())
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("endpoint_id", "text", (c) => c.notNull().references("webhook_endpoints.id"))
    .addColumn("event_id", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull())
    // 1 when the next attempt is a manual resend: one attempt, not a new schedule.
    .addColumn("one_shot", "integer", (c) => c.notNull())
    .addColumn("next_attempt_at", "bigint")
    .addColumn("locked_until", "bigint")
    .addColumn("locked_by", "text")
    .addColumn("last_attempt_at", "bigint")
    .addColumn("last_status_code", "integer")
    .addColumn("last_error", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  // Claiming looks only at pending rows that are due.
  await db.schema.createIndex("deliveries_due").on("deliveries").columns(["status", "next_attempt_at"]).execute();
  await db.schema.createIndex("deliveries_endpoint").on("deliveries").columns(["endpoint_id", "status", "created_at"]).execute();
  await db.schema.createIndex("deliveries_event").on("deliveries").columns(["workspace_id", "env", "event_id"]).execute();
  await db.schema.createIndex("deliveries_list").on("deliveries").columns(["workspace_id", "env", "created_at", "id"]).execute();

  await db.schema
    .createTable("delivery_attempts")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("delivery_id", "text", (c) => c.notNull().references("deliveries.id"))
    .addColumn("attempted_at", "bigint", (c) => c.notNull())
    .addColumn("duration_ms", "integer", (c) => c.notNull())
    .addColumn("status_code", "integer")
    .addColumn("response_body", "text")
    .addColumn("error", "text")
    .addColumn("manual", "integer", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("delivery_attempts_delivery").on("delivery_attempts").columns(["delivery_id", "attempted_at"]).execute();
}
