import { type Kysely, PostgresAdapter, sql } from "kysely";
import { OTHER_TOOL_OF_PERSON } from "./034-insights-speed.js";
import { CUSTOMERS_INSERTED, CUSTOMERS_MOVED } from "./039-customer-counts-per-statement.js";

// The Insights figures' changes appended, folded in later (issue 48, point 5). On
// PostgreSQL every grant and sale of a day added to the same few figure rows (the day's and
// the month's `grants` or `gross_one_time`, the customers triggers' `new_customers` of the
// tool and of '*'), and each transaction held those rows' locks from its upsert to its
// commit: concurrent writes queued on them (grants 0.79× and sales 0.70× of the build
// before the roll-ups, bench/README.md). Now a change inserts its figures' changes here, in
// its own transaction and with no lock on a shared row, and a fold (rollup.store.ts,
// foldFigures: once a second in `warden serve`, and before every Insights read) deletes
// them and adds them up into insight_days and insight_months in one transaction. Exact
// across processes (a row is deleted by one fold only), a crash (what was not folded is
// still here) and a rollback (the change's rows go with it). SQLite takes the same path:
// side by side with its direct writes, no slower (grants 1.015×, sales 1.073×,
// bench/journal.md), and one path for both engines.
//
// No key and no index: the fold takes every row, and an insert is cheapest into a bare
// heap. The day only: the fold adds each additive figure to its month too. The customers
// triggers append here: on PostgreSQL migration 039's, their rows still summed once a
// statement; on SQLite migration 034's row triggers, one row a figure.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table insight_pending (
    workspace_id text not null, env text not null, metric text not null, day text not null,
    scope text not null, currency text not null, plan_id text not null, value bigint not null)`.execute(db);
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) {
    await appendOnSqlite(db);
    return;
  }
  const append = (figures: string) => `insert into insight_pending (workspace_id, env, metric, day, scope, currency, plan_id, value)
    select f.workspace_id, f.env, 'new_customers', f.day, f.scope, '', '', sum(f.value) from (${figures}) f
    group by f.workspace_id, f.env, f.day, f.scope having sum(f.value) <> 0;`;
  for (const [fn, figures] of [
    ["insight_customers_inserted", CUSTOMERS_INSERTED],
    ["insight_customers_moved", CUSTOMERS_MOVED],
  ] as const) {
    await sql
      .raw(`create or replace function ${fn}() returns trigger language plpgsql as $$
begin
  ${append(figures)}
  return null;
end $$`)
      .execute(db);
  }
}

// Migration 034's SQLite triggers, appending instead of upserting the day's and month's rows.
async function appendOnSqlite(db: Kysely<unknown>): Promise<void> {
  const day = (col: string) => `strftime('%Y-%m-%d', ${col} / 1000, 'unixepoch')`;
  const append = (row: string, since: string, scope: string, value: string, where = "true") =>
    `insert into insight_pending (workspace_id, env, metric, day, scope, currency, plan_id, value)
      select ${row}.workspace_id, ${row}.env, 'new_customers', ${day(`${row}.${since}`)}, ${scope}, '', '', ${value} where ${where}`;
  await sql`drop trigger insight_customer_insert`.execute(db);
  await sql`drop trigger insight_customer_since`.execute(db);
  await sql
    .raw(`create trigger insight_customer_insert after insert on customers begin
  ${append("new", "since", "'tool:' || new.tool_id", "1")};
  ${append("new", "since", "'*'", "1", `not ${OTHER_TOOL_OF_PERSON}`)};
end`)
    .execute(db);
  await sql
    .raw(`create trigger insight_customer_since after update of since on customers
when ${day("old.since")} <> ${day("new.since")} begin
  ${append("old", "since", "'tool:' || old.tool_id", "-1")};
  ${append("new", "since", "'tool:' || new.tool_id", "1")};
end`)
    .execute(db);
}
