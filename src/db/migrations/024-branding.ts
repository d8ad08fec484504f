import { type Kysely, PostgresAdapter } from "kysely";

// Hosted customer pages carry the workspace's branding: an accent colour and a logo the
// owner uploads under Configure. The logo is kept in the database (every process serves
// it from Warden's own origin, so the pages' `img-src 'self'` holds and no file store is
// shared), a few hundred kilobytes at most, in its own table so that reading a workspace
// never reads it. `version` changes with every change: the stylesheet and logo addresses
// carry it, so browsers may cache them for good.
// The checkout success page finds a subscription by the Checkout Session that bought it.
export async function up(db: Kysely<unknown>): Promise<void> {
  // Kysely hands migrations no dialect; the adapter is how its own migrator tells them apart.
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .createTable("workspace_brands")
    .addColumn("workspace_id", "text", (c) => c.primaryKey().references("workspaces.id"))
    .addColumn("accent", "text")
    .addColumn("logo", postgres ? "bytea" : "blob")
    .addColumn("logo_type", "text")
    .addColumn("version", "bigint", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("subscription_buyers_checkout_session").on("subscription_buyers").columns(["workspace_id", "env", "checkout_session"]).execute();
}
