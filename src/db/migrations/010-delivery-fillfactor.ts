import { type Kysely, PostgresAdapter, sql } from "kysely";

// PostgreSQL: a claim sets the lease (locked_until, locked_by) of up to 128 deliveries,
// columns no index holds, so the update could be HOT (the new row version on the same
// page, no index touched); but rows are inserted into full pages, so every claimed row
// moved to another page and was written again into every index whose condition it meets
// (five of the six, for a delivery that is not a resend). A
// fill factor of 70 leaves room on each page for the lease's new versions (the rows of
// an event's ten deliveries are inserted together, so a page holds a few events' worth).
// Pages are written with it from now on; rows already stored stay as they are. SQLite
// rewrites a row in place and has no such setting.
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`alter table deliveries set (fillfactor = 70)`.execute(db);
}
