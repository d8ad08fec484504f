import { createHash, randomBytes } from "node:crypto";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

// Random bytes are drawn from the system a block at a time (as crypto.randomUUID does):
// a call per id was 2–4% of a retrieve's CPU, for its request id. Each byte is used once.
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let used = 0;

function randomByte(): number {
  if (used === pool.length) {
    pool = randomBytes(POOL_BYTES);
    used = 0;
  }
  return pool.readUInt8(used++);
}

/** Random base62 string; rejection sampling keeps every character uniform. */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += BASE62[byte % 62];
  }
  return out;
}

export type IdPrefix = "gr" | "lic" | "key" | "evt" | "ep" | "dlv" | "att" | "ws" | "own" | "psn" | "pln" | "dev" | "sub" | "req" | "du" | "rec" | "cr";

/** Prefixed ids as decided in decisions.md: `gr_` + 24 base62 characters (142 bits). */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(24)}`;
}

const TIME_CHARS = 8;
const RANDOM_AFTER_TIME = 24 - TIME_CHARS;

/**
 * A prefixed id of the same shape whose first 8 characters are `at` (epoch ms, base62,
 * fixed width: good past the year 8000), then 16 random ones (95 bits). For rows
 * written by the thousand, deliveries and attempts: ids made one after another sort
 * together (base62's digits are in ASCII order), so each insert lands on the last page
 * of the id's index instead of a random one. Nothing reads the time back.
 */
export function newOrderedId(prefix: IdPrefix, at: number): string {
  let time = "";
  let rest = Math.max(0, Math.floor(at));
  for (let i = 0; i < TIME_CHARS; i++) {
    time = BASE62[rest % 62] + time;
    rest = Math.floor(rest / 62);
  }
  return `${prefix}_${time}${randomBase62(RANDOM_AFTER_TIME)}`;
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
