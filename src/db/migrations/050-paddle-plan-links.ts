import type { Kysely } from "kysely";

// Paddle price and product ids linked to Warden's plans, per workspace environment
// (Paddle's sandbox and live hold their own catalogues with their own ids). Paddle's
// checkout is opened by Warden with the linked price, and a completed transaction's
// price must be one linked to the plan its custom_data names, so that no cheap price
// buys a dear plan. One id names one plan in an environment. Paddle's event ids are pruned
// by age as Stripe's are (retention/), through their own index.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("paddle_plan_links")
    .addColumn("workspace_id", "text", (c) => c.notNull().references("workspaces.id"))
    .addColumn("env", "text", (c) => c.notNull())
    // pri_… or pro_…
    .addColumn("paddle_id", "text", (c) => c.notNull())
    .addColumn("product_kind", "text", (c) => c.notNull())
    .addColumn("product_id", "text", (c) => c.notNull())
    .addColumn("plan_id", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("paddle_plan_links_pk", ["workspace_id", "env", "paddle_id"])
    .execute();
  await db.schema.createIndex("paddle_plan_links_plan").on("paddle_plan_links").columns(["workspace_id", "product_kind", "product_id", "plan_id"]).execute();
  await db.schema.createIndex("paddle_events_age").on("paddle_events").column("received_at").execute();
}
