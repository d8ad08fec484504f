// The client API in tests: a real SMTP server on loopback that keeps every mail, so that
// a test signs in with the code a person would read, and the calls an extension makes.
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, before } from "node:test";
import { SMTPServer } from "smtp-server";
import type { Services } from "../services.js";
import type { TestApi, Workspace } from "./harness.js";
import { settleMail } from "./mail.js";

interface ReceivedMail {
  to: string[];
  raw: string;
}

export interface TestMailbox {
  /** `smtp://127.0.0.1:<port>`, for SMTP_URL; set once the file's `before` ran. */
  readonly url: string;
  /** The sign-in code of the newest mail to the address, once the mail queued so far is sent (another process's: once one has arrived). */
  codeFor(address: string): Promise<string>;
}

const MAIL_WAIT_MS = 15_000;

/** Starts the server before the file's tests and stops it after them. */
export function testMailbox(): TestMailbox {
  const inbox: ReceivedMail[] = [];
  let url = "";
  const smtp = new SMTPServer({
    disabledCommands: ["AUTH", "STARTTLS"],
    authOptional: true,
    logger: false,
    onData(stream, session, callback) {
      let raw = "";
      stream.setEncoding("utf8");
      stream.on("data", (chunk: string) => {
        raw += chunk;
      });
      stream.on("end", () => {
        inbox.push({ to: session.envelope.rcptTo.map((r) => r.address), raw });
        callback();
      });
    },
  });
  before(async () => {
    await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
    url = `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => smtp.close(() => resolve())));
  return {
    get url() {
      return url;
    },
    async codeFor(address: string): Promise<string> {
      await settleMail();
      const find = () =>
        inbox.findLast((m) => m.to.some((to) => to.toLowerCase() === address.toLowerCase()))?.raw.match(/sign-in code for .* is (\d{6})\./)?.[1];
      // A `warden serve` in another process (the fault suite) sends from its own outbox,
      // within its sender's poll of a second: its mail is waited for, for a bounded time.
      const deadline = Date.now() + MAIL_WAIT_MS;
      let code = find();
      while (code === undefined && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        code = find();
      }
      assert.ok(code, `no code mailed to ${address} within ${MAIL_WAIT_MS / 1000} s`);
      return code;
    },
  };
}

export const DEVICE = { name: "Work laptop", platform: "chrome-mac" };

/** The calls an extension makes, in the test environment of the workspace's first tool. */
export function clientCalls(mailbox: TestMailbox) {
  const askCode = (api: TestApi, ws: Workspace, email: string) =>
    api.request({ method: "POST", url: "/api/client/v1/sign-in", payload: { workspace: ws.slug, tool: ws.tool, email, env: "test" } });
  const verify = (api: TestApi, ws: Workspace, email: string, code: string, device = DEVICE) =>
    api.request({
      method: "POST",
      url: "/api/client/v1/sign-in/verify",
      payload: { workspace: ws.slug, tool: ws.tool, email, env: "test", code, device },
    });
  return {
    askCode,
    verify,
    /** Signs the address in on a new device; answers the device token. */
    async signIn(api: TestApi, ws: Workspace, email: string, device = DEVICE): Promise<string> {
      const asked = await askCode(api, ws, email);
      assert.equal(asked.statusCode, 200, asked.body);
      const verified = await verify(api, ws, email, await mailbox.codeFor(email), device);
      assert.equal(verified.statusCode, 200, verified.body);
      return verified.json().token;
    },
    check: (api: TestApi, tool: string, token: string, headers: Record<string, string> = {}) =>
      api.request({ url: `/api/client/v1/tools/${tool}/access`, headers: { authorization: `Bearer ${token}`, ...headers } }),
  };
}

// What a parked wait needs first (its device's own check) is a few statements; on a busy
// machine PostgreSQL's answers take a while. Long enough for any machine that still works.
const PARK_WAIT_MS = 5 * 60_000;

/**
 * Resolves once `count` waits are parked in the process's access watch (their own check
 * done), without moving the clock: the event loop's turns first, then short real-time
 * pauses while the database answers, failing only after minutes.
 */
export async function untilParked(services: Pick<Services, "accessWatch">, count = 1): Promise<void> {
  const deadline = Date.now() + PARK_WAIT_MS;
  for (let turn = 0; services.accessWatch.parked < count; turn++) {
    if (Date.now() > deadline) break;
    await new Promise((resolve) => (turn < 1_000 ? setImmediate(resolve) : setTimeout(resolve, 5)));
  }
  assert.equal(services.accessWatch.parked, count, `${count} wait(s) parked`);
}
