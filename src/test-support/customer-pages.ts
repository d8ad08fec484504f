// Drives the hosted customer pages in process as a browser would (TestBrowser: cookies,
// form tokens), and an extension's side of the hand-off (PKCE verifier and challenge).
import { createHash } from "node:crypto";
import type { LightMyRequestResponse } from "fastify";
import type { Env } from "../db/schema.js";
import { randomBase62 } from "../ids.js";
import { readCode, type TestBrowser } from "./dashboard.js";
import type { Workspace } from "./harness.js";

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
  redirect = `https://${"abcdefghijklmnopabcdefghijklmnop"}.chromiumapp.org/cb`,
): string {
  return `?${new URLSearchParams({ redirect_uri: redirect, state, code_challenge: challenge, code_challenge_method: "S256" })}`;
}
