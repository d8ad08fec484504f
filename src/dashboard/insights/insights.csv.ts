// The tables of the Insights pages as CSV files, one per table on a page: the same
// figures the page shows, from the same use case. Amounts are written in the currency's
// major unit with a point (49.00, ¥500 as 500), which a spreadsheet reads as a number;
// the column names the currency.
import type { PeopleInsights, Point, RevenueInsights, Series, SubscriptionInsights, UseInsights } from "../../insights/insights.types.js";
import { csvCell } from "../customers/customers.csv.js";
import { currencyDigits } from "../shared/money.js";

/** A meter's chart and table: "." is in neither a tool's id nor a meter's, so no two meters share one. */
export const meterTableName = (m: { toolId: string; meterId: string }) => `meter-${m.toolId}.${m.meterId}`;

/** A table: its file's name (without `.csv`), its header, and its rows of text or numbers. */
export interface CsvTable {
  name: string;
  header: string[];
  rows: (string | number)[][];
}

/** An amount in minor units as the major unit's decimal text: 4900 eur is `49.00`, -500 jpy `-500`. */
export function majorUnits(minor: number, currency: string): string {
  const digits = currencyDigits(currency) ?? 2;
  return (minor / 10 ** digits).toFixed(digits);
}

/** A plain decimal number: no spreadsheet runs it, and a leading apostrophe would turn -49.00 into text. */
const DECIMAL = /^-?\d+(\.\d+)?$/;

/**
 * The file: every cell quoted, CRLF between records. Text goes through `csvCell`, which
 * keeps a spreadsheet from running it (an address is the buyer's to type); a number,
 * ours, passes as it is.
 */
export function csvFile(table: CsvTable): string {
  const cell = (value: string | number) => (typeof value === "number" || DECIMAL.test(value) ? `"${value}"` : csvCell(value));
  return [table.header, ...table.rows].map((row) => `${row.map(cell).join(",")}\r\n`).join("");
}

/** Rows of several series that share their dates, with the first's previous period after them. */
function seriesRows(series: Series[], write: (value: number) => string | number): (string | number)[][] {
  const first = series[0];
  if (!first) return [];
  return first.points.map((p: Point, i) => {
    const before = first.previous[i];
    return [p.date, ...series.map((s) => write(s.points[i]?.value ?? 0)), before?.date ?? "", before ? write(before.value) : ""];
  });
}

export function revenueTables(insights: RevenueInsights): CsvTable[] {
  return insights.currencies.flatMap((c) => {
    const money = (v: number) => majorUnits(v, c.currency);
    const code = c.currency.toLowerCase();
    return [
      {
        name: `revenue-${code}`,
        header: [
          "date",
          `net_${code}`,
          `gross_${code}`,
          `refunds_${code}`,
          `one_time_${code}`,
          `subscription_${code}`,
          `credit_packs_${code}`,
          "previous_date",
          `previous_net_${code}`,
        ],
        rows: seriesRows([c.net, c.gross, c.refunds, c.oneTime, c.subscription, c.packs], money),
      },
      {
        name: `plans-${code}`,
        header: ["plan", "plan_name", "bundle", "credit_pack", `gross_${code}`, `refunds_${code}`, `net_${code}`],
        rows: c.byPlan.map((p) => [
          p.planId,
          p.planName,
          p.bundleId ?? "",
          p.pack ? "yes" : "no",
          money(p.gross),
          money(p.refunds),
          money(p.gross - p.refunds),
        ]),
      },
      // Only where the processor reported it (Paddle): Stripe's sales carry no fee, and a column of zeros would read as nothing earned.
      ...(c.earnings === null
        ? []
        : [
            {
              name: `earnings-${code}`,
              header: ["date", `earnings_${code}`, "previous_date", `previous_earnings_${code}`],
              rows: seriesRows([c.earnings], money),
            },
          ]),
    ];
  });
}

export function subscriptionTables(insights: SubscriptionInsights): CsvTable[] {
  return [
    { name: "active", header: ["date", "active", "previous_date", "previous_active"], rows: seriesRows([insights.active], (v) => v) },
    ...insights.currencies.map((c) => {
      const code = c.currency.toLowerCase();
      const m = c.movements;
      return {
        name: `mrr-${code}`,
        header: [
          "date",
          `mrr_${code}`,
          `new_${code}`,
          `expansion_${code}`,
          `contraction_${code}`,
          `churn_${code}`,
          `reactivation_${code}`,
          "previous_date",
          `previous_mrr_${code}`,
        ],
        rows: seriesRows([c.mrr, m.new, m.expansion, m.contraction, m.churn, m.reactivation], (v) => majorUnits(v, c.currency)),
      };
    }),
    ...insights.currencies.flatMap((c) => {
      const code = c.currency.toLowerCase();
      const money = (v: number | null) => (v === null ? "" : majorUnits(v, c.currency));
      const { arr, monthlyChurnRate, revenuePerPayingCustomer: per } = c.rates;
      return [
        {
          name: `rates-${code}`,
          header: ["figure", "this_range", "period_before"],
          // The churn rate as a fraction (0.05 is 5%), over this range only; an empty cell where there is no figure.
          rows: [
            [`arr_${code}`, money(arr.value), money(arr.previous)],
            ["paying_customers", c.payingCustomers.points.at(-1)?.value ?? 0, c.payingCustomers.previous.at(-1)?.value ?? 0],
            [`revenue_per_paying_customer_${code}`, money(per.value), money(per.previous)],
            ["monthly_mrr_churn_rate", monthlyChurnRate === null ? "" : String(monthlyChurnRate), ""],
          ],
        },
        {
          name: `per-customer-${code}`,
          header: ["date", `revenue_per_paying_customer_${code}`, "paying_customers", "previous_date", `previous_revenue_per_paying_customer_${code}`],
          rows: c.revenuePerPayingCustomer.points.map((p, i) => {
            const before = c.revenuePerPayingCustomer.previous[i];
            return [
              p.date,
              majorUnits(p.value, c.currency),
              c.payingCustomers.points[i]?.value ?? 0,
              before?.date ?? "",
              before ? majorUnits(before.value, c.currency) : "",
            ];
          }),
        },
      ];
    }),
  ];
}

export function peopleTables(insights: PeopleInsights): CsvTable[] {
  return [
    {
      name: "new-customers",
      header: ["date", "new_customers", "previous_date", "previous_new_customers"],
      rows: seriesRows([insights.newCustomers], (v) => v),
    },
    { name: "trials", header: ["date", "trials_started", "previous_date", "previous_trials_started"], rows: seriesRows([insights.trialsStarted], (v) => v) },
    { name: "grants", header: ["date", "grants", "previous_date", "previous_grants"], rows: seriesRows([insights.grants], (v) => v) },
    {
      name: "trial-conversion",
      header: ["trials_started", "paid_within_trial", "paid_within_30_days_after"],
      rows: [[insights.trials.started, insights.trials.paidWithinTrial, insights.trials.paidWithin30DaysAfter]],
    },
  ];
}

export function useTables(insights: UseInsights): CsvTable[] {
  const { daily, weekly, monthly } = insights.activePeople;
  return [
    {
      name: "active-people",
      header: ["date", "active_in_the_day", "active_in_7_days", "active_in_30_days", "previous_date", "previous_active_in_the_day"],
      rows: seriesRows([daily, weekly, monthly], (v) => v),
    },
    { name: "devices", header: ["date", "active_devices", "previous_date", "previous_active_devices"], rows: seriesRows([insights.activeDevices], (v) => v) },
    {
      name: "at-risk",
      header: ["email", "holding", "last_active_at"],
      rows: insights.atRisk.map((p) => [p.email, p.holding, p.lastActiveAt ?? ""]),
    },
    {
      name: "top-unpaid",
      header: ["email", "source", "active_days"],
      rows: insights.topUnpaid.map((p) => [p.email, p.source, p.activeDays]),
    },
    ...insights.meters.map((m) => ({
      name: meterTableName(m),
      header: ["date", `${m.meterId}_spent`, "previous_date", `previous_${m.meterId}_spent`],
      rows: seriesRows([m.used], (v) => v),
    })),
    {
      name: "allowance-ran-out",
      header: ["email", "tool", "meter", "ran_out_at", "resets_at"],
      rows: insights.allowanceRanOut.map((p) => [p.email, p.toolId, p.meterId, p.ranOutAt, p.resetsAt]),
    },
  ];
}
