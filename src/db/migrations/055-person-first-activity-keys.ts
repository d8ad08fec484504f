import { type Kysely, PostgresAdapter, sql } from "kysely";

// A person's activity rows kept side by side (issue 48, point 4). A device's first access
// check of a day writes a person-day, a month's count, the last active day and the
// most-active-unpaid windows, each under its tool's scope and under "*", the windows once
// per span: keyed by scope (and span) first, those rows of one person lay in up to eight
// places of each table's key, so a flush of first checks dirtied some 20 pages a check
// (bench/journal.md, 2026-11-30), each written to the log and again by its checkpoint.
// Keyed by person first, a person's rows of every scope and span share a page: one page
// of each key a check. Every read of these tables asks for a person (then the whole key
// with the person) or goes through the table's index by day or by days, which stay as
// they were; only the order of the key changes, its columns do not.
//
// On PostgreSQL the primary keys are built again in the new order. SQLite cannot change a
// key in place: each table is copied into one of the new shape (without rowid, as the
// others already were, so insight_last_active drops its rowid and its key's second copy),
// and its index is made again as migrations 034 and 036 made it.
const TABLES = [
  {
    name: "insight_active_days",
    columns: "workspace_id text not null, env text not null, scope text not null, person_id text not null, day text not null",
    key: "workspace_id, env, person_id, scope, day",
    index: "create index insight_active_days_by_day on insight_active_days (workspace_id, env, scope, day, person_id)",
  },
  {
    name: "insight_active_months",
    columns: "workspace_id text not null, env text not null, scope text not null, month text not null, person_id text not null, days integer not null",
    key: "workspace_id, env, person_id, scope, month",
    index: "create index insight_active_months_by_days on insight_active_months (workspace_id, env, scope, month, days desc, person_id)",
  },
  {
    name: "insight_last_active",
    columns: "workspace_id text not null, env text not null, scope text not null, person_id text not null, day text not null",
    key: "workspace_id, env, person_id, scope",
    index: "create index insight_last_active_by_day on insight_last_active (workspace_id, env, scope, day desc, person_id)",
  },
  {
    name: "insight_active_windows",
    columns: "workspace_id text not null, env text not null, scope text not null, span text not null, person_id text not null, days integer not null",
    key: "workspace_id, env, person_id, scope, span",
    index: "create index insight_active_windows_by_days on insight_active_windows (workspace_id, env, scope, span, days desc, person_id)",
  },
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  for (const t of TABLES) {
    if (postgres) {
      await sql.raw(`alter table ${t.name} drop constraint ${t.name}_pk, add constraint ${t.name}_pk primary key (${t.key})`).execute(db);
      continue;
    }
    await sql.raw(`create table ${t.name}_055 (${t.columns}, constraint ${t.name}_pk primary key (${t.key})) without rowid`).execute(db);
    const names = t.columns
      .split(", ")
      .map((c) => c.split(" ")[0])
      .join(", ");
    await sql.raw(`insert into ${t.name}_055 (${names}) select ${names} from ${t.name}`).execute(db);
    await sql.raw(`drop table ${t.name}`).execute(db);
    await sql.raw(`alter table ${t.name}_055 rename to ${t.name}`).execute(db);
    await sql.raw(t.index).execute(db);
  }
}
