import { type Kysely, PostgresAdapter, sql } from "kysely";

// PostgreSQL: the figures' keys carried their value (`include (value)`, migrations 031 and
// 034) so that Insights' reads would never visit the table. But an update of a column an
// index holds is never HOT: every grant, sale and new customer of a day added a new entry
// to the key's index for the same few rows (the day's and the month's `grants`,
// `new_customers`, `gross_one_time`), and each upsert's lookup walked the dead versions
// until vacuum came. On a bare table one row upserted 8,000 times: 0% of the updates HOT
// and 4.5–7.7 ms a round with the include, 99% and 1.2–2.4 ms without (bench/journal.md,
// "where a grant and a Stripe sale spend their time"). The reads lose little: a page
// reads a few hundred figure rows, and the rows updated all day sit on pages the
// visibility map does not mark all-visible, so their index-only scans visited the table
// anyway. A fill factor of 90 leaves each page room for its rows' new versions. SQLite's
// tables are their keys (without rowid) and rewrite a row in place: nothing to do there.
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  for (const [table, at] of [
    ["insight_days", "day"],
    ["insight_months", "month"],
  ] as const) {
    await sql
      .raw(
        `alter table ${table} drop constraint ${table}_pk, add constraint ${table}_pk primary key (workspace_id, env, metric, ${at}, scope, currency, plan_id)`,
      )
      .execute(db);
    await sql.raw(`alter table ${table} set (fillfactor = 90)`).execute(db);
  }
}
