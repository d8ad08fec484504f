// The mail outbox's two ends: use cases queue a mail in the transaction of what it
// reports (so a mail is never lost to a crash between the change and the send, nor sent
// for a change that rolled back), and the sender of `warden serve` sends it later.
import type { Mail } from "../client/mailer.js";
import type { Executor } from "../db/database.js";
import { randomBase62 } from "../ids.js";
import type { SecretBox } from "../webhooks/secret-box.js";
import { insertMails } from "./mail-outbox.store.js";

/** What a mail is, for the log and the operator: never its content. */
export type MailKind = "owner-sign-in-code" | "owner-confirm-code" | "client-sign-in-code" | "owner-invitation" | "owner-notification";

export interface OutgoingMail extends Mail {
  kind: MailKind;
}

// Content kept as written, for mails with no secret in them (notifications): the audit
// record that writes them has no key to seal with, and needs none.
const PLAIN = "plain:";

/**
 * Queues mails in the caller's transaction, sealed under `box` (null: kept readable); the
 * caller wakes the sender once it commits (`signals.wakeMail`), or it looks within a second.
 */
export async function queueMails(trx: Executor, box: SecretBox | null, mails: readonly OutgoingMail[], now: number): Promise<void> {
  await insertMails(
    trx,
    mails.map((mail) => ({
      id: `mail_${randomBase62(24)}`,
      kind: mail.kind,
      recipient: mail.to,
      contentSealed: seal(box, JSON.stringify({ subject: mail.subject, text: mail.text })),
      createdAt: now,
    })),
  );
}

/** The subject and text of a queued mail. */
export function openMailContent(box: SecretBox, sealed: string): { subject: string; text: string } {
  const content = JSON.parse(sealed.startsWith(PLAIN) ? sealed.slice(PLAIN.length) : box.open(sealed)) as { subject: string; text: string };
  return { subject: content.subject, text: content.text };
}

const seal = (box: SecretBox | null, content: string) => (box === null ? `${PLAIN}${content}` : box.seal(content));
