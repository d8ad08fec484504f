import type { Kysely } from "kysely";

// Reconciling with Stripe (issue 36). A purchase made without Warden's metadata (through
// ExtensionPay, a payment link, a home-made checkout) is mapped to a plan by the Stripe
// Price or Product it bought: `stripe_plan_links` holds those ids, each naming one plan of
// the workspace (price ids differ between test and live mode, so a plan may have several).
// `stripe_reconcile_runs` is what a reconcile did, read by the dashboard while it runs and
// after; `stripe_reconcile_leases` lets one process at a time reconcile a workspace
// environment, whichever process asked (a lease that runs out frees a crashed one's).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("stripe_plan_links")
    .addColumn("workspace_id", "text", (c) => c.notNull().references("workspaces.id"))
    .addColumn("stripe_id", "text", (c) => c.notNull())
    .addColumn("product_kind", "text", (c) => c.notNull())
    .addColumn("product_id", "text", (c) => c.notNull())
    .addColumn("plan_id", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("stripe_plan_links_pk", ["workspace_id", "stripe_id"])
    .execute();
  await db.schema.createIndex("stripe_plan_links_plan").on("stripe_plan_links").columns(["workspace_id", "product_kind", "product_id", "plan_id"]).execute();

  await db.schema
    .createTable("stripe_reconcile_runs")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("workspace_id", "text", (c) => c.notNull().references("workspaces.id"))
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("trigger", "text", (c) => c.notNull())
    .addColumn("dry_run", "integer", (c) => c.notNull())
    .addColumn("since", "bigint")
    .addColumn("status", "text", (c) => c.notNull())
    // Stripe objects read, facts applied (or that would be), purchases that name no plan.
    .addColumn("scanned", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("applied", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("unmapped", "integer", (c) => c.notNull().defaultTo(0))
    // The lists the run found (what changed, what could not be mapped), as JSON, capped.
    .addColumn("report", "text")
    .addColumn("error", "text")
    .addColumn("started_at", "bigint", (c) => c.notNull())
    .addColumn("finished_at", "bigint")
    .execute();
  await db.schema.createIndex("stripe_reconcile_runs_scope").on("stripe_reconcile_runs").columns(["workspace_id", "env", "started_at"]).execute();

  await db.schema
    .createTable("stripe_reconcile_leases")
    .addColumn("workspace_id", "text", (c) => c.notNull().references("workspaces.id"))
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("run_id", "text", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("stripe_reconcile_leases_pk", ["workspace_id", "env"])
    .execute();
}
