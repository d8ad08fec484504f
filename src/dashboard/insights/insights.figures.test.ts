import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { dashboardApp, dashboardServices, TestBrowser } from "../../test-support/dashboard.js";
import { DIALECTS, seedCatalogue } from "../../test-support/harness.js";
import { makeInsightsHistory } from "../../test-support/insights.js";

const TODAY = Date.parse("2026-11-26T12:00:00Z");

/** The text of a page without its tags, spaces folded: what a person reads. */
const text = (body: string) =>
  body
    .replace(/<[^>]+>/g, " ")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ");

for (const dialect of DIALECTS) {
  describe(`dashboard insights: the figures of a history (${dialect})`, () => {
    test("each page shows what the history made: revenue by currency, subscriptions, people, use; each table as CSV", async () => {
      const env = await dashboardServices(dialect);
      env.clock.set(TODAY);
      const app = await dashboardApp(env);
      const ws = await seedCatalogue(env.services);
      const history = await makeInsightsHistory(env.services, env.clock, ws, env.dataDir);
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const base = `/dashboard/w/${ws.slug}/test/insights`;

      const opened = await browser.get(base);
      assert.equal(opened.statusCode, 303);
      assert.equal(opened.headers.location, `${base}/revenue`);

      const revenue = await browser.get(`${base}/revenue?tool=all&range=7d`);
      assert.equal(revenue.statusCode, 200);
      const read = text(revenue.body);
      assert.match(read, /Net, EUR €104\.00 up from none against €0\.00/);
      assert.match(read, /Gross, EUR €153\.00/);
      assert.match(read, /Refunds, EUR €49\.00/);
      assert.match(read, /Suite for life suite-lifetime Suite suite €99\.00 €0\.00 €99\.00/, "the bundle by its name, its id after it");
      assert.match(read, /Lifetime lifetime None €49\.00 €49\.00 €0\.00/);
      assert.match(read, /20 Nov 2026 to 26 Nov 2026 , by day, for all tools/);
      assert.doesNotMatch(revenue.body, /style=|<script/, "nothing the policy forbids");

      const csv = await browser.get(`${base}/revenue/revenue-eur.csv?tool=all&range=7d`);
      assert.equal(csv.statusCode, 200);
      assert.equal(csv.headers["content-type"], "text/csv; charset=utf-8");
      assert.equal(csv.headers["content-disposition"], `attachment; filename="insights-${ws.slug}-test-all-revenue-eur-2026-11-20-to-2026-11-26.csv"`);
      const rows = csv.body.split("\r\n");
      assert.equal(
        rows[0],
        '"date","net_eur","gross_eur","refunds_eur","one_time_eur","subscription_eur","credit_packs_eur","previous_date","previous_net_eur"',
      );
      assert.equal(rows.length, 1 + 7 + 1, "a header, seven days, the last line's end");
      // The lifetime licence: one-time, no credit pack.
      assert.match(rows[5] ?? "", /^"2026-11-24","49\.00","49\.00","0\.00","49\.00","0\.00","0\.00","2026-11-17","0\.00"$/);
      assert.match(rows[7] ?? "", /^"2026-11-26","-49\.00","0\.00","49\.00",/);

      const subscriptions = text((await browser.get(`${base}/subscriptions?range=7d`)).body);
      assert.match(subscriptions, /Active subscriptions Download CSV of Active subscriptions 1 /);
      assert.match(subscriptions, /Monthly recurring revenue, EUR Download CSV of Monthly recurring revenue, EUR €5\.00 /);
      assert.match(subscriptions, /ARR, EUR €60\.00 /, "12 × the MRR of €5.00 at the range's end");
      assert.match(subscriptions, /MRR churn a month, EUR /);

      const people = text((await browser.get(`${base}/people?range=7d`)).body);
      assert.match(people, /Access granted by hand Download CSV of Access granted by hand 1 up from none/);

      const use = await browser.get(`${base}/use?range=7d&tool=${ws.tool}`);
      assert.equal(use.statusCode, 200);
      assert.match(text(use.body), /People active Download CSV of People active 1 /);
      assert.match(text(use.body), /Devices active Download CSV of Devices active 1 /);
      // Signed in and checking, holding nothing: whom to offer a plan, linked to their customer page.
      assert.ok(
        use.body.includes(
          `<a href="/dashboard/w/${ws.slug}/test/customers/${ws.tool}/${encodeURIComponent(history.user)}">${history.user}</a></td><td data-label="Access by">Free</td><td class="num" data-label="Active days">1</td>`,
        ),
      );
      // Paying and never active, but bought this week: not at risk yet (a new payer's 14 days).
      assert.ok(!use.body.includes(`${history.subscriber}</a></td><td data-label="Holds">Tab Master`), "bought days ago, not listed yet");
      const unpaid = (await browser.get(`${base}/use/top-unpaid.csv?range=7d&tool=${ws.tool}`)).body;
      assert.equal(unpaid, `"email","source","active_days"\r\n"${history.user}","free","1"\r\n`);
      const conversion = (await browser.get(`${base}/people/trial-conversion.csv?range=7d`)).body;
      assert.equal(conversion, '"trials_started","paid_within_trial","paid_within_30_days_after"\r\n"0","0","0"\r\n');
      const active = (await browser.get(`${base}/use/active-people.csv?range=7d&tool=${ws.tool}`)).body.split("\r\n");
      assert.match(active[7] ?? "", new RegExp(`^"${history.today}","1","1","1",`));

      // Two weeks on, paying and never active: at risk, each by what they hold, the product's name and its id after it.
      env.clock.set(TODAY + 15 * 86_400_000);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const later = await browser.get(`${base}/use?range=7d&tool=${ws.tool}`);
      assert.equal(later.statusCode, 200);
      for (const [email, holds] of [
        [history.subscriber, 'Tab Master <code class="id-secondary">tabmaster</code>'],
        [history.buyer, 'Suite <code class="id-secondary">suite</code>'],
      ]) {
        assert.ok(later.body.includes(`${email}</a></td><td data-label="Holds">${holds}</td>`), `${email} holds ${holds}`);
      }
    });
  });
}
