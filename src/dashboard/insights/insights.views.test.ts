import assert from "node:assert/strict";
import { describe, test } from "node:test";
// No database here: the range, the CSV and the templates are pure functions of their input;
// the pages over both engines are in insights.test.ts.
import type { Point, RevenueInsights, Series, UseInsights } from "../../insights/insights.types.js";
import type { Frame } from "../shared/layout.js";
import { csvFile, majorUnits, peopleTables, revenueTables, subscriptionTables, useTables } from "./insights.csv.js";
import { parseRange } from "./insights.range.js";
import { insightsView, type Selection } from "./insights.views.js";

const NOW = Date.parse("2026-11-26T20:00:00Z");

describe("insights range", () => {
  test("fixed ranges end today (UTC): 7, 30 and 90 days by day, 12 months by month; anything else is 30 days", () => {
    assert.deepEqual(parseRange({ range: "7d" }, NOW), { range: { choice: "7d", from: "2026-11-20", to: "2026-11-26", grain: "day" }, refusal: null });
    assert.deepEqual(parseRange({ range: "30d" }, NOW).range, { choice: "30d", from: "2026-10-28", to: "2026-11-26", grain: "day" });
    assert.deepEqual(parseRange({ range: "90d" }, NOW).range, { choice: "90d", from: "2026-08-29", to: "2026-11-26", grain: "day" });
    assert.deepEqual(parseRange({ range: "12m" }, NOW).range, { choice: "12m", from: "2025-12-01", to: "2026-11-26", grain: "month" });
    assert.deepEqual(parseRange({ range: "forever" }, NOW).range, parseRange({}, NOW).range);
    assert.equal(parseRange({}, NOW).range.choice, "30d");
  });

  test("a custom range: by day up to 92 days, by month beyond; refused by the field when wrong, showing 30 days instead", () => {
    assert.deepEqual(parseRange({ range: "custom", from: "2026-11-01", to: "2026-11-01" }, NOW).range, {
      choice: "custom",
      from: "2026-11-01",
      to: "2026-11-01",
      grain: "day",
    });
    assert.equal(parseRange({ range: "custom", from: "2026-08-27", to: "2026-11-26" }, NOW).range.grain, "day", "92 days");
    assert.equal(parseRange({ range: "custom", from: "2026-08-26", to: "2026-11-26" }, NOW).range.grain, "month", "93 days");
    const refused = (from: string, to: string) => parseRange({ range: "custom", from, to }, NOW).refusal;
    assert.equal(refused("2026-02-31", "2026-03-02")?.field, "from", "no 31 February");
    assert.equal(refused("", "2026-03-02")?.field, "from");
    assert.equal(refused("2026-11-01", "nope")?.field, "to");
    assert.match(refused("2026-11-01", "2026-11-27")?.error ?? "", /after today/);
    assert.match(refused("2026-11-02", "2026-11-01")?.error ?? "", /on or before/);
    assert.match(refused("2023-01-01", "2026-11-01")?.error ?? "", /three years/);
    const shown = parseRange({ range: "custom", from: "x", to: "y" }, NOW).range;
    assert.deepEqual([shown.from, shown.to, shown.grain], ["2026-10-28", "2026-11-26", "day"]);
  });
});

const series = (dates: string[], values: number[], previous: number[] = values.map(() => 0)): Series => ({
  points: dates.map((date, i): Point => ({ date, value: values[i] ?? 0 })),
  previous: dates.map((_, i): Point => ({ date: `2026-10-${String(i + 20).padStart(2, "0")}`, value: previous[i] ?? 0 })),
  total: values.reduce((a, b) => a + b, 0),
  previousTotal: previous.reduce((a, b) => a + b, 0),
});
const DATES = ["2026-11-24", "2026-11-25", "2026-11-26"];

const revenue: RevenueInsights = {
  currencies: [
    {
      currency: "eur",
      gross: series(DATES, [4900, 0, 9900]),
      refunds: series(DATES, [0, 4900, 0]),
      net: series(DATES, [4900, -4900, 9900], [0, 4900, 0]),
      oneTime: series(DATES, [4900, 0, 9900]),
      subscription: series(DATES, [0, 0, 0]),
      packs: series(DATES, [0, 0, 900]),
      byPlan: [
        { planId: "lifetime", planName: "Lifetime", bundleId: null, pack: false, gross: 4900, refunds: 4900 },
        { planId: "suite-lifetime", planName: "Suite for life", bundleId: "suite", pack: false, gross: 9000, refunds: 0 },
        { planId: "pack-1000", planName: "1,000 summaries", bundleId: null, pack: true, gross: 900, refunds: 0 },
      ],
      earnings: series(DATES, [4000, -4000, 8100]),
    },
    {
      currency: "jpy",
      gross: series(DATES, [500, 0, 0]),
      refunds: series(DATES, [0, 0, 0]),
      net: series(DATES, [500, 0, 0]),
      oneTime: series(DATES, [500, 0, 0]),
      subscription: series(DATES, [0, 0, 0]),
      packs: series(DATES, [0, 0, 0]),
      byPlan: [{ planId: "lifetime", planName: "Lifetime", bundleId: null, pack: false, gross: 500, refunds: 0 }],
      earnings: null,
    },
  ],
};

const use: UseInsights = {
  activePeople: { daily: series(DATES, [1, 2, 1]), weekly: series(DATES, [1, 2, 2]), monthly: series(DATES, [1, 2, 2]) },
  activeDevices: series(DATES, [1, 3, 1]),
  atRisk: [
    { personId: "psn_1", email: "=cmd|' /C calc'!A0@example.com", lastActiveAt: null, holding: "tool:tabmaster" },
    { personId: "psn_3", email: "gone@example.com", lastActiveAt: null, holding: "bundle:retired" },
  ],
  topUnpaid: [{ personId: "psn_2", email: "free+<b>@example.com", activeDays: 12, source: "trial" }],
  meters: [{ toolId: "tabmaster", meterId: "summaries", name: "Summaries", unit: "summaries", used: series(DATES, [3, 0, 7]) }],
  allowanceRanOut: [
    {
      personId: "psn_4",
      email: "heavy+<i>@example.com",
      toolId: "tabmaster",
      meterId: "summaries",
      ranOutAt: "2026-11-26T09:30:00.000Z",
      resetsAt: "2026-12-01T00:00:00.000Z",
    },
  ],
};

describe("insights CSV", () => {
  test("amounts in the currency's major unit, negative ones as numbers; addresses formula-proof", () => {
    assert.equal(majorUnits(4900, "eur"), "49.00");
    assert.equal(majorUnits(-4900, "eur"), "-49.00");
    assert.equal(majorUnits(500, "jpy"), "500");
    const tables = revenueTables(revenue);
    assert.deepEqual(
      tables.map((t) => t.name),
      ["revenue-eur", "plans-eur", "earnings-eur", "revenue-jpy", "plans-jpy"],
      "one table per currency, never summed; earnings only where the processor reported them",
    );
    assert.equal(
      csvFile(tables[2] as (typeof tables)[number]),
      [
        '"date","earnings_eur","previous_date","previous_earnings_eur"',
        '"2026-11-24","40.00","2026-10-20","0.00"',
        '"2026-11-25","-40.00","2026-10-21","0.00"',
        '"2026-11-26","81.00","2026-10-22","0.00"',
        "",
      ].join("\r\n"),
    );
    const eur = csvFile(tables[0] as (typeof tables)[number]);
    assert.equal(
      eur,
      [
        '"date","net_eur","gross_eur","refunds_eur","one_time_eur","subscription_eur","credit_packs_eur","previous_date","previous_net_eur"',
        '"2026-11-24","49.00","49.00","0.00","49.00","0.00","0.00","2026-10-20","0.00"',
        '"2026-11-25","-49.00","0.00","49.00","0.00","0.00","0.00","2026-10-21","49.00"',
        '"2026-11-26","99.00","99.00","0.00","99.00","0.00","9.00","2026-10-22","0.00"',
        "",
      ].join("\r\n"),
    );
    assert.match(
      csvFile(tables[1] as (typeof tables)[number]),
      /"lifetime","Lifetime","","no","49\.00","49\.00","0\.00"\r\n"suite-lifetime","Suite for life","suite","no","90\.00","0\.00","90\.00"\r\n"pack-1000","1,000 summaries","","yes","9\.00","0\.00","9\.00"/,
    );
    const useNames = useTables(use).map((t) => t.name);
    assert.deepEqual(useNames.slice(-2), ["meter-tabmaster.summaries", "allowance-ran-out"]);
    const meter = csvFile(useTables(use).find((t) => t.name === "meter-tabmaster.summaries") as (typeof tables)[number]);
    assert.match(meter, /^"date","summaries_spent","previous_date","previous_summaries_spent"\r\n"2026-11-24","3","2026-10-20","0"\r\n/);
    const ranOut = csvFile(useTables(use).find((t) => t.name === "allowance-ran-out") as (typeof tables)[number]);
    assert.ok(ranOut.endsWith(`"heavy+<i>@example.com","tabmaster","summaries","2026-11-26T09:30:00.000Z","2026-12-01T00:00:00.000Z"\r\n`));
    const atRisk = csvFile(useTables(use).find((t) => t.name === "at-risk") as (typeof tables)[number]);
    assert.ok(atRisk.includes(`"'=cmd|' /C calc'!A0@example.com","tool:tabmaster",""`), "a spreadsheet shows the address, never runs it");
  });

  test("subscriptions and people: a table per measure, MRR per currency with its movements", () => {
    const zero = series(DATES, [0, 0, 0]);
    const subs = subscriptionTables({
      active: series(DATES, [1, 2, 2]),
      currencies: [
        {
          currency: "usd",
          mrr: series(DATES, [500, 1000, 500]),
          movements: { new: series(DATES, [500, 500, 0]), expansion: zero, contraction: zero, churn: series(DATES, [0, 0, 500]), reactivation: zero },
          payingCustomers: series(DATES, [1, 2, 1]),
          revenuePerPayingCustomer: series(DATES, [500, 500, 500]),
          rates: { arr: { value: 6000, previous: 0 }, monthlyChurnRate: null, revenuePerPayingCustomer: { value: 500, previous: null } },
        },
      ],
    });
    assert.deepEqual(
      subs.map((t) => t.name),
      ["active", "mrr-usd", "rates-usd", "per-customer-usd"],
    );
    assert.equal(
      csvFile(subs[2] as (typeof subs)[number]),
      [
        '"figure","this_range","period_before"',
        '"arr_usd","60.00","0.00"',
        '"paying_customers","1","0"',
        '"revenue_per_paying_customer_usd","5.00",""',
        '"monthly_mrr_churn_rate","",""',
        "",
      ].join("\r\n"),
      "no figure (nobody paying before, no MRR to churn from) is an empty cell, never 0",
    );
    assert.match(
      csvFile(subs[3] as (typeof subs)[number]),
      /^"date","revenue_per_paying_customer_usd","paying_customers","previous_date","previous_revenue_per_paying_customer_usd"\r\n"2026-11-24","5\.00","1","2026-10-20","0\.00"\r\n/,
    );
    assert.match(csvFile(subs[1] as (typeof subs)[number]), /"2026-11-26","5\.00","0\.00","0\.00","0\.00","5\.00","0\.00","2026-10-22","0\.00"\r\n$/);
    const people = peopleTables({
      newCustomers: series(DATES, [1, 0, 2]),
      trialsStarted: zero,
      grants: zero,
      trials: { started: 0, paidWithinTrial: 0, paidWithin30DaysAfter: 0 },
    });
    assert.deepEqual(
      people.map((t) => t.name),
      ["new-customers", "trials", "grants", "trial-conversion"],
    );
    assert.match(
      csvFile(people[0] as (typeof people)[number]),
      /^"date","new_customers","previous_date","previous_new_customers"\r\n"2026-11-24","1","2026-10-20","0"\r\n/,
    );
  });
});

const frame: Frame = {
  email: "owner@example.com",
  csrf: "t",
  workspaces: [{ id: "ws_1", slug: "acme", name: "Acme" } as Frame["workspaces"][number]],
  current: { workspace: { id: "ws_1", slug: "acme", name: "Acme" } as Frame["workspaces"][number], env: "test" },
  section: "insights",
};
const tools = [{ id: "tabmaster", name: "Tab Master", trialDays: 0, createdAt: 0 }];
const bundles = [{ id: "suite", name: "The Suite", toolIds: ["tabmaster"], createdAt: 0 }];
const selection = (over: Partial<Selection> = {}): Selection => ({
  tool: null,
  range: { choice: "custom", from: "2026-11-24", to: "2026-11-26", grain: "day" },
  typed: { from: "2026-11-24", to: "2026-11-26" },
  refusal: null,
  ...over,
});

describe("insights pages' templates", () => {
  test("revenue: a section per currency in its own format, stats with the change, a plan table, CSV links with the choices", () => {
    const page = insightsView(frame, { tools, bundles, selection: selection(), shown: { group: "revenue", data: revenue, processor: "stripe" } }).markup;
    assert.match(page, /<h2 class="insights-currency">EUR<\/h2>/);
    assert.match(page, /<h2 class="insights-currency">JPY<\/h2>/);
    assert.match(page, /<p class="stat-label">Net, EUR<\/p><p class="stat-value">€99\.00<\/p><p class="stat-note">\+102% against €49\.00<\/p>/);
    assert.match(page, /<p class="stat-label">Net, JPY<\/p><p class="stat-value">¥500<\/p>/);
    assert.match(
      page,
      /<th scope="row"[^>]*>Suite for life <span class="muted">suite-lifetime<\/span><\/th><td[^>]*>The Suite <code class="id-secondary">suite<\/code><\/td><td class="num"[^>]*>€90\.00<\/td>/,
    );
    assert.match(page, /<p class="stat-label">Credit packs, EUR<\/p><p class="stat-value">€9\.00<\/p>/);
    // Earnings where the processor reported them (a chart and its CSV); said plainly where Stripe did not, never a guess.
    assert.match(page, /<p class="stat-label">Earnings after fee and tax, EUR<\/p><p class="stat-value">€81\.00<\/p>/);
    assert.ok(page.includes("/insights/revenue/earnings-eur.csv?"));
    assert.match(
      page,
      /<p class="stat-label">Earnings after fee and tax, JPY<\/p><p class="stat-value">Not reported<\/p><p class="stat-note">Not reported by Stripe/,
    );
    assert.ok(!page.includes("earnings-jpy"), "no chart or CSV of earnings nobody reported");
    assert.match(
      page,
      /<th scope="row" data-label="Plan">1,000 summaries <span class="muted">pack-1000<\/span> <span class="muted">\(credit pack\)<\/span><\/th>/,
    );
    assert.match(page, /<th scope="row" data-label="Plan">Lifetime <span class="muted">lifetime<\/span><\/th>/, "a plan that is no pack is not marked");
    assert.ok(page.includes('href="/dashboard/w/acme/test/insights/revenue/plans-eur.csv?tool=all&amp;range=custom&amp;from=2026-11-24&amp;to=2026-11-26"'));
    assert.match(
      page,
      /<a class="tab" href="\/dashboard\/w\/acme\/test\/insights\/use\?tool=all&amp;range=custom&amp;from=2026-11-24&amp;to=2026-11-26">Use<\/a>/,
    );
    assert.match(page, /<a class="tab" href="[^"]+\/revenue\?[^"]+" aria-current="page">Revenue<\/a>/);
    assert.match(page, /<a href="\/dashboard\/w\/acme\/test\/insights\/revenue" aria-current="page">Insights<\/a>/, "the navigation's entry");
    assert.doesNotMatch(page, /style=|<script/);
  });

  test("no revenue: what to do, with a link to Stripe; a refused range: the error tied to its field", () => {
    const page = insightsView(frame, {
      tools,
      bundles,
      selection: selection({ refusal: { field: "to", error: "The last day cannot be after today (UTC)." } }),
      shown: { group: "revenue", data: { currencies: [] }, processor: null },
    }).markup;
    assert.match(page, /No revenue in this range/);
    assert.match(page, /<a href="\/dashboard\/w\/acme\/test\/stripe">connect Stripe<\/a>/);
    assert.match(
      page,
      /id="to-error"[^>]*>The last day cannot be after today \(UTC\)\.<\/div><input id="to" name="to" type="date" value="2026-11-26" aria-invalid="true" aria-describedby="to-error" autofocus>/,
    );
    assert.match(page, /Showing the last 30 days instead/);
  });

  test("use: at-risk and top unpaid people linked to their customer page (the list when all of several tools), escaped", () => {
    const two = [...tools, { id: "notepad", name: "Notepad", trialDays: 0, createdAt: 0 }];
    const all = insightsView(frame, { tools: two, bundles, selection: selection(), shown: { group: "use", data: use } }).markup;
    assert.match(all, /Choose a tool above to open each person&#39;s page from here\./);
    const only = insightsView(frame, { tools, bundles, selection: selection(), shown: { group: "use", data: use } }).markup;
    assert.ok(only.includes(`href="/dashboard/w/acme/test/customers/tabmaster/free%2B%3Cb%3E%40example.com"`), "the workspace's only tool");
    assert.ok(all.includes(`<a href="/dashboard/w/acme/test/customers?q=free%2B%3Cb%3E%40example.com">free+&lt;b&gt;@example.com</a>`));
    assert.match(all, /<td[^>]*>Trial<\/td><td class="num"[^>]*>12<\/td>/);
    assert.match(all, /<span class="muted">Never<\/span>/);
    assert.match(all, /<td[^>]*>Tab Master <code class="id-secondary">tabmaster<\/code><\/td>/, "what a payer holds, by its name");
    assert.match(all, /<td[^>]*>retired<\/td>/, "a product no longer in the catalogue, by its id");
    const one = insightsView(frame, { tools, bundles, selection: selection({ tool: "tabmaster" }), shown: { group: "use", data: use } }).markup;
    assert.ok(one.includes(`href="/dashboard/w/acme/test/customers/tabmaster/free%2B%3Cb%3E%40example.com"`));
    assert.match(one, /<option value="tabmaster" selected>Tab Master<\/option>/);
    assert.match(one, /for Tab Master; each figure against the period of the same length just before/);
  });

  test("use: a chart per meter and the allowances used up, linked to the person's page of the meter's tool, escaped", () => {
    const all = insightsView(frame, { tools, bundles, selection: selection(), shown: { group: "use", data: use } }).markup;
    assert.match(all, /<h2 id="meter-tabmaster.summaries">Tab Master: Summaries spent<\/h2>/);
    assert.ok(all.includes('href="/dashboard/w/acme/test/insights/use/meter-tabmaster.summaries.csv?tool=all'));
    assert.ok(all.includes(`<a href="/dashboard/w/acme/test/customers/tabmaster/heavy%2B%3Ci%3E%40example.com">heavy+&lt;i&gt;@example.com</a>`));
    assert.match(all, /<td[^>]*>Tab Master <code class="id-secondary">tabmaster<\/code>: Summaries <code class="id-secondary">summaries<\/code><\/td>/);
    const one = insightsView(frame, { tools, bundles, selection: selection({ tool: "tabmaster" }), shown: { group: "use", data: use } }).markup;
    assert.match(one, /<h2 id="meter-tabmaster.summaries">Summaries spent<\/h2>/);
    assert.match(one, /<td[^>]*>Summaries <code class="id-secondary">summaries<\/code><\/td>/);
    const none = insightsView(frame, {
      tools,
      bundles,
      selection: selection(),
      shown: { group: "use", data: { ...use, meters: [], allowanceRanOut: [] } },
    }).markup;
    assert.match(none, /No tool here declares a meter/);
    assert.doesNotMatch(none, /Allowance used up/);
  });
});
