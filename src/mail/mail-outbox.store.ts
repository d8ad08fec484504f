import type { Executor } from "../db/database.js";

/** A mail as written to the outbox, its content already sealed. */
export interface QueuedMail {
  id: string;
  kind: string;
  recipient: string;
  contentSealed: string;
  createdAt: number;
}

/** A claimed mail, to send now. */
export interface DueMail {
  id: string;
  kind: string;
  recipient: string;
  contentSealed: string;
  attempts: number;
  createdAt: number;
}

export async function insertMails(ex: Executor, mails: readonly QueuedMail[]): Promise<void> {
  if (mails.length === 0) return;
  await ex
    .insertInto("mail_outbox")
    .values(
      mails.map((m) => ({
        id: m.id,
        kind: m.kind,
        recipient: m.recipient,
        content_sealed: m.contentSealed,
        attempts: 0,
        next_attempt_at: m.createdAt,
        locked_by: null,
        last_error: null,
        created_at: m.createdAt,
        sent_at: null,
      })),
    )
    .execute();
}

/**
 * Claims up to `limit` due mails for `senderId`: each is leased by moving its due time to
 * `leaseUntil`, so a sender that dies mid-send gives it back when the lease runs out. On
 * PostgreSQL rows another sender is claiming are skipped, not waited for.
 */
export async function claimDueMails(
  ex: Executor,
  options: { senderId: string; now: number; leaseUntil: number; limit: number; skipLocked: boolean },
): Promise<DueMail[]> {
  const claim = async (trx: Executor) => {
    let due = trx
      .selectFrom("mail_outbox")
      .select(["id", "kind", "recipient", "content_sealed", "attempts", "created_at"])
      .where("next_attempt_at", "<=", options.now)
      .orderBy("next_attempt_at")
      .limit(options.limit);
    if (options.skipLocked) due = due.forUpdate().skipLocked();
    const rows = await due.execute();
    if (rows.length === 0) return [];
    await trx
      .updateTable("mail_outbox")
      .set({ next_attempt_at: options.leaseUntil, locked_by: options.senderId })
      .where(
        "id",
        "in",
        rows.map((r) => r.id),
      )
      .execute();
    return rows;
  };
  const rows = ex.isTransaction ? await claim(ex) : await ex.transaction().execute(claim);
  return rows.flatMap((r) =>
    r.content_sealed === null
      ? []
      : [{ id: r.id, kind: r.kind, recipient: r.recipient, contentSealed: r.content_sealed, attempts: Number(r.attempts), createdAt: Number(r.created_at) }],
  );
}

/** The mail went out: its content is erased, the row kept as a record. False when the claim was lost meanwhile. */
export async function recordMailSent(ex: Executor, id: string, senderId: string, now: number): Promise<boolean> {
  const result = await ex
    .updateTable("mail_outbox")
    .set((eb) => ({ sent_at: now, next_attempt_at: null, content_sealed: null, locked_by: null, last_error: null, attempts: eb("attempts", "+", 1) }))
    .where("id", "=", id)
    .where("locked_by", "=", senderId)
    .where("sent_at", "is", null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** The relay refused or failed: the mail is due again at `retryAt`. */
export async function recordMailFailure(ex: Executor, id: string, senderId: string, failure: { error: string; retryAt: number }): Promise<void> {
  await ex
    .updateTable("mail_outbox")
    .set((eb) => ({ next_attempt_at: failure.retryAt, locked_by: null, last_error: failure.error, attempts: eb("attempts", "+", 1) }))
    .where("id", "=", id)
    .where("locked_by", "=", senderId)
    .where("sent_at", "is", null)
    .execute();
}

/** Mails not sent yet, oldest first (for tests and the operator's eye). */
export async function listUnsentMails(
  ex: Executor,
  recipient: string,
): Promise<{ id: string; kind: string; attempts: number; lastError: string | null; nextAttemptAt: number | null }[]> {
  const rows = await ex
    .selectFrom("mail_outbox")
    .select(["id", "kind", "attempts", "last_error", "next_attempt_at"])
    .where("recipient", "=", recipient)
    .where("sent_at", "is", null)
    .orderBy("created_at")
    .execute();
  return rows.map((r) => ({
    id: r.id,
    kind: r.kind,
    attempts: Number(r.attempts),
    lastError: r.last_error,
    nextAttemptAt: r.next_attempt_at === null ? null : Number(r.next_attempt_at),
  }));
}
