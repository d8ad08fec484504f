import assert from "node:assert/strict";
import { test } from "node:test";
import { deliveryFailureWords } from "./failure-words.js";

test("a failed attempt reads as a sentence first, with what the sender recorded kept as the raw detail", () => {
  const cases: [number | null, string | null, RegExp, string][] = [
    [null, "ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9", /^Your server refused the connection/, "ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9"],
    [null, "timeout after 10000 ms", /^Timed out after 10 s: your server did not answer in time$/, "timeout after 10000 ms"],
    [null, "timeout after 2500 ms", /^Timed out after 2500 ms/, "timeout after 2500 ms"],
    [null, "ENOTFOUND: getaddrinfo ENOTFOUND nowhere.invalid", /host name does not exist in DNS/, "ENOTFOUND: getaddrinfo ENOTFOUND nowhere.invalid"],
    [null, "ECONNRESET: socket hang up", /closed the connection before answering/, "ECONNRESET: socket hang up"],
    [null, "CERT_HAS_EXPIRED: certificate has expired", /TLS certificate has expired/, "CERT_HAS_EXPIRED: certificate has expired"],
    [
      null,
      "ERR_TLS_CERT_ALTNAME_INVALID: Hostname/IP does not match",
      /certificate is for another host name/,
      "ERR_TLS_CERT_ALTNAME_INVALID: Hostname/IP does not match",
    ],
    [
      null,
      "EPRIVATE: example.test resolves only to private addresses",
      /resolves only to private addresses/,
      "EPRIVATE: example.test resolves only to private addresses",
    ],
    [
      null,
      "refused: 10.0.0.1 is a private address (set WARDEN_ALLOW_PRIVATE_WEBHOOKS=1 to allow)",
      /address is private/,
      "refused: 10.0.0.1 is a private address (set WARDEN_ALLOW_PRIVATE_WEBHOOKS=1 to allow)",
    ],
    [null, "invalid endpoint URL", /URL cannot be read/, "invalid endpoint URL"],
    [
      null,
      "could not sign: the endpoint's secret cannot be opened with WARDEN_SECRET_KEY",
      /could not sign the event/,
      "could not sign: the endpoint's secret cannot be opened with WARDEN_SECRET_KEY",
    ],
    [null, "EWHATEVER: something new", /^The request to your server failed$/, "EWHATEVER: something new"],
    [null, null, /^Your server did not answer$/, "no answer"],
    [500, null, /^Your server failed while handling the event$/, "HTTP 500"],
    [503, null, /unavailable/, "HTTP 503"],
    [504, null, /timed out/, "HTTP 504"],
    [301, null, /redirect, which Warden does not follow/, "HTTP 301"],
    [401, null, /verifies the signature/, "HTTP 401"],
    [404, null, /no page at this URL/, "HTTP 404"],
    [410, null, /410 Gone, which disables the endpoint/, "HTTP 410"],
    [429, null, /slow down/, "HTTP 429"],
    [422, null, /^Your server refused the event$/, "HTTP 422"],
  ];
  for (const [statusCode, error, plain, raw] of cases) {
    const words = deliveryFailureWords({ statusCode, error });
    assert.ok(words, `${statusCode} ${error}`);
    assert.match(words.plain, plain, `${statusCode} ${error}`);
    assert.equal(words.raw, raw);
  }
});

test("an answer in the 2xx range is no failure", () => {
  for (const statusCode of [200, 201, 204, 299]) assert.equal(deliveryFailureWords({ statusCode, error: null }), null);
});
