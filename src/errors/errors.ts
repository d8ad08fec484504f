// The one catalogue of errors. Every failure a client can see has a code here; the code
// decides the HTTP status and the specification's error type in one exhaustive switch,
// and `renderError` (in error.handler.ts) is the only place that writes an error body.

type ErrorType = "invalid_request_error" | "authentication_error" | "usage_limit_error" | "plan_limit_error" | "not_found" | "rate_limit_error" | "api_error";

export type ErrorCode =
  | "invalid_parameter"
  | "malformed_body"
  | "malformed_request"
  | "unsupported_media_type"
  | "body_too_large"
  | "headers_too_large"
  | "request_timeout"
  | "expectation_failed"
  | "method_not_allowed"
  | "idempotency_mismatch"
  | "authentication_failed"
  | "usage_limit"
  | "plan_limit"
  | "not_found"
  | "route_not_found"
  | "rate_limited"
  | "storage_full"
  | "internal"
  | "database_unavailable";

export function statusOf(code: ErrorCode): number {
  switch (code) {
    case "invalid_parameter":
    case "malformed_body":
    case "malformed_request":
    case "idempotency_mismatch":
      return 400;
    case "authentication_failed":
      return 401;
    case "usage_limit":
      return 402;
    case "plan_limit":
      return 403;
    case "not_found":
    case "route_not_found":
      return 404;
    case "method_not_allowed":
      return 405;
    case "request_timeout":
      return 408;
    case "body_too_large":
      return 413;
    case "unsupported_media_type":
      return 415;
    case "expectation_failed":
      return 417;
    case "headers_too_large":
      return 431;
    case "rate_limited":
      return 429;
    case "internal":
      return 500;
    case "database_unavailable":
    case "storage_full":
      return 503;
  }
}

export function typeOf(code: ErrorCode): ErrorType {
  switch (code) {
    case "invalid_parameter":
    case "malformed_body":
    case "malformed_request":
    case "unsupported_media_type":
    case "body_too_large":
    case "headers_too_large":
    case "request_timeout":
    case "expectation_failed":
    case "method_not_allowed":
    case "idempotency_mismatch":
      return "invalid_request_error";
    case "authentication_failed":
      return "authentication_error";
    case "usage_limit":
      return "usage_limit_error";
    case "plan_limit":
      return "plan_limit_error";
    case "not_found":
    case "route_not_found":
      return "not_found";
    case "rate_limited":
      return "rate_limit_error";
    case "storage_full":
    case "internal":
    case "database_unavailable":
      return "api_error";
  }
}

// An operator frees space in minutes, not seconds: clients asked to come back sooner
// would only add failed writes to a disk that has no room for them.
const STORAGE_FULL_RETRY_SECONDS = 60;

/**
 * Seconds a client is asked to wait (Retry-After) by codes that are not its fault and
 * pass by themselves. A restarted PostgreSQL answers again within seconds; a full disk
 * waits for its operator; a rate limit says its own (its window's end).
 */
export function retryAfterOf(code: ErrorCode): number | undefined {
  if (code === "database_unavailable") return 5;
  if (code === "storage_full") return STORAGE_FULL_RETRY_SECONDS;
  return undefined;
}

/** Rate-limit facts for the Retry-After and RateLimit-* headers of a 429. */
interface RateLimitInfo {
  limit: number;
  remaining: number;
  /** Epoch milliseconds when the window resets. */
  resetAt: number;
}

/**
 * A refusal a buyer may read on a hosted page, by its own code: the page says it in the
 * buyer's language from the message catalogue (`refusal.<reason>` in ../i18n), with the
 * facts it names; the API and the CLI answer the English `message` as before. A refusal
 * with no reason is shown as its message.
 */
export type RefusalReason =
  | "trial_none"
  | "trial_ended"
  | "passes_full"
  | "plan_not_offered"
  | "payments_off"
  | "checkout_refused"
  | "signed_in_elsewhere"
  | "email_shape"
  | "subscription_ended"
  | "cancel_set_by_vendor"
  | "billed_outside"
  | "not_team"
  | "team_not_running"
  | "seats_full";

/** What a refusal names, for its words in another language: counts and moments (epoch ms) as numbers, ids as strings. */
export type RefusalFacts = Record<string, string | number>;

/** An expected failure that a client is told about. Bugs stay ordinary exceptions. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly param: string | undefined;
  readonly rateLimit: RateLimitInfo | undefined;
  /** Which limit refused (a 429 or a plan limit's 403), for the metrics: `lookups`, `hobby-passes`… */
  readonly limit: string | undefined;
  /** A usage limit's refusal: the meter's usage (a MeterUsage), answered as `error.usage`. */
  readonly usage: unknown;
  /** A refusal a hosted page says in the buyer's language, and what it names. */
  readonly reason: RefusalReason | undefined;
  readonly facts: RefusalFacts;

  constructor(
    code: ErrorCode,
    message: string,
    options: { param?: string; rateLimit?: RateLimitInfo; limit?: string; usage?: unknown; reason?: RefusalReason; facts?: RefusalFacts } = {},
  ) {
    super(message);
    this.name = "ApiError";
    this.code = code;
    this.param = options.param;
    this.rateLimit = options.rateLimit;
    this.limit = options.limit;
    this.usage = options.usage;
    this.reason = options.reason;
    this.facts = options.facts ?? {};
  }
}

export function invalidParameter(param: string, message: string, refusal?: { reason: RefusalReason; facts?: RefusalFacts }): ApiError {
  return new ApiError("invalid_parameter", message, { param, ...refusal });
}

export function notFound(message: string): ApiError {
  return new ApiError("not_found", message);
}

/**
 * A write refused because the database's storage is full (decisions.md, Storage: 503,
 * not 507). The message says what is wrong, not why: no path, no driver text.
 */
export function storageFull(): ApiError {
  return new ApiError("storage_full", "Warden's storage is full, so this change was not saved. Retry later; reads still work.");
}
