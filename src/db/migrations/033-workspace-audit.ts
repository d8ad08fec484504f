import type { Kysely } from "kysely";

// The workspace log page (dashboard › Audit log) reads one workspace environment's entries
// and its workspace-wide ones (env null), newest first, 50 at a time, by owner or by
// action: each read finds its page by an index in the page's order, so a workspace with a
// million entries costs what one with fifty does. Without the filtered ones, a filter that
// matched nothing walked every entry of the workspace. Audit entries are written a few a
// minute at most, so three indexes cost nothing a writer would notice.
// audit_log_workspace (all of a workspace's environments) goes: the account's log walks
// each environment by audit_log_scope instead, and with both, the planners took the older
// one for the workspace log's page and stepped over the other environment's entries.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex("audit_log_workspace").execute();
  await db.schema.createIndex("audit_log_scope").on("audit_log").columns(["workspace_id", "env", "created_at", "id"]).execute();
  await db.schema.createIndex("audit_log_scope_action").on("audit_log").columns(["workspace_id", "env", "action", "created_at", "id"]).execute();
  await db.schema.createIndex("audit_log_scope_owner").on("audit_log").columns(["workspace_id", "env", "owner_id", "created_at", "id"]).execute();
}
