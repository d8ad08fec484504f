import type { Kysely } from "kysely";

// Sent mails are kept a week as a record that a mail went to an address (its content is
// erased once sent), then pruned (retention/): this index lets the pruner reach the
// oldest sent rows without reading the unsent ones.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex("mail_outbox_sent").on("mail_outbox").columns(["sent_at"]).execute();
}
