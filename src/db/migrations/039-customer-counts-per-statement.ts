import { type Kysely, PostgresAdapter, sql } from "kysely";
import { OTHER_TOOL_OF_PERSON } from "./034-insights-speed.js";

// PostgreSQL: new customers counted once a statement, not once a row. Migration 034's
// triggers ran for each customers row, and each row upserted the same few figures (the
// day's and the month's `new_customers` of the tool and of '*'). Within one transaction
// every update of a figure row leaves a version that cannot be pruned before commit, and
// the next upsert's lookup steps over all of them: a statement of n rows cost n² steps.
// Seeding the bench's customers took over 5 s a 10,000-row insert, and `warden admin
// import` of a million lines fell from ~1,100 to ~430 lines/s. Here each statement's rows
// (its transition tables) are summed into one row per figure, and each table is upserted
// once, its rows in key order as every writer of figures locks them (rollup.store.ts,
// summed()). One upsertCustomerRows of 8,000 new customers of a day: 3.7–6.0 s before,
// 0.27–0.48 s after; an import of 100,000 grants: 1,288 lines/s before, 3,612 after
// (2 cores, load average 1.5–3.7).
//
// The figures are those of migration 034: per tool at the row's `since`; over all tools
// when the person holds no customers row of another tool, asked as 034 asks it after the
// whole statement (where PostgreSQL ran the row triggers too); a `since` moved to another
// UTC day moves the tool's count. A sum of 0 (a day's row moved within its month) writes
// nothing. PostgreSQL refuses transition tables on `update of since`, so
// the update trigger runs for every update of customers. SQLite has no statement
// triggers, and rewrites a figure row in place: its row triggers stay.

const day = (col: string) => `to_char(to_timestamp(${col} / 1000.0) at time zone 'UTC', 'YYYY-MM-DD')`;

/** The insert trigger's figures: one row per customers row and scope (the columns workspace_id, env, day, scope, value). */
export const CUSTOMERS_INSERTED = `select n.workspace_id, n.env, ${day("n.since")} as day, 'tool:' || n.tool_id as scope, 1 as value from customers_inserted n
      union all
      select n.workspace_id, n.env, ${day("n.since")}, '*', 1 from customers_inserted n where not ${OTHER_TOOL_OF_PERSON.replaceAll("new.", "n.")}`;

// Each old row takes one from its day, each new row adds one to its own: a row whose day
// did not change adds nothing, and a sum of 0 is not written. No join of the old rows to
// the new: a trigger's plan is made once for the connection, sized for the rows of its
// first statement (often none: an upsert of new rows also fires the update trigger),
// and a join planned as a nested loop for one row took 3 s over 3,000 rows.
/** The update trigger's figures, as CUSTOMERS_INSERTED's. */
export const CUSTOMERS_MOVED = `select o.workspace_id, o.env, ${day("o.since")} as day, 'tool:' || o.tool_id as scope, -1 as value from customers_before o
      union all
      select n.workspace_id, n.env, ${day("n.since")}, 'tool:' || n.tool_id, 1 from customers_after n`;

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  // `figures` has the columns workspace_id, env, day, scope, value: one row per customers
  // row and scope, made once (the test of the person's other tools is a few lookups a row).
  // One statement: the months' upsert runs first, the days' (its WITH) after it.
  const upsert = (figures: string) => {
    const into = (table: "insight_days" | "insight_months") => {
      const [col, at] = table === "insight_days" ? ["day", "f.day"] : ["month", "substr(f.day, 1, 7)"];
      return `insert into ${table} (workspace_id, env, metric, ${col}, scope, currency, plan_id, value)
    select f.workspace_id, f.env, 'new_customers', ${at}, f.scope, '', '', sum(f.value) from figures f
    group by f.workspace_id, f.env, ${at}, f.scope having sum(f.value) <> 0
    order by f.workspace_id collate "C", f.env collate "C", ${at} collate "C", f.scope collate "C"
    on conflict (workspace_id, env, metric, ${col}, scope, currency, plan_id) do update set value = ${table}.value + excluded.value`;
    };
    return `with figures as materialized (${figures}),
  days as (${into("insight_days")})
  ${into("insight_months")};`;
  };
  await sql`drop trigger insight_customer_insert on customers`.execute(db);
  await sql`drop trigger insight_customer_since on customers`.execute(db);
  await sql`drop function insight_customer_counts()`.execute(db);
  await sql
    .raw(`create function insight_customers_inserted() returns trigger language plpgsql as $$
begin
  ${upsert(CUSTOMERS_INSERTED)}
  return null;
end $$`)
    .execute(db);
  await sql
    .raw(`create function insight_customers_moved() returns trigger language plpgsql as $$
begin
  ${upsert(CUSTOMERS_MOVED)}
  return null;
end $$`)
    .execute(db);
  await sql`create trigger insight_customer_insert after insert on customers referencing new table as customers_inserted
    for each statement execute function insight_customers_inserted()`.execute(db);
  await sql`create trigger insight_customer_since after update on customers referencing old table as customers_before new table as customers_after
    for each statement execute function insight_customers_moved()`.execute(db);
}
