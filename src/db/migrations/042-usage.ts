import type { Kysely } from "kysely";

// Usage (issue 46): what a plan unlocks besides the tool itself. A tool declares named
// features and meters; a plan's terms, per tool it covers, list the features it unlocks,
// each meter's allowance per period and the credits a purchase of it adds (a credit
// pack: a one-time plan, with or without access). A grant may name the plan whose terms
// it gives. What a person used sits per source and period in `meter_usage`; credits are
// a ledger in `meter_credits`, one row per pack bought or hand adjustment.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("tool_features")
    .addColumn("workspace_id", "text", (c) => c.notNull())
    .addColumn("tool_id", "text", (c) => c.notNull())
    .addColumn("id", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("tool_features_pk", ["workspace_id", "tool_id", "id"])
    .execute();
  await db.schema
    .createTable("tool_meters")
    .addColumn("workspace_id", "text", (c) => c.notNull())
    .addColumn("tool_id", "text", (c) => c.notNull())
    .addColumn("id", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("unit", "text", (c) => c.notNull())
    // Each calendar month (UTC), for a person who holds nothing; null offers none.
    .addColumn("free_allowance", "bigint")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("tool_meters_pk", ["workspace_id", "tool_id", "id"])
    .execute();
  // A plan's terms for one tool it covers (a tool's plan: that tool; a bundle's: each of its
  // tools). JSON, read with the plan in the sources' one join: features ["export"],
  // allowances {"summaries": 500}, credits {"summaries": 1000}.
  await db.schema
    .createTable("plan_terms")
    .addColumn("workspace_id", "text", (c) => c.notNull())
    .addColumn("product_kind", "text", (c) => c.notNull())
    .addColumn("product_id", "text", (c) => c.notNull())
    .addColumn("plan_id", "text", (c) => c.notNull())
    .addColumn("tool_id", "text", (c) => c.notNull())
    .addColumn("features", "text", (c) => c.notNull().defaultTo("[]"))
    .addColumn("allowances", "text", (c) => c.notNull().defaultTo("{}"))
    .addColumn("credits", "text", (c) => c.notNull().defaultTo("{}"))
    .addColumn("credits_expire_days", "integer")
    .addPrimaryKeyConstraint("plan_terms_pk", ["workspace_id", "product_kind", "product_id", "plan_id", "tool_id"])
    .execute();
  // 0: a credit pack only; buying it adds credits and gives no access to the tool.
  await db.schema
    .alterTable("plans")
    .addColumn("gives_access", "integer", (c) => c.notNull().defaultTo(1))
    .execute();
  // The tool's plan whose terms a grant gives; null: the tool's top terms.
  await db.schema.alterTable("grants").addColumn("plan_id", "text").execute();
  await db.schema
    .createTable("meter_usage")
    .addColumn("workspace_id", "text", (c) => c.notNull())
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("person_id", "text", (c) => c.notNull())
    .addColumn("tool_id", "text", (c) => c.notNull())
    .addColumn("meter_id", "text", (c) => c.notNull())
    // Whose allowance: "sub_…", "lic_…", "gr_…" (a source's id), or "free".
    .addColumn("bucket", "text", (c) => c.notNull())
    .addColumn("period_start", "bigint", (c) => c.notNull())
    .addColumn("period_end", "bigint", (c) => c.notNull())
    .addColumn("used", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("meter_usage_pk", ["workspace_id", "env", "person_id", "tool_id", "meter_id", "bucket", "period_start"])
    .execute();
  await db.schema
    .createTable("meter_credits")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("workspace_id", "text", (c) => c.notNull())
    .addColumn("env", "text", (c) => c.notNull())
    .addColumn("person_id", "text", (c) => c.notNull())
    .addColumn("tool_id", "text", (c) => c.notNull())
    .addColumn("meter_id", "text", (c) => c.notNull())
    // The pack's licence; null for a hand adjustment or an import.
    .addColumn("licence_id", "text")
    .addColumn("amount", "bigint", (c) => c.notNull())
    .addColumn("remaining", "bigint", (c) => c.notNull())
    .addColumn("expires_at", "bigint")
    .addColumn("note", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute();
  await db.schema.createIndex("meter_credits_person").on("meter_credits").columns(["workspace_id", "env", "person_id", "tool_id", "meter_id"]).execute();
  await db.schema.createIndex("meter_credits_licence").on("meter_credits").columns(["licence_id"]).execute();
}
