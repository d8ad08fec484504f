import type { Kysely } from "kysely";

// Insights of meters (issue 46, point 5). `insight_meter_days`: units spent per tool,
// meter and UTC day, added by the spend's own transaction (one upsert), so the figure is
// exact and a chart reads a row per meter and day, never the spends. `allowance_runouts`:
// one row per person, meter and allowance period, written by the spend that used the
// period's last unit (the Insights list of who to sell more to, and the
// `usage.allowance_ran_out` event's once-only key).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("insight_meter_days")
    .addColumn("workspace_id", "text", (c) => c.notNull())
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("tool_id", "text", (c) => c.notNull())
    .addColumn("meter_id", "text", (c) => c.notNull())
    .addColumn("day", "text", (c) => c.notNull())
    // One of 16 rows a meter and day, chosen by the person: on PostgreSQL an upsert holds
    // its row until commit, and one row would make every spend of the meter wait on every
    // other, whoever spends; a person's spends are one at a time already. Read as a sum.
    .addColumn("shard", "integer", (c) => c.notNull())
    .addColumn("used", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("insight_meter_days_pk", ["workspace_id", "env", "tool_id", "meter_id", "day", "shard"])
    .execute();
  await db.schema
    .createTable("allowance_runouts")
    .addColumn("workspace_id", "text", (c) => c.notNull())
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("tool_id", "text", (c) => c.notNull())
    .addColumn("meter_id", "text", (c) => c.notNull())
    .addColumn("person_id", "text", (c) => c.notNull())
    // The person's allowances when it ran out: each "<source>@<period start>", sorted; a
    // reset or a new source makes a new period.
    .addColumn("period", "text", (c) => c.notNull())
    .addColumn("ran_out_at", "bigint", (c) => c.notNull())
    // The soonest of those allowances' resets.
    .addColumn("resets_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("allowance_runouts_pk", ["workspace_id", "env", "tool_id", "meter_id", "person_id", "period"])
    .execute();
  // The list: newest first within a workspace environment and range.
  await db.schema.createIndex("allowance_runouts_recent").on("allowance_runouts").columns(["workspace_id", "env", "ran_out_at"]).execute();
}
