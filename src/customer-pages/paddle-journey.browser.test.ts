// The hosted journey in a real browser (Debian's chromium driven by playwright-core) with
// Paddle as the environment's processor, against Warden listening on 127.0.0.1 and the
// stand-in for Paddle's API: sign in, choose a plan, pay at the vendor's Paddle payment
// link page (answered here: the transaction completed at the stand-in, its notifications
// signed and delivered by the test), come back to the thank-you page, then Manage: the
// subscription cancelled at its period's end and resumed, the licence refunded by the
// vendor shown revoked, Paddle's customer portal reached by the page's form; at 1280 and
// 390 px, with no breach of the content-security policy.
// WARDEN_SCREENSHOTS=<folder> saves every screen.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { refundLicence } from "../billing/licence.service.js";
import { assertFitsAndPasses, shoot, watchPolicy } from "../test-support/browser.js";
import { pagesOf } from "../test-support/customer-pages.js";
import { DIALECTS } from "../test-support/harness.js";
import { answerPaddleCheckout, paddleHostedPagesInBrowser, signInOnHostedPage } from "../test-support/hosted-browser.js";

const JOURNEY_TIMEOUT_MS = 180_000;

for (const dialect of DIALECTS) {
  describe(`the hosted journey with Paddle in a browser (${dialect})`, () => {
    test("sign in, buy at Paddle, the thank-you page, then Manage: cancel at period end, resume, a vendor's refund, the customer portal", {
      timeout: JOURNEY_TIMEOUT_MS,
    }, async () => {
      const { services, clock, dataDir, paddleApi, ws, pages: base, send, browser, close } = await paddleHostedPagesInBrowser(dialect);
      const email = `ada-${ws.slug}@example.com`;
      try {
        const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
        const held: { type: string; data: Record<string, unknown> }[] = [];
        await answerPaddleCheckout(context, paddleApi, clock, held);
        // Paddle's customer portal is Paddle's page: answered here, so the test reaches no network.
        await context.route("https://customer-portal.paddle.com/**", (route) =>
          route.fulfill({ status: 200, contentType: "text/html", body: "<!doctype html><title>Paddle customer portal</title><h1>Portal</h1>" }),
        );
        const page = await context.newPage();
        const violations = watchPolicy(page);

        await page.goto(`${base}/sign-in?return=${encodeURIComponent(`${pagesOf(ws)}/plans`)}`);
        await signInOnHostedPage(page, dataDir, email);
        await page.waitForURL(`${base}/plans`);

        /** Chooses a plan on the Plans page, pays at Paddle, and answers the thank-you address the browser came back to. */
        const buy = async (plan: string, shot: string): Promise<string> => {
          await page.goto(`${base}/plans`);
          await page.click(`form:has(input[name=plan][value=${plan}]) button`);
          await page.waitForURL(/^https:\/\/pay\.example\.com\/checkout\?_ptxn=txn_[0-9a-z]{26}$/);
          await page.click("text=Pay");
          await page.waitForURL(new RegExp(`^${base}/checkout/success\\?session_id=txn_[0-9a-z]{26}$`));
          // Back before Paddle's notifications: the page waits for them, as it does for Stripe's event.
          assert.equal(await page.innerText("h1"), "Confirming your payment");
          assert.match(await page.innerText("main"), /Paddle has sent you back/);
          await shoot(page, `${shot}-pending-1280`);
          for (const { type, data } of held.splice(0)) assert.equal(await send(type, data), "applied", type);
          await page.click("text=Check again");
          assert.equal(await page.innerText("h1"), "Thank you");
          assert.match(await page.innerText("main"), /A receipt comes from Paddle by mail\./);
          await assertFitsAndPasses(page, `${shot} at 1280 px`);
          await shoot(page, `${shot}-1280`);
          return page.url();
        };
        const monthly = await buy("monthly", "paddle-thanks-subscription");
        assert.match(await page.innerText("main"), /You bought Tab Master \(Monthly\) as a subscription\./);
        const lifetime = await buy("lifetime", "paddle-thanks-licence");
        assert.match(await page.innerText("main"), /You bought Tab Master \(Lifetime\), paid once\./);

        await page.setViewportSize({ width: 390, height: 844 });
        for (const [name, url] of [
          ["paddle-thanks-subscription", monthly],
          ["paddle-thanks-licence", lifetime],
        ] as const) {
          await page.goto(url);
          await assertFitsAndPasses(page, `${name} at 390 px`);
          await shoot(page, `${name}-390`);
        }
        await page.setViewportSize({ width: 1280, height: 900 });

        // Manage: the subscription bought, cancelled at its period's end at Paddle, then resumed.
        await page.goto(`${base}/manage`);
        const subscription = [...paddleApi.subscriptions.keys()][0] as string;
        await page.click("text=Cancel subscription…");
        await page.waitForURL(`${base}/manage/subscriptions/${subscription}/cancel`);
        await page.click("text=Cancel at period end");
        await page.waitForURL(`${base}/manage?done=cancelled`);
        assert.ok(await page.isVisible("text=Resume subscription"));
        await shoot(page, "paddle-manage-cancelled-1280");
        await page.click("text=Resume subscription");
        await page.waitForURL(`${base}/manage?done=resumed`);
        assert.ok(await page.isVisible("text=Cancel subscription…"));
        const asked = paddleApi.calls.filter((c) => c.path.startsWith(`/subscriptions/${subscription}`) && c.method !== "GET");
        assert.deepEqual(
          asked.map((c) => [c.method, c.path, c.body]),
          [
            ["POST", `/subscriptions/${subscription}/cancel`, { effective_from: "next_billing_period" }],
            ["PATCH", `/subscriptions/${subscription}`, { scheduled_change: null }],
          ],
        );

        // The vendor refunds the licence (the dashboard's and the CLI's use case): asked of Paddle, revoked at once.
        const licence = await services.db
          .selectFrom("licences")
          .select("id")
          .where("workspace_id", "=", ws.workspaceId)
          .where("plan_id", "=", "lifetime")
          .executeTakeFirstOrThrow();
        await refundLicence(services, { id: licence.id });
        assert.ok(paddleApi.calls.some((c) => c.method === "POST" && c.path === "/adjustments" && c.body?.transaction_id === /txn_\w+$/.exec(lifetime)?.[0]));
        await page.goto(`${base}/manage`);
        assert.match(await page.innerText("main"), /Revoked/);
        await assertFitsAndPasses(page, "manage at 1280 px");
        await shoot(page, "paddle-manage-1280");
        await page.setViewportSize({ width: 390, height: 844 });
        await page.goto(`${base}/manage`);
        await assertFitsAndPasses(page, "manage at 390 px");
        await shoot(page, "paddle-manage-390");

        // Paddle's customer portal: a real form post that the page's policy lets lead there.
        await page.click("text=Payment method and invoices");
        await page.waitForURL(/^https:\/\/customer-portal\.paddle\.com\/cpl_01hv\/ctm_\w+\?token=cpls_\w+$/);
        assert.deepEqual(violations, []);
      } finally {
        await close();
      }
    });
  });
}
