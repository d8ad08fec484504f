// The Insights journey in a real browser, on both engines: a history made through the
// API and Stripe's signed events, then each Insights page at 1280 and 390 px, reached as
// a person would (the navigation, the tabs, the range picker), its figures checked against
// the history, no sideways scroll, no serious axe-core violation, no policy breach, and a
// table's CSV downloaded. WARDEN_SCREENSHOTS=<folder> saves each page at both widths.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Page } from "playwright-core";
import { axeViolations, servedInBrowser, shoot, signInToDashboard, watchPolicy } from "../../test-support/browser.js";
import { dashboardServices } from "../../test-support/dashboard.js";
import { DIALECTS } from "../../test-support/harness.js";
import { makeInsightsHistory } from "../../test-support/insights.js";
import { seedUsageCatalogue } from "../../test-support/usage.js";

const TIMEOUT_MS = 120_000;
const TODAY = Date.parse("2026-11-26T12:00:00Z");

/** The page's width against the screen's: a page wider than its screen scrolls sideways. */
const widths = (page: Page) =>
  page.evaluate(() => {
    const root = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }).document.documentElement;
    return { page: root.scrollWidth, screen: root.clientWidth };
  });

/** The text a person reads in the main content, spaces folded. */
const mainText = async (page: Page) => (await page.locator("main").innerText()).replace(/\s+/g, " ");

for (const dialect of DIALECTS) {
  describe(`insights in a browser (${dialect})`, () => {
    test("a history's figures on every Insights page at 1280 and 390 px, readable, accessible, the CSV downloaded", { timeout: TIMEOUT_MS }, async () => {
      const env = await dashboardServices(dialect);
      env.clock.set(TODAY);
      const ws = await seedUsageCatalogue(env.services);
      const history = await makeInsightsHistory(env.services, env.clock, ws, env.dataDir);
      const { origin: base, browser, close } = await servedInBrowser(env.services);
      // Summaries spent today, and one person's free allowance used up.
      for (const [email, quantity] of [
        ["heavy@example.com", 10],
        ["light@example.com", 2],
      ] as const) {
        const spent = await fetch(`${base}/api/v1/tools/${ws.tool}/customers/${encodeURIComponent(email)}/usage`, {
          method: "POST",
          headers: { authorization: `Bearer ${ws.testKey}`, "content-type": "application/json" },
          body: JSON.stringify({ meter: "summaries", quantity }),
        });
        assert.equal(spent.status, 200, await spent.text());
      }
      const problems: string[] = [];
      try {
        for (const width of [1280, 390] as const) {
          const context = await browser.newContext({ viewport: { width, height: 900 }, hasTouch: width < 600, acceptDownloads: true });
          const page = await context.newPage();
          const violations = watchPolicy(page);
          await signInToDashboard(page, base, env.dataDir, ws.ownerEmail);
          await page.waitForURL(`${base}/dashboard/w/${ws.slug}/test`);
          const check = async (name: string) => {
            const where = `${name} at ${width} px`;
            await shoot(page, `insights-${dialect}-${width}-${name}`);
            const w = await widths(page);
            if (w.page > w.screen) problems.push(`${where}: ${w.page} px wide in a ${w.screen} px screen`);
            for (const v of await axeViolations(page)) problems.push(`${where}: ${v}`);
            // One drawing of each chart is shown: the wide one on a laptop, the phone's on a phone.
            const shown = await page.locator(width < 600 ? "svg.chart-narrow" : "svg.chart-wide").first();
            if ((await page.locator("svg.chart-svg").count()) > 0)
              assert.ok(await shown.isVisible(), `${where}: the ${width < 600 ? "phone's" : "wide"} drawing`);
          };

          // The navigation's Insights entry (behind Menu on a phone) opens Revenue over the last 30 days.
          if (width < 600) await page.locator(".nav-menu > summary").tap();
          await page.locator(".side a", { hasText: "Insights" }).click();
          await page.waitForURL(`${base}/dashboard/w/${ws.slug}/test/insights/revenue`);
          let read = await mainText(page);
          assert.match(read, /Net, EUR €104\.00/);
          assert.match(read, /Gross, EUR €153\.00/);
          assert.match(read, /Refunds, EUR €49\.00/);
          assert.match(read, /28 Oct 2026 to 26 Nov 2026, by day, for all tools/);
          await check("revenue");

          // The range picker: 12 months, by month.
          await page.selectOption("#range", "12m");
          await page.click(".insights-filters button[type=submit]");
          await page.waitForURL(/range=12m/);
          read = await mainText(page);
          assert.match(read, /1 Dec 2025 to 26 Nov 2026, by month/);
          assert.match(read, /Net, EUR €104\.00/);
          await check("revenue-12m");

          // A table's CSV, with the figures the page shows.
          const [download] = await Promise.all([page.waitForEvent("download"), page.locator(`a[href*="/plans-eur.csv"]`).click()]);
          const csv = await download.createReadStream().then(async (stream) => {
            let body = "";
            for await (const chunk of stream) body += String(chunk);
            return body;
          });
          assert.match(csv, /"suite-lifetime","Suite for life","suite","no","99\.00","0\.00","99\.00"/);

          for (const [tab, figures] of [
            ["Subscriptions", /Active subscriptions Download CSV(?: of Active subscriptions)? 1 /],
            ["People", /Access granted by hand Download CSV(?: of Access granted by hand)? 1 /],
            ["Use", /People active Download CSV(?: of People active)? 1 /],
          ] as const) {
            await page.locator(".insights-tabs a", { hasText: tab }).click();
            await page.waitForURL(new RegExp(`/insights/${tab.toLowerCase()}\\?.*range=12m`));
            assert.match(await mainText(page), figures, `${tab} at ${width} px`);
            await check(tab.toLowerCase());
          }
          // Use, for one tool: who uses it most without paying, a link to their customer page.
          await page.selectOption("#tool", ws.tool);
          await page.click(".insights-filters button[type=submit]");
          await page.waitForURL(new RegExp(`tool=${ws.tool}`));
          await check("use-one-tool");
          read = await mainText(page);
          assert.match(read, /Summaries spent Download CSV(?: of Summaries spent)? 12 /);
          assert.match(read, /Allowance used up .* heavy@example\.com Summaries summaries/);
          await page.locator("section[aria-labelledby=top-unpaid] .table-wrap a", { hasText: history.user }).click();
          await page.waitForURL(`${base}/dashboard/w/${ws.slug}/test/customers/${ws.tool}/${encodeURIComponent(history.user)}`);
          problems.push(...violations.map((v) => `at ${width} px: ${v}`));
          await context.close();
        }
      } finally {
        await close();
      }
      assert.deepEqual(problems, []);
    });
  });
}
