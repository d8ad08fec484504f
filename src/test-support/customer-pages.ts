// Drives the hosted customer pages in process as a browser would (TestBrowser: cookies,
// form tokens), and an extension's side of the hand-off (PKCE verifier and challenge).
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import type { Env } from "../db/schema.js";
import { randomBase62 } from "../ids.js";
import { readCode, type TestBrowser } from "./dashboard.js";
import type { Workspace } from "./harness.js";
import { checkAgainstOpenApi } from "./openapi-check.js";

/** The base of a workspace environment's tool pages: `/c/{slug}/{env}/{tool}`. */
export const pagesOf = (ws: Workspace, env: Env = "test", tool = ws.tool) => `/c/${ws.slug}/${env}/${tool}`;

/** Signs `email` in on the pages under `base` with the mailed code; answers the final 303 (and its `query` carried through). */
export async function signInOnPages(browser: TestBrowser, dataDir: string, base: string, email: string, query = ""): Promise<LightMyRequestResponse> {
  const opened = await browser.get(`${base}/sign-in${query}`);
  if (opened.statusCode !== 200) throw new Error(`sign-in page answered ${opened.statusCode}: ${opened.body}`);
  const hidden = Object.fromEntries(
    [...opened.body.matchAll(/<input type="hidden" name="(\w+)" value="([^"]*)">/g)].map((m) => [m[1], m[2]]).filter(([name]) => name !== "_csrf"),
  );
  const unescaped = Object.fromEntries(
    Object.entries(hidden).map(([name, value]) => [
      name,
      String(value).replaceAll("&amp;", "&").replaceAll("&quot;", '"').replaceAll("&#39;", "'").replaceAll("&lt;", "<").replaceAll("&gt;", ">"),
    ]),
  );
  const asked = await browser.post(`${base}/sign-in`, { ...unescaped, email });
  if (asked.statusCode !== 303) throw new Error(`sign-in answered ${asked.statusCode}: ${asked.body}`);
  await browser.get(asked.headers.location as string);
  const verified = await browser.post(`${base}/sign-in/code`, { ...unescaped, code: await readCode(dataDir, email) });
  if (verified.statusCode !== 303) throw new Error(`code answered ${verified.statusCode}: ${verified.body}`);
  return verified;
}

/** An extension's PKCE pair (RFC 7636, S256). */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBase62(64);
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

/** The query an extension opens the sign-in page with, for a Chrome identity redirect. */
export function handOffQuery(
  challenge: string,
  state = `st-${randomBase62(12)}`,
  redirect = "https://abcdefghijklmnopabcdefghijklmnop.chromiumapp.org/cb",
): string {
  return `?${new URLSearchParams({ redirect_uri: redirect, state, code_challenge: challenge, code_challenge_method: "S256" })}`;
}

/** Signs `email` in through the client API as an extension does (code read from the outbox); answers the device token. */
export async function signedInDevice(app: FastifyInstance, dataDir: string, ws: Workspace, email: string): Promise<string> {
  const target = { workspace: ws.slug, tool: ws.tool, email, env: "test" };
  const asked = await app.inject({ method: "POST", url: "/api/client/v1/sign-in", payload: target });
  assert.equal(asked.statusCode, 200, asked.body);
  const code = await readCode(dataDir, email);
  const device = { name: "Work laptop", platform: "chrome-mac" };
  const verified = await app.inject({ method: "POST", url: "/api/client/v1/sign-in/verify", payload: { ...target, code, device } });
  assert.equal(verified.statusCode, 200, verified.body);
  return verified.json().token as string;
}

/** Asks a page ticket for the device of `token`, as the extension does (the answer checked against the OpenAPI document). */
export async function ticketFor(app: FastifyInstance, tool: string, token: string): Promise<LightMyRequestResponse> {
  const url = `/api/client/v1/tools/${tool}/page-tickets`;
  const answer = await app.inject({ method: "POST", url, headers: { authorization: `Bearer ${token}` } });
  await checkAgainstOpenApi(app, "POST", url, answer);
  return answer;
}

/** Answers the question "Continue as …?" on its page (`continue` or `stay`) with its form's token; answers the 303. */
export async function answerTicketQuestion(browser: TestBrowser, question: string, answer: "continue" | "stay"): Promise<LightMyRequestResponse> {
  const form =
    /<form method="post" action="([^"]+\/ticket)" class="stack">\n<input type="hidden" name="_csrf" value="([0-9a-f]+)">\n<input type="hidden" name="return" value="([^"]*)">/.exec(
      question,
    );
  assert.ok(form, "the page asks whether to continue");
  const [, action = "", csrf = "", back = ""] = form;
  const answered = await browser.post(action, { _csrf: csrf, answer, return: back.replaceAll("&amp;", "&") });
  assert.equal(answered.statusCode, 303, answered.body);
  return answered;
}

/**
 * Opens a page ticket's link as the person does and answers its question "Continue as …?"
 * with Continue; answers the question's page and the page it then lands on.
 */
export async function continueWithTicket(browser: TestBrowser, link: string): Promise<{ question: LightMyRequestResponse; landed: LightMyRequestResponse }> {
  const opened = await browser.get(link);
  assert.equal(opened.statusCode, 303, opened.body);
  const question = await browser.get(opened.headers.location as string);
  assert.equal(question.statusCode, 200, question.body);
  const answered = await answerTicketQuestion(browser, question.body, "continue");
  return { question, landed: await browser.get(answered.headers.location as string) };
}
