import type { Mailer } from "../client/mailer.js";
import { DAY_MS } from "../clock.js";
import { isDatabaseBusy, isDatabaseUnavailable } from "../db/storage-faults.js";
import { randomBase62 } from "../ids.js";
import type { Services } from "../services.js";
import { openMailContent } from "./mail.service.js";
import { claimDueMails, type DueMail, recordMailFailure, recordMailSent } from "./mail-outbox.store.js";

const SECOND = 1000;
const MINUTE = 60 * SECOND;
/**
 * After each failure: 10 s, 1 min, 5 min, 15 min, then every hour for as long as it
 * fails. A code lives 10 minutes, so the first three retries are what can still save
 * one; an invitation or a notification is worth sending hours late. A mail is never
 * given up: past a day it is logged at error level on each attempt, for the operator.
 */
export const MAIL_RETRY_DELAYS_MS: readonly number[] = [10 * SECOND, MINUTE, 5 * MINUTE, 15 * MINUTE, 60 * MINUTE];
const JITTER = 0.2;
/** A mail still unsent this long after it was queued is reported on every failed attempt. */
export const MAIL_STALE_MS = DAY_MS;

export function nextMailAttemptAfter(attempts: number, failedAt: number, random: () => number = Math.random): number {
  const base = MAIL_RETRY_DELAYS_MS[Math.min(attempts, MAIL_RETRY_DELAYS_MS.length) - 1] ?? MINUTE;
  return failedAt + Math.round(base * (1 + JITTER * random()));
}

/** What the sender logs through (Fastify's logger, or a command's quiet one). */
interface MailLog {
  error(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

export interface MailSenderOptions {
  pollIntervalMs: number;
  /** How long a claim holds a mail: longer than an SMTP exchange (nodemailer gives up after 10 min of silence at most). */
  leaseMs: number;
  /** Mails claimed at once. */
  batch: number;
  random?: () => number;
}

export const DEFAULT_MAIL_SENDER_OPTIONS: MailSenderOptions = { pollIntervalMs: 1_000, leaseMs: 15 * MINUTE, batch: 20 };

/**
 * Sends the outbox's due mails through the mailer (SMTP, or the outbox folder). Any
 * number of processes can run one: a claim leases its mails, so none is sent twice
 * unless a sender dies between the relay's acceptance and the record (at least once).
 * Runs are serialised within the process: `drain` resolves once everything due when it
 * was called is sent or rescheduled.
 */
export class MailSender {
  private readonly senderId = `mls_${randomBase62(12)}`;
  private tail: Promise<unknown> = Promise.resolve();
  private running = false;
  private loop: Promise<void> | null = null;
  private wakeUp: (() => void) | null = null;
  private woken = false;

  constructor(
    private readonly services: Services,
    private readonly mailer: Mailer,
    private readonly log: MailLog,
    private readonly options: MailSenderOptions = DEFAULT_MAIL_SENDER_OPTIONS,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Stops looking for mail; the run under way finishes (its mails are recorded). */
  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loop;
    await this.tail;
  }

  /** Looks for mail at once (a mail was queued in this process). */
  wake(): void {
    if (this.wakeUp) this.wakeUp();
    else this.woken = true;
  }

  /** Sends everything due now, after the run under way; answers how many mails were attempted. */
  drain(): Promise<number> {
    const run = this.tail.then(() => this.sendDue());
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** Resolves once the run under way (if any) is over, starting none. */
  async idle(): Promise<void> {
    await this.tail;
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        await this.drain();
      } catch (error) {
        // An outage is logged once, where the database's availability is tracked (server.ts); the next poll tries again.
        // SQLite busy (another process holds the write lock: an import, a reconcile) is a wait, not
        // an error, and not worth a line at every poll while it lasts.
        if (!isDatabaseBusy(error) && !isDatabaseUnavailable(error)) this.log.error({ err: error }, "claiming mails failed");
      }
      if (this.running) await this.sleep();
    }
  }

  private sleep(): Promise<void> {
    return new Promise((resolve) => {
      if (this.woken) {
        this.woken = false;
        return resolve();
      }
      const timer = setTimeout(done, this.options.pollIntervalMs);
      const self = this;
      function done() {
        clearTimeout(timer);
        self.wakeUp = null;
        resolve();
      }
      this.wakeUp = () => {
        this.woken = false;
        done();
      };
    });
  }

  private async sendDue(): Promise<number> {
    let attempted = 0;
    for (;;) {
      const now = this.services.clock.now();
      const due = await claimDueMails(this.services.db, {
        senderId: this.senderId,
        now,
        leaseUntil: now + this.options.leaseMs,
        limit: this.options.batch,
        skipLocked: this.services.dialect === "postgres",
      });
      for (const mail of due) await this.send(mail);
      attempted += due.length;
      if (due.length < this.options.batch) return attempted;
    }
  }

  /** One attempt, recorded; whatever goes wrong is the mail's failure, never the loop's. */
  private async send(mail: DueMail): Promise<void> {
    const { db, clock, secretBox } = this.services;
    try {
      const content = openMailContent(secretBox, mail.contentSealed);
      await this.mailer.send({ to: mail.recipient, ...content }, clock.now());
    } catch (error) {
      const failedAt = clock.now();
      const message = error instanceof Error ? error.message : String(error);
      const attempts = mail.attempts + 1;
      const late = failedAt - mail.createdAt >= MAIL_STALE_MS;
      const fields = { mail: mail.id, kind: mail.kind, attempts, err: error };
      if (late) this.log.error(fields, "a mail has not gone out for over a day: it is kept and retried every hour; check SMTP_URL and the relay");
      else this.log.warn(fields, "a mail could not be sent; it will be retried");
      try {
        await recordMailFailure(db, mail.id, this.senderId, {
          error: message.slice(0, 500),
          retryAt: nextMailAttemptAfter(attempts, failedAt, this.options.random),
        });
      } catch (recordError) {
        // The lease runs out and the mail is claimed again: nothing is lost.
        this.log.error({ err: recordError, mail: mail.id }, "a failed mail could not be recorded");
      }
      return;
    }
    try {
      await recordMailSent(db, mail.id, this.senderId, clock.now());
    } catch (error) {
      // Sent, not recorded: it goes out again once the lease runs out (at least once).
      this.log.error({ err: error, mail: mail.id }, "a sent mail could not be recorded");
    }
  }
}
