import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { test } from "node:test";
import { reasonWords } from "./reason-words.js";

/** Each reason reads as its sentence, and the reason is kept as recorded. */
function assertWords(processor: "stripe" | "paddle", cases: readonly [string, RegExp][]): void {
  for (const [reason, plain] of cases) {
    const words = reasonWords(processor, reason);
    assert.match(words.plain, plain, reason);
    assert.equal(words.raw, reason);
  }
}

const GENERAL = "Warden did not act on this event";
// What the scan below also finds that is no event's reason: a checkout refusal's code, the note a refund
// carries to the processor; and templates made of a part the scan cannot fill (whole()'s ending, given by
// each caller; the price check's problem, one of the plan links'): their cases are above.
const NOT_REASONS = /^[a-z_]+$|^Refunded by the vendor|^1 1 is not 1$|^1 in 1: |^.{0,8}$/;

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
  assertWords("stripe", cases);
});

test("a Paddle notification's recorded reason reads as a sentence, naming Paddle where the processor is named", () => {
  const cases: [string, RegExp][] = [
    ["Warden does not use customer.created events", /^Warden does not act on this kind of event$/],
    ["no signed-in buyer (warden_account in custom_data): Paddle names the customer by id only", /names no signed-in buyer/],
    ["custom_data names 5 seat(s), but the items' quantity paid for is 1", /^The seats named are not the quantity paid for/],
    [
      "custom_data names no plan, and the product has no default plan offered for this billing: the price paid cannot be checked",
      /names no plan and the product has no default plan/,
    ],
    [
      'price pri_01 (product pro_01) is linked to no plan in test: not checked against plan "pro" named in custom_data',
      /linked to no plan in this environment: link it on the plan's page/,
    ],
    ['its items map to 2 different plans in live: not checked against plan "pro" named in custom_data', /prices of different plans/],
    ['no items to map in test: not checked against plan "pro" named in custom_data', /lacks what Warden needs/],
    [
      'the price paid is linked to plan "basic" of tool "tabmaster", not plan "pro" of tool "tabmaster" named in custom_data',
      /another plan's than the one the checkout names/,
    ],
    ["adjustment refund is pending_approval, not approved", /^The refund or chargeback is not approved at Paddle yet/],
    ["adjustment chargeback is of no status, not approved", /not approved at Paddle yet/],
    ["adjustment credit changes no access", /changes no access/],
    ["subscription without an id or status", /lacks what Warden needs/],
    ["subscription sub_01 without a start date", /lacks what Warden needs/],
    ["transaction without an id", /lacks what Warden needs/],
    ["adjustment without id, action or transaction_id", /lacks what Warden needs/],
    ["adjustment without totals.total or currency_code", /lacks what Warden needs/],
    ['billed_at "yesterday" is not an RFC 3339 time', /^Paddle sent a value Warden cannot read$/],
    ['grand_total "-5" is not a whole, non-negative amount', /^Paddle sent a value Warden cannot read$/],
    ["quantity 1.5 is not a whole quantity", /^Paddle sent a value Warden cannot read$/],
    ['custom_data.warden_plan "a\\u0000" contains control characters', /^Paddle sent text Warden cannot store$/],
    ['no tool "gone" in this workspace', /a tool or bundle this workspace does not have/],
    ['no plan "gone" for tool "tabmaster"', /a plan this product does not have/],
    ['plan "lifetime" is billed one_time, not subscription', /billed another way/],
    ["checkout without the buyer's address", /^Paddle gave no email address for the buyer$/],
    ["applied 2 held-back subscription events", /^Applied, with the subscription's events/],
    ["licence of this checkout exists already", /exists already/],
    ["older than the stored state", /nothing to change/],
    ["refunded already", /^Refunded already$/],
    ["revoked by a lost dispute already", /lost dispute/],
  ];
  assertWords("paddle", cases);
});

// Every reason the payment code writes, read from its source (the values inside \${…} made up): none
// falls to the general sentence, so a reason added later without words fails here.
test("every reason Stripe's, Paddle's and the shared billing code can record has words", () => {
  const files = ["src/paddle", "src/payments", "src/stripe"].flatMap((dir) =>
    readdirSync(dir)
      .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))
      .map((f) => `${dir}/${f}`),
  );
  files.push("src/billing/catalogue.ts");
  const written = /(?:ignored\(|applied\(|reason: |problem: |MalformedField\(|return (?=`)|null \? (?="))\s*(["`])((?:(?!\1)[^\\]|\\.)*?)\1/g;
  const reasons = new Set<string>();
  for (const file of files) {
    for (const match of readFileSync(file, "utf8").matchAll(written)) {
      const reason = (match[2] ?? "").replace(/\$\{[^}]*\}/g, "1");
      if (!NOT_REASONS.test(reason)) reasons.add(reason);
    }
  }
  assert.ok(reasons.size > 40, `the reasons were found (${reasons.size})`);
  for (const reason of reasons) {
    for (const processor of ["stripe", "paddle"] as const) assert.notEqual(reasonWords(processor, reason).plain, GENERAL, `${processor}: ${reason}`);
  }
});
