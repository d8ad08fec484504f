import type { Kysely } from "kysely";

// The vendor dashboard: owners sign in with a mailed code (or an operator's one-time
// link), hold a session in a cookie, and every action they take is kept in an audit log.
// Codes and session tokens are stored only as SHA-256 hashes. API keys keep their last
// four characters so that a list can tell them apart without the key.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("api_keys").addColumn("last_four", "text").execute();

  await db.schema
    .createTable("owner_codes")
    .addColumn("id", "text", (c) => c.primaryKey())
    // sign-in (a code for the browser that asked), link (an operator's one-time link),
    // confirm (a fresh code for a dangerous action of a session).
    .addColumn("purpose", "text", (c) => c.notNull())
    // Null when the address is no owner's: the code is stored all the same, so that the
    // answer does not tell who is an owner, and it never verifies.
    .addColumn("owner_id", "text", (c) => c.references("owners.id"))
    .addColumn("email", "text", (c) => c.notNull())
    // What the code is bound to: the hash of the browser's pre-session cookie (sign-in),
    // the session's id (confirm); null for a link.
    .addColumn("binding", "text")
    .addColumn("code_hash", "text", (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .addColumn("closed_at", "bigint")
    .execute();
  await db.schema.createIndex("owner_codes_binding").on("owner_codes").columns(["binding", "purpose", "created_at"]).execute();
  await db.schema.createIndex("owner_codes_hash").on("owner_codes").column("code_hash").execute();

  await db.schema
    .createTable("owner_sessions")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("owner_id", "text", (c) => c.notNull().references("owners.id"))
    .addColumn("token_hash", "text", (c) => c.notNull().unique())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("last_seen_at", "bigint", (c) => c.notNull())
    .addColumn("ended_at", "bigint")
    .execute();

  await db.schema
    .createTable("audit_log")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("owner_id", "text", (c) => c.notNull().references("owners.id"))
    // The address at the time: an owner's address may change, the record may not.
    .addColumn("owner_email", "text", (c) => c.notNull())
    // Null for what is the owner's own (signing in and out).
    .addColumn("workspace_id", "text", (c) => c.references("workspaces.id"))
    .addColumn("env", "text")
    .addColumn("action", "text", (c) => c.notNull())
    .addColumn("subject", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("audit_log_workspace").on("audit_log").columns(["workspace_id", "created_at"]).execute();
  await db.schema.createIndex("audit_log_owner").on("audit_log").columns(["owner_id", "created_at"]).execute();
}
