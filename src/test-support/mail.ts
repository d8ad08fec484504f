// The outbox's mail in tests, sent as `warden serve` sends it (mail/mail.sender.ts): each
// test's services get a sender, woken when a use case queues a mail, whose mailer writes
// to the test's outbox folder (or its SMTP_URL). Readers wait for what is under way, or
// flush their own senders, never a fixed time. A sender only ever runs for its own test:
// senders share the file's database, so one woken for another test would take that
// test's mail to its own folder.
import { after } from "node:test";
import { createMailer } from "../client/mailer.js";
import { MailSender } from "../mail/mail.sender.js";
import type { Services } from "../services.js";

const senders: { dataDir: string; sender: MailSender }[] = [];
const closers: (() => void)[] = [];
after(() => {
  for (const close of closers) close();
});

const quiet = { error: () => {}, warn: () => {}, info: () => {} };

/**
 * Sends the mail these services queue, as soon as they queue it. The earlier tests'
 * senders finish their runs first: one still draining would claim this test's mail from
 * the shared outbox table and send it to the earlier test's folder or relay.
 */
export async function sendTestMail(services: Services): Promise<MailSender> {
  await settleMail();
  const mailer = createMailer(services.config, quiet);
  closers.push(() => mailer.close());
  const sender = new MailSender(services, mailer, quiet, { pollIntervalMs: 1_000, leaseMs: 60_000, batch: 20, random: () => 0 });
  services.signals.onMail(() => {
    sender.drain().catch(() => {});
  });
  senders.push({ dataDir: services.config.dataDir, sender });
  return sender;
}

/** Waits until every mail already being sent (by any test's sender) is handed to its mailer. */
export async function settleMail(): Promise<void> {
  for (const { sender } of senders) await sender.idle();
}

/** Sends everything due that was queued for the senders writing to `dataDir` (notifications are not woken for). */
export async function flushMail(dataDir: string): Promise<void> {
  for (const entry of senders) if (entry.dataDir === dataDir) await entry.sender.drain();
}
