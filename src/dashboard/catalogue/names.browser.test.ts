// Configure › a tool's name in other languages, in a real browser at 1280 and 390 px on
// both engines: reached from the tool's page by its link, a German name typed and saved,
// shown again in its field; nothing wider than the screen, no serious axe-core violation,
// no policy breach; then the hosted Plans page in German shows it. WARDEN_SCREENSHOTS=<folder>
// saves the form at both widths.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { assertFitsAndPasses, servedInBrowser, shoot, signInToDashboard, watchPolicy } from "../../test-support/browser.js";
import { dashboardServices } from "../../test-support/dashboard.js";
import { DIALECTS } from "../../test-support/harness.js";
import { seedUsageCatalogue } from "../../test-support/usage.js";

const TIMEOUT_MS = 120_000;

for (const dialect of DIALECTS) {
  describe(`names in other languages in a browser (${dialect})`, () => {
    test("a tool's German name given on its Configure page at 1280 and 390 px, then shown on the German Plans page", { timeout: TIMEOUT_MS }, async () => {
      const env = await dashboardServices(dialect);
      const ws = await seedUsageCatalogue(env.services);
      const { origin: base, browser, close } = await servedInBrowser(env.services);
      try {
        for (const width of [1280, 390] as const) {
          const context = await browser.newContext({ viewport: { width, height: 900 }, hasTouch: width < 600 });
          const page = await context.newPage();
          const violations = watchPolicy(page);
          await signInToDashboard(page, base, env.dataDir, ws.ownerEmail);
          await page.waitForURL(`${base}/dashboard/w/${ws.slug}/test`);
          await page.goto(`${base}/dashboard/w/${ws.slug}/test/tools/${ws.tool}`);
          await page.click("text=Name in other languages");
          await page.waitForURL(`${base}/dashboard/w/${ws.slug}/test/tools/${ws.tool}/names`);
          assert.equal(await page.getAttribute("#name_de", "placeholder"), "Tab Master", "the default name shows where none is given");
          assert.equal(await page.getAttribute("#name_ja", "lang"), "ja");
          await assertFitsAndPasses(page, `names form at ${width} px`);
          const name = width === 390 ? "Tab-Meister für unterwegs" : "Tab-Meister";
          await page.fill("#name_de", name);
          await page.click("text=Save names");
          await page.waitForURL(/\/names\?saved=1$/);
          assert.equal(await page.inputValue("#name_de"), name);
          await shoot(page, `names-${dialect}-${width}`);
          await assertFitsAndPasses(page, `names saved at ${width} px`);
          assert.deepEqual(violations, [], "no policy breach");
          await context.close();
        }
        const plans = await fetch(`${base}/c/${ws.slug}/test/${ws.tool}/plans?lang=de`);
        assert.match(await plans.text(), /<h1>Tarife für Tab-Meister für unterwegs<\/h1>/);
      } finally {
        await close();
      }
    });
  });
}
