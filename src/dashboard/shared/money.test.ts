import assert from "node:assert/strict";
import { test } from "node:test";
import { parseMajorAmount } from "./money.js";

test("amounts typed in the major unit become minor units by the currency's own decimals (0, 2 and 3)", () => {
  const cases: [string, string, number][] = [
    ["49.00", "eur", 4900],
    ["49", "EUR", 4900],
    ["49.5", "usd", 4950],
    [" 1,234.50 ", "gbp", 123450],
    ["1234.50", "gbp", 123450],
    ["0", "eur", 0],
    ["500", "jpy", 500],
    ["1,000,000", "krw", 1000000],
    ["49.125", "kwd", 49125],
    ["49.1", "kwd", 49100],
    ["90071992547409.91", "eur", Number.MAX_SAFE_INTEGER],
  ];
  for (const [typed, currency, minorUnits] of cases) {
    assert.deepEqual(parseMajorAmount(typed, currency), { ok: true, minorUnits }, `${typed} ${currency}`);
  }
});

test("what is not an amount in that currency is refused in plain words on the amount field", () => {
  const cases: [string, string, RegExp][] = [
    ["", "eur", /^Enter the amount in euros, like 49\.00\.$/],
    ["forty-nine", "eur", /^Enter the amount in euros, like 49\.00\.$/],
    ["49,00", "eur", /^Enter the amount in euros/],
    ["12,34.00", "usd", /^Enter the amount in US dollars, like 49\.00\.$/],
    ["4.9e3", "eur", /^Enter the amount in euros/],
    ["€49", "eur", /^Enter the amount in euros/],
    ["49.", "eur", /^Enter the amount in euros/],
    ["-5", "eur", /^The amount cannot be negative: enter 0 or more euros, like 49\.00\.$/],
    ["-0.50", "usd", /cannot be negative/],
    ["49.001", "eur", /^Amounts in euros have at most 2 decimals: enter an amount like 49\.00\.$/],
    ["500.5", "jpy", /^Amounts in Japanese yen have no decimals: enter a whole number, like 500\.$/],
    ["500.00", "krw", /^Amounts in South Korean won have no decimals/],
    ["49.1234", "kwd", /^Amounts in Kuwaiti dinars have at most 3 decimals: enter an amount like 49\.000\.$/],
    ["90071992547409.92", "eur", /^The amount is too large: enter at most 90,071,992,547,409 euros\.$/],
    ["99999999999999999999", "jpy", /^The amount is too large: enter at most 9,007,199,254,740,991 Japanese yen\.$/],
  ];
  for (const [typed, currency, message] of cases) {
    const parsed = parseMajorAmount(typed, currency);
    assert.equal(parsed.ok, false, `${typed} ${currency}`);
    if (parsed.ok) continue;
    assert.equal(parsed.param, "amount-cents", typed);
    assert.match(parsed.message, message, typed);
  }
});

test("an amount cannot be read without a three-letter currency: the currency field is named", () => {
  for (const currency of ["", "eu", "euro", "e1r", "€"]) {
    assert.deepEqual(parseMajorAmount("49.00", currency), { ok: false, param: "currency", message: "Enter the currency as three letters, like eur." });
  }
});
