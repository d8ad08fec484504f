import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { dashboardApp, dashboardServices, TestBrowser } from "../../test-support/dashboard.js";
import { DIALECTS, seedCatalogue } from "../../test-support/harness.js";
import { makeInsightsHistory, makeRecurringHistory } from "../../test-support/insights.js";

// The Subscriptions page's ARR, churn rate and revenue per paying customer per currency
// (figures hand-computed in insights/paying-customers.test.ts), and every chart and table of
// every Insights page with its CSV.

const TODAY = Date.parse("2026-11-26T12:00:00Z");
const WEEK = "range=custom&from=2026-11-20&to=2026-11-26";

const text = (body: string) =>
  body
    .replace(/<[^>]+>/g, " ")
    .replace(/&amp;/g, "&")
    .replace(/&#39;/g, "'")
    .replace(/\s+/g, " ");

for (const dialect of DIALECTS) {
  describe(`dashboard insights: recurring revenue per currency, every table as CSV (${dialect})`, () => {
    test("the Subscriptions page shows ARR, the churn rate and revenue per paying customer per currency, in a table and as CSV", async () => {
      const env = await dashboardServices(dialect);
      env.clock.set(TODAY);
      const app = await dashboardApp(env);
      const ws = await seedCatalogue(env.services);
      await makeRecurringHistory(env.services, env.clock, ws, TODAY);
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const base = `/dashboard/w/${ws.slug}/test/insights/subscriptions`;
      const page = await browser.get(`${base}?tool=all&${WEEK}`);
      assert.equal(page.statusCode, 200);
      const read = text(page.body);
      assert.match(read, /ARR, EUR €360\.00 −25% against €480\.00/);
      assert.match(read, /MRR churn a month, EUR 107\.1%/, "€10.00 of €40.00 in 7 days, brought to 30");
      assert.match(read, /Per paying customer, EUR €15\.00 \+13% against €13\.33/);
      assert.match(read, /Per paying customer, JPY ¥3,200 Nobody paid at the range's start/);
      assert.match(read, /MRR churn a month, JPY — No MRR at the range's start: no rate/);
      assert.match(read, /Paying customers 2 3 Revenue per paying customer €15\.00 €13\.33/);
      assert.match(read, /Revenue per paying customer, EUR Download CSV of Revenue per paying customer, EUR €15\.00 /);

      const rates = await browser.get(`${base}/rates-jpy.csv?tool=all&${WEEK}`);
      assert.equal(rates.statusCode, 200);
      assert.equal(
        rates.body,
        '"figure","this_range","period_before"\r\n"arr_jpy","38400","0"\r\n"paying_customers","1","0"\r\n"revenue_per_paying_customer_jpy","3200",""\r\n"monthly_mrr_churn_rate","",""\r\n',
      );
      const perCustomer = (await browser.get(`${base}/per-customer-eur.csv?tool=all&${WEEK}`)).body.split("\r\n");
      assert.equal(perCustomer[5], '"2026-11-24","17.50","2","2026-11-17","13.33"');
    });

    test("every chart and table of every Insights page has its CSV, and each CSV link answers its table", async () => {
      const env = await dashboardServices(dialect);
      env.clock.set(TODAY);
      const app = await dashboardApp(env);
      const ws = await seedCatalogue(env.services);
      await makeRecurringHistory(env.services, env.clock, ws, TODAY - 5 * 86_400_000);
      env.clock.set(TODAY);
      await makeInsightsHistory(env.services, env.clock, ws, env.dataDir);
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      for (const group of ["revenue", "subscriptions", "people", "use"]) {
        for (const tool of ["all", ws.tool]) {
          const page = await browser.get(`/dashboard/w/${ws.slug}/test/insights/${group}?tool=${tool}&range=30d`);
          assert.equal(page.statusCode, 200);
          const panels = page.body.split('<section class="panel').slice(1);
          assert.ok(panels.length > 0);
          for (const panel of panels) {
            const title = /<h2 id="[^"]+">([^<]*)</.exec(panel)?.[1] ?? panel.slice(0, 80);
            const tables = (panel.match(/<table/g) ?? []).length;
            const drawn = panel.includes("<svg");
            if (tables === 0 && !drawn) continue; // an empty state or the trials' counts alone, below
            const csv = /<a class="button small" href="([^"]+\.csv\?[^"]+)" download>/.exec(panel)?.[1];
            assert.ok(csv, `${group} (${tool}): "${title}" has a table or a chart and a CSV link`);
            if (drawn) assert.ok(tables > 0, `${group} (${tool}): "${title}" has its table under its chart`);
            const file = await browser.get(csv.replace(/&amp;/g, "&"));
            assert.equal(file.statusCode, 200, `${group} (${tool}): ${csv}`);
            assert.match(file.body, /^"[a-z_0-9.]+"(,"[a-z_0-9.]+")*\r\n/, `${csv}: a header`);
          }
        }
      }
    });
  });
}
