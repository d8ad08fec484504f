import { type Kysely, PostgresAdapter, sql } from "kysely";

// Trial outcomes as roll-ups (issue 34, point 3; src/insights/README.md): each trial
// records whether its person first bought within the trial ('within') or within 30 days
// after it ended ('after'), twice: `outcome` for a product that contains the trial's tool
// (the tool's page), `outcome_any` for any product (the page over every tool). The figures
// trial_paid_within and trial_paid_after count them on the trial's creation day, under
// 'tool:<tool>' and '*' respectively. Trials kept before this are decided here from their
// rows as the writer decides them (rollup.store.ts settleTrialOutcomes), with the bundles'
// tools as they are now.
//
// licences.refunded_cents: what has been refunded of a licence's amount (Stripe's
// `amount_refunded`, every partial refund together), so a partial refund counts in
// Insights' refunds and the full refund after it only what is left. Licences refunded
// in full before this counted their whole amount then; the partial refunds before this
// were counted nowhere, and their amount counts when the next report of the charge comes.
export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema.alterTable("grants").addColumn("outcome", "text").execute();
  await db.schema.alterTable("grants").addColumn("outcome_any", "text").execute();

  // Each trial's first purchase from its start: of a product containing its tool, of any product.
  const firsts = sql`with buys as (
      select workspace_id, env, person_id, product_kind, product_id, purchased_at as at from licences where amount_cents is not null
      union all
      select workspace_id, env, person_id, product_kind, product_id, created_at as at from subscriptions
    ), firsts as (
      select g.id,
        min(case when (b.product_kind = 'tool' and b.product_id = g.tool_id) or (b.product_kind = 'bundle' and exists (
          select 1 from bundle_tools bt where bt.workspace_id = g.workspace_id and bt.bundle_id = b.product_id and bt.tool_id = g.tool_id
        )) then b.at end) as tool_at,
        min(b.at) as any_at
      from grants g join buys b on b.workspace_id = g.workspace_id and b.env = g.env and b.person_id = g.person_id and b.at >= g.starts_at
      where g.kind = 'trial'
      group by g.id
    )`;
  const end = "coalesce(grants.ends_at, grants.starts_at)";
  const outcomeOf = (col: string) =>
    sql.raw(`(select case when f.${col} < ${end} then 'within' when f.${col} < ${end} + 2592000000 then 'after' end from firsts f where f.id = grants.id)`);
  await sql`${firsts}
    update grants set outcome = ${outcomeOf("tool_at")}, outcome_any = ${outcomeOf("any_at")}
    where kind = 'trial' and id in (select id from firsts)`.execute(db);

  const day = postgres ? `to_char(to_timestamp(created_at / 1000.0) at time zone 'UTC', 'YYYY-MM-DD')` : `strftime('%Y-%m-%d', created_at / 1000, 'unixepoch')`;
  for (const [column, scope, by] of [
    ["outcome", "'tool:' || tool_id", ", tool_id"],
    ["outcome_any", "'*'", ""],
  ] as const) {
    await sql
      .raw(`insert into insight_days (workspace_id, env, metric, day, scope, currency, plan_id, value)
      select workspace_id, env, 'trial_paid_' || ${column}, ${day}, ${scope}, '', '', count(*) from grants
      where kind = 'trial' and ${column} is not null
      group by workspace_id, env, ${column}, ${day}${by}`)
      .execute(db);
  }
  await sql`insert into insight_months (workspace_id, env, metric, month, scope, currency, plan_id, value)
    select workspace_id, env, metric, substr(day, 1, 7), scope, currency, plan_id, sum(value) from insight_days
    where metric in ('trial_paid_within', 'trial_paid_after')
    group by workspace_id, env, metric, substr(day, 1, 7), scope, currency, plan_id`.execute(db);

  await db.schema
    .alterTable("licences")
    .addColumn("refunded_cents", "bigint", (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`update licences set refunded_cents = amount_cents where refunded_at is not null and amount_cents is not null`.execute(db);
}
