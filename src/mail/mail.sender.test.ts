import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Mail, Mailer } from "../client/mailer.js";
import { DIALECTS, testServices, unique } from "../test-support/harness.js";
import { MAIL_STALE_MS, MailSender } from "./mail.sender.js";
import { queueMails } from "./mail.service.js";
import { claimDueMails, listUnsentMails } from "./mail-outbox.store.js";

/** A relay that refuses while `refusing` is true, and keeps what it accepted. */
function testRelay() {
  const accepted: Mail[] = [];
  const relay = {
    refusing: false,
    accepted,
    mailer: {
      async send(mail: Mail) {
        if (relay.refusing) throw new Error("554 relay refused");
        accepted.push(mail);
      },
      close() {},
    } satisfies Mailer,
  };
  return relay;
}

function testLog() {
  const lines: { level: string; message: string }[] = [];
  return {
    lines,
    log: {
      error: (_: object, message: string) => void lines.push({ level: "error", message }),
      warn: (_: object, message: string) => void lines.push({ level: "warn", message }),
    },
  };
}

const OPTIONS = { pollIntervalMs: 1_000, leaseMs: 60_000, batch: 20, random: () => 0 };

for (const dialect of DIALECTS) {
  describe(`mail outbox and sender (${dialect})`, () => {
    test("a mail queued in a transaction that rolls back is never sent; one that commits is sent once, sealed until then and erased after", async () => {
      const { services } = await testServices(dialect);
      const relay = testRelay();
      const sender = new MailSender(services, relay.mailer, testLog().log, OPTIONS);
      const to = `${unique("m")}@example.com`;
      const now = services.clock.now();
      await assert.rejects(
        services.db.transaction().execute(async (trx) => {
          await queueMails(trx, services.secretBox, [{ kind: "owner-sign-in-code", to, subject: "111111 lost", text: "rolled back" }], now);
          throw new Error("the change failed");
        }),
      );
      await services.db
        .transaction()
        .execute((trx) => queueMails(trx, services.secretBox, [{ kind: "owner-sign-in-code", to, subject: "222222 kept", text: "code 222222" }], now));
      const stored = await services.db.selectFrom("mail_outbox").select(["content_sealed"]).where("recipient", "=", to).execute();
      assert.equal(stored.length, 1);
      assert.doesNotMatch(stored[0]?.content_sealed ?? "", /222222/, "the code is not readable in the database");
      await sender.drain();
      await sender.drain();
      assert.deepEqual(
        relay.accepted.filter((m) => m.to === to),
        [{ to, subject: "222222 kept", text: "code 222222" }],
      );
      const sent = await services.db
        .selectFrom("mail_outbox")
        .select(["content_sealed", "sent_at", "attempts"])
        .where("recipient", "=", to)
        .executeTakeFirstOrThrow();
      assert.deepEqual([sent.content_sealed, Number(sent.sent_at), Number(sent.attempts)], [null, now, 1]);
    });

    test("a refusing relay: the mail is retried after 10 s, 1 min, 5 min, 15 min, then hourly, never dropped, and reported past a day", async () => {
      const { services, clock } = await testServices(dialect);
      const relay = testRelay();
      const { lines, log } = testLog();
      const sender = new MailSender(services, relay.mailer, log, OPTIONS);
      const to = `${unique("r")}@example.com`;
      await services.db.transaction().execute((trx) => queueMails(trx, null, [{ kind: "owner-notification", to, subject: "s", text: "t" }], clock.now()));
      relay.refusing = true;
      const due = async () => (await listUnsentMails(services.db, to))[0];
      const queuedAt = clock.now();
      await sender.drain();
      for (const [attempts, delay] of [
        [1, 10_000],
        [2, 60_000],
        [3, 300_000],
        [4, 900_000],
        [5, 3_600_000],
        [6, 3_600_000],
      ] as const) {
        const mail = await due();
        assert.equal(mail?.attempts, attempts);
        assert.equal(mail?.lastError, "554 relay refused");
        assert.equal(mail?.nextAttemptAt, clock.now() + delay);
        clock.advance(delay - 1);
        assert.equal(await sender.drain(), 0, "not due yet");
        clock.advance(1);
        assert.equal(await sender.drain(), 1);
      }
      assert.ok(lines.every((l) => l.level === "warn"));
      clock.set(queuedAt + MAIL_STALE_MS);
      await sender.drain();
      assert.equal(lines.at(-1)?.level, "error");
      assert.match(lines.at(-1)?.message ?? "", /has not gone out for over a day: it is kept/);
      assert.ok(await due(), "still in the outbox");
      relay.refusing = false;
      clock.advance(3_600_000);
      await sender.drain();
      assert.equal(await due(), undefined);
      assert.equal(relay.accepted.filter((m) => m.to === to).length, 1);
    });

    test("a sender that dies mid-send loses nothing: its claim runs out and another sends the mail", async () => {
      const { services, clock } = await testServices(dialect);
      const to = `${unique("d")}@example.com`;
      await services.db.transaction().execute((trx) => queueMails(trx, null, [{ kind: "owner-notification", to, subject: "s", text: "t" }], clock.now()));
      const now = clock.now();
      const claimed = await claimDueMails(services.db, { senderId: "mls_dead", now, leaseUntil: now + 60_000, limit: 100, skipLocked: dialect === "postgres" });
      assert.ok(claimed.some((m) => m.recipient === to));
      const relay = testRelay();
      const sender = new MailSender(services, relay.mailer, testLog().log, OPTIONS);
      await sender.drain();
      assert.equal(relay.accepted.filter((m) => m.to === to).length, 0, "leased to the dead sender");
      clock.advance(60_000);
      await sender.drain();
      assert.equal(relay.accepted.filter((m) => m.to === to).length, 1);
    });

    test("senders in several processes at once send each mail once", async () => {
      const { services, clock } = await testServices(dialect);
      const prefix = unique("c");
      const mails = Array.from({ length: 60 }, (_, i) => ({ kind: "owner-notification" as const, to: `${prefix}-${i}@example.com`, subject: "s", text: "t" }));
      await services.db.transaction().execute((trx) => queueMails(trx, null, mails, clock.now()));
      const relay = testRelay();
      const senders = Array.from({ length: 3 }, () => new MailSender(services, relay.mailer, testLog().log, { ...OPTIONS, batch: 7 }));
      await Promise.all(senders.map((s) => s.drain()));
      const ours = relay.accepted.filter((m) => m.to.startsWith(prefix)).map((m) => m.to);
      assert.equal(ours.length, 60);
      assert.equal(new Set(ours).size, 60);
    });
  });
}
