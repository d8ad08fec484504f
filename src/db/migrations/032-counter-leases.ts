import type { Kysely } from "kysely";

// Limits served from blocks of quota that a process leases (limits/quota-leases.ts): the
// processes that took from a counter in its window (a bit each, so that blocks shrink
// with how many share it) and the size of the last block taken (the take is one upsert,
// and its RETURNING sees only the row after it).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable("counters")
    .addColumn("takers", "bigint", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable("counters")
    .addColumn("last_take", "bigint", (c) => c.notNull().defaultTo(0))
    .execute();
}
