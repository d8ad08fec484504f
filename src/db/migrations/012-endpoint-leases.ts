import { type Kysely, PostgresAdapter, sql } from "kysely";

// A worker sends an endpoint's deliveries one at a time, in order, so it now leases the
// endpoint instead of each delivery: a claim writes one row, not up to 128, and giving
// back what a failed endpoint still owed is one row too. Before, on PostgreSQL a claim of
// 128 locked and rewrote 128 delivery rows (18 to 25 us of PostgreSQL's CPU a delivery,
// of about 115, measured on a table built like deliveries with 200,000 rows), and on
// SQLite each claim was a commit of some 60 table pages. An endpoint is now sent to by one process at a time, which also
// keeps its order across processes. Every endpoint has its lease row from its creation,
// so that a claim can lock it with SKIP LOCKED.
//
// The fill factor of migration 010 made room for the lease's rewrites of delivery rows;
// with no lease on them, settling is what writes a delivery, and it changes the status,
// which the due indexes read, so it cannot stay on its page anyway.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("endpoint_leases")
    .addColumn("endpoint_id", "text", (c) => c.primaryKey().references("webhook_endpoints.id"))
    .addColumn("locked_until", "bigint")
    .addColumn("locked_by", "text")
    .execute();
  await sql`insert into endpoint_leases (endpoint_id) select id from webhook_endpoints`.execute(db);
  await db.schema.alterTable("deliveries").dropColumn("locked_until").execute();
  await db.schema.alterTable("deliveries").dropColumn("locked_by").execute();
  if (db.getExecutor().adapter instanceof PostgresAdapter) await sql`alter table deliveries reset (fillfactor)`.execute(db);
}
