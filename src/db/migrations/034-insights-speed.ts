import { type Kysely, PostgresAdapter, sql } from "kysely";

// Insights at a million people (issue 34, point 3; bench/README.md, Insights).
//
// insight_months: the additive figures of insight_days added up per UTC month ('YYYY-MM'),
// written beside each day row by the same statement's writer (rollup.store.ts bump(), the
// customers triggers below). A 12-month page reads its whole months here and only the
// partial months' days. A table of its own, not month keys in insight_days: every read of
// days by a range of keys would otherwise have to step over the month rows or count them
// twice. The per-day counts that do not add up (active people, devices) have no month row.
//
// insight_active_months: per person, scope and month the number of active days, with an
// index by that number: the most-active-unpaid list walks each month of its range from
// the top instead of grouping every person-day of the range (insights.store.ts).
//
// The at-risk list finds the payers never active by walking the payers in person order
// (licences_by_person, subscriptions_by_person) and stops at the hundredth; its lapsed
// payers walk insight_last_active by day and person, the list's order. The lists rank
// people who tie in byte order of their ids on both engines, so on PostgreSQL these
// indexes compare person ids in the "C" collation, whatever the database's default.
export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const key = "workspace_id, env, metric, month, scope, currency, plan_id";
  await sql
    .raw(`create table insight_months (
    workspace_id text not null, env text not null, metric text not null, month text not null,
    scope text not null, currency text not null, plan_id text not null, value bigint not null,
    ${postgres ? `constraint insight_months_pk primary key (${key}) include (value))` : `primary key (${key})) without rowid`}`)
    .execute(db);
  // The metrics as they were when this ran (the writer keeps its own list in rollup.store.ts).
  await sql`insert into insight_months (workspace_id, env, metric, month, scope, currency, plan_id, value)
    select workspace_id, env, metric, substr(day, 1, 7), scope, currency, plan_id, sum(value) from insight_days
    where metric not in ('active_people', 'active_people_7', 'active_people_30', 'active_devices')
    group by workspace_id, env, metric, substr(day, 1, 7), scope, currency, plan_id
    having sum(value) <> 0`.execute(db);

  await db.schema
    .createTable("insight_active_months")
    .addColumn("workspace_id", "text", (c) => c.notNull())
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("scope", "text", (c) => c.notNull())
    .addColumn("month", "text", (c) => c.notNull())
    .addColumn("person_id", "text", (c) => c.notNull())
    .addColumn("days", "integer", (c) => c.notNull())
    .addPrimaryKeyConstraint("insight_active_months_pk", ["workspace_id", "env", "scope", "month", "person_id"])
    .$call((t) => (postgres ? t : t.modifyEnd(sql`without rowid`)))
    .execute();
  // Ties rank by person in byte order on both engines (PostgreSQL's default collation may be a locale's).
  const byteOrder = postgres ? ` collate "C"` : "";
  await sql
    .raw(`create index insight_active_months_by_days on insight_active_months (workspace_id, env, scope, month, days desc, person_id${byteOrder})`)
    .execute(db);
  await sql`insert into insight_active_months (workspace_id, env, scope, month, person_id, days)
    select workspace_id, env, scope, substr(day, 1, 7), person_id, count(*) from insight_active_days
    group by workspace_id, env, scope, substr(day, 1, 7), person_id`.execute(db);

  await db.schema.dropIndex("insight_last_active_by_day").execute();
  await sql.raw(`create index insight_last_active_by_day on insight_last_active (workspace_id, env, scope, day desc, person_id${byteOrder})`).execute(db);
  await sql.raw(`create index licences_by_person on licences (workspace_id, env, person_id${byteOrder})`).execute(db);
  await sql.raw(`create index subscriptions_by_person on subscriptions (workspace_id, env, person_id${byteOrder})`).execute(db);

  await replaceCustomerTriggers(db, postgres);
}

// Migration 031's trigger asked, for each new customers row, whether the person is a
// customer of another tool already ("new over all tools" counts a person once). It asked
// it of customers by person, which no index serves (the key leads with the tool), so each
// insert read every customer of the workspace environment: a workspace's n-th customer cost
// n reads, and seeding or importing a million never finished. Asked tool by tool, each probe
// is one lookup of the key, and a workspace has a handful of tools; no index is added, so
// customers rows cost no more to write. A scalar subquery per tool, not an exists: the
// planners turn an exists into a join and may then start from customers.
export const OTHER_TOOL_OF_PERSON = `exists (select 1 from tools t where t.workspace_id = new.workspace_id and t.id <> new.tool_id
      and (select 1 from customers c where c.workspace_id = t.workspace_id and c.env = new.env and c.tool_id = t.id and c.person_id = new.person_id) is not null)`;

// Migration 031's triggers, each upsert now also adding to the month's row, and the
// person's other tools asked as above.
async function replaceCustomerTriggers(db: Kysely<unknown>, postgres: boolean): Promise<void> {
  const upsertInto = (table: "insight_days" | "insight_months", at: string, scope: string, value: string, where: string) => {
    const col = table === "insight_days" ? "day" : "month";
    return `insert into ${table} (workspace_id, env, metric, ${col}, scope, currency, plan_id, value)
      select new.workspace_id, new.env, 'new_customers', ${at}, ${scope}, '', '', ${value} where ${where}
      on conflict (workspace_id, env, metric, ${col}, scope, currency, plan_id) do update set value = ${table}.value + excluded.value`;
  };
  const both = (day: string, scope: string, value: string, where = "true") =>
    `${upsertInto("insight_days", day, scope, value, where)};\n${upsertInto("insight_months", `substr(${day}, 1, 7)`, scope, value, where)}`;
  const firstOfPerson = `not ${OTHER_TOOL_OF_PERSON}`;
  // The old row's day loses one: the same upserts, on old.*.
  const retract = (day: string) => both(day, "'tool:' || old.tool_id", "-1").replaceAll("new.", "old.");
  if (postgres) {
    const day = (col: string) => `to_char(to_timestamp(${col} / 1000.0) at time zone 'UTC', 'YYYY-MM-DD')`;
    await sql
      .raw(`create or replace function insight_customer_counts() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    ${both(day("new.since"), "'tool:' || new.tool_id", "1")};
    if ${firstOfPerson} then
      ${both(day("new.since"), "'*'", "1")};
    end if;
  elsif ${day("old.since")} <> ${day("new.since")} then
    ${retract(day("old.since"))};
    ${both(day("new.since"), "'tool:' || new.tool_id", "1")};
  end if;
  return null;
end $$`)
      .execute(db);
  } else {
    const day = (col: string) => `strftime('%Y-%m-%d', ${col} / 1000, 'unixepoch')`;
    await sql`drop trigger insight_customer_insert`.execute(db);
    await sql`drop trigger insight_customer_since`.execute(db);
    await sql
      .raw(`create trigger insight_customer_insert after insert on customers begin
  ${both(day("new.since"), "'tool:' || new.tool_id", "1")};
  ${both(day("new.since"), "'*'", "1", firstOfPerson)};
end`)
      .execute(db);
    await sql
      .raw(`create trigger insight_customer_since after update of since on customers
when ${day("old.since")} <> ${day("new.since")} begin
  ${retract(day("old.since"))};
  ${both(day("new.since"), "'tool:' || new.tool_id", "1")};
end`)
      .execute(db);
  }
}
