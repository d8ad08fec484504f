import assert from "node:assert/strict";
import { test } from "node:test";
import { stripeReasonWords } from "./reason-words.js";

test("an event's recorded reason reads as a sentence first, the reason kept as it was recorded", () => {
  const cases: [string, RegExp][] = [
    ["Warden does not use customer.created events", /^Warden does not act on this kind of event$/],
    ["price price_1 (product prod_1) is linked to no plan", /linked to no plan: link it on the plan's page/],
    ["its items map to 2 different plans", /prices of different plans/],
    ["no warden_tool or warden_bundle metadata (not a checkout Warden created)", /^Not a checkout Warden started/],
    ["both warden_tool and warden_bundle metadata", /both a tool and a bundle/],
    ['warden_seats "x" is not a whole number of seats', /number of seats cannot be read/],
    ["payment is unpaid; the licence follows checkout.session.async_payment_succeeded", /has not gone through yet/],
    ["checkout in setup mode buys nothing", /buys nothing/],
    ["partial refund (100 of 4900): the licence stands", /^A partial refund: the licence stands$/],
    ["no licence was bought with this payment (a subscription's refund sends no event)", /^No licence or subscription was paid/],
    ["no licence or subscription invoice was paid with this payment", /^No licence or subscription was paid/],
    ['its price is linked to a plan of bundle "suite": the subscription keeps its product and plan', /keeps what it gives/],
    ['its price is linked to plan "lifetime", plan "lifetime" is billed one_time, not subscription: the plan stays', /the plan stays$/],
    ["the disputed payment is neither a licence's nor a known subscription's", /not one Warden knows/],
    ["dispute closed with status warning_closed", /closed without a change to access/],
    ["waiting for the checkout that names the buyer", /^Waiting for the checkout/],
    ["its invoice's invoice.paid has not arrived: the payment is linked to its subscription when it does", /^Waiting for its invoice/],
    ['invoice payment names no payment intent (type "payment_record")', /lacks what Warden needs/],
    ["checkout without the buyer's address", /no email address for the buyer/],
    ["no Checkout Session names its buyer", /no email address for the buyer/],
    ["amount_total 1e+300 is not a whole, non-negative amount", /value Warden cannot read/],
    ["customer_details.email 7 is not text", /value Warden cannot read/],
    ['metadata.warden_plan "a\\u0000" contains control characters', /text Warden cannot store/],
    ["charge without amount, amount_refunded or currency", /lacks what Warden needs/],
    ["invoice of no subscription", /lacks what Warden needs/],
    ["not a JSON object", /lacks what Warden needs/],
    ["something new", /^Warden did not act on this event$/],
  ];
  for (const [reason, plain] of cases) {
    const words = stripeReasonWords(reason);
    assert.match(words.plain, plain, reason);
    assert.equal(words.raw, reason);
  }
});
