// Drives the dashboard in process as a browser would: cookies kept between requests,
// forms posted urlencoded with the page's form token, codes read from the outbox.
import { randomInt } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import { buildApp } from "../app.js";
import type { Dialect } from "../db/database.js";
import { type TestEnv, testServices } from "./harness.js";
import { flushMail, settleMail } from "./mail.js";

const dirs: string[] = [];
after(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** Services whose mail lands in an outbox folder of this test's own. */
export async function dashboardServices(dialect: Dialect, env: Record<string, string> = {}): Promise<TestEnv & { dataDir: string }> {
  const dataDir = await mkdtemp(join(tmpdir(), "warden-dashboard-"));
  dirs.push(dataDir);
  return { ...(await testServices(dialect, { WARDEN_DATA_DIR: dataDir, ...env })), dataDir };
}

export async function dashboardApp(testEnv: TestEnv): Promise<FastifyInstance> {
  const app = await buildApp(testEnv.services, { logger: false });
  await app.ready();
  after(() => app.close());
  return app;
}

/** The newest mail to `to` in the outbox (of those `which` accepts), or null, once the mail queued so far is sent. */
export async function readMail(dataDir: string, to: string, which: (mail: string) => boolean = () => true): Promise<string | null> {
  await settleMail();
  await flushMail(dataDir);
  const outbox = join(dataDir, "outbox");
  let files: string[];
  try {
    files = await readdir(outbox);
  } catch {
    return null;
  }
  // Files are named by the (test's) clock, which may not move between mails: newest by write
  // time, then, for mails written within one tick of the file system's clock (a flush of
  // several queued mails), by the sender's number in the name.
  const written = await Promise.all(files.map(async (file) => ({ file, at: (await stat(join(outbox, file), { bigint: true })).mtimeNs })));
  written.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : b.file.localeCompare(a.file)));
  for (const { file } of written) {
    const text = await readFile(join(outbox, file), "utf8");
    if (text.includes(`\nTo: ${to}\n`) && which(text)) return text;
  }
  return null;
}

const CODE_SUBJECT = /Subject: (\d{6}) /;

/**
 * The code of the newest mail to `to` that carries one. Other mails (an invitation) are
 * passed over: written within the same tick of the file system's clock, they could
 * otherwise sort as the newer one.
 */
/** The newest mail of a code to `to` (a notification mailed in the same flush may be newer). */
export function readCodeMail(dataDir: string, to: string): Promise<string | null> {
  return readMail(dataDir, to, (text) => CODE_SUBJECT.test(text));
}

export async function readCode(dataDir: string, to: string): Promise<string> {
  const mail = await readCodeMail(dataDir, to);
  const code = mail ? CODE_SUBJECT.exec(mail)?.[1] : undefined;
  if (!code) throw new Error(`no code mailed to ${to}`);
  return code;
}

/** A browser in process: its cookies, and the form token of the last page it saw. */
export class TestBrowser {
  readonly cookies = new Map<string, string>();
  csrf = "";

  constructor(
    readonly app: FastifyInstance,
    // Each browser its own network address, so that per-source limits of one test never meet another's.
    readonly remoteAddress = `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`,
    readonly userAgent?: string,
  ) {}

  private keep(response: LightMyRequestResponse): LightMyRequestResponse {
    const setCookie = response.headers["set-cookie"];
    for (const line of [setCookie ?? []].flat()) {
      const [pair = ""] = line.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      if (/Max-Age=0/.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const token = /name="_csrf" value="([0-9a-f]+)"/.exec(response.body)?.[1];
    if (token) this.csrf = token;
    return response;
  }

  private cookieHeader(): Record<string, string> {
    const ua: Record<string, string> = this.userAgent === undefined ? {} : { "user-agent": this.userAgent };
    return this.cookies.size === 0 ? ua : { ...ua, cookie: [...this.cookies].map(([n, v]) => `${n}=${v}`).join("; ") };
  }

  async get(url: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    return this.keep(await this.app.inject({ method: "GET", url, remoteAddress: this.remoteAddress, headers: { ...this.cookieHeader(), ...headers } }));
  }

  /** Posts a form as the dashboard's own page would (its token added unless given; a header given as "" is left out). */
  async post(url: string, fields: Record<string, string> = {}, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    const payload = new URLSearchParams({ _csrf: this.csrf, ...fields }).toString();
    const sent = { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin", ...this.cookieHeader(), ...headers };
    return this.keep(
      await this.app.inject({
        method: "POST",
        url,
        remoteAddress: this.remoteAddress,
        payload,
        headers: Object.fromEntries(Object.entries(sent).filter(([, value]) => value !== "")),
      }),
    );
  }

  /**
   * Posts a form behind the fresh-code gate as an owner would: the first post mails a code
   * to `email`, the second sends it back with the same fields.
   */
  async postWithCode(dataDir: string, email: string, url: string, fields: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    const asked = await this.post(url, fields);
    if (asked.statusCode !== 200 || !asked.body.includes('name="confirm" value="1"')) throw new Error(`no code asked: ${asked.statusCode}`);
    return this.post(url, { ...fields, confirm: "1", code: await readCode(dataDir, email) });
  }

  /** Signs in with the code mailed to `email`; answers the page the sign-in lands on. */
  async signIn(dataDir: string, email: string): Promise<LightMyRequestResponse> {
    await this.get("/dashboard/sign-in");
    const asked = await this.post("/dashboard/sign-in", { email });
    if (asked.statusCode !== 303) throw new Error(`sign-in answered ${asked.statusCode}: ${asked.body}`);
    await this.get("/dashboard/sign-in/code");
    const verified = await this.post("/dashboard/sign-in/code", { code: await readCode(dataDir, email) });
    if (verified.statusCode !== 303) throw new Error(`code answered ${verified.statusCode}: ${verified.body}`);
    return verified;
  }
}

/** The steps of a page's breadcrumbs, as read (the text of each link or step, the current one last). */
export function breadcrumbTrail(body: string): string[] {
  const list = /<nav class="breadcrumbs" aria-label="Breadcrumb"><ol>(.*?)<\/ol><\/nav>/s.exec(body)?.[1] ?? "";
  return [...list.matchAll(/<li>(?:<a [^>]+>|<span aria-current="page">)?([^<]*)/g)].map((m) => m[1] ?? "");
}
