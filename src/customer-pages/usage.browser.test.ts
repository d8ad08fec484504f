// The hosted pages of a tool that sells usage, in a real browser (Debian's chromium driven
// by playwright-core): the Plans page's features, allowances and credit packs, a pack's
// Buy on to Stripe Checkout, and Manage's bar of a meter after spends through the vendor
// API, its credits and its Buy more; at 1280 and 390 px, with axe-core, 44 px targets on
// the phone and no breach of the content-security policy.
// WARDEN_SCREENSHOTS=<folder> saves every screen.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Page } from "playwright-core";
import { assertFitsAndPasses, shoot, watchPolicy } from "../test-support/browser.js";
import { DIALECTS } from "../test-support/harness.js";
import { answerStripeCheckout, hostedPagesInBrowser, signInOnHostedPage } from "../test-support/hosted-browser.js";
import { paymentSession } from "../test-support/stripe.js";
import { seedUsageCatalogue } from "../test-support/usage.js";

const TIMEOUT_MS = 120_000;
const TAP_PX = 44;

/** The controls this page family adds (Buy, Buy more), measured in the page: none smaller than a finger on a phone. */
async function smallTargets(page: Page): Promise<string[]> {
  // Run in the page, as text: the test's own types know no DOM.
  return page.evaluate(`[...document.querySelectorAll(".offer button, .manage-item a.button")]
    .map((e) => [e.getBoundingClientRect(), e.textContent.trim()])
    .filter(([box]) => box.width < ${TAP_PX} - 0.5 || box.height < ${TAP_PX} - 0.5)
    .map(([box, text]) => Math.round(box.width) + "x" + Math.round(box.height) + " " + text)`);
}

for (const dialect of DIALECTS) {
  describe(`hosted Plans and Manage of a tool with a meter, in a browser (${dialect})`, () => {
    test("the plans' features and allowances, a pack bought again, Manage's bar after spends and Buy more; at 1280 and 390 px", {
      timeout: TIMEOUT_MS,
    }, async () => {
      const {
        services,
        clock,
        dataDir,
        stripeApi,
        ws,
        app,
        pages: base,
        send,
        browser,
        close,
      } = await hostedPagesInBrowser(dialect, { seed: seedUsageCatalogue });
      const violations: string[] = [];
      try {
        const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
        await answerStripeCheckout(context);
        const page = await context.newPage();
        watchPolicy(page, violations);

        // Sign in first: a buyer who holds the tool can still buy packs.
        const email = `ada-${ws.slug}@example.com`;
        await page.goto(`${base}/sign-in`);
        await signInOnHostedPage(page, dataDir, email);
        await page.waitForURL(/\/plans$|\/manage$/);
        const person = await services.db.selectFrom("people").select("id").where("workspace_id", "=", ws.workspaceId).executeTakeFirstOrThrow();
        const pay = async (plan: string, checkout: string) => {
          const paid = paymentSession({
            id: checkout,
            email,
            amount: plan === "lifetime" ? 4900 : 900,
            metadata: { warden_tool: "tabmaster", warden_plan: plan, warden_account: person.id },
            now: clock.now(),
          });
          assert.equal(await send("checkout.session.completed", paid), "applied");
        };
        await pay("lifetime", `cs_test_lifetime${ws.slug.replaceAll("-", "")}`);

        await page.goto(`${base}/plans`);
        const lifetime = await page.innerText(".offer:has(#offer-0)");
        assert.match(lifetime, /Unlocks\s+Export\s+Includes\s+100 summaries a month/i);
        assert.match(await page.innerText(".offer:has(#offer-1)"), /Export\s+Sync[\s\S]*500 summaries a month/i);
        const packs = page.locator("#packs");
        assert.equal(await packs.getByRole("heading", { level: 2 }).innerText(), "Credit packs");
        const pack = packs.locator(".offer").filter({ hasText: "1,000 summaries" });
        assert.match(await pack.innerText(), /Adds\s+1,000 summaries\s+Credits last 365 days from purchase\./i);
        await checkPage(page, "plans at 1280 px");
        await shoot(page, "usage-plans-1280");

        // The pack's Buy, twice: each time on to Stripe Checkout, each payment adds its credits.
        for (const round of [1, 2]) {
          await page.goto(`${base}/plans`);
          await pack.getByRole("button", { name: "Buy" }).click();
          await page.waitForURL(/^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_test_/);
          const form = stripeApi.calls.at(-1)?.form ?? {};
          assert.deepEqual([form["metadata[warden_plan]"], form["metadata[warden_account]"]], ["pack-1000", person.id], `round ${round}`);
          await pay("pack-1000", /cs_test_\w+$/.exec(page.url())?.[0] as string);
        }

        // Spends through the vendor API: 30 of the licence's 100 this month, none of the credits yet.
        const spent = await app.inject({
          method: "POST",
          url: `/api/v1/tools/tabmaster/customers/${encodeURIComponent(email)}/usage`,
          headers: { authorization: `Bearer ${ws.testKey}` },
          payload: { meter: "summaries", quantity: 30 },
        });
        assert.equal(spent.statusCode, 200, spent.body);

        await page.goto(`${base}/manage`);
        const bar = page.getByRole("meter", { name: "Summaries" });
        assert.deepEqual([await bar.getAttribute("max"), await bar.getAttribute("value")], ["100", "30"]);
        const meter = await page.innerText("article[aria-labelledby=usage-summaries]");
        assert.match(meter, /30 of 100 summaries used this period/);
        assert.match(meter, /Left this period\s+70 summaries/);
        assert.match(meter, /Credits left\s+2,000 summaries/);
        assert.match(meter, /Resets\s+1 Dec 2026, 00:00 UTC/);
        await checkPage(page, "manage at 1280 px");
        await shoot(page, "usage-manage-1280");
        await page.getByRole("link", { name: "Buy more summaries" }).click();
        await page.waitForURL(`${base}/plans#packs`);
        assert.ok(await packs.isVisible());

        await page.setViewportSize({ width: 390, height: 844 });
        for (const [name, url] of [
          ["plans", `${base}/plans#packs`],
          ["manage", `${base}/manage`],
        ] as const) {
          await page.goto(url);
          await checkPage(page, `${name} at 390 px`);
          assert.deepEqual(await smallTargets(page), [], `${name} at 390 px: 44 px targets`);
          await shoot(page, `usage-${name}-390`);
        }
        assert.deepEqual(violations, []);
      } finally {
        await close();
      }
    });
  });
}

/** One h1, nothing wider than the screen, no serious or critical axe-core violation. */
async function checkPage(page: Page, label: string): Promise<void> {
  assert.equal(await page.locator("h1").count(), 1, label);
  await assertFitsAndPasses(page, label);
}
