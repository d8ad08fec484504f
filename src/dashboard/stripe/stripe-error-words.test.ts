import assert from "node:assert/strict";
import { test } from "node:test";
import { reconcileErrorWords, stripeErrorWords } from "./stripe-error-words.js";

test("Stripe's answer reads as a sentence first, by its code or its message, with Stripe's code and message kept as the raw detail", () => {
  const cases: [string | null, string, RegExp, boolean][] = [
    ["StripeAuthenticationError", "Invalid API Key provided: sk_test_****0123", /^Stripe did not accept the secret key stored here/, true],
    [null, "Invalid API Key provided: sk_live_****0123", /^Stripe did not accept the secret key stored here/, true],
    ["api_key_expired", "Expired API Key provided: sk_live_****0123", /has expired/, true],
    [
      "StripePermissionError",
      "The provided key 'rk_test_****0123' does not have the required permissions for this endpoint.",
      /^The restricted key stored here is not allowed to do this/,
      false,
    ],
    ["StripeRateLimitError", "Too many requests hit the API too quickly.", /slow down/, false],
    ["StripeConnectionError", "An error occurred with our connection to Stripe. Request was retried 1 times.", /^Warden could not reach Stripe/, false],
    ["StripeAPIError", "An unknown error occurred", /^Stripe failed on its side/, false],
    ["charge_already_refunded", "Charge ch_1 has already been refunded.", /refunded this payment already/, false],
    ["charge_disputed", "Charge ch_1 has been charged back; cannot issue a refund.", /answer the dispute in Stripe/, false],
    [null, "This PaymentIntent (pi_1) does not have a successful charge to refund.", /never went through/, false],
    [null, "A canceled subscription can only update its cancellation_details and metadata.", /cannot change this subscription as it is now/, false],
    [null, "Your account cannot currently make live charges.", /finish activating it/, false],
    ["resource_missing", "No such payment_intent: 'pi_1'", /another Stripe account or in the other mode/, false],
    ["StripeInvalidRequestError", "Something Stripe says for the first time.", /^Stripe refused the request\.$/, false],
  ];
  for (const [code, message, plain, keyRefused] of cases) {
    const words = stripeErrorWords({ code, message });
    assert.match(words.plain, plain, message);
    assert.equal(words.raw, code === null ? message : `${code}: ${message}`);
    assert.equal(words.keyRefused, keyRefused, message);
  }
});

test("a reconcile's recorded failure: Stripe's after 'Stripe: ', Warden's own otherwise, each kept as recorded", () => {
  const stripe = reconcileErrorWords("Stripe: Invalid API Key provided: sk_test_****0123");
  assert.deepEqual([stripe.raw, stripe.keyRefused], ["Invalid API Key provided: sk_test_****0123", true]);
  assert.match(stripe.plain, /did not accept the secret key/);
  const cases: [string, RegExp][] = [
    ["its process stopped before it ended; what it had applied stays", /server stopped while it ran/],
    ["the reconcile's lease was taken by another run", /Another reconcile of this environment took over/],
    ["SQLITE_BUSY: database is locked", /an error of Warden's own; the server's log has the details/],
  ];
  for (const [recorded, plain] of cases) {
    const words = reconcileErrorWords(recorded);
    assert.match(words.plain, plain);
    assert.deepEqual([words.raw, words.keyRefused], [recorded, false]);
  }
});
