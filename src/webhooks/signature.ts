import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

// Standard Webhooks, symmetric scheme only (v1: HMAC-SHA256). Written on node:crypto so
// the sending side needs no library; the tests hold it to the published vectors and to
// the standardwebhooks and svix packages a receiver would verify with.

const SECRET_PREFIX = "whsec_";
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
// The bounds the Svix server puts on an endpoint secret (24 to 75 bytes): a secret we
// accept is then one the hosted delivery provider would accept too.
const SECRET_MIN_BYTES = 24;
const SECRET_MAX_BYTES = 75;

/** The key is the base64 after the optional `whsec_`, as every Standard Webhooks library reads it. */
function secretKey(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const key = Buffer.from(encoded, "base64");
  // Node decodes base64 leniently (skips bad characters), so a mistyped secret would
  // otherwise sign with a different key and fail only at the receiver.
  const canonical = BASE64.test(encoded) && key.toString("base64").replace(/=+$/, "") === encoded.replace(/=+$/, "");
  if (!canonical || key.length < SECRET_MIN_BYTES || key.length > SECRET_MAX_BYTES) {
    throw new Error(`a webhook secret is whsec_ followed by base64 of ${SECRET_MIN_BYTES} to ${SECRET_MAX_BYTES} bytes`);
  }
  return key;
}

function hmacBase64(key: Buffer, msgId: string, timestamp: string, body: string | Uint8Array): string {
  return createHmac("sha256", key).update(`${msgId}.${timestamp}.`).update(body).digest("base64");
}

/** `whsec_` + base64 of 24 random bytes (decisions.md). */
export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(24).toString("base64")}`;
}

/**
 * `v1,<signature>` over `${msgId}.${timestampSeconds}.${body}`. The body is signed as
 * UTF-8, so the sender must send exactly this string's UTF-8 bytes.
 */
export function signPayload(secret: string, msgId: string, timestampSeconds: number, body: string): string {
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) {
    throw new Error(`webhook timestamp must be whole epoch seconds, got ${timestampSeconds}`);
  }
  return `v1,${hmacBase64(secretKey(secret), msgId, String(timestampSeconds), body)}`;
}

type WebhookHeaders = {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
  "content-type": "application/json";
};

/**
 * The headers of one delivery attempt; each attempt is signed afresh with its own
 * timestamp. Several secrets (an endpoint's new and previous one, while a rotation
 * overlaps) give one `v1,` entry each, space-separated in the one header, as Standard
 * Webhooks allows: a receiver holding either secret finds its match.
 */
export function webhookHeaders(secrets: string | readonly string[], msgId: string, timestampSeconds: number, body: string): WebhookHeaders {
  const signatures = (typeof secrets === "string" ? [secrets] : secrets).map((secret) => signPayload(secret, msgId, timestampSeconds, body));
  if (signatures.length === 0) throw new Error("a delivery is signed with at least one secret");
  return {
    "webhook-id": msgId,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": signatures.join(" "),
    "content-type": "application/json",
  };
}

type VerifyResult =
  | { valid: true }
  | { valid: false; reason: "missing_header" | "invalid_timestamp" | "timestamp_too_old" | "timestamp_too_new" | "no_matching_signature" };

/**
 * Checks a delivery as a receiver would: the raw body, the three webhook-* headers (names
 * in any case), a timestamp within `toleranceSeconds` of now either way (inclusive), and
 * at least one `v1` entry of the space-separated signature list matching. Other versions
 * (`v1a`, future ones) are skipped, as the Standard Webhooks libraries do. A malformed
 * secret throws: it is a configuration mistake, not a bad delivery.
 */
export function verifySignature(
  secret: string,
  headers: Readonly<Record<string, string | undefined>>,
  body: string | Uint8Array,
  nowSeconds: number,
  toleranceSeconds = 300,
): VerifyResult {
  const key = secretKey(secret);
  const lower = new Map(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
  const msgId = lower.get("webhook-id");
  const timestamp = lower.get("webhook-timestamp");
  const signatures = lower.get("webhook-signature");
  if (!msgId || !timestamp || !signatures) return { valid: false, reason: "missing_header" };

  // Digits only: the JS library's parseInt would take "1614265330junk", and a sign or
  // exponent has no place in epoch seconds.
  if (!/^\d{1,15}$/.test(timestamp)) return { valid: false, reason: "invalid_timestamp" };
  const age = nowSeconds - Number(timestamp);
  if (age > toleranceSeconds) return { valid: false, reason: "timestamp_too_old" };
  if (age < -toleranceSeconds) return { valid: false, reason: "timestamp_too_new" };

  const expected = Buffer.from(hmacBase64(key, msgId, timestamp, body));
  for (const entry of signatures.split(" ")) {
    const comma = entry.indexOf(",");
    if (comma < 0 || entry.slice(0, comma) !== "v1") continue;
    // Compared as base64 text, so a non-canonical encoding of the right bytes is refused;
    // the length check leaks only the length, which is public.
    const candidate = Buffer.from(entry.slice(comma + 1));
    if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) return { valid: true };
  }
  return { valid: false, reason: "no_matching_signature" };
}
