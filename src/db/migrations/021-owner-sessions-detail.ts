import type { Kysely } from "kysely";

// An owner's sessions page says which browser and address each session is (so a stolen
// one can be told apart and ended), and a confirmation code is bound to the one action
// and target it was mailed for (the SHA-256 of both: a code for "reveal a secret" never
// creates a key, a code to refund one licence never refunds another).
export async function up(db: Kysely<unknown>): Promise<void> {
  // The browser's User-Agent as it signed in, cut to 256 characters; null before this migration.
  await db.schema.alterTable("owner_sessions").addColumn("user_agent", "text").execute();
  // The address the session was last seen from (refreshed with last_seen_at).
  await db.schema.alterTable("owner_sessions").addColumn("address", "text").execute();
  // The sessions page lists an owner's open sessions.
  await db.schema.createIndex("owner_sessions_owner").on("owner_sessions").columns(["owner_id", "ended_at"]).execute();
  await db.schema.alterTable("owner_codes").addColumn("action_hash", "text").execute();
}
