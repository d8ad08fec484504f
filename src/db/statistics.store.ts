import { sql } from "kysely";
import { dialectOf, type Executor } from "./database.js";
import type { Database } from "./schema.js";

/**
 * PostgreSQL: the planner's statistics of these tables taken again (ANALYZE), for a writer
 * that has just grown them from few rows to many in one go (an import's or a seeder's first
 * batch). A trigger's statements are planned once per connection and kept until the
 * statistics change; planned on an empty `customers`, the new-customers trigger's probe of
 * "a customer of another tool?" read every customer of that tool for each row (16.9 s for
 * 12,000 rows, and a million customers seeded at 470 a second). Autovacuum would analyse
 * the table too, but only after its next nap, and never where it is turned off. Inside a
 * transaction ANALYZE sees that transaction's own rows. SQLite: nothing (Warden never runs
 * ANALYZE there: db/database.ts).
 */
export async function refreshPlannerStatistics(ex: Executor, tables: readonly (keyof Database)[]): Promise<void> {
  if (dialectOf(ex) !== "postgres") return;
  await sql`analyze ${sql.join(tables.map((table) => sql.table(table)))}`.execute(ex);
}
