import { type Kysely, PostgresAdapter, sql } from "kysely";

// Daily roll-ups behind Insights (issue 34), written in the transaction of the change they
// count (docs/decisions.md, "Insights roll-ups"), so a page reads a few rows a day instead
// of the events or the customers. Retention never prunes them.
//
// insight_days: one additive figure per workspace environment, metric, UTC day, scope
// ("tool:<id>", "bundle:<id>", or "*" for the figures that are distinct across tools),
// currency and plan ('' where they do not apply). The key leads with the metric and the
// day: a page reads a few metrics over a range of days, every scope at once.
//
// insight_active_days: the days a person had an access check, per tool and over all
// tools ("*"); the newest one before a day is what moves the trailing 7 and 30-day counts.
// insight_last_active: each person's newest active day, per scope: the at-risk list walks
// it from 14 days ago backwards instead of reading every paying person.
// insight_device_days: the days a device had one (its first check of a day counts it).
// insight_subscriptions: what each subscription adds to MRR now, and whether it ever did
// (a return after that is a reactivation, not new MRR).
export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  // A page's read is a range of the key: on SQLite the table is its key (without rowid),
  // on PostgreSQL the key's index carries the value, so neither reads the table's rows.
  const key = "workspace_id, env, metric, day, scope, currency, plan_id";
  await sql
    .raw(`create table insight_days (
    workspace_id text not null, env text not null, metric text not null, day text not null,
    scope text not null, currency text not null, plan_id text not null, value bigint not null,
    ${postgres ? `constraint insight_days_pk primary key (${key}) include (value))` : `primary key (${key})) without rowid`}`)
    .execute(db);

  await db.schema
    .createTable("insight_active_days")
    .addColumn("workspace_id", "text", (c) => c.notNull())
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("scope", "text", (c) => c.notNull())
    .addColumn("person_id", "text", (c) => c.notNull())
    .addColumn("day", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("insight_active_days_pk", ["workspace_id", "env", "scope", "person_id", "day"])
    .$call((t) => (postgres ? t : t.modifyEnd(sql`without rowid`)))
    .execute();
  await db.schema.createIndex("insight_active_days_by_day").on("insight_active_days").columns(["workspace_id", "env", "scope", "day", "person_id"]).execute();

  await db.schema
    .createTable("insight_last_active")
    .addColumn("workspace_id", "text", (c) => c.notNull())
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("scope", "text", (c) => c.notNull())
    .addColumn("person_id", "text", (c) => c.notNull())
    .addColumn("day", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("insight_last_active_pk", ["workspace_id", "env", "scope", "person_id"])
    .execute();
  await db.schema.createIndex("insight_last_active_by_day").on("insight_last_active").columns(["workspace_id", "env", "scope", "day"]).execute();
  // Trials started in a range, for their outcomes.
  await db.schema.createIndex("grants_created").on("grants").columns(["workspace_id", "env", "kind", "created_at"]).execute();

  await db.schema
    .createTable("insight_device_days")
    .addColumn("device_id", "text", (c) => c.notNull())
    .addColumn("day", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("insight_device_days_pk", ["device_id", "day"])
    .execute();

  await db.schema
    .createTable("insight_subscriptions")
    .addColumn("workspace_id", "text", (c) => c.notNull())
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("subscription_id", "text", (c) => c.notNull())
    .addColumn("currency", "text", (c) => c.notNull())
    .addColumn("mrr", "bigint", (c) => c.notNull())
    .addColumn("contributed", "integer", (c) => c.notNull())
    .addPrimaryKeyConstraint("insight_subscriptions_pk", ["workspace_id", "env", "subscription_id"])
    .execute();

  // What a subscription's invoice paid, for the revenue recount (null for payments recorded before).
  await db.schema.alterTable("subscription_payments").addColumn("amount_cents", "bigint").execute();
  await db.schema.alterTable("subscription_payments").addColumn("currency", "text").execute();
  await addCustomerTriggers(db, postgres);
}

// New customers are counted by trigger: a customers row is written from many paths (every
// source's sync, sign-in, import), and only the database sees each first insert of a
// (tool, person) once. The day is the row's `since`; when a later source moves `since`
// earlier, the tool's count moves with it. Over all tools a person counts on the `since`
// of their first customers row.
async function addCustomerTriggers(db: Kysely<unknown>, postgres: boolean): Promise<void> {
  const upsert = (day: string, scope: string, value: string) => `insert into insight_days (workspace_id, env, metric, day, scope, currency, plan_id, value)
      select new.workspace_id, new.env, 'new_customers', ${day}, ${scope}, '', '', ${value} where true
      on conflict (workspace_id, env, metric, day, scope, currency, plan_id) do update set value = insight_days.value + excluded.value`;
  const firstOfPerson = `not exists (select 1 from customers c where c.workspace_id = new.workspace_id and c.env = new.env and c.person_id = new.person_id and c.tool_id <> new.tool_id)`;
  if (postgres) {
    const day = (col: string) => `to_char(to_timestamp(${col} / 1000.0) at time zone 'UTC', 'YYYY-MM-DD')`;
    await sql
      .raw(`create function insight_customer_counts() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    ${upsert(day("new.since"), "'tool:' || new.tool_id", "1")};
    if ${firstOfPerson} then
      ${upsert(day("new.since"), "'*'", "1")};
    end if;
  elsif ${day("old.since")} <> ${day("new.since")} then
    insert into insight_days (workspace_id, env, metric, day, scope, currency, plan_id, value)
      values (old.workspace_id, old.env, 'new_customers', ${day("old.since")}, 'tool:' || old.tool_id, '', '', -1)
      on conflict (workspace_id, env, metric, day, scope, currency, plan_id) do update set value = insight_days.value + excluded.value;
    ${upsert(day("new.since"), "'tool:' || new.tool_id", "1")};
  end if;
  return null;
end $$`)
      .execute(db);
    await sql`create trigger insight_customer_insert after insert on customers for each row execute function insight_customer_counts()`.execute(db);
    await sql`create trigger insight_customer_since after update of since on customers for each row execute function insight_customer_counts()`.execute(db);
  } else {
    const day = (col: string) => `strftime('%Y-%m-%d', ${col} / 1000, 'unixepoch')`;
    await sql
      .raw(`create trigger insight_customer_insert after insert on customers begin
  ${upsert(day("new.since"), "'tool:' || new.tool_id", "1")};
  ${upsert(day("new.since"), "'*'", "1").replace("where true", `where ${firstOfPerson}`)};
end`)
      .execute(db);
    await sql
      .raw(`create trigger insight_customer_since after update of since on customers
when ${day("old.since")} <> ${day("new.since")} begin
  insert into insight_days (workspace_id, env, metric, day, scope, currency, plan_id, value)
    select old.workspace_id, old.env, 'new_customers', ${day("old.since")}, 'tool:' || old.tool_id, '', '', -1 where true
    on conflict (workspace_id, env, metric, day, scope, currency, plan_id) do update set value = insight_days.value + excluded.value;
  ${upsert(day("new.since"), "'tool:' || new.tool_id", "1")};
end`)
      .execute(db);
  }
}
