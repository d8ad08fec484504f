// The one-time codes mailed to sign in, alike for owners (owners/) and for customers (the
// client API and the hosted pages, client/): six digits, ten minutes, five tries, stored
// salted and hashed. One policy, so the two ways in cannot drift apart.
import { hash, randomInt, timingSafeEqual } from "node:crypto";

/** How long a mailed code may be used. */
export const CODE_TTL_MS = 10 * 60_000;
/** Wrong tries before a code is void. */
export const MAX_CODE_ATTEMPTS = 5;

// The one-shot hash: a third of a Hash object's cost (bench/journal.md, seventh session).
export const sha256 = (value: string) => hash("sha256", value, "hex");
export const sameHash = (a: string, b: string) => timingSafeEqual(Buffer.from(a, "hex"), Buffer.from(b, "hex"));
/**
 * A code has a million values; salting with its row id keeps equal codes apart. Its
 * ten-minute life, five tries and the limits on asking, not the hash, are what protect it.
 */
export const hashCode = (id: string, code: string) => sha256(`${id}:${code}`);
export const newCode = () => randomInt(0, 1_000_000).toString().padStart(6, "0");
