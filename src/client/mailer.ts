// Outgoing mail of the client API (sign-in codes). With SMTP_URL it goes out over SMTP
// through nodemailer; without, it is written to the log and to `<data dir>/outbox/` as
// one file per message, so a local user can read the code.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { FastifyBaseLogger } from "fastify";
import nodemailer from "nodemailer";
import type { Config } from "../config.js";
import { randomBase62 } from "../ids.js";

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(mail: Mail, now: number): Promise<void>;
  close(): void;
}

export function createMailer(config: Pick<Config, "smtpUrl" | "mailFrom" | "dataDir">, log: Pick<FastifyBaseLogger, "info">): Mailer {
  if (config.smtpUrl !== null) {
    const transport = nodemailer.createTransport(config.smtpUrl);
    return {
      async send(mail) {
        await transport.sendMail({ from: config.mailFrom, to: mail.to, subject: mail.subject, text: mail.text });
      },
      close: () => transport.close(),
    };
  }
  const outbox = join(config.dataDir, "outbox");
  // Mails sent one after another are often written within one tick of the file system's
  // clock: the number keeps their order in their names (a reader sorts them by name).
  let sent = 0;
  return {
    async send(mail, now) {
      sent += 1;
      const file = join(outbox, `${new Date(now).toISOString().replaceAll(":", "-")}-${String(sent).padStart(6, "0")}-${randomBase62(8)}.txt`);
      await mkdir(outbox, { recursive: true });
      await writeFile(file, `From: ${config.mailFrom}\nTo: ${mail.to}\nSubject: ${mail.subject}\n\n${mail.text}\n`, { mode: 0o600 });
      log.info({ to: mail.to, subject: mail.subject, file }, `mail not sent (no SMTP_URL): ${mail.text}`);
    },
    close: () => {},
  };
}
