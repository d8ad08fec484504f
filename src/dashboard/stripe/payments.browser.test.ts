// Configure › Payments and a plan's Paddle prices in a real browser: Paddle connected
// through its form and the mailed code, a price linked on the plan's page, each screen at
// 1280 and 390 px wide without sideways scrolling, axe-core's serious findings or a breach
// of the page's policy (WARDEN_SCREENSHOTS=<folder> keeps the pictures).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { paddleStatus } from "../../paddle/paddle-account.service.js";
import { assertFitsAndPasses, servedInBrowser, shoot, signInToDashboard, watchPolicy } from "../../test-support/browser.js";
import { dashboardServices, readCode } from "../../test-support/dashboard.js";
import { apiOver, DIALECTS, seedCatalogue } from "../../test-support/harness.js";
import { paddleEvent, paddleId, sendPaddleEvent } from "../../test-support/paddle.js";

const SECRET = "pdl_ntfset_01browserDestination_0123456789abcdWXYZ";
const API_KEY = "pdl_sdbx_apikey_browserPaddleKey0123456789wxyz";
const JOURNEY_TIMEOUT_MS = 120_000;

for (const dialect of DIALECTS) {
  describe(`dashboard Payments in a browser (${dialect})`, () => {
    test("Paddle connected from its form with the mailed code, a price linked on the plan's page; at 1280 and 390 px", {
      timeout: JOURNEY_TIMEOUT_MS,
    }, async () => {
      const env = await dashboardServices(dialect);
      // The browser keeps the session cookie by the real time.
      env.clock.set(Date.now());
      const ws = await seedCatalogue(env.services);
      const served = await servedInBrowser(env.services);
      try {
        const payments = `${served.origin}/dashboard/w/${ws.slug}/test/stripe`;
        const plan = `${served.origin}/dashboard/w/${ws.slug}/test/tools/tabmaster/plans/lifetime`;
        const context = await served.browser.newContext({ viewport: { width: 1280, height: 800 } });
        const page = await context.newPage();
        const violations = watchPolicy(page);
        await signInToDashboard(page, served.origin, env.dataDir, ws.ownerEmail);
        await page.waitForURL(/\/dashboard\/w\//);

        await page.goto(payments);
        await assertFitsAndPasses(page, "payments, none connected");
        await shoot(page, "payments-1-none-1280");
        await page.fill("#paddle_webhook_secret", SECRET);
        await page.fill("#paddle_api_key", API_KEY);
        await page.click("#paddle form button[type=submit]");
        await page.waitForSelector("#code");
        await page.fill("#code", await readCode(env.dataDir, ws.ownerEmail));
        await page.click("form.stack button[type=submit]");
        await page.waitForURL(/done=paddle-connected/);
        assert.match((await page.textContent("main")) ?? "", /Paddle is connected: Warden receives its notifications and can act in Paddle/);
        assert.equal((await paddleStatus(env.services, { workspace: ws.slug, env: "test" })).connection?.apiKeyLastFour, "wxyz");

        const price = paddleId("pri");
        await page.goto(plan);
        await page.fill("#paddle_id", price);
        await page.click("#paddle-prices form.stack button[type=submit]");
        await page.waitForURL(/paddle=1/);
        assert.ok(((await page.textContent("#paddle-prices")) ?? "").includes(price));
        await assertFitsAndPasses(page, "plan with a Paddle price");
        await shoot(page, "payments-3-plan-paddle-1280");

        // A notification Warden ignores, so the page shows its reason in words.
        const event = paddleEvent("customer.created", { id: "ctm_01" }, { now: env.clock.now() });
        assert.equal((await sendPaddleEvent(apiOver(served.app), ws, SECRET, event, { now: env.clock.now() })).statusCode, 200);
        await page.goto(payments);
        await assertFitsAndPasses(page, "payments, Paddle connected");
        await shoot(page, "payments-2-paddle-1280");

        await page.setViewportSize({ width: 390, height: 844 });
        await page.goto(payments);
        await assertFitsAndPasses(page, "payments, Paddle connected, 390 px");
        await shoot(page, "payments-4-paddle-390");
        await page.goto(plan);
        await assertFitsAndPasses(page, "plan with a Paddle price, 390 px");
        await shoot(page, "payments-5-plan-paddle-390");
        await page.goto(`${payments}/paddle/disconnect`);
        await assertFitsAndPasses(page, "disconnect Paddle, 390 px");
        await shoot(page, "payments-6-disconnect-390");
        assert.deepEqual(violations, []);
        await context.close();
      } finally {
        await served.close();
      }
    });
  });
}
