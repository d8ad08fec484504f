import type { MeterUsage } from "./types.js";

/**
 * What went wrong, as a value a caller can switch on. `type`, `message` and `param` are
 * the API's own (its error body); two more types are the library's: `network_error` when
 * Warden could not be reached, `invalid_token` when an answer's signed token does not
 * verify.
 */
export type WardenErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "usage_limit_error"
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

/**
 * A spend refused because the meter has not that much left (402): nothing was spent.
 * `usage` is the meter as it stands: what is left (`remaining`, `allowance_remaining`,
 * `credits`) and when the allowance resets (`resets_at`).
 */
export class UsageLimitError extends WardenError {
  override readonly type = "usage_limit_error" as const;
  readonly usage: MeterUsage;

  constructor(message: string, usage: MeterUsage, options: { status?: number } = {}) {
    super("usage_limit_error", message, { status: options.status ?? 402 });
    this.name = "UsageLimitError";
    this.usage = usage;
  }
}

const TYPES: readonly string[] = [
  "invalid_request_error",
  "authentication_error",
  "usage_limit_error",
  "plan_limit_error",
  "not_found",
  "rate_limit_error",
  "api_error",
];

const isMeterUsage = (value: unknown): value is MeterUsage =>
  value !== null && typeof value === "object" && typeof (value as MeterUsage).meter === "string" && typeof (value as MeterUsage).remaining === "number";

/** The error an API answer carries; an answer not in the API's shape (a proxy's page) is an api_error. */
export function errorFromBody(status: number, body: unknown, retryAfter: number | null): WardenError {
  const error = (body as { error?: { type?: unknown; message?: unknown; param?: unknown; usage?: unknown } } | null)?.error;
  const type = typeof error?.type === "string" && TYPES.includes(error.type) ? (error.type as WardenErrorType) : "api_error";
  const message = typeof error?.message === "string" ? error.message : `Warden answered HTTP ${status}.`;
  // A refusal without the meter's usage (not Warden's shape) is a plain WardenError of the same type.
  if (type === "usage_limit_error" && isMeterUsage(error?.usage)) return new UsageLimitError(message, error.usage, { status });
  const param = typeof error?.param === "string" ? error.param : null;
  return new WardenError(type, message, { param, status, retryAfter });
}
