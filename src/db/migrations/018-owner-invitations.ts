import type { Kysely } from "kysely";

// Co-owners: an owner invites an address to a workspace; the invitation is accepted when
// that address signs in (with a mailed code, like any owner) before it expires, and can
// be withdrawn until then. An owner who joined so says since when (added_at); the owners a
// workspace was created with own it since its creation.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("owner_invitations")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("workspace_id", "text", (c) => c.notNull().references("workspaces.id"))
    .addColumn("email", "text", (c) => c.notNull())
    .addColumn("email_norm", "text", (c) => c.notNull())
    // Null when the operator invited from the command line.
    .addColumn("invited_by", "text", (c) => c.references("owners.id"))
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .addColumn("accepted_at", "bigint")
    .addColumn("withdrawn_at", "bigint")
    .execute();
  // Sign-in looks up an address's open invitations; a workspace's page lists its own.
  await db.schema.createIndex("owner_invitations_email").on("owner_invitations").columns(["email_norm", "expires_at"]).execute();
  await db.schema.createIndex("owner_invitations_workspace").on("owner_invitations").columns(["workspace_id", "created_at"]).execute();

  await db.schema.alterTable("workspace_owners").addColumn("added_at", "bigint").execute();
}
