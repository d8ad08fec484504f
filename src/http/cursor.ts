import { createHmac, timingSafeEqual } from "node:crypto";
import { invalidParameter } from "../errors/errors.js";

// A cursor is the last row's keyset position plus what the list was of, sealed with an
// HMAC under a secret kept in the database (shared by every process). Anything altered,
// or a cursor from another list, tool, environment or filter, is refused with
// param "cursor".

/** Position in a list ordered by (at, id), newest first. */
export interface KeysetPosition {
  at: number;
  id: string;
}

function seal(key: Buffer, context: string, payload: string): Buffer {
  return createHmac("sha256", key).update(context).update("\n").update(payload).digest().subarray(0, 16);
}

/** `context` names the list exactly: kind of list, workspace, environment, filters. */
export function encodeCursor(key: Buffer, context: string, position: KeysetPosition): string {
  const payload = Buffer.from(JSON.stringify([position.at, position.id])).toString("base64url");
  return `${payload}.${seal(key, context, payload).toString("base64url")}`;
}

export function decodeCursor(key: Buffer, context: string, cursor: string): KeysetPosition {
  const invalid = invalidParameter("cursor", "cursor is not a next_cursor of this list; start again without a cursor.");
  const [payload, mac, extra] = cursor.split(".");
  if (!payload || !mac || extra !== undefined) throw invalid;
  const expected = seal(key, context, payload);
  const given = Buffer.from(mac, "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid;
  const value: unknown = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  if (!Array.isArray(value) || typeof value[0] !== "number" || typeof value[1] !== "string") throw invalid;
  return { at: value[0], id: value[1] };
}
