import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { ApiError, retryAfterOf, statusOf } from "../../errors/errors.js";
import { toApiError } from "../../http/error.handler.js";
import type { Services } from "../../services.js";
import type { Html } from "./html.js";
import { addPageHeaders, PageRefusal } from "./security.js";

/** Sends a rendered page; every page is UTF-8 HTML, said in the header and in the page. */
export function sendPage(reply: FastifyReply, status: number, page: Html) {
  return reply.status(status).header("Content-Type", "text/html; charset=utf-8").send(page.markup);
}

/** The message of a use case's refusal of what was typed (shown on the form again), or null for any other failure (an error page). */
export const fieldError = (error: unknown) => (error instanceof ApiError && error.code === "invalid_parameter" ? error.message : null);

/** A use case's refusal of what was typed, with the parameter it names (to tie the message to its field), or null for any other failure. */
export function fieldRefusal(error: unknown): { error: string; errorParam: string | undefined } | null {
  return error instanceof ApiError && error.code === "invalid_parameter" ? { error: error.message, errorParam: error.param } : null;
}

/** A limit that refused: its name with its figure, and when it resets (a page says both, and keeps its navigation). */
export interface LimitReached {
  message: string;
  until: number;
}

/** The limit behind a 429, or null for any other failure. */
export function limitReachedOf(error: unknown): LimitReached | null {
  if (!(error instanceof ApiError) || error.code !== "rate_limited" || !error.rateLimit) return null;
  // The API's words are "Too many requests: <the limit> (<its figure>). Retry …": the page names the limit and says when itself.
  const named = /^Too many requests: (.+?\(\d+\))\./.exec(error.message)?.[1];
  return { message: named ?? error.message.replace(/\.$/, ""), until: error.rateLimit.resetAt };
}

/** `Retry-After` of a limit that holds until `resetAt`: whole seconds, at least one. */
export function setRetryAfter(reply: FastifyReply, resetAt: number, now: number): void {
  reply.header("Retry-After", String(Math.max(1, Math.ceil((resetAt - now) / 1000))));
}

const ERROR_TITLES: Record<number, string> = {
  400: "Request not understood",
  403: "Request refused",
  404: "Page not found",
  405: "Not allowed",
  413: "Form too large",
  415: "Not a form",
  429: "Slow down",
  503: "Try again later",
};

/**
 * What an error page says, for the dashboard and the hosted pages alike: the error
 * catalogue's status, a title, and the message (an internal failure names only the
 * request id, in the words `internal` gives). Sets the page headers and `Retry-After`, and
 * logs what is Warden's fault; the database being away is logged once, when it goes
 * (server.ts), and its page says so.
 */
export function describePageError(
  services: Services,
  error: FastifyError | Error,
  request: FastifyRequest,
  reply: FastifyReply,
  words: { logAs: string; internal: (requestId: string) => string },
): { status: number; title: string; message: string } {
  addPageHeaders(reply);
  if (error instanceof PageRefusal) return { status: error.status, title: error.title, message: error.message };
  const apiError = toApiError(error);
  const status = statusOf(apiError.code);
  if (apiError.rateLimit) setRetryAfter(reply, apiError.rateLimit.resetAt, services.clock.now());
  const retryAfter = retryAfterOf(apiError.code);
  if (retryAfter !== undefined) reply.header("Retry-After", String(retryAfter));
  if (apiError.code === "database_unavailable") return { status, title: "Try again in a moment", message: apiError.message };
  if (status >= 500) request.log.error({ err: error }, words.logAs);
  // As in the API: only `internal` hides its message; a 503 says what is unavailable.
  if (apiError.code === "internal") return { status, title: "Something went wrong", message: words.internal(request.id) };
  return { status, title: ERROR_TITLES[status] ?? "Something went wrong", message: apiError.message };
}
