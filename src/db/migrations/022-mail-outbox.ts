import type { Kysely } from "kysely";

// Every mail Warden sends (sign-in and confirmation codes, invitations, owners'
// notifications) is first a row here, written in the transaction of what it reports;
// the sender of `warden serve` claims due rows, sends them and records the outcome, so
// an answer never waits on the mail relay and a refusing relay loses nothing. The
// content is sealed under WARDEN_SECRET_KEY (a code must not sit readable in the
// database) and erased once sent.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable("mail_outbox")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("recipient", "text", (c) => c.notNull())
    // The subject and text, sealed; null once sent.
    .addColumn("content_sealed", "text")
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    // When the row is next due: a claim moves it a lease ahead, so a sender that dies
    // mid-send gives it back by itself. Null once sent.
    .addColumn("next_attempt_at", "bigint")
    .addColumn("locked_by", "text")
    .addColumn("last_error", "text")
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("sent_at", "bigint")
    .execute();
  await db.schema.createIndex("mail_outbox_due").on("mail_outbox").columns(["next_attempt_at"]).execute();
}
