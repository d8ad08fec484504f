// The Plans, checkout success and Trial pages in a real browser (Debian's chromium driven
// by playwright-core): a choice posted from the page reaches Stripe Checkout (the page's
// policy lets the form's redirect go there, and to nowhere else), a trial starts, a paid
// checkout says what was bought; at 1280 and 390 px, before and after the owner sets a
// logo and an accent, with no breach of the content-security policy.
// WARDEN_SCREENSHOTS=<folder> saves every screen.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Page } from "playwright-core";
import { axeViolations, shoot, signInToDashboard, watchPolicy } from "../test-support/browser.js";
import { pagesOf } from "../test-support/customer-pages.js";
import { DIALECTS } from "../test-support/harness.js";
import { answerStripeCheckout, hostedPagesInBrowser, signInOnHostedPage } from "../test-support/hosted-browser.js";
import { paymentSession } from "../test-support/stripe.js";
import { createPlan, updateTool } from "../workspaces/workspace.service.js";

const TIMEOUT_MS = 120_000;
const WIDTHS = [1280, 390] as const;

/** What an automated check can say of a page's accessibility basics: its language, one h1, named buttons and links, labelled fields. */
async function checkBasics(page: Page): Promise<void> {
  // Run in the page, as text: the test's own types know no DOM.
  const found = await page.evaluate(`(() => ({
    lang: document.documentElement.lang,
    h1: document.querySelectorAll("h1").length,
    unnamed: [...document.querySelectorAll("button, a[href]")].filter((e) => e.textContent.trim() === "" && !e.getAttribute("aria-label")).length,
    unlabelled: [...document.querySelectorAll("input:not([type=hidden])")].filter((e) => !e.labels || e.labels.length === 0).length,
    overflow: document.documentElement.scrollWidth > window.innerWidth,
  }))()`);
  assert.deepEqual(found, { lang: "en", h1: 1, unnamed: 0, unlabelled: 0, overflow: false }, page.url());
  assert.deepEqual(await axeViolations(page), [], `${page.url()}: no serious or critical axe-core violation`);
}

for (const dialect of DIALECTS) {
  describe(`hosted Plans, success and Trial in a browser (${dialect})`, () => {
    test("choose a plan to Stripe Checkout, start a trial, see what was bought; plain and branded, at 1280 and 390 px", { timeout: TIMEOUT_MS }, async () => {
      const { services, clock, dataDir, ws, origin, pages: base, send, browser, close } = await hostedPagesInBrowser(dialect);
      await updateTool(services.db, clock, { workspace: ws.slug, id: "tabmaster", trialDays: "14" });
      await createPlan(services.db, clock, {
        workspace: ws.slug,
        tool: "tabmaster",
        id: "yearly",
        name: "Yearly",
        billing: "subscription",
        amountCents: 4800,
        interval: "year",
      });
      const violations: string[] = [];
      try {
        const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
        const toStripe: string[] = [];
        await answerStripeCheckout(context, toStripe);
        const page = await context.newPage();
        watchPolicy(page, violations);

        await page.goto(`${base}/plans?plan=monthly`);
        await checkBasics(page);
        await shoot(page, "plans-1280");
        await page.click("#offer-0 ~ form button");
        await page.waitForURL(/^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_test_/);
        assert.equal(toStripe.length, 1, "the form's 303 went on to Stripe Checkout");

        // Sign in on the pages, start the trial.
        const email = `ada-${ws.slug}@example.com`;
        await page.goto(`${base}/sign-in?return=${encodeURIComponent(`${pagesOf(ws)}/trial`)}`);
        await signInOnHostedPage(page, dataDir, email);
        await page.waitForURL(`${base}/trial`);
        await checkBasics(page);
        await shoot(page, "trial-offer-1280");
        await page.click("form[action$='/trial'] button");
        await page.waitForURL(`${base}/trial?started=1`);
        assert.match(await page.innerText("main"), /Your trial runs until 5 Dec 2026, 12:00 UTC/);
        await shoot(page, "trial-started-1280");

        // A checkout signed in, paid: Stripe's event arrives, the success page says what was bought.
        await page.goto(`${base}/plans`);
        await page.click("#offer-0 ~ form button");
        await page.waitForURL(/checkout\.stripe\.com/);
        const sessionId = /cs_test_\w+$/.exec(page.url())?.[0] as string;
        const success = `${base}/checkout/success?session_id=${sessionId}`;
        await page.goto(success);
        assert.match(await page.innerText("h1"), /Confirming your payment/);
        await shoot(page, "success-pending-1280");
        const paid = paymentSession({ id: sessionId, email, metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" }, now: clock.now() });
        assert.equal(await send("checkout.session.completed", paid), "applied");
        await page.click("text=Check again");
        assert.match(await page.innerText("main"), /You bought Tab Master \(Lifetime\), paid once\./);
        await checkBasics(page);
        await shoot(page, "success-1280");

        for (const branded of [false, true]) {
          if (branded) {
            // The owner sets them under Configure › Branding, a real form and a real upload: a PNG drawn by the browser itself.
            const drawing = await context.newPage();
            await drawing.setContent(
              '<div id="l" style="width:96px;height:96px;border-radius:20px;background:#1f6f43;color:#fff;font:700 56px system-ui;display:grid;place-items:center">T</div>',
            );
            const logo = await drawing.locator("#l").screenshot({ type: "png" });
            await drawing.close();
            const owner = await browser.newContext({ viewport: { width: 1280, height: 900 } });
            const dashboard = await owner.newPage();
            watchPolicy(dashboard, violations);
            await signInToDashboard(dashboard, origin, dataDir, ws.ownerEmail);
            await dashboard.goto(`${origin}/dashboard/w/${ws.slug}/test/branding`);
            await dashboard.fill("#accent", "#fab005");
            await dashboard.click("form[action$='/branding/accent'] button");
            assert.match(await dashboard.innerText("#accent-error"), /White text on #fab005 has a contrast of 1\.\d\d:1/);
            await shoot(dashboard, "dashboard-branding-refused");
            await dashboard.fill("#accent", "#1f6f43");
            await dashboard.click("form[action$='/branding/accent'] button");
            await dashboard.waitForURL(/done=accent/);
            await dashboard.setInputFiles("#logo", { name: "logo.png", mimeType: "image/png", buffer: logo });
            await dashboard.click("form[action$='/branding/logo'] button");
            await dashboard.waitForURL(/done=logo/);
            assert.equal(await dashboard.evaluate(`document.querySelector(".logo-preview img").naturalWidth > 0`), true);
            await checkBasics(dashboard);
            await shoot(dashboard, "dashboard-branding");
            await owner.close();
          }
          for (const width of WIDTHS) {
            await page.setViewportSize({ width, height: 900 });
            const suffix = `${branded ? "branded-" : ""}${width}`;
            for (const [name, url] of [
              ["plans", `${base}/plans?plan=suite-lifetime&bundle=suite`],
              ["trial", `${base}/trial`],
              ["success", success],
            ] as const) {
              await page.goto(url);
              await checkBasics(page);
              if (branded) {
                assert.equal(await page.evaluate(`document.querySelector(".customer-logo").naturalWidth > 0`), true, "the logo loads");
                const button = await page.evaluate(`getComputedStyle(document.querySelector(".button.primary")).backgroundColor`);
                assert.equal(button, "rgb(31, 111, 67)", "the accent reaches the page through the brand stylesheet");
              }
              await shoot(page, `${name}-${suffix}`);
            }
          }
        }
        assert.deepEqual(violations, []);
      } finally {
        await close();
      }
    });
  });
}
