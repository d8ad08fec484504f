import type { Kysely } from "kysely";

// An endpoint carries the vendor's own description (what it is for: "production
// fulfilment", "Slack relay"), editable with its URL and event types.
//
// A secret the dashboard shows once (a new API key, a new or rotated signing secret) is
// sealed here for the one page that shows it, after the POST that made it redirects
// there: a reload of that page never makes another key, and a reload after it shows
// nothing. Bound to the owner's session; the content is erased when shown, and a row
// past its expiry is deleted by the next one written.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("webhook_endpoints").addColumn("description", "text").execute();
  await db.schema
    .createTable("shown_once")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("session_id", "text", (c) => c.notNull())
    // The workspace environment whose page shows it: another one's address answers nothing.
    .addColumn("scope", "text", (c) => c.notNull())
    // What to show, sealed under WARDEN_SECRET_KEY; null once shown.
    .addColumn("content_sealed", "text")
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("shown_once_expiry").on("shown_once").columns(["expires_at"]).execute();
}
