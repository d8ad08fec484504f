/**
 * What went wrong, as a value a caller can switch on. `type`, `message` and `param` are
 * the API's own (its error body); two more types are the library's: `network_error` when
 * Warden could not be reached, `invalid_token` when an answer's signed token does not
 * verify.
 */
export type WardenErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "plan_limit_error"
  | "not_found"
  | "rate_limit_error"
  | "api_error"
  | "network_error"
  | "invalid_token";

export class WardenError extends Error {
  readonly type: WardenErrorType;
  readonly param: string | null;
  /** The HTTP status, 0 when no answer came. */
  readonly status: number;
  /** For a rate_limit_error: seconds to wait before asking again (Retry-After). */
  readonly retryAfter: number | null;

  constructor(type: WardenErrorType, message: string, options: { param?: string | null; status?: number; retryAfter?: number | null } = {}) {
    super(message);
    this.name = "WardenError";
    this.type = type;
    this.param = options.param ?? null;
    this.status = options.status ?? 0;
    this.retryAfter = options.retryAfter ?? null;
  }
}

const TYPES: readonly string[] = ["invalid_request_error", "authentication_error", "plan_limit_error", "not_found", "rate_limit_error", "api_error"];

/** The error an API answer carries; an answer not in the API's shape (a proxy's page) is an api_error. */
export function errorFromBody(status: number, body: unknown, retryAfter: number | null): WardenError {
  const error = (body as { error?: { type?: unknown; message?: unknown; param?: unknown } } | null)?.error;
  const type = typeof error?.type === "string" && TYPES.includes(error.type) ? (error.type as WardenErrorType) : "api_error";
  const message = typeof error?.message === "string" ? error.message : `Warden answered HTTP ${status}.`;
  const param = typeof error?.param === "string" ? error.param : null;
  return new WardenError(type, message, { param, status, retryAfter });
}
