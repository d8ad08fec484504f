// Which storage failures are the database being away rather than a bug: those answer
// 503 with Retry-After, are logged once when the database goes and once when it is back,
// and make the background loops wait and try again instead of failing their work.

/**
 * The database could not be reached (refused, reset, shut down, not answering): the
 * driver's error, classified once where it is thrown (database.ts), so that nothing
 * else has to recognise the driver's many ways of saying it. Its `code` is the cause's,
 * for the start-up line (ops/start-up.ts).
 */
export class DatabaseUnavailableError extends Error {
  readonly code: string | undefined;

  constructor(cause: unknown) {
    super(`the database is unreachable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = "DatabaseUnavailableError";
    this.code = codeOf(cause);
  }
}

// Node's socket errors: the server is down, restarting or cut off.
const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN"]);
// PostgreSQL's: class 08 (connection exception), and a server shutting down or starting up.
const POSTGRES_CODES = new Set(["57P01", "57P02", "57P03"]);
// node-pg's and pg-pool's own errors carry no code, only these words.
const DRIVER_MESSAGES = ["Connection terminated", "timeout exceeded when trying to connect", "Query read timeout", "is not queryable"];

function codeOf(error: unknown): string | undefined {
  const e = error as { code?: unknown; errors?: unknown } | null;
  if (typeof e?.code === "string") return e.code;
  // Connecting to "localhost" tries each of its addresses; Node then throws an AggregateError of them.
  if (Array.isArray(e?.errors)) return codeOf(e.errors[0]);
  return undefined;
}

/** Whether a PostgreSQL driver's error says the database is away (not a bad statement, nor a constraint). */
export function isUnreachableDriverError(error: unknown): boolean {
  const code = codeOf(error);
  if (code !== undefined && (NETWORK_CODES.has(code) || POSTGRES_CODES.has(code) || code.startsWith("08"))) return true;
  const message = error instanceof Error ? error.message : "";
  return DRIVER_MESSAGES.some((words) => message.includes(words));
}

/** Whether `error`, or one of its causes, is a DatabaseUnavailableError. */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof DatabaseUnavailableError) return true;
  }
  return false;
}

/**
 * Whether the database answers, as the statements find it: one call of `onChange` when
 * the first statement fails because it is away, and one when a statement succeeds again
 * (the log's one warning each way, not one per request); `onFailure` at every such
 * failure (the metric). Only a statement begun after the last failure can say the
 * database is back: one already under way when the server went may still finish (seen:
 * a success 19 ms after the first failure, while the server was shutting down).
 */
export class DatabaseAvailability {
  private available = true;
  private begun = 0;
  private lastFailureAfter = 0;
  private readonly listeners = new Set<(available: boolean, error?: unknown) => void>();

  constructor(private readonly onFailure: () => void = () => {}) {}

  get isAvailable(): boolean {
    return this.available;
  }

  onChange(listener: (available: boolean, error?: unknown) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A statement or a connection begins: its ticket, for `succeeded`. */
  begin(): number {
    return ++this.begun;
  }

  failed(error: unknown): void {
    this.onFailure();
    this.lastFailureAfter = this.begun;
    if (!this.available) return;
    this.available = false;
    for (const listener of this.listeners) listener(false, error);
  }

  succeeded(ticket: number): void {
    if (this.available || ticket <= this.lastFailureAfter) return;
    this.available = true;
    for (const listener of this.listeners) listener(true);
  }
}
