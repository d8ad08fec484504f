// What every dashboard answer carries, and the checks on every state-changing request.
import { hash, timingSafeEqual } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

// No inline script or style anywhere, so the policy can forbid both; forms post only
// here; no framing (clickjacking); no <base> rewriting. No upgrade-insecure-requests:
// a plain-http deployment (localhost) would break with it.
const policyWithFormTargets = (targets: readonly string[]) =>
  `default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; form-action ${["'self'", ...targets].join(" ")}; frame-ancestors 'none'; base-uri 'none'; object-src 'none'`;
const CONTENT_SECURITY_POLICY = policyWithFormTargets([]);

/** Headers of every dashboard answer, pages and errors alike. */
export function addPageHeaders(reply: FastifyReply): void {
  reply.header("Content-Security-Policy", CONTENT_SECURITY_POLICY);
  // Pages show keys and customers: no cache may keep them, not even the browser's back button.
  reply.header("Cache-Control", "no-store");
  reply.header("X-Content-Type-Options", "nosniff");
  reply.header("X-Frame-Options", "DENY");
  // A sign-in link carries its token in the path: never send it on to another site. Not
  // no-referrer: under it, browsers send "Origin: null" on the dashboard's own form posts.
  reply.header("Referrer-Policy", "same-origin");
}

/**
 * Lets this page's forms lead to other origins: browsers apply form-action to where a
 * post redirects too, so a form answered by a 303 to an extension's redirect or to Stripe
 * Checkout needs that origin named. Each origin is one the server chose, never typed.
 */
export function allowFormTargets(reply: FastifyReply, origins: readonly string[]): void {
  reply.header("Content-Security-Policy", policyWithFormTargets(origins));
}

/** An answer the dashboard refuses with an HTML error page (not an API error: nothing here is JSON). */
export class PageRefusal extends Error {
  constructor(
    readonly status: 400 | 403 | 404,
    readonly title: string,
    message: string,
    /** Which of the shared refusals this is, for a page that says it in its own words (the hosted pages, in the buyer's language). */
    readonly reason?: "cross-site" | "form-expired",
  ) {
    super(message);
  }
}

export const isSecure = (request: FastifyRequest) => request.protocol === "https";

/** Cookie names: with the `__Host-` prefix over HTTPS (the browser then insists on Secure, Path=/ and no Domain). */
export function cookieNames(request: FastifyRequest): { session: string; browser: string; next: string } {
  return isSecure(request)
    ? { session: "__Host-warden_session", browser: "__Host-warden_browser", next: "__Host-warden_next" }
    : { session: "warden_session", browser: "warden_browser", next: "warden_next" };
}

/**
 * The form token of a session (or, before sign-in, of the browser's pre-session secret):
 * derived from the cookie's secret, which a cross-site page cannot read, so it need not
 * be stored. Distinct from the cookie itself, which stays HttpOnly.
 */
export function csrfTokenFor(secret: string): string {
  return hash("sha256", `warden-dashboard-form:${secret}`, "hex");
}

/**
 * Refuses a state-changing request sent from another site, before its body is read:
 * browsers say where a request comes from (Sec-Fetch-Site, Origin), and only this
 * origin's pages may post here. The form token (checkFormToken) backs this up for
 * browsers that send neither.
 */
export function refuseCrossSite(request: FastifyRequest): void {
  const site = request.headers["sec-fetch-site"];
  if (site !== undefined && site !== "same-origin") {
    throw new PageRefusal(403, "Request refused", "This form was sent from another site. Open the dashboard and try again there.", "cross-site");
  }
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== `${request.protocol}://${request.host}`) {
    throw new PageRefusal(403, "Request refused", "This form was sent from another site. Open the dashboard and try again there.", "cross-site");
  }
}

/** Checks the form's token against the secret it must derive from; runs after the body is parsed. */
export function checkFormToken(request: FastifyRequest, secret: string | null): void {
  if (secret === null || !formTokenMatches(request, secret)) {
    throw new PageRefusal(
      403,
      "Form expired",
      "This form is out of date or was not sent from the dashboard. Go back, reload the page and try again.",
      "form-expired",
    );
  }
}

/** Whether the form's token derives from `secret`. */
export function formTokenMatches(request: FastifyRequest, secret: string): boolean {
  const sent = formField(request, "_csrf");
  const expected = csrfTokenFor(secret);
  return sent.length === expected.length && timingSafeEqual(Buffer.from(sent), Buffer.from(expected));
}

/** A field of a posted form, as text ("" when absent). */
export function formField(request: FastifyRequest, name: string): string {
  const body = request.body;
  if (body === null || typeof body !== "object") return "";
  const value = (body as Record<string, unknown>)[name];
  return typeof value === "string" ? value : "";
}

// A form of the dashboard is a few fields; anything near this is not one.
const FORM_LIMIT_BYTES = 8 * 1024;

/** The dashboard's forms are urlencoded and nothing else: JSON and other bodies are refused (415). */
export function acceptFormsOnly(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string", bodyLimit: FORM_LIMIT_BYTES }, (_request, body, done) => {
    const fields: Record<string, string> = {};
    // Repeated fields keep their first value; there is no form here that sends a list.
    for (const [name, value] of new URLSearchParams(String(body))) if (!(name in fields)) fields[name] = value;
    done(null, fields);
  });
}

/**
 * What a plugin of pages (the dashboard, the customer's hosted pages) sets up before its
 * routes: pages are not part of the API, so none is in the OpenAPI document; forms are the
 * only bodies; every answer carries the page headers; a state-changing request from
 * another site is refused before anything else runs.
 */
export function servePages(app: FastifyInstance): void {
  app.addHook("onRoute", (route) => {
    route.schema = { ...route.schema, hide: true };
  });
  acceptFormsOnly(app);
  app.addHook("onRequest", async (request, reply) => {
    addPageHeaders(reply);
    if (request.method !== "GET" && request.method !== "HEAD") refuseCrossSite(request);
  });
}
