import { type Kysely, PostgresAdapter, sql } from "kysely";

// Migration 031's trigger asks, for each new customers row, whether the person is a
// customer of another tool already ("new over all tools" counts a person once). It asked
// it of customers by person, which no index serves: the key leads with the tool. So each
// insert read every customer of the workspace environment, and a workspace's n-th customer
// cost n reads (a million-customer import or seed never finished). Asked tool by tool
// instead (a scalar subquery per tool: PostgreSQL turns an exists into a join
// and may then start from customers, as SQLite did), each
// probe is one lookup of the key, and a workspace has a handful of tools;
// no index is added, so writes of customers rows cost what they did.
export const OTHER_TOOL_OF_PERSON = `exists (select 1 from tools t where t.workspace_id = new.workspace_id and t.id <> new.tool_id
      and (select 1 from customers c where c.workspace_id = t.workspace_id and c.env = new.env and c.tool_id = t.id and c.person_id = new.person_id) is not null)`;

const upsert = (day: string, scope: string) => `insert into insight_days (workspace_id, env, metric, day, scope, currency, plan_id, value)
      select new.workspace_id, new.env, 'new_customers', ${day}, ${scope}, '', '', 1 where true
      on conflict (workspace_id, env, metric, day, scope, currency, plan_id) do update set value = insight_days.value + excluded.value`;

export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  if (postgres) {
    // The function's body with only the person's test changed; the triggers call it by name.
    const day = (col: string) => `to_char(to_timestamp(${col} / 1000.0) at time zone 'UTC', 'YYYY-MM-DD')`;
    await sql
      .raw(`create or replace function insight_customer_counts() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    ${upsert(day("new.since"), "'tool:' || new.tool_id")};
    if not ${OTHER_TOOL_OF_PERSON} then
      ${upsert(day("new.since"), "'*'")};
    end if;
  elsif ${day("old.since")} <> ${day("new.since")} then
    insert into insight_days (workspace_id, env, metric, day, scope, currency, plan_id, value)
      values (old.workspace_id, old.env, 'new_customers', ${day("old.since")}, 'tool:' || old.tool_id, '', '', -1)
      on conflict (workspace_id, env, metric, day, scope, currency, plan_id) do update set value = insight_days.value + excluded.value;
    ${upsert(day("new.since"), "'tool:' || new.tool_id")};
  end if;
  return null;
end $$`)
      .execute(db);
    return;
  }
  const day = (col: string) => `strftime('%Y-%m-%d', ${col} / 1000, 'unixepoch')`;
  await sql`drop trigger insight_customer_insert`.execute(db);
  await sql
    .raw(`create trigger insight_customer_insert after insert on customers begin
  ${upsert(day("new.since"), "'tool:' || new.tool_id")};
  ${upsert(day("new.since"), "'*'").replace("where true", `where not ${OTHER_TOOL_OF_PERSON}`)};
end`)
    .execute(db);
}
