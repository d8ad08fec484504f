import type { Kysely } from "kysely";

// The hosted customer pages (/c/…): a person signed in to a workspace environment in a
// browser holds a web session in a cookie; an extension is handed a device session
// through a one-time authorisation code (PKCE), and a signed-in extension opens a page
// signed in through a one-time page ticket. Every token is stored only as its SHA-256.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("customer_sessions")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("workspace_id", "text", (c) => c.notNull().references("workspaces.id"))
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("person_id", "text", (c) => c.notNull().references("people.id"))
    // Set when the session came from a device activated with a licence key: it acts for
    // that licence only and knows no address.
    .addColumn("licence_id", "text", (c) => c.references("licences.id"))
    .addColumn("token_hash", "text", (c) => c.notNull().unique())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("last_seen_at", "bigint", (c) => c.notNull())
    .addColumn("ended_at", "bigint")
    .execute();
  // Retention deletes sessions past their 7 days, by age.
  await db.schema.createIndex("customer_sessions_created").on("customer_sessions").column("created_at").execute();

  await db.schema
    .createTable("customer_exchange_tokens")
    .addColumn("id", "text", (c) => c.primaryKey())
    // hand_off (a page's code for the extension) or page_ticket (an extension's ticket for a page).
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("token_hash", "text", (c) => c.notNull().unique())
    .addColumn("workspace_id", "text", (c) => c.notNull().references("workspaces.id"))
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("tool_id", "text", (c) => c.notNull())
    .addColumn("person_id", "text", (c) => c.notNull().references("people.id"))
    .addColumn("licence_id", "text", (c) => c.references("licences.id"))
    // A hand-off's PKCE challenge (S256): only the holder of its verifier may exchange it.
    .addColumn("code_challenge", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .addColumn("used_at", "bigint")
    .execute();
  await db.schema.createIndex("customer_exchange_tokens_expiry").on("customer_exchange_tokens").column("expires_at").execute();

  // A code asked on a hosted page is bound to the browser that asked (the hash of its
  // pre-session cookie), as the dashboard's are; null for the client API's codes.
  await db.schema.alterTable("sign_in_codes").addColumn("browser_hash", "text").execute();
  await db.schema.createIndex("sign_in_codes_browser").on("sign_in_codes").columns(["browser_hash", "created_at"]).execute();
}
