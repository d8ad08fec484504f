import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import type { Clock } from "../clock.js";
import { isDatabaseUnavailable, isStorageFull } from "../db/storage-faults.js";
import { ApiError, type ErrorCode, retryAfterOf, statusOf, storageFull, typeOf } from "../errors/errors.js";

interface FastifyValidationError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** Names the parameter an Ajv error is about: `days`, `email`, `limit`, `Idempotency-Key`… */
function paramOf(error: FastifyValidationError): string | undefined {
  const missing = error.params.missingProperty ?? error.params.additionalProperty;
  if (typeof missing === "string") return missing;
  const path = error.instancePath.replace(/^\//, "").split("/")[0];
  return path ? decodeURIComponent(path.replace(/~1/g, "/").replace(/~0/g, "~")) : undefined;
}

function describeValidation(part: string | undefined, error: FastifyValidationError, param: string | undefined): string {
  const where = part === "querystring" ? "query parameter" : part === "params" ? "path parameter" : part === "headers" ? "header" : "body field";
  if (error.keyword === "additionalProperties") return `Unknown ${where} "${param}".`;
  if (error.keyword === "required") return `Missing required ${where} "${param}".`;
  if (param === "note" && error.keyword === "pattern") return 'The body field "note" must not contain a NUL character.';
  if (param === undefined) return part === "body" ? "The request body must be a JSON object." : `Invalid ${where}: ${error.message ?? "not valid"}.`;
  return `Invalid ${where} "${param}": ${error.message ?? "not valid"}.`;
}

/** Turns anything thrown into one of the catalogue's errors; unknown throws become `internal`. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (isDatabaseUnavailable(error)) return new ApiError("database_unavailable", "The database is unreachable; retry in a few seconds.");
  if (isStorageFull(error)) return storageFull();
  const fe = error as Partial<FastifyError> & { validation?: FastifyValidationError[] };
  const first = fe.validation?.[0];
  if (first) {
    const param = paramOf(first);
    const paramName = param && fe.validationContext === "headers" ? headerName(param) : param;
    return new ApiError("invalid_parameter", describeValidation(fe.validationContext, first, paramName), paramName ? { param: paramName } : {});
  }
  const byFastifyCode: Partial<Record<string, [ErrorCode, string]>> = {
    FST_ERR_CTP_INVALID_MEDIA_TYPE: ["unsupported_media_type", "Content-Type must be application/json."],
    FST_ERR_CTP_BODY_TOO_LARGE: ["body_too_large", "The request body is too large."],
    FST_ERR_CTP_EMPTY_JSON_BODY: ["malformed_body", "The request body is empty; send a JSON object."],
    FST_ERR_CTP_INVALID_JSON_BODY: ["malformed_body", "The request body is not valid JSON."],
    FST_ERR_CTP_INVALID_CONTENT_LENGTH: ["malformed_body", "Content-Length does not match the body."],
    FST_ERR_BAD_URL: ["malformed_request", "The URL cannot be decoded: check its percent-encoding."],
    FST_ERR_MAX_PARAM_LENGTH: ["malformed_request", "A part of the URL path is too long."],
  };
  // The client closed the connection while its body was read: nothing failed here, and
  // there is no one left to answer. Logging these as failures buried real ones (96 a run).
  if (fe.code === "ECONNRESET" || fe.code === "ECONNABORTED") return new ApiError("malformed_request", "The request was closed before its body arrived.");
  const known = fe.code ? byFastifyCode[fe.code] : undefined;
  if (known) return new ApiError(known[0], known[1]);
  // A parse failure of the body carries Fastify's code, or the 400 a content-type parser
  // gives it. A bare SyntaxError thrown inside a handler (a stored answer that no longer
  // parses) is Warden's fault, not the client's: it falls through to 500 below.
  if ((error instanceof SyntaxError && fe.statusCode === 400) || (fe.statusCode === 400 && typeof fe.code === "string" && fe.code.startsWith("FST_ERR_CTP"))) {
    return new ApiError("malformed_body", "The request body is not valid JSON.");
  }
  // Any other complaint of Fastify's about the request is the client's fault, not a
  // service failure: answering 500 would invite a retry that fails the same way.
  if (typeof fe.code === "string" && fe.code.startsWith("FST_ERR") && typeof fe.statusCode === "number" && fe.statusCode >= 400 && fe.statusCode < 500) {
    return new ApiError("malformed_request", "The request is not valid HTTP for this API.");
  }
  // An http-errors 4xx from a plugin: the docs' static files refuse a path that leaves
  // their folder (`..`) with 403. No file is there for the client; nothing failed.
  const exposed = error as { expose?: unknown; status?: unknown };
  if (exposed.expose === true && typeof exposed.status === "number" && exposed.status >= 400 && exposed.status < 500) {
    return exposed.status === 403 || exposed.status === 404
      ? new ApiError("not_found", "No such file.")
      : new ApiError("malformed_request", "The request is not valid HTTP for this API.");
  }
  return new ApiError("internal", "internal");
}

function headerName(lower: string): string {
  return lower.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());
}

/**
 * The one place that writes an error answer. 5xx answers never carry the cause. Also
 * fit for Fastify's `frameworkErrors`, which answers before any hook has run: hence the
 * Request-Id set here as well.
 */
export function renderError(clock: Clock) {
  return (error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    reply.header("Request-Id", request.id);
    const apiError = toApiError(error);
    const status = statusOf(apiError.code);
    let message = apiError.message;
    const retryAfter = retryAfterOf(apiError.code);
    if (retryAfter !== undefined) reply.header("Retry-After", String(retryAfter));
    // The database being away is logged once when it goes and once when it is back
    // (server.ts), not at every request.
    if (status >= 500 && apiError.code !== "database_unavailable") request.log.error({ err: error }, "request failed");
    // Only `internal` hides its message: its cause is a bug. A 503's message is the
    // catalogue's own sentence (what is unavailable), never the cause's text.
    if (apiError.code === "internal") message = `The service failed; retry. Request id ${request.id}.`;
    if (apiError.rateLimit) {
      const { limit, remaining, resetAt } = apiError.rateLimit;
      const seconds = Math.max(1, Math.ceil((resetAt - clock.now()) / 1000));
      reply.header("Retry-After", String(seconds));
      reply.header("RateLimit-Limit", String(limit));
      reply.header("RateLimit-Remaining", String(remaining));
      reply.header("RateLimit-Reset", String(seconds));
    }
    const body = {
      error: {
        type: typeOf(apiError.code),
        message,
        ...(apiError.param ? { param: apiError.param } : {}),
        ...(apiError.usage !== undefined ? { usage: apiError.usage } : {}),
      },
    };
    return reply.status(status).header("content-type", "application/json; charset=utf-8").send(JSON.stringify(body));
  };
}
