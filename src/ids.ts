import { createHash, randomBytes } from "node:crypto";

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

export type IdPrefix = "gr" | "lic" | "key" | "evt" | "ep" | "dlv" | "att" | "ws" | "own" | "psn" | "pln" | "dev" | "sub" | "req" | "du";

/** Prefixed ids as decided in decisions.md: `gr_` + 24 base62 characters (142 bits). */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(24)}`;
}

export function isId(prefix: IdPrefix, value: string): boolean {
  return new RegExp(`^${prefix}_[0-9A-Za-z]{24}$`).test(value);
}

/**
 * An id derived from the fact it names (decisions.md: the same fact reported by the
 * payment processor and by the dashboard keeps one event id): SHA-256 of the fact,
 * written as 24 base62 digits (about 143 bits, the same as a random id).
 */
export function derivedId(prefix: IdPrefix, fact: string): string {
  let n = BigInt(`0x${createHash("sha256").update(fact, "utf8").digest("hex")}`);
  let out = "";
  for (let i = 0; i < 24; i++) {
    out += BASE62[Number(n % 62n)];
    n /= 62n;
  }
  return `${prefix}_${out}`;
}
