import { type Kysely, PostgresAdapter, sql } from "kysely";

// Issue 50, the vendor's money at a glance. (1) An index of API keys by workspace
// environment: the Overview's keys card and its setup checklist's live-key probe read a
// workspace's keys, and with no index but the key's id each read walked every workspace's
// keys (SQLite: SCAN api_keys).
// (2) Paying people per currency (revenue per paying customer): a level like MRR,
// kept as its daily changes under each product's scope and under "*" (the writer is
// `recordSubscriptionMrr`). Which subscriptions paid on which past day is not kept, so the
// people paying now are counted on the day this runs (UTC): points before it have no
// paying people and show no revenue per paying customer (docs/decisions.md).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex("api_keys_by_workspace").on("api_keys").columns(["workspace_id", "env"]).execute();
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const today = postgres ? sql`to_char(now() at time zone 'UTC', 'YYYY-MM-DD')` : sql`strftime('%Y-%m-%d', 'now')`;
  // Each paying subscription's person, product scope and currency, once.
  const paying = sql`select distinct s.workspace_id, s.env, s.person_id, s.product_kind || ':' || s.product_id as scope, i.currency
    from insight_subscriptions i join subscriptions s on s.workspace_id = i.workspace_id and s.env = i.env and s.id = i.subscription_id
    where i.mrr > 0`;
  for (const [table, at, date] of [
    ["insight_days", "day", today],
    ["insight_months", "month", sql`substr(${today}, 1, 7)`],
  ] as const) {
    await sql`insert into ${sql.table(table)} (workspace_id, env, metric, ${sql.ref(at)}, scope, currency, plan_id, value)
      select workspace_id, env, 'paying_people', ${date}, scope, currency, '', count(*) from (${paying}) p group by workspace_id, env, scope, currency
      union all
      select workspace_id, env, 'paying_people', ${date}, '*', currency, '', count(distinct person_id) from (${paying}) p group by workspace_id, env, currency`.execute(
      db,
    );
  }
}
