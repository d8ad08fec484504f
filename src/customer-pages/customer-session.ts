// Who is asking, on every hosted page: the page the address names (a workspace, an
// environment, a tool: an unknown one is a 404 page), the web session of that workspace
// environment from its cookie, and a page ticket in the query, moved into a cookie of
// its own until the person answers "Continue as …?" (page-ticket.routes.ts). Each
// workspace environment has a cookie of its own, so that a person may be signed in to
// two vendors' pages in one browser; a session is valid on its own workspace
// environment's pages only, whatever the cookie.
import type { FastifyReply, FastifyRequest } from "fastify";
import { SESSION_MAX_MS } from "../auth/web-session.js";
import type { PersonScope } from "../client/device-session.store.js";
import { parseCookies, serialiseCookie } from "../dashboard/shared/cookies.js";
import { csrfTokenFor, isSecure, PageRefusal } from "../dashboard/shared/security.js";
import type { Env } from "../db/schema.js";
import { type PageLocale, PSEUDO } from "../i18n/locales.js";
import { messagesFor } from "../i18n/messages.js";
import { LANGUAGE_COOKIE, matchLocale, negotiate } from "../i18n/negotiate.js";
import { randomBase62 } from "../ids.js";
import type { Services } from "../services.js";
import { DEFAULT_NAMES, namesForPage, type PageNames } from "../workspaces/translated-names.service.js";
import type { Workspace } from "../workspaces/workspace.types.js";
import { type Brand, brandOf, brandPaths } from "./branding.service.js";
import { authenticateCustomerSession, findPageScope, type PageScope } from "./customer-session.service.js";
import { findHeldPageTicket, HELD_TICKET_TTL_MS, openPageTicket } from "./hand-off.service.js";
import { type CustomerFrame, type CustomerSection, type PageText, pageText } from "./layout.js";

/** The route prefix of every page: `/c/{workspace slug}/{test|live}/{tool id}`. */
export const PAGES = "/c";
export const PAGE_PATH = "/:workspace/:env/:tool";

/**
 * The signed-in person of a page: a PersonScope (toolId is the page's tool; the session is
 * the workspace environment's, for any of its tools), so the client use cases take it as
 * they take a device session. A session from a key-activated device has its `licenceId`
 * and acts for that licence only: as with the device's access token, its holder's `email`
 * must not be shown (the shell shows none).
 */
export interface Customer extends PersonScope {
  sessionId: string;
  /** The device whose page ticket opened or last reached the session (Manage's "This device"), or null. */
  deviceId: string | null;
  /** The form token of the session. */
  csrf: string;
}

/** A page ticket this browser holds, opened from a link, waiting for the person's "Continue as …?". */
export interface HeldTicket {
  /** The held ticket (the cookie's value): what the question's form token derives from. */
  secret: string;
  /** Whom it signs in: an address, or null for a key-activated device's session. */
  email: string | null;
}

interface PageState {
  /** Null when the address names no workspace (the 404 page then has no name to show). */
  workspace: Workspace | null;
  /** The workspace's branding, null when none is set. */
  brand: Brand | null;
  scope: PageScope | null;
  customer: Customer | null;
  /** On a page asked for (GET), the ticket whose question it shows instead, or null. */
  heldTicket: HeldTicket | null;
  /** The vendor's names in the page's language (the defaults until the page's scope is known). */
  names: PageNames;
}

const pages = new WeakMap<FastifyRequest, PageState>();

/** The address of a page of a workspace environment's tool; `page` is e.g. "sign-in", "plans". */
export function pagePath(scope: { workspace: { slug: string }; env: Env; tool: { id: string } }, page: string): string {
  return `${PAGES}/${encodeURIComponent(scope.workspace.slug)}/${scope.env}/${encodeURIComponent(scope.tool.id)}/${page}`;
}

/** The session cookie of a workspace environment; `__Host-` over HTTPS, as the dashboard's. */
function sessionCookieName(request: FastifyRequest, workspaceSlug: string, env: Env): string {
  const name = `warden_customer_${workspaceSlug}_${env}`;
  return isSecure(request) ? `__Host-${name}` : name;
}

const browserCookieName = (request: FastifyRequest) => (isSecure(request) ? "__Host-warden_customer_browser" : "warden_customer_browser");
const BROWSER_SECRET = /^wcb_[0-9A-Za-z]{43}$/;
const BROWSER_COOKIE_SECONDS = 24 * 3600;

/** The browser's pre-session secret (what a sign-in code is bound to, and what sign-in forms' tokens derive from), or null. */
export function browserSecretOf(request: FastifyRequest): string | null {
  const value = parseCookies(request.headers.cookie).get(browserCookieName(request));
  return value !== undefined && BROWSER_SECRET.test(value) ? value : null;
}

/** The browser's pre-session secret, made (and set in a cookie) on its first visit to a sign-in page. */
export function ensureBrowserSecret(request: FastifyRequest, reply: FastifyReply): string {
  const known = browserSecretOf(request);
  if (known) return known;
  const secret = `wcb_${randomBase62(43)}`;
  reply.header("Set-Cookie", serialiseCookie(browserCookieName(request), secret, { secure: isSecure(request), maxAgeSeconds: BROWSER_COOKIE_SECONDS }));
  return secret;
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, scope: PageScope, token: string): void {
  reply.header(
    "Set-Cookie",
    serialiseCookie(sessionCookieName(request, scope.workspace.slug, scope.env), token, { secure: isSecure(request), maxAgeSeconds: SESSION_MAX_MS / 1000 }),
  );
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply, scope: PageScope): void {
  reply.header("Set-Cookie", serialiseCookie(sessionCookieName(request, scope.workspace.slug, scope.env), "", { secure: isSecure(request), maxAgeSeconds: 0 }));
}

/*
 * The ticket a browser holds while it is asked "Continue as …?": HttpOnly, SameSite=Lax
 * (a post from another site does not carry it), and sent only to the pages of the tool
 * whose ticket it is, by its path; hence `__Secure-`, not `__Host-` (which needs Path=/).
 */
const heldTicketCookieName = (request: FastifyRequest) => (isSecure(request) ? "__Secure-warden_customer_ticket" : "warden_customer_ticket");
const heldTicketPath = (scope: PageScope) => pagePath(scope, "").slice(0, -1);

function setHeldTicketCookie(request: FastifyRequest, reply: FastifyReply, scope: PageScope, held: string): void {
  reply.header(
    "Set-Cookie",
    serialiseCookie(heldTicketCookieName(request), held, { secure: isSecure(request), maxAgeSeconds: HELD_TICKET_TTL_MS / 1000, path: heldTicketPath(scope) }),
  );
}

export function clearHeldTicketCookie(request: FastifyRequest, reply: FastifyReply, scope: PageScope): void {
  reply.header("Set-Cookie", serialiseCookie(heldTicketCookieName(request), "", { secure: isSecure(request), maxAgeSeconds: 0, path: heldTicketPath(scope) }));
}

/** The ticket this browser holds for the page's question (its cookie's value, unchecked), or null. */
export const heldTicketSecretOf = (request: FastifyRequest): string | null => parseCookies(request.headers.cookie).get(heldTicketCookieName(request)) ?? null;

/** The request's URL without its `ticket` parameter. */
function withoutTicket(url: string): string {
  const parsed = new URL(url, "http://page.invalid");
  parsed.searchParams.delete("ticket");
  return `${parsed.pathname}${parsed.search}`;
}

/** The page's workspace, tool and branding, kept for the request (null: the address names no page). */
async function readPageScope(services: Services, request: FastifyRequest): Promise<PageState | null> {
  const params = request.params as { workspace?: string; env?: string; tool?: string };
  if (params.workspace === undefined || params.env === undefined || params.tool === undefined) return null;
  const { workspace, scope } = await findPageScope(services, params.workspace, params.env, params.tool);
  const brand = workspace ? await brandOf(services, workspace) : null;
  const state: PageState = { workspace, brand, scope, customer: null, heldTicket: null, names: DEFAULT_NAMES };
  pages.set(request, state);
  return state;
}

/**
 * What a page refused before loadPage ran (a form from another site) needs to say so as
 * the page would: its workspace's default language, the vendor's names and frame. Reads
 * only: nobody's session is looked at for a request refused.
 */
export async function loadPageFrame(services: Services, request: FastifyRequest): Promise<void> {
  if (pages.has(request)) return;
  const state = await readPageScope(services, request);
  if (state?.scope) state.names = await namesForPage(services.answers, services.db, state.scope.workspace.id, pageLocaleOf(request));
}

/**
 * Finds the page and its signed-in person for every request under /c/:workspace/:env/:tool
 * (the plugin's onRequest hook). A GET with `?ticket=` answers a 303 to the same page
 * without it, so the ticket leaves the address bar and the history at once (request logs
 * redact it: http/log-redaction.ts); it signs nobody in there (openPageTicket): unless
 * the browser is signed in as the ticket's person already, the browser now holds a ticket
 * in a cookie, and the page asked for shows the question instead (`heldTicket`).
 */
export async function loadPage(services: Services, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const state = await readPageScope(services, request);
  if (state === null) return;
  const { workspace, scope } = state;
  if (scope === null) {
    const { s: say } = pageTextOf(request);
    throw new PageRefusal(404, say("error.404"), say(workspace ? "error.noToolPages" : "error.noSuchPage"));
  }
  const cookie = parseCookies(request.headers.cookie).get(sessionCookieName(request, scope.workspace.slug, scope.env));
  // The page's language is known now (the branding's default is one of its choices): the vendor's names in it, read beside the session.
  const [names, session] = await Promise.all([
    namesForPage(services.answers, services.db, scope.workspace.id, pageLocaleOf(request)),
    cookie === undefined ? null : authenticateCustomerSession(services, cookie, { workspaceId: scope.workspace.id, env: scope.env }),
  ]);
  state.names = names;
  if (cookie !== undefined && session === null) clearSessionCookie(request, reply, scope);
  if (cookie !== undefined && session !== null) {
    state.customer = {
      workspaceId: scope.workspace.id,
      workspaceSlug: scope.workspace.slug,
      env: scope.env,
      toolId: scope.tool.id,
      personId: session.personId,
      email: session.email,
      licenceId: session.licenceId,
      sessionId: session.id,
      deviceId: session.deviceId,
      csrf: csrfTokenFor(cookie),
    };
  }
  if (request.method !== "GET" && request.method !== "HEAD") return;
  const ticket = (request.query as Record<string, unknown>).ticket;
  if (typeof ticket === "string") {
    const held = await openPageTicket(services, scope, ticket, state.customer);
    if (held !== null) setHeldTicketCookie(request, reply, scope, held);
    return reply.redirect(withoutTicket(request.url), 303);
  }
  const held = heldTicketSecretOf(request);
  if (held === null) return;
  const question = await findHeldPageTicket(services, scope, held);
  if (question === null) clearHeldTicketCookie(request, reply, scope);
  else state.heldTicket = { secret: held, email: question.email };
}

/** The held ticket whose question a page asked for shows instead of itself, or null. */
export const heldTicketOf = (request: FastifyRequest): HeldTicket | null => pages.get(request)?.heldTicket ?? null;

/** The page a request is for (its workspace, environment and tool); only on routes under PAGE_PATH. */
export function pageScopeOf(request: FastifyRequest): PageScope {
  const scope = pages.get(request)?.scope;
  if (!scope) throw new Error("customer page reached without its page scope");
  return scope;
}

/** The workspace the address names, when it names one (for the shell of an error page). */
export const pageWorkspaceOf = (request: FastifyRequest): Workspace | null => pages.get(request)?.workspace ?? null;

/** The vendor's names in the page's language (each falls back to the name as given). */
export const pageNamesOf = (request: FastifyRequest): PageNames => pages.get(request)?.names ?? DEFAULT_NAMES;

/** The page's tool's name in the page's language. */
export function pageToolName(request: FastifyRequest): string {
  const { tool } = pageScopeOf(request);
  return pageNamesOf(request).product("tool", tool.id, tool.name);
}

/** The signed-in person of the page, or null. */
export const customerOf = (request: FastifyRequest): Customer | null => pages.get(request)?.customer ?? null;

/** The signed-in person of a page behind requireCustomer. */
export function signedInCustomer(request: FastifyRequest): Customer {
  const customer = customerOf(request);
  if (!customer) throw new Error("customer page reached without a session: add requireCustomer");
  return customer;
}

/** The session's secret a signed-in page's forms derive their token from (the cookie's value), or null. */
export function sessionSecretOf(request: FastifyRequest): string | null {
  const scope = pages.get(request)?.scope;
  if (!scope || !customerOf(request)) return null;
  return parseCookies(request.headers.cookie).get(sessionCookieName(request, scope.workspace.slug, scope.env)) ?? null;
}

/**
 * A preHandler for pages behind sign-in: without a session, a 303 to the page's sign-in,
 * which comes back here (a GET page; a form posted is sent back to its page's GET).
 */
export async function requireCustomer(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (customerOf(request)) return;
  const scope = pageScopeOf(request);
  // A form's action is under its page's path (/c/{workspace}/{env}/{tool}/{page}/…): after sign-in, the page again.
  const back = request.method === "GET" ? withoutTicket(request.url) : new URL(request.url, "http://page.invalid").pathname.split("/").slice(0, 6).join("/");
  return reply.redirect(`${pagePath(scope, "sign-in")}?return=${encodeURIComponent(back)}`, 303);
}

/**
 * Where a sign-in may send the browser back to: a page of the same workspace environment,
 * by path (never another host, never a path that climbs out with `..` or `//`).
 */
export function safeReturn(scope: PageScope, wanted: string | undefined): string | null {
  if (!wanted) return null;
  const prefix = `${PAGES}/${encodeURIComponent(scope.workspace.slug)}/${scope.env}/`;
  if (!wanted.startsWith(prefix) || /\/\/|\\|\/\.\.?(\/|$|\?)|[\0-\x1f]/.test(wanted)) return null;
  return wanted;
}

const locales = new WeakMap<FastifyRequest, PageLocale>();
const LANGUAGE_COOKIE_SECONDS = 365 * 24 * 3600;

/**
 * The page's language (../i18n/negotiate.ts): `?lang=`, the picker's cookie,
 * Accept-Language, the workspace's default, English; worked out once per request.
 */
export function pageLocaleOf(request: FastifyRequest): PageLocale {
  let locale = locales.get(request);
  if (locale === undefined) {
    const lang = (request.query as Record<string, unknown> | undefined)?.lang;
    locale = negotiate({
      query: typeof lang === "string" ? lang : undefined,
      cookie: parseCookies(request.headers.cookie).get(LANGUAGE_COOKIE),
      acceptLanguage: request.headers["accept-language"],
      // The branding is read before any page's words (loadPage), so its default is known here.
      workspaceDefault: pages.get(request)?.brand?.language ?? null,
    });
    locales.set(request, locale);
  }
  return locale;
}

/** The page's words, in its language. */
export const pageTextOf = (request: FastifyRequest): PageText => pageText(messagesFor(pageLocaleOf(request)));

/**
 * Says the page's language (`Content-Language`) and, when `?lang=` names one Warden
 * speaks, keeps it in the picker's cookie for the pages after (the extension passes it on
 * the first page only). Not HttpOnly-sensitive: it holds a language tag, nothing else.
 */
export function keepLanguage(request: FastifyRequest, reply: FastifyReply): void {
  const locale = pageLocaleOf(request);
  reply.header("Content-Language", messagesFor(locale).lang);
  const lang = (request.query as Record<string, unknown> | undefined)?.lang;
  const asked = typeof lang === "string" ? matchLocale(lang) : null;
  if (asked === null || asked === parseCookies(request.headers.cookie).get(LANGUAGE_COOKIE)) return;
  // The pseudo-locale is asked for each time, never kept: a tester's browser is not left bracketed.
  if (asked === PSEUDO) return;
  reply.header("Set-Cookie", serialiseCookie(LANGUAGE_COOKIE, asked, { secure: isSecure(request), maxAgeSeconds: LANGUAGE_COOKIE_SECONDS, path: PAGES }));
}

// Segments of unreserved characters, none starting with a dot: what URL would give back unchanged.
const PLAIN_PATH = /^(\/[A-Za-z0-9_~-][A-Za-z0-9._~-]*)+$/;

/** The page's address for the language picker: its path, and its query without `lang` (a sign-in keeps its hand-off). */
function hereOf(request: FastifyRequest): CustomerFrame["here"] {
  // A plain path without a query (most pages) is its own address: no URL to parse.
  if (PLAIN_PATH.test(request.url)) return { path: request.url, query: [] };
  const url = new URL(request.url, "http://page.invalid");
  url.searchParams.delete("lang");
  return { path: url.pathname, query: [...url.searchParams] };
}

/** The shell's frame of a page (its workspace, environment and tool, who is signed in, its words). */
export function customerFrame(request: FastifyRequest, section?: CustomerSection): CustomerFrame {
  const state = pages.get(request);
  const scope = state?.scope ?? null;
  const customer = state?.customer ?? null;
  return {
    workspaceName: state?.workspace?.name ?? null,
    env: scope?.env ?? null,
    base: scope ? pagePath(scope, "").slice(0, -1) : null,
    customer: customer ? { email: customer.licenceId === null ? customer.email : null, csrf: customer.csrf } : null,
    ...(section ? { section } : {}),
    ...(state?.workspace && state.brand ? { brand: brandPaths(state.workspace.slug, state.brand) } : {}),
    text: pageTextOf(request),
    here: hereOf(request),
  };
}
