import type { Kysely } from "kysely";

// `warden admin key list` shows a key as wk_live_…abcd so an operator can tell keys apart
// without the secret: the last four of 32 random base62 characters (24 of 190 bits) are
// kept in the clear, as Stripe does. Keys made before this migration have none.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("api_keys").addColumn("last_four", "text").execute();
}
