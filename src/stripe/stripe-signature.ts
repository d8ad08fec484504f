// Stripe's webhook signature, checked over the exact bytes received before anything reads
// them: an unsigned sender then costs Warden one HMAC per connected environment, never a
// JSON parse (8 deeply nested 1 MiB bodies parsed before their check took a test process
// from 159 to 302 MB and 3.2 s). The scheme is Stripe's: `Stripe-Signature: t=<unix seconds>,
// v1=<hex HMAC-SHA256 of "<t>.<body>" keyed with the whole whsec_ secret>`, with several
// v1 while a secret is being rolled and other schemes (v0) ignored. Checked here rather
// than by the `stripe` package so that every refusal is in Warden's words: the package
// answers some malformed headers with its internals ("secureCompare must receive two
// arguments"). Tests sign with the package's own test header, so the two stay in step.
import { createHmac, timingSafeEqual } from "node:crypto";
import { invalidParameter } from "../errors/errors.js";

/** Stripe's own default: a signature older than five minutes is refused (a replay). */
const SIGNATURE_TOLERANCE_S = 300;

const PARAM = "Stripe-Signature";
const TIMESTAMP = /^\d{1,12}$/;
const V1 = /^[0-9a-f]{64}$/;

interface SignatureHeader {
  timestamp: number;
  signatures: Buffer[];
}

function parseSignatureHeader(header: string | undefined): SignatureHeader {
  if (header === undefined || header.trim() === "") {
    throw invalidParameter(PARAM, "The Stripe-Signature header is missing: Stripe signs every event it sends to this endpoint.");
  }
  const malformed = invalidParameter(
    PARAM,
    "The Stripe-Signature header is malformed: it must be t=<unix seconds>,v1=<64 hexadecimal digits>, as Stripe sends it.",
  );
  let timestamp: number | null = null;
  const signatures: Buffer[] = [];
  for (const item of header.split(",")) {
    const at = item.indexOf("=");
    const key = at < 0 ? item : item.slice(0, at);
    const value = at < 0 ? "" : item.slice(at + 1);
    if (key === "t") {
      if (timestamp !== null || !TIMESTAMP.test(value)) throw malformed;
      timestamp = Number(value);
    } else if (key === "v1") {
      if (!V1.test(value)) throw malformed;
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
export function verifyStripeSignature<T extends { secret: string }>(body: Buffer, header: string | undefined, candidates: readonly T[], now: number): T {
  const { timestamp, signatures } = parseSignatureHeader(header);
  if (Math.floor(now / 1000) - timestamp > SIGNATURE_TOLERANCE_S) {
    throw invalidParameter(
      PARAM,
      `The Stripe-Signature header was made more than ${SIGNATURE_TOLERANCE_S} seconds ago, outside the tolerance: a replayed delivery is refused.`,
    );
  }
  for (const candidate of candidates) {
    const expected = createHmac("sha256", candidate.secret).update(`${timestamp}.`).update(body).digest();
    if (signatures.some((signature) => timingSafeEqual(signature, expected))) return candidate;
  }
  throw invalidParameter(PARAM, "The Stripe-Signature header does not match the body with the signing secret connected to this workspace.");
}
