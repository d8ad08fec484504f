import { randomBytes } from "node:crypto";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Random base62 string; rejection sampling keeps every character uniform. */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export type IdPrefix = "gr" | "lic" | "key" | "evt" | "ep" | "dlv" | "att" | "ws" | "own" | "psn" | "pln" | "dev" | "sub" | "req";

/** Prefixed ids as decided in decisions.md: `gr_` + 24 base62 characters (142 bits). */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(24)}`;
}

export function isId(prefix: IdPrefix, value: string): boolean {
  return new RegExp(`^${prefix}_[0-9A-Za-z]{24}$`).test(value);
}
