// The customer's whole journey with Warden's hosted pages and the example extension, in
// Debian's Chromium (playwright-core, the extension loaded unpacked) against Warden
// listening on 127.0.0.1 and a local stand-in of Stripe's API, on SQLite and PostgreSQL:
// the popup opens the hosted sign-in page, the person signs in there with the mailed code
// and the extension is signed in with nothing typed into it; the popup opens Plans (a
// browser no longer signed in on the pages asks "Continue as …?" first), the
// person picks the monthly plan (the browser's way to Stripe Checkout is answered here),
// Stripe's signed events for the purchase reach Warden and the extension unlocks in under
// 5 s with no click (the library's long poll, Warden's loop running as in `warden serve`);
// the popup opens Manage, the subscription is cancelled at its period's end (still
// unlocked) and resumed; the device is signed out from Manage and the extension locks
// within seconds, with no click. Every hosted page met is checked (no sideways scroll,
// axe-core) at 1280 and 390 px. Set WARDEN_SCREENSHOTS=<folder> to keep pictures.
import assert from "node:assert/strict";
import { rm } from "node:fs/promises";
import { after, describe, test } from "node:test";
import type { Page } from "playwright-core";
import { DAY_MS } from "../../src/clock.js";
import { assertFitsAndPasses, shoot, watchPolicy } from "../../src/test-support/browser.js";
import { pagesOf } from "../../src/test-support/customer-pages.js";
import { readCode } from "../../src/test-support/dashboard.js";
import { DIALECTS } from "../../src/test-support/harness.js";
import { answerStripeCheckout, hostedPages } from "../../src/test-support/hosted-browser.js";
import { stripeId, subscriptionObject, subscriptionSession } from "../../src/test-support/stripe.js";
import { compileLibrary, exampleCopy, type LaunchedExample, launchExample, waitForState } from "./test-support/example.js";

// A hosted page's address whatever language the library asked it in (`?lang=`, kept across the pages' redirects).
const atPage = (target: string) => (url: URL) => {
  const seen = new URL(url);
  seen.searchParams.delete("lang");
  return seen.href === target;
};

const JOURNEY_TIMEOUT_MS = 240_000;
const WITHIN_MS = 5_000;
const WIDTHS = [1280, 390] as const;

const library = compileLibrary();
after(() => rm(library, { recursive: true, force: true }));

for (const dialect of DIALECTS) {
  describe(`the example extension with Warden's hosted pages in Chromium (${dialect})`, () => {
    test("sign in on the hosted page, buy on Plans (unlocked in under 5 s, no click), cancel and resume on Manage, sign the device out there (locked, no click)", {
      timeout: JOURNEY_TIMEOUT_MS,
    }, async () => {
      // The extension's tokens are read by the browser's clock: Warden's starts at real time.
      const { services, clock, dataDir, stripeApi, ws, origin, pages, send: deliver, close } = await hostedPages(dialect, { now: Date.now() });
      // The loop `warden serve` runs: a turn a second.
      services.accessWatch.start();
      const extension = exampleCopy(library, { url: origin, workspace: ws.slug, tool: ws.tool, env: "test", successUrl: "https://tabmaster.example/thanks" });
      const violations: string[] = [];
      let example: LaunchedExample | null = null;

      /** A hosted page as the person meets it, looked at in both widths: nothing scrolls sideways, axe-core finds nothing serious. */
      const look = async (page: Page, name: string) => {
        for (const width of WIDTHS) {
          await page.setViewportSize({ width, height: 900 });
          await assertFitsAndPasses(page, `${name} at ${width} px`);
          await shoot(page, `hosted-${dialect}-${name}-${width}`);
        }
      };
      /** The next tab a click in the popup opens, loaded. */
      const tabOpenedBy = async (popup: Page, button: string) => {
        const [tab] = await Promise.all([(example as LaunchedExample).context.waitForEvent("page"), popup.click(button)]);
        await tab.waitForLoadState();
        watchPolicy(tab, violations);
        return tab;
      };
      /** Waits until the service worker's long poll waits at Warden again. */
      const parked = async (popup: Page) => {
        const deadline = Date.now() + 10_000;
        while (services.accessWatch.parked < 1 && Date.now() < deadline) await popup.waitForTimeout(100);
        assert.equal(services.accessWatch.parked, 1, "the service worker's long poll waits at Warden");
      };

      try {
        example = await launchExample(extension.dir, { viewport: { width: 390, height: 700 }, withoutIdentity: true });
        const { context, extensionId } = example;
        await answerStripeCheckout(context);
        const errors: string[] = [];
        const popup = await example.openPopup(errors);
        await waitForState(popup, "signed-out");

        // The hosted sign-in page, opened by the service worker in a tab.
        const signIn = await tabOpenedBy(popup, "#open-sign-in");
        const opened = new URL(signIn.url());
        assert.equal(opened.pathname, `${pagesOf(ws)}/sign-in`);
        assert.equal(opened.searchParams.get("redirect_uri"), `chrome-extension://${extensionId}/warden-signed-in.html`);
        assert.equal(opened.searchParams.get("code_challenge_method"), "S256");
        await look(signIn, "1-sign-in");
        const email = `ada-${ws.slug}@example.com`;
        await signIn.getByLabel("Email address").fill(email);
        await signIn.click("form.stack button[type=submit]");
        await signIn.waitForURL(/\/sign-in\/code\?/);
        await look(signIn, "2-sign-in-code");
        await signIn.getByLabel("Sign-in code").fill(await readCode(dataDir, email));
        await signIn.click("form.stack button[type=submit]");
        await signIn.waitForURL(`chrome-extension://${extensionId}/warden-signed-in.html**`);
        await signIn.getByText(`Signed in as ${email}`).waitFor();
        assert.equal(new URL(signIn.url()).hash, "", "the spent code leaves the tab's address");
        await shoot(signIn, `hosted-${dialect}-3-signed-in`);
        await waitForState(popup, "locked");
        assert.equal(await popup.textContent("#who-line"), `Signed in as ${email}`);

        // Plans, signed in by a page ticket; the library waits on Warden meanwhile. The browser's page session is
        // gone (as after signing out on the pages, or 7 days on), so the page asks before it signs the browser in.
        await context.clearCookies();
        const plans = await tabOpenedBy(popup, "#open-plans");
        assert.equal(new URL(plans.url()).pathname, `${pagesOf(ws)}/plans`);
        // The ticket left the address bar; the browser's language the library passed stays.
        assert.deepEqual([...new URL(plans.url()).searchParams.keys()], ["lang"], "the ticket left the address bar");
        await plans.getByRole("heading", { name: `Continue as ${email}?` }).waitFor();
        await look(plans, "4-continue");
        await plans.getByRole("button", { name: `Continue as ${email}` }).click();
        await plans.waitForURL(atPage(`${pages}/plans`));
        await plans.locator("form:has(input[name=plan][value=monthly])").waitFor();
        await parked(popup);
        await look(plans, "4-plans");
        await plans.click("form:has(input[name=plan][value=monthly]) button");
        await plans.waitForURL(/^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_test_\w+$/);
        const sessionId = /cs_test_\w+$/.exec(plans.url())?.[0] as string;
        const checkout = stripeApi.calls.filter((c) => c.method === "POST" && c.path === "/v1/checkout/sessions");
        assert.equal(checkout.length, 1, "one Checkout Session made, by the page's form");
        const form = checkout[0]?.form ?? {};
        assert.equal(form.mode, "subscription");
        const metadata = {
          warden_tool: form["metadata[warden_tool]"],
          warden_plan: form["metadata[warden_plan]"],
          warden_account: form["metadata[warden_account]"],
        };
        assert.deepEqual([metadata.warden_tool, metadata.warden_plan], [ws.tool, "monthly"]);
        assert.ok(metadata.warden_account, "the checkout names the signed-in person");

        // Checkout completes at Stripe: its signed events reach Warden, as Stripe sends them; nothing is clicked in the extension.
        const paidAt = Date.now();
        const now = clock.now();
        const subscription = stripeId("sub");
        const send = async (type: string, object: Record<string, unknown>) => assert.equal(await deliver(type, object), "applied", type);
        await send("checkout.session.completed", subscriptionSession({ id: sessionId, email, subscription, metadata, now }));
        await send(
          "customer.subscription.created",
          subscriptionObject({ id: subscription, status: "active", metadata, startedAt: now, periodStart: now, periodEnd: now + 30 * DAY_MS }),
        );
        await waitForState(popup, "unlocked", WITHIN_MS);
        const unlockedAfter = Date.now() - paidAt;
        if (process.env.WARDEN_SCREENSHOTS) console.log(`unlocked ${unlockedAfter} ms after the payment (${dialect})`);
        assert.ok(unlockedAfter < WITHIN_MS, `unlocked ${unlockedAfter} ms after the payment`);
        assert.match((await popup.textContent("#detail")) ?? "", /by a subscription \(monthly\)/);
        await shoot(popup, `hosted-${dialect}-5-unlocked`, { fullPage: false });

        // Stripe sends the person back to the success page the checkout named.
        assert.ok(form.success_url, "the checkout names a success page");
        await plans.goto(form.success_url.replace("{CHECKOUT_SESSION_ID}", sessionId));
        assert.match(await plans.innerText("main"), /You bought Tab Master \(Monthly\) as a subscription\./);
        await look(plans, "6-success");

        // Manage, from the popup: cancel at the period's end, confirmed on a page of its own.
        const manage = await tabOpenedBy(popup, "#open-manage");
        assert.equal(new URL(manage.url()).pathname, `${pagesOf(ws)}/manage`);
        await look(manage, "7-manage");
        await manage.click("text=Cancel subscription…");
        await manage.waitForURL(atPage(`${pages}/manage/subscriptions/${subscription}/cancel`));
        await look(manage, "8-cancel");
        await manage.click("text=Cancel at period end");
        await manage.waitForURL(atPage(`${pages}/manage?done=cancelled`));
        const ends = await manage.innerText("main");
        assert.match(ends, /Ends\s+\d{1,2} \w{3} \d{4}/, "the page says when it ends");
        assert.match(ends, /you keep it until then/);
        await look(manage, "9-cancelled");
        // The change wakes the long poll: the extension rechecks and stays unlocked.
        await parked(popup);
        await waitForState(popup, "unlocked");
        assert.deepEqual(errors, []);

        await manage.click("text=Resume subscription");
        await manage.waitForURL(atPage(`${pages}/manage?done=resumed`));
        assert.ok(await manage.isVisible("text=Cancel subscription…"));
        await look(manage, "10-resumed");
        assert.deepEqual(
          stripeApi.calls.filter((c) => c.method === "POST" && c.path.startsWith("/v1/subscriptions/")).map((c) => c.form.cancel_at_period_end),
          ["true", "false"],
        );
        await waitForState(popup, "unlocked");

        // The device signed out from Manage: the extension learns it from its wait and locks, with no click.
        const devices = manage.locator(".manage-list form[action*='/devices/'] button");
        assert.equal(await devices.count(), 1, "the one device: this browser's extension");
        await parked(popup);
        const signedOutAt = Date.now();
        await devices.click();
        await manage.waitForURL(atPage(`${pages}/manage?done=signed-out`));
        await waitForState(popup, "signed-out", WITHIN_MS);
        const lockedAfter = Date.now() - signedOutAt;
        if (process.env.WARDEN_SCREENSHOTS) console.log(`locked ${lockedAfter} ms after the sign-out (${dialect})`);
        await look(manage, "11-signed-out");
        await shoot(popup, `hosted-${dialect}-12-locked`, { fullPage: false });
        assert.deepEqual(errors, [], "no script error in the popup");
        assert.deepEqual(violations, [], "no breach of the pages' content-security policy");
      } catch (error) {
        for (const [i, page] of (example?.context.pages() ?? []).entries()) await shoot(page, `hosted-${dialect}-failed-${i}`).catch(() => {});
        throw error;
      } finally {
        await example?.close();
        await services.accessWatch.stop();
        await close();
        extension.remove();
      }
    });
  });
}
