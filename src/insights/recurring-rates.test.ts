import assert from "node:assert/strict";
import { test } from "node:test";
// No database: ARR and the churn rate are arithmetic over the subscriptions use case's series,
// which its own tests read on both engines.
import { recurringRates } from "./insights.service.js";
import type { Series } from "./insights.types.js";

const series = (points: number[], previous: number[], total = 0): Series => ({
  points: points.map((value, i) => ({ date: `2026-11-${String(i + 1).padStart(2, "0")}`, value })),
  previous: previous.map((value, i) => ({ date: `2026-10-${String(i + 1).padStart(2, "0")}`, value })),
  total,
  previousTotal: 0,
});

const nobody = series([], []);

test("ARR is 12 × MRR at the range's end, against 12 × MRR at the end of the period before", () => {
  // €100.00 of MRR before the range, €150.00 at its end.
  const rates = recurringRates(series([10000, 15000], [8000, 10000]), series([0, 0], [0, 0]), series([2, 3], [2, 2]), 2);
  assert.deepEqual(rates.arr, { value: 180000, previous: 120000 });
});

test("the monthly churn rate is churned MRR over MRR at the start, brought to 30 days", () => {
  // €200.00 at the start; €10.00 churned over 30 days: 5%. The same €10.00 over 90 days: 5% ÷ 3.
  const mrr = series([19000], [20000]);
  assert.equal(recurringRates(mrr, series([1000], [], 1000), nobody, 30).monthlyChurnRate, 0.05);
  assert.equal(recurringRates(mrr, series([1000], [], 1000), nobody, 90).monthlyChurnRate, 0.05 / 3);
  assert.equal(recurringRates(mrr, series([1000], [], 1000), nobody, 15).monthlyChurnRate, 0.1, "half a month: twice the rate");
});

test("no MRR at the start is no rate, not a division by zero; ARR from none is 0", () => {
  const rates = recurringRates(series([4900], [0]), series([0], [], 0), nobody, 30);
  assert.equal(rates.monthlyChurnRate, null);
  assert.deepEqual(rates.arr, { value: 58800, previous: 0 });
  assert.equal(recurringRates(series([], []), series([], []), nobody, 7).monthlyChurnRate, null, "an empty range");
});

test("revenue per paying customer is MRR ÷ the people paying, at the end of the range and of the period before", () => {
  // €150.00 over 3 people at the end (€50.00), €100.00 over 2 before (€50.00); €100.00 over 3 rounds to the cent.
  const rates = recurringRates(series([10000, 15000], [8000, 10000]), nobody, series([2, 3], [2, 2]), 2);
  assert.deepEqual(rates.revenuePerPayingCustomer, { value: 5000, previous: 5000 });
  assert.deepEqual(recurringRates(series([10000], [10000]), nobody, series([3], [1]), 1).revenuePerPayingCustomer, { value: 3333, previous: 10000 });
});

test("nobody paying is no revenue per paying customer, not a division by zero", () => {
  const rates = recurringRates(series([4900], [0]), nobody, series([1], [0]), 30);
  assert.deepEqual(rates.revenuePerPayingCustomer, { value: 4900, previous: null });
  assert.deepEqual(recurringRates(series([], []), nobody, nobody, 7).revenuePerPayingCustomer, { value: null, previous: null });
});
