// Sign in on the hosted pages: an address, a code mailed to it (bound to this browser),
// then a web session. When an extension opened the page with a hand-off request
// (redirect_uri, state, code_challenge: OAuth 2.0 code with PKCE), the signed-in person is
// sent back to the extension with a one-time code in the redirect's fragment, which the
// extension exchanges for its device session (POST …/sign-in/exchange, client API).
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { sendPage, setRetryAfter } from "../dashboard/shared/page.js";
import { allowFormTargets, csrfTokenFor, formField, PageRefusal } from "../dashboard/shared/security.js";
import { ApiError } from "../errors/errors.js";
import { CODE_FAILURES_PER_DAY } from "../limits/limits.service.js";
import type { Services } from "../services.js";
import {
  browserSecretOf,
  customerFrame,
  customerOf,
  ensureBrowserSecret,
  PAGE_PATH,
  pageLocaleOf,
  pagePath,
  pageScopeOf,
  pageTextOf,
  pageToolName,
  safeReturn,
  setSessionCookie,
  signedInCustomer,
} from "./customer-session.js";
import { findPendingPageSignIn, type PageScope, requestPageSignInCode, verifyPageSignInCode } from "./customer-session.service.js";
import { issueHandOffCode } from "./hand-off.service.js";
import type { PageText } from "./layout.js";
import { type Carried, codeView, continueView, type HandOffView, signInView } from "./sign-in.views.js";

/** An extension's request to be handed the session, as its redirect_uri, state and PKCE challenge. */
interface HandOff {
  redirectUri: string;
  /** Where the redirect leads, for the page's form-action: `scheme://host`. */
  origin: string;
  state: string;
  codeChallenge: string;
}

/*
 * Redirects the hand-off goes to: an extension's own, and nothing else (docs/decisions.md,
 * "Hosted pages"). chrome.identity.getRedirectURL() (32 letters a-p: Chrome's extension
 * id alphabet), Firefox's identity redirect (a hex hash of the add-on's id), or a page of
 * the extension itself.
 */
const EXTENSION_REDIRECTS = [
  /^https:\/\/[a-p]{32}\.chromiumapp\.org\//,
  /^https:\/\/[0-9a-f]{8,64}\.extensions\.allizom\.org\//,
  /^chrome-extension:\/\/[a-p]{32}\//,
  /^moz-extension:\/\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\//,
];
const CODE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const STATE = /^[\x21-\x7e]{1,512}$/;

const badHandOff = (text: PageText, what: "signIn.badRedirect" | "signIn.badState" | "signIn.badChallenge") =>
  new PageRefusal(400, text.s("signIn.badLink"), text.s(what));

/** The hand-off request of a page's query or form, null when there is none; a malformed one is refused, never followed. */
function handOffOf(text: PageText, fields: Record<string, unknown>): HandOff | null {
  const field = (name: string) => (typeof fields[name] === "string" ? (fields[name] as string) : undefined);
  const redirectUri = field("redirect_uri");
  if (redirectUri === undefined) return null;
  if (redirectUri.length > 2048 || redirectUri.includes("#") || !EXTENSION_REDIRECTS.some((pattern) => pattern.test(redirectUri))) {
    throw badHandOff(text, "signIn.badRedirect");
  }
  const state = field("state");
  if (state === undefined || !STATE.test(state)) throw badHandOff(text, "signIn.badState");
  const codeChallenge = field("code_challenge");
  if (codeChallenge === undefined || !CODE_CHALLENGE.test(codeChallenge) || field("code_challenge_method") !== "S256") {
    throw badHandOff(text, "signIn.badChallenge");
  }
  const url = new URL(redirectUri);
  return { redirectUri, origin: `${url.protocol}//${url.host}`, state, codeChallenge };
}

/** What each step of the sign-in carries to the next: the hand-off request, or where to return to. */
function carriedOf(scope: PageScope, fields: Record<string, unknown>, handOff: HandOff | null): Carried {
  if (handOff) {
    return { redirect_uri: handOff.redirectUri, state: handOff.state, code_challenge: handOff.codeChallenge, code_challenge_method: "S256" };
  }
  const back = safeReturn(scope, typeof fields.return === "string" ? fields.return : undefined);
  return back ? { return: back } : {};
}

/** The extension's id as its store and the browser's extension page show it: the redirect's host, without Chrome's or Firefox's identity domain. */
const handOffView = (handOff: HandOff | null): HandOffView | null =>
  handOff ? { extension: new URL(handOff.redirectUri).host.replace(/\.(chromiumapp\.org|extensions\.allizom\.org)$/, "") } : null;

/** The address of the next step with what it carries. */
const stepPath = (scope: PageScope, step: string, carried: Carried) => {
  const query = new URLSearchParams(carried).toString();
  return `${pagePath(scope, step)}${query ? `?${query}` : ""}`;
};

/** Where a sign-in ends: the extension (with a one-time code in the fragment, which no server sees), or the page to return to. */
async function finishSignIn(services: Services, reply: FastifyReply, scope: PageScope, personId: string, carried: Carried, handOff: HandOff | null) {
  if (handOff) {
    const code = await issueHandOffCode(services, scope, { personId, codeChallenge: handOff.codeChallenge });
    return reply.redirect(`${handOff.redirectUri}#${new URLSearchParams({ code, state: handOff.state })}`, 303);
  }
  return reply.redirect(carried.return ?? pagePath(scope, "manage"), 303);
}

/**
 * A refusal of what was typed, shown on the form with its status: the use case's own
 * words (400), or until when a limit holds (429, with `Retry-After` as the API's).
 */
function typedError(services: Services, text: PageText, reply: FastifyReply, error: unknown): { status: 400 | 429; message: string } | null {
  if (!(error instanceof ApiError)) return null;
  if (error.code === "invalid_parameter") return { status: 400, message: codeRefusalWords(text, error) };
  if (error.code !== "rate_limited" || !error.rateLimit) return null;
  setRetryAfter(reply, error.rateLimit.resetAt, services.clock.now());
  const until = text.messages.dateTime(error.rateLimit.resetAt);
  // Past the ceiling of wrong codes no code works, however new: asking again would not help.
  if (error.limit === "customer-code-failures") {
    return { status: 429, message: text.s("signIn.tooManyFailures", { limit: CODE_FAILURES_PER_DAY, until }) };
  }
  return { status: 429, message: text.s("signIn.tooManyCodes", { until }) };
}

/**
 * The sign-in's refusals of what was typed, in the page's words: the address's shape,
 * no code waiting, a wrong code (client.service.ts's three, told apart by field and
 * message). Any other is the use case's own words.
 */
function codeRefusalWords(text: PageText, error: ApiError): string {
  if (error.param === "email") return text.s("signIn.badEmail");
  if (error.param === "code") return text.s(error.message.startsWith("No code") ? "signIn.noCode" : "signIn.wrongCode");
  return error.message;
}

/** Sign-in forms carry a token of the browser's pre-session secret (checked by the plugin); the secret itself is needed here. */
function browserSecret(request: FastifyRequest): string {
  const secret = browserSecretOf(request);
  if (secret === null) {
    const text = pageTextOf(request);
    throw new PageRefusal(403, text.s("error.formExpired"), text.s("error.formExpiredText"));
  }
  return secret;
}

export async function signInRoutes(app: FastifyInstance, options: { services: Services }): Promise<void> {
  const { services } = options;

  const pageOf = (request: FastifyRequest, fields: Record<string, unknown>) => {
    const scope = pageScopeOf(request);
    const handOff = handOffOf(pageTextOf(request), fields);
    return { scope, handOff, carried: carriedOf(scope, fields, handOff) };
  };
  const view = (request: FastifyRequest, reply: FastifyReply, scope: PageScope, carried: Carried, handOff: HandOff | null, csrf: string) => {
    // A form that leads to the extension's redirect must be allowed to: form-action covers where a post redirects.
    if (handOff) allowFormTargets(reply, [handOff.origin]);
    return {
      frame: customerFrame(request, "sign-in"),
      toolName: pageToolName(request),
      workspaceName: scope.workspace.name,
      csrf,
      carried,
      handOff: handOffView(handOff),
    };
  };

  app.get(`${PAGE_PATH}/sign-in`, async (request, reply) => {
    const query = request.query as Record<string, unknown>;
    const { scope, handOff, carried } = pageOf(request, query);
    const customer = customerOf(request);
    if (customer && customer.licenceId === null && query.other === undefined) {
      if (handOff) return sendPage(reply, 200, continueView({ ...view(request, reply, scope, carried, handOff, customer.csrf), email: customer.email }));
      return reply.redirect(carried.return ?? pagePath(scope, "manage"), 303);
    }
    const secret = ensureBrowserSecret(request, reply);
    const message = query.signed_out !== undefined ? pageTextOf(request).s("signIn.signedOut") : undefined;
    return sendPage(reply, 200, signInView({ ...view(request, reply, scope, carried, handOff, csrfTokenFor(secret)), ...(message ? { message } : {}) }));
  });

  app.post(`${PAGE_PATH}/sign-in`, async (request, reply) => {
    const { scope, handOff, carried } = pageOf(request, request.body as Record<string, unknown>);
    const secret = browserSecret(request);
    const email = formField(request, "email");
    try {
      await requestPageSignInCode(services, scope, {
        email,
        browser: secret,
        source: request.ip,
        locale: pageLocaleOf(request),
        toolName: pageToolName(request),
      });
    } catch (error) {
      const refusal = typedError(services, pageTextOf(request), reply, error);
      if (refusal === null) throw error;
      return sendPage(
        reply,
        refusal.status,
        signInView({ ...view(request, reply, scope, carried, handOff, csrfTokenFor(secret)), email, error: refusal.message }),
      );
    }
    return reply.redirect(stepPath(scope, "sign-in/code", carried), 303);
  });

  app.get(`${PAGE_PATH}/sign-in/code`, async (request, reply) => {
    const { scope, handOff, carried } = pageOf(request, request.query as Record<string, unknown>);
    const secret = browserSecretOf(request);
    const pending = secret === null ? null : await findPendingPageSignIn(services, scope, secret);
    if (secret === null || pending === null) return reply.redirect(stepPath(scope, "sign-in", carried), 303);
    return sendPage(reply, 200, codeView({ ...view(request, reply, scope, carried, handOff, csrfTokenFor(secret)), ...pending }));
  });

  app.post(`${PAGE_PATH}/sign-in/code`, async (request, reply) => {
    const { scope, handOff, carried } = pageOf(request, request.body as Record<string, unknown>);
    const secret = browserSecret(request);
    let signedIn: Awaited<ReturnType<typeof verifyPageSignInCode>>;
    try {
      signedIn = await verifyPageSignInCode(services, scope, { browser: secret, code: formField(request, "code") });
    } catch (error) {
      const refusal = typedError(services, pageTextOf(request), reply, error);
      if (refusal === null) throw error;
      const pending = await findPendingPageSignIn(services, scope, secret);
      const page = view(request, reply, scope, carried, handOff, csrfTokenFor(secret));
      if (pending === null) return sendPage(reply, refusal.status, signInView({ ...page, error: refusal.message }));
      return sendPage(reply, refusal.status, codeView({ ...page, ...pending, error: refusal.message }));
    }
    setSessionCookie(request, reply, scope, signedIn.token);
    return finishSignIn(services, reply, scope, signedIn.personId, carried, handOff);
  });

  // Signed in already: the person confirms that this extension may have a session.
  app.post(`${PAGE_PATH}/sign-in/continue`, async (request, reply) => {
    const { scope, handOff, carried } = pageOf(request, request.body as Record<string, unknown>);
    const customer = customerOf(request);
    if (!customer || customer.licenceId !== null || !handOff) return reply.redirect(stepPath(scope, "sign-in", carried), 303);
    return finishSignIn(services, reply, scope, signedInCustomer(request).personId, carried, handOff);
  });
}
