// Signing in and out: the address form, the code form, and the operator's one-time link.
// Before sign-in, a browser holds a random pre-session secret in a cookie: a code is
// bound to it (so a code read off someone's screen is useless elsewhere), and it is what
// these forms' tokens derive from.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { SESSION_MAX_MS } from "../../auth/web-session.js";
import { ApiError } from "../../errors/errors.js";
import { originOf } from "../../http/request-origin.js";
import { randomBase62 } from "../../ids.js";
import {
  authenticateOwnerSession,
  findOwnerLoginLink,
  findPendingSignIn,
  type OpenedSession,
  redeemOwnerLoginLink,
  requestOwnerSignInCode,
  verifyOwnerSignInCode,
} from "../../owners/owner-sign-in.service.js";
import type { Services } from "../../services.js";
import { parseCookies, serialiseCookie } from "../shared/cookies.js";
import { DASHBOARD } from "../shared/layout.js";
import { isDashboardPath, sessionTokenOf } from "../shared/owner-context.js";
import { sendPage } from "../shared/page.js";
import { checkFormToken, cookieNames, csrfTokenFor, formField, isSecure } from "../shared/security.js";
import { codeView, linkView, signInView, spentLinkView } from "./sign-in.views.js";

const BROWSER_SECRET = /^wdb_[0-9A-Za-z]{43}$/;
const BROWSER_COOKIE_SECONDS = 24 * 3600;

function browserSecretOf(request: FastifyRequest): string | null {
  const value = parseCookies(request.headers.cookie).get(cookieNames(request).browser);
  return value !== undefined && BROWSER_SECRET.test(value) ? value : null;
}

/** The browser's pre-session secret, made (and set in a cookie) on its first visit. */
function ensureBrowserSecret(request: FastifyRequest, reply: FastifyReply): string {
  const known = browserSecretOf(request);
  if (known) return known;
  const secret = `wdb_${randomBase62(43)}`;
  reply.header("Set-Cookie", serialiseCookie(cookieNames(request).browser, secret, { secure: isSecure(request), maxAgeSeconds: BROWSER_COOKIE_SECONDS }));
  return secret;
}

/** The dashboard page asked for before sign-in (owner-context.ts remembers it), if it is one. */
function nextPageOf(request: FastifyRequest): string | null {
  const value = parseCookies(request.headers.cookie).get(cookieNames(request).next);
  if (value === undefined) return null;
  try {
    const path = decodeURIComponent(value);
    return isDashboardPath(path) ? path : null;
  } catch {
    return null;
  }
}

function startSession(request: FastifyRequest, reply: FastifyReply, opened: OpenedSession) {
  const secure = isSecure(request);
  const names = cookieNames(request);
  const next = nextPageOf(request);
  reply.header("Set-Cookie", [
    serialiseCookie(names.session, opened.token, { secure, maxAgeSeconds: SESSION_MAX_MS / 1000 }),
    // The pre-session secret has done its work; the next sign-in starts afresh.
    serialiseCookie(names.browser, "", { secure, maxAgeSeconds: 0 }),
    serialiseCookie(names.next, "", { secure, maxAgeSeconds: 0 }),
  ]);
  return reply.redirect(next ?? DASHBOARD, 303);
}

// A refusal on a field is shown on the form again; anything else is an error page.
const fieldError = (error: unknown) => (error instanceof ApiError && error.code === "invalid_parameter" ? error.message : null);

/** Forms before sign-in carry a token derived from the browser's secret; checked once the body is parsed. */
function checkBrowserForm(request: FastifyRequest): string {
  const secret = browserSecretOf(request);
  checkFormToken(request, secret);
  return secret as string;
}

export async function signInRoutes(app: FastifyInstance, options: { services: Services }): Promise<void> {
  const { services } = options;

  app.get("/sign-in", async (request, reply) => {
    const token = sessionTokenOf(request);
    if (token !== null && (await authenticateOwnerSession(services, token)) !== null) return reply.redirect(DASHBOARD, 303);
    const secret = ensureBrowserSecret(request, reply);
    const query = request.query as Record<string, string | undefined>;
    const message =
      query.signed_out !== undefined ? "You are signed out." : query.expired !== undefined ? "Your session has ended. Sign in again to continue." : undefined;
    return sendPage(reply, 200, signInView({ csrf: csrfTokenFor(secret), message }));
  });

  app.post("/sign-in", async (request, reply) => {
    const secret = checkBrowserForm(request);
    const email = formField(request, "email");
    try {
      await requestOwnerSignInCode(services, { email, browser: secret, source: request.ip });
    } catch (error) {
      const message = fieldError(error);
      if (message === null) throw error;
      return sendPage(reply, 400, signInView({ csrf: csrfTokenFor(secret), email, error: message }));
    }
    return reply.redirect(`${DASHBOARD}/sign-in/code`, 303);
  });

  app.get("/sign-in/code", async (request, reply) => {
    const secret = browserSecretOf(request);
    const pending = secret === null ? null : await findPendingSignIn(services, secret);
    if (secret === null || pending === null) return reply.redirect(`${DASHBOARD}/sign-in`, 303);
    return sendPage(reply, 200, codeView({ csrf: csrfTokenFor(secret), ...pending }));
  });

  app.post("/sign-in/code", async (request, reply) => {
    const secret = checkBrowserForm(request);
    try {
      return startSession(
        request,
        reply,
        await verifyOwnerSignInCode(services, { browser: secret, code: formField(request, "code"), from: originOf(request) }),
      );
    } catch (error) {
      const message = fieldError(error);
      if (message === null) throw error;
      const pending = await findPendingSignIn(services, secret);
      if (pending === null) return sendPage(reply, 400, signInView({ csrf: csrfTokenFor(secret), error: message }));
      return sendPage(reply, 400, codeView({ csrf: csrfTokenFor(secret), ...pending, error: message }));
    }
  });

  app.get("/sign-in/link/:token", async (request, reply) => {
    const { token } = request.params as { token: string };
    const link = await findOwnerLoginLink(services, token);
    if (link === null) return sendPage(reply, 404, spentLinkView());
    const secret = ensureBrowserSecret(request, reply);
    return sendPage(reply, 200, linkView({ csrf: csrfTokenFor(secret), token, email: link.email }));
  });

  app.post("/sign-in/link/:token", async (request, reply) => {
    checkBrowserForm(request);
    const { token } = request.params as { token: string };
    const opened = await redeemOwnerLoginLink(services, token, originOf(request));
    if (opened === null) return sendPage(reply, 404, spentLinkView());
    return startSession(request, reply, opened);
  });
}
