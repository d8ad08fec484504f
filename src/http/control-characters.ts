import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from "fastify";
import { invalidParameter } from "../errors/errors.js";

// Control characters are refused in every string a request brings, before any schema or
// use case sees it. PostgreSQL refuses a NUL in text outright, so one that reached a
// statement answered 500 on that engine alone (and, in a statement shared by several
// requests, failed them all); the others have no business in an address, an id or a slug
// on either engine. Free text in a body (a grant's note) keeps tab and line breaks.
const IN_URL = /[\u0000-\u001f\u007f]/;
const IN_BODY = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
// No route takes JSON nested deeper than this; its schema refuses such a body, so the walk stops here.
const MAX_DEPTH = 32;

function hasControl(value: unknown, pattern: RegExp, depth: number): boolean {
  if (typeof value === "string") return pattern.test(value);
  if (value === null || typeof value !== "object") return false;
  if (depth > MAX_DEPTH) return false;
  if (Array.isArray(value)) return value.some((item) => hasControl(item, pattern, depth + 1));
  for (const [key, item] of Object.entries(value)) if (pattern.test(key) || hasControl(item, pattern, depth + 1)) return true;
  return false;
}

function offending(values: unknown, pattern: RegExp, plainOnly: boolean): string | null {
  if (values === null || typeof values !== "object" || (plainOnly && Object.getPrototypeOf(values) !== Object.prototype && !Array.isArray(values))) return null;
  for (const [name, value] of Object.entries(values)) if (pattern.test(name) || hasControl(value, pattern, 1)) return name;
  return null;
}

function refusal(where: string, key: string, value: unknown) {
  // A wildcard route's rest of the path (the docs' static files) is the parameter "*".
  const name = key === "*" ? "path" : key;
  const what = JSON.stringify(value ?? "").includes("\\u0000") ? "a NUL character" : "control characters";
  return invalidParameter(name, `The ${where} "${name}" must not contain ${what}.`);
}

function controlCharacterError(request: FastifyRequest) {
  const param = offending(request.params, IN_URL, false);
  if (param !== null) return refusal("path parameter", param, (request.params as Record<string, unknown>)[param]);
  const query = offending(request.query, IN_URL, false);
  if (query !== null) return refusal("query parameter", query, (request.query as Record<string, unknown>)[query]);
  // Only parsed JSON is walked: a route that takes its body raw (Stripe's) checks its own.
  const field = offending(request.body, IN_BODY, true);
  if (field !== null) return refusal("body field", field, (request.body as Record<string, unknown>)[field]);
  return undefined;
}

/** A preValidation hook: 400 naming the parameter whose text holds a control character. */
export function refuseControlCharacters(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  done(controlCharacterError(request));
}
