import type { Kysely } from "kysely";

// The buyer's language (issue 51): a workspace's default language for its hosted pages
// (Configure › Branding), read with the branding every page reads already; and the
// vendor's own names in other languages (a tool's, a bundle's, a plan's, a feature's, a
// meter's), optional, read once per page by the workspace and the page's language (the
// key's first two columns), so a page reads one short range however big the catalogue.
// `kind` says what is named: `product` (a tool or a bundle itself, `item_id` empty),
// `plan`, `feature`, `meter` (of the product `product_kind`/`product_id`).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable("workspace_brands").addColumn("language", "text").execute();
  await db.schema
    .createTable("translated_names")
    .addColumn("workspace_id", "text", (c) => c.notNull())
    .addColumn("language", "text", (c) => c.notNull())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("product_kind", "text", (c) => c.notNull())
    .addColumn("product_id", "text", (c) => c.notNull())
    .addColumn("item_id", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("updated_at", "bigint", (c) => c.notNull())
    .addPrimaryKeyConstraint("translated_names_pk", ["workspace_id", "language", "kind", "product_kind", "product_id", "item_id"])
    .execute();
}
