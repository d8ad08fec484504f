import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { dashboardApp, dashboardServices, TestBrowser } from "../../test-support/dashboard.js";
import { DIALECTS, seedWorkspace } from "../../test-support/harness.js";

const TODAY = Date.parse("2026-11-26T12:00:00Z");

/** The text of a page without its tags, spaces folded: what a person reads. */
const text = (body: string) =>
  body
    .replace(/<[^>]+>/g, " ")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ");

for (const dialect of DIALECTS) {
  describe(`dashboard insights (${dialect})`, () => {
    test("ranges: 12 months by month, a custom range by day, a wrong one refused by its field; nothing yet says what to do", async () => {
      const env = await dashboardServices(dialect);
      env.clock.set(TODAY);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const base = `/dashboard/w/${ws.slug}/test/insights`;
      const empty = await browser.get(`${base}/revenue?range=12m`);
      assert.equal(empty.statusCode, 200);
      assert.match(text(empty.body), /1 Dec 2025 to 26 Nov 2026 , by month/);
      assert.match(text(empty.body), /No revenue in this range Revenue comes from Stripe's events: connect Stripe/);
      const trials = await browser.get(`${base}/people?range=custom&from=2026-11-01&to=2026-11-10`);
      assert.match(text(trials.body), /1 Nov 2026 to 10 Nov 2026 , by day/);
      assert.match(
        trials.body,
        /Dates are typed in your browser's own format \(month first, mm\/dd\/yyyy, in a US browser\); the pages write them as 31 Oct 2026\./,
      );
      assert.match(text(trials.body), /No trial started in this range\. A tool offers a trial when its trial days are more than 0/);
      const refused = await browser.get(`${base}/use?range=custom&from=2026-11-10&to=2026-12-01`);
      assert.equal(refused.statusCode, 400);
      assert.match(refused.body, /<input id="to" name="to" type="date" value="2026-12-01" aria-invalid="true" aria-describedby="to-error" autofocus>/);
      assert.equal((await browser.get(`${base}/use/devices.csv?range=custom&from=2026-11-10&to=2026-12-01`)).statusCode, 400);
    });

    test("refused: another owner's workspace, an unknown tool, page or table, and anyone signed out", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const theirs = await seedWorkspace(env.services);
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const base = `/dashboard/w/${ws.slug}/test/insights`;
      assert.equal((await browser.get(`/dashboard/w/${theirs.slug}/test/insights/revenue`)).statusCode, 404, "another owner's workspace is not found");
      assert.equal((await browser.get(`/dashboard/w/${theirs.slug}/test/insights/revenue/revenue-eur.csv`)).statusCode, 404);
      assert.equal((await browser.get(`${base}/revenue?tool=not-a-tool`)).statusCode, 404);
      assert.equal((await browser.get(`${base}/forecast`)).statusCode, 404);
      assert.equal((await browser.get(`${base}/revenue/revenue-eur.csv`)).statusCode, 404, "no figures in eur: no table");
      assert.equal((await browser.get(`${base}/revenue/revenue-eur.txt`)).statusCode, 404);
      const stranger = await app.inject({ url: `${base}/revenue` });
      assert.equal(stranger.statusCode, 303);
      assert.equal(stranger.headers.location, "/dashboard/sign-in");
      assert.equal((await app.inject({ url: `${base}/use/at-risk.csv` })).statusCode, 303, "no CSV without a session");
    });
  });
}
