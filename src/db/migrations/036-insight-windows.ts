import { type Kysely, PostgresAdapter, sql } from "kysely";

// The most-active-unpaid list over the Use page's fixed ranges (last 7, 30, 90 days and
// 12 months, all ending today) read from the top of an index instead of counted from the
// range's person-days (issue 34, point 3; insights/README.md, docs/decisions.md).
//
// insight_window_starts: per workspace environment, activity scope and span ('7d', '30d',
// '90d', '12m') the first day its window counts. insight_active_windows: per person the
// number of their active days in the scope on that day or after (no end: the page's ranges
// end today). The activity flush adds a person's new day to each window that counts it;
// the windows job moves a start one day at a time, taking away (or adding) only the
// people active on that day. The index by days, person in byte order, is the list's order.
//
// Each scope with activity already gets its windows here, empty and starting the day after
// its newest active day (nobody has a day counted from there yet), for the job to move back
// day by day to where the page needs them; a scope first active later gets them from its
// first flush.
export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .createTable("insight_window_starts")
    .addColumn("workspace_id", "text", (c) => c.notNull())
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("scope", "text", (c) => c.notNull())
    .addColumn("span", "text", (c) => c.notNull())
    .addColumn("start", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("insight_window_starts_pk", ["workspace_id", "env", "scope", "span"])
    .execute();
  await db.schema
    .createTable("insight_active_windows")
    .addColumn("workspace_id", "text", (c) => c.notNull())
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("scope", "text", (c) => c.notNull())
    .addColumn("span", "text", (c) => c.notNull())
    .addColumn("person_id", "text", (c) => c.notNull())
    .addColumn("days", "integer", (c) => c.notNull())
    .addPrimaryKeyConstraint("insight_active_windows_pk", ["workspace_id", "env", "scope", "span", "person_id"])
    .$call((t) => (postgres ? t : t.modifyEnd(sql`without rowid`)))
    .execute();
  const byteOrder = postgres ? ` collate "C"` : "";
  await sql
    .raw(`create index insight_active_windows_by_days on insight_active_windows (workspace_id, env, scope, span, days desc, person_id${byteOrder})`)
    .execute(db);
  const nextDay = postgres ? `to_char(m.last::date + 1, 'YYYY-MM-DD')` : `date(m.last, '+1 day')`;
  await sql
    .raw(`insert into insight_window_starts (workspace_id, env, scope, span, start)
    select m.workspace_id, m.env, m.scope, s.span, ${nextDay}
    from (select workspace_id, env, scope, max(day) as last from insight_active_days group by workspace_id, env, scope) m
      cross join (select '7d' as span union all select '30d' union all select '90d' union all select '12m') s`)
    .execute(db);
}
