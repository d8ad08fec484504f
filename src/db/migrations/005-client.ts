import type { Kysely } from "kysely";

// The client API: one-time sign-in codes sent by email, and device sessions. A session
// is a row of `devices` (001) with the hash of its bearer token; signing out sets
// `signed_out_at`, which both ends the token and stops the device counting.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("sign_in_codes")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("workspace_id", "text", (c) => c.notNull().references("workspaces.id"))
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("tool_id", "text", (c) => c.notNull())
    // The address as typed (kept for the person's first record) and its normalised form.
    .addColumn("email", "text", (c) => c.notNull())
    .addColumn("email_norm", "text", (c) => c.notNull())
    // SHA-256 of `<id>:<code>`; the code itself is never stored.
    .addColumn("code_hash", "text", (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    // Set when the code is used, or when a newer code for the address replaces it.
    .addColumn("closed_at", "bigint")
    .execute();
  await db.schema.createIndex("sign_in_codes_address").on("sign_in_codes").columns(["workspace_id", "env", "email_norm", "created_at"]).execute();

  await db.schema.alterTable("devices").addColumn("token_hash", "text").execute();
  await db.schema.createIndex("devices_token").on("devices").column("token_hash").unique().execute();
}
