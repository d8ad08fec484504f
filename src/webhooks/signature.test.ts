import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { Webhook as SvixWebhook } from "svix";
import { newWebhookSecret, signPayload, verifySignature, webhookHeaders } from "./signature.js";

// The shared specification sits beside the repository (here and in CI).
const vectors = JSON.parse(readFileSync(new URL("../../../shared/spec/standard-webhooks-vectors.json", import.meta.url), "utf8")) as {
  positive_vectors: PositiveVector[];
  spec_example_unverifiable: { headers: Record<string, string>; signed_content_example: string };
  negative_vectors: NegativeVector[];
};

interface PositiveVector {
  id: string;
  secret?: string;
  msg_id: string;
  timestamp: number;
  payload?: string;
  payload_generator?: string;
  expected_signature: string;
}

interface NegativeVector {
  id: string;
  decoys?: string[];
  also_invalid?: string;
  must_fail?: string[];
  must_throw_on_construct?: string[];
  server_rejects_as_endpoint_secret?: string[];
  server_accepts?: string[];
}

function payloadOf(vector: PositiveVector): string {
  if (vector.payload !== undefined) return vector.payload;
  const generated = /^'(.)' repeated (\d+) times/.exec(vector.payload_generator ?? "");
  assert.ok(generated, `vector ${vector.id} has neither payload nor a known generator`);
  return (generated[1] as string).repeat(Number(generated[2]));
}

function negative(id: string): NegativeVector {
  const vector = vectors.negative_vectors.find((v) => v.id === id);
  assert.ok(vector, `no negative vector ${id}`);
  return vector;
}

function positive(id: string): PositiveVector & { secret: string } {
  const vector = vectors.positive_vectors.find((v) => v.id === id);
  assert.ok(vector?.secret, `no symmetric positive vector ${id}`);
  return { ...vector, secret: vector.secret };
}

function headersFor(vector: PositiveVector, signature: string) {
  return { "webhook-id": vector.msg_id, "webhook-timestamp": String(vector.timestamp), "webhook-signature": signature };
}

/** Entries of the vector file carry notes after the value, e.g. "whsec_… (24 bytes)" or "base64 '…' (…)". */
const secretIn = (entry: string) => /^base64 '([^']+)'/.exec(entry)?.[1] ?? (entry.split(" ")[0] as string);

describe("Standard Webhooks vectors", () => {
  for (const vector of vectors.positive_vectors) {
    if (vector.expected_signature.startsWith("v1,")) {
      test(`${vector.id}: signs to the expected signature and verifies`, () => {
        const secret = positive(vector.id).secret;
        const body = payloadOf(vector);
        assert.equal(signPayload(secret, vector.msg_id, vector.timestamp, body), vector.expected_signature);
        assert.deepEqual(verifySignature(secret, headersFor(vector, vector.expected_signature), body, vector.timestamp), { valid: true });
      });
    } else {
      // v1a (Ed25519) is the asymmetric scheme; Warden signs with v1 only, and a verifier
      // holding a symmetric secret skips entries of other versions.
      test(`${vector.id}: a ${vector.expected_signature.split(",")[0]} signature alone is not accepted by the v1 verifier`, () => {
        const { secret } = positive("std-main");
        const result = verifySignature(secret, headersFor(vector, vector.expected_signature), payloadOf(vector), vector.timestamp);
        assert.deepEqual(result, { valid: false, reason: "no_matching_signature" });
      });
    }
  }

  test("the specification's example header (v1 and v1a together) is parsed and, under another secret, refused", () => {
    const { headers, signed_content_example } = vectors.spec_example_unverifiable;
    const body = signed_content_example.split(".").slice(2).join(".");
    const result = verifySignature(newWebhookSecret(), headers, body, Number(headers["webhook-timestamp"]));
    assert.deepEqual(result, { valid: false, reason: "no_matching_signature" });
  });

  test("decoy-signatures-multi: one valid entry among decoys passes; the decoys alone fail", () => {
    const vector = positive("std-main");
    const { decoys = [] } = negative("decoy-signatures-multi");
    const body = payloadOf(vector);
    const check = (signature: string) => verifySignature(vector.secret, headersFor(vector, signature), body, vector.timestamp).valid;
    assert.equal(check([...decoys, vector.expected_signature].join(" ")), true);
    assert.equal(check([vector.expected_signature, ...decoys].join(" ")), true);
    assert.equal(check(decoys.join(" ")), false);
  });

  test("decoy-signatures-rust: invalid v1 entries fail alone and pass once the valid one is added", () => {
    const vector = positive("std-rust");
    const { decoys = [], also_invalid } = negative("decoy-signatures-rust");
    const body = payloadOf(vector);
    const check = (signature: string) => verifySignature(vector.secret, headersFor(vector, signature), body, vector.timestamp).valid;
    assert.equal(check(decoys.join(" ")), false);
    assert.equal(check(String(also_invalid)), false);
    assert.equal(check([...decoys, vector.expected_signature].join(" ")), true);
  });

  test("malformed-signatures: every one fails", () => {
    const vector = positive("std-main");
    const { must_fail = [] } = negative("malformed-signatures");
    assert.ok(must_fail.length >= 7);
    for (const entry of must_fail) {
      const signature = entry.startsWith("first 8 chars") ? vector.expected_signature.slice(0, 8) : entry;
      const result = verifySignature(vector.secret, headersFor(vector, signature), payloadOf(vector), vector.timestamp);
      assert.equal(result.valid, false, signature);
    }
  });

  test("timestamp-window: 300 s either way passes, 301 s fails, non-integers and negatives fail", () => {
    const vector = positive("std-main");
    const body = payloadOf(vector);
    const headers = headersFor(vector, vector.expected_signature);
    const at = (now: number) => verifySignature(vector.secret, headers, body, now);
    assert.deepEqual(at(vector.timestamp + 300), { valid: true });
    assert.deepEqual(at(vector.timestamp - 300), { valid: true });
    assert.deepEqual(at(vector.timestamp + 301), { valid: false, reason: "timestamp_too_old" });
    assert.deepEqual(at(vector.timestamp - 301), { valid: false, reason: "timestamp_too_new" });
    for (const timestamp of ["hello", "teadwd", `${vector.timestamp}junk`, `-${vector.timestamp}`, "1.6e9", ""]) {
      const result = verifySignature(vector.secret, { ...headers, "webhook-timestamp": timestamp }, body, vector.timestamp);
      assert.equal(result.valid, false, timestamp);
    }
  });

  test("empty-or-bad-secrets: refused for signing and verifying; the accepted ones sign", () => {
    const vector = negative("empty-or-bad-secrets");
    const bad = [...(vector.must_throw_on_construct ?? []), ...(vector.server_rejects_as_endpoint_secret ?? []).map(secretIn)];
    assert.ok(bad.length >= 12);
    for (const secret of bad) {
      assert.throws(() => signPayload(secret, "msg_1", 1614265330, "{}"), /webhook secret/, secret);
      assert.throws(() => verifySignature(secret, {}, "{}", 1614265330), /webhook secret/, secret);
    }
    for (const secret of (vector.server_accepts ?? []).map(secretIn)) {
      assert.match(signPayload(secret, "msg_1", 1614265330, "{}"), /^v1,[A-Za-z0-9+/]{43}=$/);
    }
  });
});

describe("signing", () => {
  test("a new secret is whsec_ and base64 of 24 random bytes", () => {
    const secret = newWebhookSecret();
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{32}$/);
    assert.equal(Buffer.from(secret.slice(6), "base64").length, 24);
    assert.notEqual(newWebhookSecret(), secret);
  });

  test("the headers carry the id, the timestamp, the signature and the content type", () => {
    const vector = positive("std-main");
    assert.deepEqual(webhookHeaders(vector.secret, vector.msg_id, vector.timestamp, payloadOf(vector)), {
      "webhook-id": vector.msg_id,
      "webhook-timestamp": String(vector.timestamp),
      "webhook-signature": vector.expected_signature,
      "content-type": "application/json",
    });
  });

  test("a timestamp that is not whole epoch seconds is a bug, not a signature", () => {
    const secret = newWebhookSecret();
    for (const timestamp of [1614265330.5, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      assert.throws(() => signPayload(secret, "msg_1", timestamp, "{}"), /whole epoch seconds/);
    }
  });

  test("header names are matched in any case; a missing header fails", () => {
    const vector = positive("std-main");
    const body = payloadOf(vector);
    const headers = headersFor(vector, vector.expected_signature);
    const upper = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toUpperCase(), value]));
    assert.deepEqual(verifySignature(vector.secret, upper, body, vector.timestamp), { valid: true });
    for (const name of Object.keys(headers)) {
      const without = Object.fromEntries(Object.entries(headers).filter(([n]) => n !== name));
      assert.deepEqual(verifySignature(vector.secret, without, body, vector.timestamp), { valid: false, reason: "missing_header" });
    }
  });

  test("a raw body given as bytes verifies like the string it encodes", () => {
    const secret = newWebhookSecret();
    const body = JSON.stringify({ email: "zoë@example.com", amount: 2900 });
    const headers = webhookHeaders(secret, "evt_1", 1614265330, body);
    assert.deepEqual(verifySignature(secret, headers, Buffer.from(body, "utf8"), 1614265330), { valid: true });
  });
});

describe("what we sign verifies in the receivers' libraries", () => {
  const body = JSON.stringify({
    id: "evt_4Zb1cS0aUq2kPj7yVw9XeR3n",
    type: "payment.refunded",
    created: 1_800_000_000,
    livemode: false,
    data: { email: "zoë@example.com" },
  });
  const libraries = {
    standardwebhooks: (secret: string, headers: Record<string, string>, payload: string) => new StandardWebhook(secret).verify(payload, headers),
    svix: (secret: string, headers: Record<string, string>, payload: string) => new SvixWebhook(secret).verify(payload, headers),
  };
  // Both libraries read the real clock, so these sign against it.
  const nowSeconds = () => Math.floor(Date.now() / 1000);

  for (const [name, verify] of Object.entries(libraries)) {
    test(`${name} verifies a signed delivery and hands back the body`, () => {
      const secret = newWebhookSecret();
      const headers = webhookHeaders(secret, "evt_4Zb1cS0aUq2kPj7yVw9XeR3n", nowSeconds(), body);
      assert.deepEqual(verify(secret, headers, body), JSON.parse(body));
    });

    test(`${name} and ours refuse a tampered body, a wrong secret and a timestamp older than five minutes`, () => {
      const secret = newWebhookSecret();
      const now = nowSeconds();
      const headers = webhookHeaders(secret, "evt_4Zb1cS0aUq2kPj7yVw9XeR3n", now, body);
      const tampered = body.replace("payment.refunded", "payment.disputed");
      const old = webhookHeaders(secret, "evt_4Zb1cS0aUq2kPj7yVw9XeR3n", now - 301, body);
      const otherSecret = newWebhookSecret();

      assert.throws(() => verify(secret, headers, tampered), /No matching signature/);
      assert.throws(() => verify(otherSecret, headers, body), /No matching signature/);
      assert.throws(() => verify(secret, old, body), /too old/);

      assert.deepEqual(verifySignature(secret, headers, tampered, now), { valid: false, reason: "no_matching_signature" });
      assert.deepEqual(verifySignature(otherSecret, headers, body, now), { valid: false, reason: "no_matching_signature" });
      assert.deepEqual(verifySignature(secret, old, body, now), { valid: false, reason: "timestamp_too_old" });
      assert.deepEqual(verifySignature(secret, headers, body, now), { valid: true });
    });
  }
});
