import { type Kysely, sql } from "kysely";

// Shipped beside 019-secret-rotation (the same task's number): the dashboard's lists at a
// million events (bench scenario 7, bench/README.md).
export async function up(db: Kysely<unknown>): Promise<void> {
  // Each filter finds its page by an index in the list's order, instead of walking the
  // workspace's events or deliveries newest first and keeping the few that match (a
  // filter that matched nothing read them all: 253 ms for pending deliveries at 200,000).
  // An event's deliveries, newest first, from the index that finds them: SQLite walked
  // the whole deliveries_list for its order rather than sort the event's few rows.
  await db.schema.dropIndex("deliveries_event").execute();
  await db.schema.createIndex("deliveries_event").on("deliveries").columns(["workspace_id", "env", "event_id", "created_at", "id"]).execute();
  await db.schema.createIndex("events_type").on("events").columns(["workspace_id", "env", "type", "created_at", "id"]).execute();
  // By status, partial like the due indexes (migration 009): a failed delivery enters its
  // index once, when it fails for good; a pending one enters when written and leaves when
  // settled, beside the list's newest entries the same commit writes anyway. Succeeded,
  // the common status, is found by walking the list. The queries name the status as a
  // literal, which both engines need to use a partial index.
  for (const status of ["pending", "failed"]) {
    await db.schema
      .createIndex(`deliveries_${status}`)
      .on("deliveries")
      .columns(["workspace_id", "env", "created_at", "id"])
      .where(sql.ref("status"), "=", sql.lit(status))
      .execute();
  }
  // The audit page reads each workspace's newest entries, and an owner's own sign-ins and
  // sign-outs without stepping over every action the owner took in a workspace; the id
  // breaks ties of the order, so neither read sorts.
  await db.schema.dropIndex("audit_log_workspace").execute();
  await db.schema.createIndex("audit_log_workspace").on("audit_log").columns(["workspace_id", "created_at", "id"]).execute();
  await db.schema.dropIndex("audit_log_owner").execute();
  await db.schema
    .createIndex("audit_log_account")
    .on("audit_log")
    .columns(["owner_id", "created_at", "id"])
    .where(sql.ref("workspace_id"), "is", null)
    .execute();
}
