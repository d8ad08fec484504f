// The Manage page in a real browser (Debian's chromium driven by playwright-core) against
// Warden listening on 127.0.0.1 and a local stand-in of Stripe's API: real cookies, real
// form posts under the real policy (form-action must let a post lead to Stripe's billing
// portal), the Copy button's script, and the page at 1280 and 390 px wide. Set
// WARDEN_SCREENSHOTS=<folder> to save a picture of each screen.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { openDeviceSession } from "../client/client.service.js";
import { DAY_MS } from "../clock.js";
import { ensurePerson } from "../customers/person.store.js";
import { assertFitsAndPasses, shoot, watchPolicy } from "../test-support/browser.js";
import { pagesOf } from "../test-support/customer-pages.js";
import { DIALECTS } from "../test-support/harness.js";
import { hostedPagesInBrowser, signInOnHostedPage } from "../test-support/hosted-browser.js";
import { paymentSession, stripeId, subscriptionObject } from "../test-support/stripe.js";

const JOURNEY_TIMEOUT_MS = 60_000;

for (const dialect of DIALECTS) {
  describe(`hosted Manage page in a browser (${dialect})`, () => {
    test("a buyer copies a key, cancels and resumes, opens the billing portal, hands out a seat and signs a device out", {
      timeout: JOURNEY_TIMEOUT_MS,
    }, async () => {
      const { services, clock, dataDir, stripeApi, ws, origin, pages: base, send, browser, close } = await hostedPagesInBrowser(dialect);
      const email = `ada-${ws.slug}@example.com`;
      const now = clock.now();
      const account = (await ensurePerson(services.db, ws.workspaceId, "test", email, now)).id;
      await send("checkout.session.completed", paymentSession({ email, metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" }, now }));
      await send(
        "checkout.session.completed",
        paymentSession({ email, metadata: { warden_tool: "tabmaster", warden_plan: "lifetime", warden_seats: "3", warden_account: account }, now }),
      );
      const subscription = stripeId("sub");
      await send(
        "customer.subscription.created",
        subscriptionObject({
          id: subscription,
          status: "active",
          metadata: { warden_tool: "tabmaster", warden_plan: "monthly", warden_account: account },
          startedAt: now,
          periodStart: now,
          periodEnd: now + 30 * DAY_MS,
        }),
      );
      for (const [name, platform] of [
        ["Work laptop", "chrome-mac"],
        ["Home desktop", "firefox-windows"],
      ] as const) {
        await services.db.transaction().execute((trx) =>
          openDeviceSession(trx, {
            workspaceId: ws.workspaceId,
            env: "test",
            toolId: "tabmaster",
            personId: account,
            licenceId: null,
            device: { name, platform },
            now,
          }),
        );
      }

      try {
        const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
        await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin });
        // The billing portal is Stripe's page: answered here, so the test reaches no network.
        await context.route("https://billing.stripe.com/**", (route) =>
          route.fulfill({ status: 200, contentType: "text/html", body: "<!doctype html><title>Stripe billing portal</title><h1>Portal</h1>" }),
        );
        const page = await context.newPage();
        const violations = watchPolicy(page);

        await page.goto(`${base}/manage`);
        assert.equal(new URL(page.url()).pathname, `${pagesOf(ws)}/sign-in`);
        await signInOnHostedPage(page, dataDir, email);
        await page.waitForURL(`${base}/manage`);

        // A seat handed out first, so that the pictures show a team in use.
        await page.fill("input[name=email]", `grace-${ws.slug}@example.com`);
        await page.click("text=Hand out seat");
        await page.waitForURL(`${base}/manage?done=seat-assigned`);
        assert.ok(await page.isVisible(`text=grace-${ws.slug}@example.com`));
        await shoot(page, "manage-1280");

        // The Copy button: shown and wired by the one script the policy allows.
        const keyField = page.locator("input.key-reveal");
        assert.equal(await keyField.count(), 1, "one licence has a key: the team's has none");
        const key = await keyField.inputValue();
        assert.match(key, /^wlk_[0-9A-Za-z]{32}$/);
        await page.click(`button[data-copy="${await keyField.getAttribute("id")}"]`);
        // Read in the page: the test's own types know no DOM, hence the declared shape.
        const readClipboard = () =>
          page.evaluate(() => (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText());
        const deadline = Date.now() + 10_000;
        let copied = await readClipboard();
        while (copied !== key && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          copied = await readClipboard();
        }
        assert.equal(copied, key);

        await page.click("text=Cancel subscription…");
        await page.waitForURL(`${base}/manage/subscriptions/${subscription}/cancel`);
        await shoot(page, "manage-cancel-1280");
        await page.click("text=Cancel at period end");
        await page.waitForURL(`${base}/manage?done=cancelled`);
        assert.ok(await page.isVisible("text=Resume subscription"));
        await shoot(page, "manage-cancelled-1280");
        await page.click("text=Resume subscription");
        await page.waitForURL(`${base}/manage?done=resumed`);
        assert.ok(await page.isVisible("text=Cancel subscription…"));
        assert.deepEqual(
          stripeApi.calls.filter((c) => c.method === "POST").map((c) => c.form.cancel_at_period_end),
          ["true", "false"],
        );

        await page.getByRole("button", { name: "Sign out Home desktop" }).click();
        await page.waitForURL(`${base}/manage?done=signed-out`);
        assert.equal(await page.locator(".manage-list form[action*='/devices/']").count(), 1);

        // The page at a phone's width: nothing scrolls sideways.
        await page.setViewportSize({ width: 390, height: 844 });
        await page.goto(`${base}/manage`);
        await assertFitsAndPasses(page, "manage at 390 px");
        await shoot(page, "manage-390");
        await page.goto(`${base}/manage/subscriptions/${subscription}/cancel`);
        await assertFitsAndPasses(page, "cancel at 390 px");
        await shoot(page, "manage-cancel-390");
        await page.goto(`${base}/manage`);

        // The billing portal: a real form post that the policy lets lead to Stripe.
        await page.click("text=Payment method and invoices");
        await page.waitForURL(/^https:\/\/billing\.stripe\.com\/p\/session\//);
        assert.deepEqual(violations, []);
      } finally {
        await close();
      }
    });
  });
}
