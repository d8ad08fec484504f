import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { Webhook as SvixWebhook } from "svix";
import { newWebhookSecret, signPayload, verifySignature, webhookHeaders } from "./signature.js";

// Vectors Warden made itself (scripts/make-signature-vectors.mjs signs them on node:crypto
// alone); each is checked against Warden and against both libraries receivers verify with.
const vectorsUrl = new URL("./fixtures/signature-vectors.json", import.meta.url);
const vectors = JSON.parse(readFileSync(vectorsUrl, "utf8")) as { tolerance_seconds: number; vectors: Vector[] };

interface Vector {
  id: string;
  secret: string;
  msg_id: string;
  timestamp: number;
  payload: string;
  expected_signature: string;
  webhook_signature: string;
  verify_secret?: string;
  now: number;
  outcome: "valid" | "no_matching_signature" | "timestamp_too_old" | "timestamp_too_new";
}

const LIBRARY_ERRORS = {
  no_matching_signature: /No matching signature/,
  timestamp_too_old: /timestamp too old/,
  timestamp_too_new: /timestamp too new/,
};

function vector(id: string): Vector {
  const found = vectors.vectors.find((v) => v.id === id);
  assert.ok(found, `no vector ${id}`);
  return found;
}

function headersFor(vector: Vector, signature = vector.webhook_signature) {
  return { "webhook-id": vector.msg_id, "webhook-timestamp": String(vector.timestamp), "webhook-signature": signature };
}

describe("signature vectors", () => {
  test("the fixture is what its script writes", async () => {
    const script = new URL("../../scripts/make-signature-vectors.mjs", import.meta.url);
    const { makeVectors } = await import(script.href);
    assert.deepEqual(makeVectors(), vectors);
  });

  test("the vectors hold a published example, a Unicode and an empty body, several signatures, a wrong secret and a stale timestamp, at a 300 s tolerance", () => {
    const ids = vectors.vectors.map((v) => v.id);
    for (const id of ["published-example", "unicode-payload", "empty-payload", "several-signatures-valid-last", "wrong-secret", "stale-timestamp"]) {
      assert.ok(ids.includes(id), id);
    }
    assert.ok(/[^\x00-\x7f]/.test(vector("unicode-payload").payload));
    assert.equal(vector("empty-payload").payload, "");
    assert.ok(vector("several-signatures-valid-last").webhook_signature.split(" ").length > 2);
    assert.equal(vectors.tolerance_seconds, 300);
  });

  for (const v of vectors.vectors) {
    test(`${v.id}: Warden, standardwebhooks and svix all sign ${v.expected_signature.slice(0, 12)}… and find it ${v.outcome}`, (t) => {
      const signedAt = new Date(v.timestamp * 1000);
      assert.equal(signPayload(v.secret, v.msg_id, v.timestamp, v.payload), v.expected_signature);
      assert.equal(new StandardWebhook(v.secret).sign(v.msg_id, signedAt, v.payload), v.expected_signature);
      assert.equal(new SvixWebhook(v.secret).sign(v.msg_id, signedAt, v.payload), v.expected_signature);

      const secret = v.verify_secret ?? v.secret;
      const headers = headersFor(v);
      const ours = verifySignature(secret, headers, v.payload, v.now, vectors.tolerance_seconds);
      assert.deepEqual(ours, v.outcome === "valid" ? { valid: true } : { valid: false, reason: v.outcome });
      // Both libraries read the clock: it is set to the vector's `now`.
      t.mock.timers.enable({ apis: ["Date"], now: v.now * 1000 });
      const libraries = {
        standardwebhooks: () => new StandardWebhook(secret).verify(v.payload, headers),
        svix: () => new SvixWebhook(secret).verify(v.payload, headers),
      };
      for (const [name, verify] of Object.entries(libraries)) {
        if (v.outcome === "valid" && v.payload === "" && name === "svix") {
          // svix's own copy of standardwebhooks parses the body once the signature matched,
          // and "" is not JSON: a SyntaxError, not a WebhookVerificationError, means it matched.
          assert.throws(verify, SyntaxError, name);
        } else if (v.outcome === "valid") {
          assert.deepEqual(verify(), v.payload === "" ? undefined : JSON.parse(v.payload), name);
        } else {
          assert.throws(verify, LIBRARY_ERRORS[v.outcome], name);
        }
      }
    });
  }

  test("malformed signature entries never pass, alone or as the only v1", () => {
    const v = vector("event");
    const good = v.expected_signature;
    const malformed = [
      "",
      " ",
      "v1,",
      ",",
      "v1",
      good.slice(0, 8),
      `${good}=`,
      `v1,${good.slice(3).replace(/=$/, "")}`,
      `V1,${good.slice(3)}`,
      ` v1,${good.slice(3, -2)}`,
    ];
    for (const signature of malformed) {
      assert.equal(verifySignature(v.secret, headersFor(v, signature), v.payload, v.now).valid, false, JSON.stringify(signature));
    }
  });

  test("a timestamp header that is not plain epoch seconds fails", () => {
    const v = vector("event");
    for (const timestamp of ["hello", `${v.timestamp}junk`, `-${v.timestamp}`, "1.8e9", `+${v.timestamp}`, ` ${v.timestamp}`, ""]) {
      const result = verifySignature(v.secret, { ...headersFor(v), "webhook-timestamp": timestamp }, v.payload, v.now);
      assert.equal(result.valid, false, timestamp);
    }
  });

  test("secrets that are empty, not canonical base64, or outside 24 to 75 bytes are refused for signing and verifying", () => {
    const base64Of = (length: number) => Buffer.alloc(length, 7).toString("base64");
    const bad = [
      "",
      "whsec_",
      "whsec_!!!!",
      `whsec_${base64Of(24).replaceAll("B", "-")}`,
      `whsec_${base64Of(24)} `,
      `whsec_${base64Of(23)}`,
      `whsec_${base64Of(76)}`,
      `whsk_${base64Of(24)}`,
    ];
    for (const secret of bad) {
      assert.throws(() => signPayload(secret, "msg_1", 1614265330, "{}"), /webhook secret/, secret);
      assert.throws(() => verifySignature(secret, {}, "{}", 1614265330), /webhook secret/, secret);
    }
    for (const secret of [`whsec_${base64Of(24)}`, base64Of(24), `whsec_${base64Of(75)}`]) {
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
    const v = vector("published-example");
    assert.deepEqual(webhookHeaders(v.secret, v.msg_id, v.timestamp, v.payload), {
      "webhook-id": v.msg_id,
      "webhook-timestamp": String(v.timestamp),
      "webhook-signature": v.expected_signature,
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
    const v = vector("event");
    const headers = headersFor(v);
    const upper = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toUpperCase(), value]));
    assert.deepEqual(verifySignature(v.secret, upper, v.payload, v.now), { valid: true });
    for (const name of Object.keys(headers)) {
      const without = Object.fromEntries(Object.entries(headers).filter(([n]) => n !== name));
      assert.deepEqual(verifySignature(v.secret, without, v.payload, v.now), { valid: false, reason: "missing_header" });
    }
  });

  test("signed with two secrets (a rotation's overlap), the header holds one v1 entry each, in order, and either verifies", () => {
    const [current, previous, other] = [newWebhookSecret(), newWebhookSecret(), newWebhookSecret()];
    const headers = webhookHeaders([current, previous], "evt_1", 1614265330, "{}");
    assert.equal(headers["webhook-signature"], `${signPayload(current, "evt_1", 1614265330, "{}")} ${signPayload(previous, "evt_1", 1614265330, "{}")}`);
    for (const secret of [current, previous]) assert.deepEqual(verifySignature(secret, headers, "{}", 1614265330), { valid: true });
    assert.deepEqual(verifySignature(other, headers, "{}", 1614265330), { valid: false, reason: "no_matching_signature" });
    assert.deepEqual(webhookHeaders([current], "evt_1", 1614265330, "{}"), webhookHeaders(current, "evt_1", 1614265330, "{}"));
    assert.throws(() => webhookHeaders([], "evt_1", 1614265330, "{}"), /at least one secret/);
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
