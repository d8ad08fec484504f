import { createHmac, timingSafeEqual } from "node:crypto";
import { invalidParameter } from "../errors/errors.js";
import type { ListPosition } from "./customer.store.js";

// A cursor is the last row's position plus what the list was of, sealed with an HMAC
// under a secret kept in the database (shared by every process). Anything altered, or
// a cursor from another tool, environment or filter, is refused with param "cursor".

export interface CursorContext {
  workspaceId: string;
  env: string;
  toolId: string;
  filter: "all" | "entitled" | "not_entitled";
}

const contextKey = (c: CursorContext) => `${c.workspaceId}|${c.env}|${c.toolId}|${c.filter}`;

function seal(key: Buffer, context: CursorContext, payload: string): Buffer {
  return createHmac("sha256", key).update(contextKey(context)).update("\n").update(payload).digest().subarray(0, 16);
}

export function encodeCursor(key: Buffer, context: CursorContext, position: ListPosition): string {
  const payload = Buffer.from(JSON.stringify([position.since, position.personId])).toString("base64url");
  return `${payload}.${seal(key, context, payload).toString("base64url")}`;
}

export function decodeCursor(key: Buffer, context: CursorContext, cursor: string): ListPosition {
  const invalid = invalidParameter("cursor", "cursor is not a next_cursor of this list; start again without a cursor.");
  const [payload, mac, extra] = cursor.split(".");
  if (!payload || !mac || extra !== undefined) throw invalid;
  const expected = seal(key, context, payload);
  const given = Buffer.from(mac, "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid;
  const value: unknown = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  if (!Array.isArray(value) || typeof value[0] !== "number" || typeof value[1] !== "string") throw invalid;
  return { since: value[0], personId: value[1] };
}
