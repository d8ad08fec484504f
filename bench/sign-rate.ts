// The cost of signing alone (scenario 8): Ed25519 signatures per second on one core, with
// the Node that runs Warden, pinned where Warden runs. Twice: node:crypto's signature of
// a token's signing input, and Warden's whole token (claims to JSON, base64url, signature).
//
//   node --import tsx bench/sign-rate.ts SECONDS
//
// Prints one JSON line: {signaturesPerSec, tokensPerSec, tokenBytes}.
import { createHash, generateKeyPairSync, sign } from "node:crypto";
import { type AccessClaims, signAccessToken } from "../src/tokens/access-token.js";

const seconds = Number(process.argv[2] ?? "2");
const { privateKey } = generateKeyPairSync("ed25519");
const x = String(privateKey.export({ format: "jwk" }).x);
const kid = createHash("sha256")
  .update(JSON.stringify({ crv: "Ed25519", kty: "OKP", x }))
  .digest("base64url");
const signer = { kid, key: privateKey, encodedHeader: Buffer.from(JSON.stringify({ alg: "EdDSA", typ: "JWT", kid })).toString("base64url") };
const iat = Math.floor(Date.now() / 1000);
// A paying customer's claims, as the access check signs them.
const claims: AccessClaims = {
  iss: "warden",
  aud: "bench:live",
  sub: "psn_0123456789abcdefghijklmn",
  email: "margaret.c123456@mail.example.org",
  workspace: "bench",
  env: "live",
  tool: "tabmaster",
  entitled: true,
  via: "subscription",
  plan: "monthly",
  features: ["export", "sync"],
  trial_ends_at: iat - 86_400 * 30,
  iat,
  exp: iat + 900,
};
const token = signAccessToken(signer, claims);
const signingInput = Buffer.from(token.slice(0, token.lastIndexOf(".")));

/** Calls per second of `work` over `seconds`, after a short warm-up. */
function rate(work: () => unknown): number {
  for (let n = 0; n < 500; n++) work();
  let calls = 0;
  const started = process.hrtime.bigint();
  const until = started + BigInt(Math.round(seconds * 1e9));
  let now = started;
  while (now < until) {
    for (let n = 0; n < 200; n++) work();
    calls += 200;
    now = process.hrtime.bigint();
  }
  return calls / (Number(now - started) / 1e9);
}

const signaturesPerSec = rate(() => sign(null, signingInput, privateKey));
const tokensPerSec = rate(() => signAccessToken(signer, claims));
process.stdout.write(`${JSON.stringify({ signaturesPerSec, tokensPerSec, tokenBytes: token.length })}\n`);
