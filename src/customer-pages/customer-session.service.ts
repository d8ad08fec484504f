// The use cases behind the hosted pages' sign-in: the page a request is for, a code
// mailed and accepted as the client API's are (same limits, same outbox), and the web
// session it opens (idle 12 h, at most 7 days, ended by Sign out).
import { sha256 } from "../auth/mailed-code.js";
import { sessionOver, touchDue } from "../auth/web-session.js";
import { acceptSignInCode, findPendingSignIn, mailSignInCode, signInTarget, throwCodeRefusal } from "../client/client.service.js";
import { syncCustomer, toolScope } from "../customers/customer.service.js";
import type { Executor } from "../db/database.js";
import type { Env } from "../db/schema.js";
import type { PageLocale } from "../i18n/locales.js";
import { randomBase62 } from "../ids.js";
import type { Services } from "../services.js";
import { findTool, findWorkspaceBySlug } from "../workspaces/workspace.store.js";
import type { Tool, Workspace } from "../workspaces/workspace.types.js";
import { type CustomerSession, endCustomerSessionRow, findCustomerSession, insertCustomerSession, touchCustomerSession } from "./customer-session.store.js";

// `wcs_` + 43 base62 characters: about 256 random bits, so SHA-256 is enough to store it.
const SESSION_TOKEN = /^wcs_[0-9A-Za-z]{43}$/;

/** What a page address names: a workspace, one of its environments, one of its tools. */
export interface PageScope {
  workspace: Workspace;
  env: Env;
  tool: Tool;
}

/** The workspace of a page address (null when none), and the page's scope when its environment and tool exist too. */
export async function findPageScope(
  services: Services,
  slug: string,
  env: string,
  toolId: string,
): Promise<{ workspace: Workspace | null; scope: PageScope | null }> {
  const workspace = await findWorkspaceBySlug(services.db, slug);
  if (!workspace || (env !== "test" && env !== "live")) return { workspace, scope: null };
  const tool = await findTool(services.db, workspace.id, toolId);
  return { workspace, scope: tool ? { workspace, env, tool } : null };
}

/**
 * A new web session of the person (for one licence only, when it came from a key-activated
 * device), with the device whose page ticket opened it (none for a sign-in by code); answers its token.
 */
export async function openCustomerSession(
  trx: Executor,
  input: { workspaceId: string; env: Env; personId: string; licenceId: string | null; deviceId?: string | null; now: number },
): Promise<string> {
  const token = `wcs_${randomBase62(43)}`;
  await insertCustomerSession(trx, { id: `cs_${randomBase62(24)}`, ...input, deviceId: input.deviceId ?? null, tokenHash: sha256(token) });
  return token;
}

/**
 * The open session of a token, in the workspace environment of the page, or null: a
 * session of another workspace or environment is none here, and an idle or too old one
 * is ended. Seeing it keeps it alive (to the minute).
 */
export async function authenticateCustomerSession(
  services: Services,
  token: string,
  scope: { workspaceId: string; env: Env },
): Promise<CustomerSession | null> {
  if (!SESSION_TOKEN.test(token)) return null;
  const { db, clock } = services;
  const session = await findCustomerSession(db, sha256(token));
  if (!session || session.workspaceId !== scope.workspaceId || session.env !== scope.env) return null;
  const now = clock.now();
  if (sessionOver(session, now)) {
    await endCustomerSessionRow(db, session.id, now);
    return null;
  }
  if (touchDue(session, now)) await touchCustomerSession(db, session.id, now);
  return session;
}

export async function endCustomerSession(services: Services, sessionId: string): Promise<void> {
  await endCustomerSessionRow(services.db, sessionId, services.clock.now());
}

/** Mails a code for the page's tool to `email`, bound to the browser that asked (its pre-session secret). */
export async function requestPageSignInCode(
  services: Services,
  scope: PageScope,
  input: { email: string; browser: string; source: string; locale: PageLocale; toolName: string },
) {
  const target = signInTarget(scope.workspace.id, scope.env, { id: scope.tool.id, name: input.toolName }, input.email.trim());
  // The mail speaks the language of the page that asked for it, and names the tool as that page does.
  return mailSignInCode(services, target, { source: input.source, browserHash: sha256(input.browser), locale: input.locale });
}

/** The address and expiry of the code this browser asked for on the workspace environment's pages, or null. */
export function findPendingPageSignIn(services: Services, scope: PageScope, browser: string) {
  return findPendingSignIn(services, { workspaceId: scope.workspace.id, env: scope.env, browserHash: sha256(browser) });
}

/** Accepts the code this browser asked for and opens a web session of its person; a wrong or spent code is a field error. */
export async function verifyPageSignInCode(services: Services, scope: PageScope, input: { browser: string; code: string }) {
  const { db, clock, limits } = services;
  const now = clock.now();
  const { workspace, env, tool } = scope;
  const outcome = await db.transaction().execute(async (trx) => {
    const person = await acceptSignInCode(trx, limits, { workspaceId: workspace.id, env, browserHash: sha256(input.browser) }, input.code.trim(), now);
    if (typeof person === "string") return person;
    // As a sign-in in the extension: the person becomes a customer of the tool.
    await syncCustomer(trx, toolScope(workspace.id, env, tool.id), person.id, now, now);
    const token = await openCustomerSession(trx, { workspaceId: workspace.id, env, personId: person.id, licenceId: null, now });
    return { token, personId: person.id, email: person.email };
  });
  return throwCodeRefusal(outcome);
}
