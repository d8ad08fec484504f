import { type Kysely, sql } from "kysely";

// The client API's second part: trials a tool offers, licence keys, and one trial per
// person and tool.
export async function up(db: Kysely<unknown>): Promise<void> {
  // Days of the trial a signed-in person may start once; 0 offers none.
  await db.schema
    .alterTable("tools")
    .addColumn("trial_days", "integer", (c) => c.notNull().defaultTo(0))
    .execute();

  // A licence's key: SHA-256 of it for the lookup at activation, and the key sealed
  // under WARDEN_SECRET_KEY so that its buyer can be shown it again. Both stay null
  // until the buyer first asks for the key.
  await db.schema.alterTable("licences").addColumn("key_hash", "text").execute();
  await db.schema.alterTable("licences").addColumn("key_sealed", "text").execute();
  await db.schema.createIndex("licences_key").on("licences").column("key_hash").unique().execute();
  // Activated devices are counted per licence.
  await db.schema.createIndex("devices_licence").on("devices").columns(["licence_id", "signed_out_at"]).execute();

  // Once per person and tool, whatever the race: the second insert finds this index.
  await db.schema.createIndex("grants_one_trial").on("grants").columns(["person_id", "tool_id"]).unique().where(sql.ref("kind"), "=", "trial").execute();
}
