// Paddle's webhook signature, checked over the exact bytes received before anything reads
// them, as Stripe's is (stripe/stripe-signature.ts): `Paddle-Signature: ts=<unix seconds>;
// h1=<hex HMAC-SHA256 of "<ts>:<body>" keyed with the notification destination's secret
// key>`, with several h1 while a secret is being rotated. Checked here rather than by
// `@paddle/paddle-node-sdk`'s `Webhooks.unmarshal`: the SDK measures its tolerance against
// the machine's own clock (`new Date()`), not the injected one; it keeps only the last h1
// (a rotation's old secret then fails); it compares with `===`, not in constant time; and
// it answers every refusal with one English sentence of its own ("[Paddle] Invalid
// webhook signature") where Warden's catalogue says which part is wrong. Tests sign with
// the SDK's scheme by hand (test-support/paddle.ts) and check it verifies with the SDK too.
import { createHmac, timingSafeEqual } from "node:crypto";
import { invalidParameter } from "../errors/errors.js";

/**
 * A signature made more than this far from the injected clock's now, either way, is
 * refused. Paddle signs each delivery attempt when it sends it, so a genuine delivery is
 * seconds old; the SDK's own 5 s refuses a server whose clock runs a few seconds off NTP.
 * A minute allows that, and a replay within the minute is answered `duplicate` by its
 * event_id anyway (docs/decisions.md, Payments: processors).
 */
export const PADDLE_SIGNATURE_TOLERANCE_S = 60;

const PARAM = "Paddle-Signature";
const TIMESTAMP = /^\d{1,12}$/;
const H1 = /^[0-9a-f]{64}$/;

function parseSignatureHeader(header: string | undefined): { timestamp: number; signatures: Buffer[] } {
  if (header === undefined || header.trim() === "") {
    throw invalidParameter(PARAM, "The Paddle-Signature header is missing: Paddle signs every notification it sends to this destination.");
  }
  const malformed = invalidParameter(
    PARAM,
    "The Paddle-Signature header is malformed: it must be ts=<unix seconds>;h1=<64 hexadecimal digits>, as Paddle sends it.",
  );
  let timestamp: number | null = null;
  const signatures: Buffer[] = [];
  for (const item of header.split(";")) {
    const at = item.indexOf("=");
    const key = (at < 0 ? item : item.slice(0, at)).trim();
    const value = at < 0 ? "" : item.slice(at + 1).trim();
    if (key === "ts") {
      if (timestamp !== null || !TIMESTAMP.test(value)) throw malformed;
      timestamp = Number(value);
    } else if (key === "h1") {
      if (!H1.test(value)) throw malformed;
      signatures.push(Buffer.from(value, "hex"));
    }
  }
  if (timestamp === null || signatures.length === 0) throw malformed;
  return { timestamp, signatures };
}

/**
 * The candidate whose secret signed `body`, else a 400 naming the header. `now` is the
 * injected clock's time of receipt, so tests move the tolerance with it.
 */
export function verifyPaddleSignature<T extends { secret: string }>(body: Buffer, header: string | undefined, candidates: readonly T[], now: number): T {
  const { timestamp, signatures } = parseSignatureHeader(header);
  if (Math.abs(Math.floor(now / 1000) - timestamp) > PADDLE_SIGNATURE_TOLERANCE_S) {
    throw invalidParameter(
      PARAM,
      `The Paddle-Signature header was made more than ${PADDLE_SIGNATURE_TOLERANCE_S} seconds from now, outside the tolerance: a replayed delivery is refused.`,
    );
  }
  for (const candidate of candidates) {
    const expected = createHmac("sha256", candidate.secret).update(`${timestamp}:`).update(body).digest();
    if (signatures.some((signature) => timingSafeEqual(signature, expected))) return candidate;
  }
  throw invalidParameter(PARAM, "The Paddle-Signature header does not match the body with the secret key connected to this workspace.");
}
