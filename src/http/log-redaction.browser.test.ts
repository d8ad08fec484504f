// The server's log of a whole journey in a real browser (Debian's chromium driven by
// playwright-core) holds no address at all: an owner signs in, searches customers by part
// of an address, opens one, grants; a buyer signs in on the hosted pages and opens Plans.
// Every URL the browser followed is in the log, redacted: not only whole addresses but a
// search for `ada.lovelace@`, which no pattern for an address recognises.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { servedInBrowser, signInToDashboard } from "../test-support/browser.js";
import { dashboardServices, readCode } from "../test-support/dashboard.js";
import { DIALECTS, seedWorkspace, unique } from "../test-support/harness.js";

const JOURNEY_TIMEOUT_MS = 90_000;

for (const dialect of DIALECTS) {
  describe(`the log of a browser journey (${dialect})`, () => {
    test("names no address: not the owner's, the customer's, the buyer's, nor a search for part of one", { timeout: JOURNEY_TIMEOUT_MS }, async () => {
      const env = await dashboardServices(dialect);
      const lines: string[] = [];
      const {
        origin: base,
        browser,
        close,
      } = await servedInBrowser(env.services, { logger: { level: "info", stream: { write: (line: string) => lines.push(line) } } });
      const ws = await seedWorkspace(env.services);
      const local = `ada.${unique("lovelace").replace("-", "")}`;
      const customer = `${local}@example.com`;
      const buyer = `${unique("grace")}@example.org`;
      try {
        const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
        await signInToDashboard(page, base, env.dataDir, ws.ownerEmail);
        await page.waitForURL(`${base}/dashboard/w/${ws.slug}/test`);

        // Grant from the customer's page (its address is in the path), then find it by searching part of it.
        await page.goto(`${base}/dashboard/w/${ws.slug}/test/customers/${ws.tool}/${encodeURIComponent(customer)}`);
        await page.fill("#note", "beta tester");
        await page.click("button:has-text('Grant Tab Master')");
        await page.waitForURL(/granted=1/);
        await page.goto(`${base}/dashboard/w/${ws.slug}/test/customers?tool=${ws.tool}`);
        await page.fill("#q", `${local}@`);
        await page.click("button:has-text('Show')");
        await page.waitForURL(/[?&]q=/);
        await page.click(`a:has-text("${customer}")`);
        await page.waitForSelector(`h1:has-text("${customer}")`);

        // The buyer signs in on the hosted pages with a mailed code and opens Plans.
        const buying = await (await browser.newContext({ viewport: { width: 390, height: 800 } })).newPage();
        const pages = `${base}/c/${ws.slug}/test/${ws.tool}`;
        await buying.goto(`${pages}/sign-in`);
        await buying.getByLabel("Email address").fill(buyer);
        await buying.click("form.stack button[type=submit]");
        await buying.waitForURL(/\/sign-in\/code/);
        await buying.fill("#code", await readCode(env.dataDir, buyer));
        await buying.click("form.stack button[type=submit]");
        await buying.waitForURL(/\/manage/);
        await buying.goto(`${pages}/plans`);
      } finally {
        await close();
      }

      const log = lines.join("");
      assert.match(log, /customers\?tool=tabmaster&entitled=all&q=\[email\]/, "the search was logged, without what was searched");
      assert.match(log, /\/customers\/tabmaster\/\[email\]/, "the customer's page was logged, without the address");
      for (const address of [ws.ownerEmail, customer, buyer]) {
        for (const spelt of [address, encodeURIComponent(address), address.split("@")[0] as string]) {
          assert.equal(log.includes(spelt), false, `${spelt} is in the log`);
        }
      }
      assert.deepEqual(log.match(/[^\s"]*(?:@|%40)[^\s"]*/gi) ?? [], [], "no @ however spelt");
    });
  });
}
