import type { Kysely } from "kysely";

// Spending a meter (issue 46): every spend of one person's meter takes this row's lock
// first, by an upsert, so that spends of it apply one at a time across processes and
// none reads what another is about to change. On PostgreSQL the upsert locks the row
// until commit; on SQLite it makes the transaction the one writer.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("meter_locks")
    .addColumn("workspace_id", "text", (c) => c.notNull())
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("person_id", "text", (c) => c.notNull())
    .addColumn("tool_id", "text", (c) => c.notNull())
    .addColumn("meter_id", "text", (c) => c.notNull())
    // Spends that took the lock: what an upsert writes, and a count worth having.
    .addColumn("spends", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("meter_locks_pk", ["workspace_id", "env", "person_id", "tool_id", "meter_id"])
    .execute();
}
