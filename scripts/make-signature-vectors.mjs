// Writes src/webhooks/fixtures/signature-vectors.json: Standard Webhooks (v1) signing
// vectors Warden made itself, to hold signature.ts and the receivers' libraries to.
//   node scripts/make-signature-vectors.mjs
// Signatures are computed here on node:crypto alone, not with signature.ts, so the
// vectors do not just repeat what Warden's code does. Everything is derived from fixed
// seeds: running it again writes the same file (signature.test.ts checks that it does).
import { createHash, createHmac } from "node:crypto";
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const OUTPUT = new URL("../src/webhooks/fixtures/signature-vectors.json", import.meta.url);
const T = 1_800_000_000;
const TOLERANCE = 300;

const bytes = (seed, length) => createHash("sha512").update(seed).digest().subarray(0, length);
const secretOf = (seed, length = 24) => `whsec_${bytes(seed, length).toString("base64")}`;
const keyOf = (secret) => Buffer.from(secret.replace(/^whsec_/, ""), "base64");
const sign = (secret, msgId, timestamp, payload) =>
  `v1,${createHmac("sha256", keyOf(secret)).update(`${msgId}.${timestamp}.${payload}`, "utf8").digest("base64")}`;

const main = secretOf("warden vectors: main secret");
const other = secretOf("warden vectors: another endpoint's secret");
const rotated = secretOf("warden vectors: the secret before rotation");
const event = JSON.stringify({
  id: "evt_4Zb1cS0aUq2kPj7yVw9XeR3n",
  type: "grant.created",
  created: T,
  livemode: false,
  data: { tool: "tabmaster", email: "ada.lovelace@gmail.com", grant: { id: "gr_7Qm2Vd9sKx4LpT1n", days: 30 } },
});
const decoy = (seed) => `v1,${bytes(seed, 32).toString("base64")}`;

/** One delivery as received; `expected_signature` is what a correct sender signs for it. */
function vector({
  id,
  about,
  secret = main,
  msg_id = "msg_2Kx9Pq7Lm4Vt8Rb1",
  timestamp = T,
  payload = event,
  header,
  verify_secret,
  now = timestamp,
  outcome,
}) {
  const expected_signature = sign(secret, msg_id, timestamp, payload);
  return {
    id,
    about,
    secret,
    msg_id,
    timestamp,
    payload,
    expected_signature,
    webhook_signature: header ? header(expected_signature) : expected_signature,
    ...(verify_secret ? { verify_secret } : {}),
    now,
    outcome,
  };
}

export function makeVectors() {
  const published = vector({
    id: "published-example",
    about: "the example the Standard Webhooks JavaScript library's own tests sign: a known answer from outside this repository",
    secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    msg_id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
    timestamp: 1614265330,
    payload: '{"test": 2432232314}',
    outcome: "valid",
  });
  if (published.expected_signature !== "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=") {
    throw new Error("the signing rule here no longer reproduces the published example");
  }
  const vectors = [
    published,
    vector({ id: "event", about: "a Warden event as delivered", outcome: "valid" }),
    vector({
      id: "unicode-payload",
      about: "non-ASCII text is signed as its UTF-8 bytes (accents, CJK, an emoji outside the BMP, a combining mark)",
      payload: JSON.stringify({ email: "zoë@exämple.com", name: "山田 太郎", note: "🔑 Ångström e\u0301" }),
      outcome: "valid",
    }),
    vector({ id: "empty-payload", about: "an empty body still has a signature", payload: "", outcome: "valid" }),
    vector({
      id: "large-payload",
      about: "a 16 KiB body, the largest Warden accepts on its API",
      payload: JSON.stringify({ blob: "x".repeat(16 * 1024 - 12) }),
      outcome: "valid",
    }),
    vector({
      id: "secret-without-prefix",
      about: "the whsec_ prefix is optional; the key is the base64 after it",
      secret: secretOf("warden vectors: main secret").slice("whsec_".length),
      outcome: "valid",
    }),
    vector({ id: "long-secret", about: "a 64-byte secret", secret: secretOf("warden vectors: a long secret", 64), outcome: "valid" }),
    vector({
      id: "several-signatures-valid-last",
      about: "the header lists several signatures; one valid entry among them is enough, wherever it stands",
      header: (good) => [decoy("decoy 1"), decoy("decoy 2"), good].join(" "),
      outcome: "valid",
    }),
    vector({
      id: "several-signatures-valid-first",
      about: "the valid entry first",
      header: (good) => [good, decoy("decoy 1")].join(" "),
      outcome: "valid",
    }),
    vector({
      id: "rotation-new-secret",
      about: "while a secret is rotated both signatures are sent; a receiver holding the new secret accepts",
      header: (good) => [sign(rotated, "msg_2Kx9Pq7Lm4Vt8Rb1", T, event), good].join(" "),
      outcome: "valid",
    }),
    vector({
      id: "rotation-old-secret",
      about: "the same header, verified with the secret before rotation",
      secret: rotated,
      header: (good) => [good, sign(main, "msg_2Kx9Pq7Lm4Vt8Rb1", T, event)].join(" "),
      outcome: "valid",
    }),
    vector({
      id: "other-versions-skipped",
      about: "entries of other versions (v1a is the asymmetric scheme) are skipped, not refused",
      header: (good) => [`v1a,${bytes("an Ed25519 signature", 64).toString("base64")}`, good].join(" "),
      outcome: "valid",
    }),
    vector({
      id: "only-other-versions",
      about: "a header with no v1 entry verifies nothing under a symmetric secret",
      header: () => `v1a,${bytes("an Ed25519 signature", 64).toString("base64")}`,
      outcome: "no_matching_signature",
    }),
    vector({
      id: "only-decoys",
      about: "well-formed v1 entries, none of them right",
      header: () => [decoy("decoy 1"), decoy("decoy 2")].join(" "),
      outcome: "no_matching_signature",
    }),
    vector({ id: "wrong-secret", about: "signed with one endpoint's secret, verified with another's", verify_secret: other, outcome: "no_matching_signature" }),
    vector({
      id: "tampered-payload",
      about: "the body changed after signing (one word)",
      payload: event.replace("grant.created", "grant.revoked"),
      header: () => sign(main, "msg_2Kx9Pq7Lm4Vt8Rb1", T, event),
      outcome: "no_matching_signature",
    }),
    vector({
      id: "other-message-id",
      about: "a signature made for another message id (the id is signed, so a replay under a new id fails)",
      header: () => sign(main, "msg_other", T, event),
      outcome: "no_matching_signature",
    }),
    vector({
      id: "unknown-version-label",
      about: "the right signature under a version label other than v1",
      header: (good) => good.replace(/^v1,/, "v2,"),
      outcome: "no_matching_signature",
    }),
    vector({ id: "no-version-label", about: "the right signature without its label", header: (good) => good.slice(3), outcome: "no_matching_signature" }),
    vector({ id: "truncated-signature", about: "the right signature cut short", header: (good) => good.slice(0, 20), outcome: "no_matching_signature" }),
    vector({
      id: "timestamp-at-tolerance-past",
      about: `received ${TOLERANCE} s after signing: still inside the window`,
      now: T + TOLERANCE,
      outcome: "valid",
    }),
    vector({ id: "stale-timestamp", about: `received ${TOLERANCE + 1} s after signing: too old`, now: T + TOLERANCE + 1, outcome: "timestamp_too_old" }),
    vector({
      id: "timestamp-at-tolerance-future",
      about: `the sender's clock ${TOLERANCE} s ahead: still inside the window`,
      now: T - TOLERANCE,
      outcome: "valid",
    }),
    vector({
      id: "future-timestamp",
      about: `the sender's clock ${TOLERANCE + 1} s ahead: too new`,
      now: T - TOLERANCE - 1,
      outcome: "timestamp_too_new",
    }),
    vector({
      id: "stale-and-wrong",
      about: "stale and wrongly signed: the timestamp is checked first",
      verify_secret: other,
      now: T + 3600,
      outcome: "timestamp_too_old",
    }),
  ];
  return {
    about:
      "Standard Webhooks v1 vectors made for Warden by scripts/make-signature-vectors.mjs. signature = 'v1,' + base64(HMAC-SHA256(key, msg_id + '.' + timestamp + '.' + payload as UTF-8)), key = base64-decoded secret after an optional 'whsec_'. A receiver verifies webhook_signature (space-separated entries) with verify_secret (else secret) at time now, allowing 300 s either way.",
    tolerance_seconds: TOLERANCE,
    vectors,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(OUTPUT, `${JSON.stringify(makeVectors(), null, 2)}\n`);
  console.log(`wrote ${fileURLToPath(OUTPUT)}`);
}
