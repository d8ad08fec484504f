// The example extension with Warden's hosted pages, in Debian's Chromium (playwright-core,
// the extension loaded unpacked) against Warden listening on 127.0.0.1, on SQLite and
// PostgreSQL: the popup opens the hosted sign-in page, the person signs in there with the
// mailed code and the extension is signed in with nothing typed into it; the popup opens
// the plans page, Stripe's signed event for the purchase reaches Warden, and the
// extension unlocks in under 5 s with no click (the library's long poll, Warden's loop
// running as in `warden serve`). Set WARDEN_SCREENSHOTS=<folder> to keep pictures.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { buildApp } from "../../src/app.js";
import { CHROMIUM, shoot } from "../../src/test-support/browser.js";
import { dashboardServices, readCode } from "../../src/test-support/dashboard.js";
import { DIALECTS, seedCatalogue, testApi } from "../../src/test-support/harness.js";
import { freePort } from "../../src/test-support/serve.js";
import { connectTestStripe, deliver, paymentSession, stripeEvent } from "../../src/test-support/stripe.js";
import { compileLibrary, exampleCopy } from "./test-support/example.js";

const JOURNEY_TIMEOUT_MS = 180_000;
const UNLOCK_WITHIN_MS = 5_000;

const library = compileLibrary();
after(() => rm(library, { recursive: true, force: true }));

const waitForState = (page: Page, state: string, timeout = 10_000) => page.waitForSelector(`body[data-state="${state}"]`, { timeout });

for (const dialect of DIALECTS) {
  describe(`the example extension with Warden's hosted pages in Chromium (${dialect})`, () => {
    test("signed in on the hosted page with nothing typed into the extension; a purchase made while the plans page is open unlocks it in under 5 s, no click", {
      timeout: JOURNEY_TIMEOUT_MS,
    }, async () => {
      const env = await dashboardServices(dialect);
      const { services, clock } = env;
      clock.set(Date.now());
      const ws = await seedCatalogue(services);
      const secret = await connectTestStripe(services, ws);
      const stripe = await testApi(services);
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const app = await buildApp(services, { logger: false });
      await app.listen({ host: "127.0.0.1", port });
      // The loop `warden serve` runs: a turn a second.
      services.accessWatch.start();
      const extension = exampleCopy(library, { url: base, workspace: ws.slug, tool: ws.tool, env: "test", successUrl: "https://tabmaster.example/thanks" });
      // Without chrome.identity, so the page comes back to the extension's own page in its tab, where a test can follow it.
      const manifestFile = join(extension.dir, "manifest.json");
      const manifest = JSON.parse(readFileSync(manifestFile, "utf8"));
      manifest.permissions = manifest.permissions.filter((p: string) => p !== "identity");
      writeFileSync(manifestFile, JSON.stringify(manifest));
      const profile = await mkdtemp(join(tmpdir(), "warden-chromium-"));
      let context: BrowserContext | null = null;
      try {
        context = await chromium.launchPersistentContext(profile, {
          executablePath: CHROMIUM,
          headless: true,
          viewport: { width: 390, height: 700 },
          args: [
            `--disable-extensions-except=${extension.dir}`,
            `--load-extension=${extension.dir}`,
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-sync",
            "--disable-component-update",
          ],
        });
        const worker = context.serviceWorkers()[0] ?? (await context.waitForEvent("serviceworker"));
        const extensionId = new URL(worker.url()).host;
        const popup = await context.newPage();
        const errors: string[] = [];
        popup.on("pageerror", (error) => errors.push(error.message));
        await popup.goto(`chrome-extension://${extensionId}/popup.html`);
        await waitForState(popup, "signed-out");

        // The hosted sign-in page, opened by the service worker in a tab.
        const [signIn] = await Promise.all([context.waitForEvent("page"), popup.click("#open-sign-in")]);
        await signIn.waitForLoadState();
        const opened = new URL(signIn.url());
        assert.equal(opened.pathname, `/c/${ws.slug}/test/${ws.tool}/sign-in`);
        assert.equal(opened.searchParams.get("redirect_uri"), `chrome-extension://${extensionId}/warden-signed-in.html`);
        assert.equal(opened.searchParams.get("code_challenge_method"), "S256");
        await shoot(signIn, `hosted-${dialect}-1-sign-in`);
        const email = `ada-${ws.slug}@example.com`;
        await signIn.getByLabel("Email address").fill(email);
        await signIn.click("form.stack button[type=submit]");
        await signIn.waitForURL(/\/sign-in\/code\?/);
        await signIn.getByLabel("Sign-in code").fill(await readCode(env.dataDir, email));
        await signIn.click("form.stack button[type=submit]");
        await signIn.waitForURL(`chrome-extension://${extensionId}/warden-signed-in.html**`);
        await signIn.getByText(`Signed in as ${email}`).waitFor();
        assert.equal(new URL(signIn.url()).hash, "", "the spent code leaves the tab's address");
        await shoot(signIn, `hosted-${dialect}-2-signed-in`);
        await waitForState(popup, "locked");
        assert.equal(await popup.textContent("#who-line"), `Signed in as ${email}`);

        // The plans page, signed in by a page ticket; the library waits on Warden meanwhile.
        const [plans] = await Promise.all([context.waitForEvent("page"), popup.click("#open-plans")]);
        await plans.waitForLoadState();
        assert.match(plans.url(), new RegExp(`^${base}/c/${ws.slug}/test/${ws.tool}/plans`));
        const deadline = Date.now() + 10_000;
        while (services.accessWatch.parked < 1 && Date.now() < deadline) await popup.waitForTimeout(100);
        assert.equal(services.accessWatch.parked, 1, "the service worker's long poll waits at Warden");

        // Checkout completes at Stripe: its signed event reaches Warden; nothing is clicked in the extension.
        const paidAt = Date.now();
        const session = paymentSession({ email, metadata: { warden_tool: ws.tool, warden_plan: "lifetime" }, now: clock.now() });
        await deliver(stripe, ws, secret, stripeEvent("checkout.session.completed", session, { now: clock.now() }), clock.now());
        await waitForState(popup, "unlocked", UNLOCK_WITHIN_MS);
        const unlockedAfter = Date.now() - paidAt;
        if (process.env.WARDEN_SCREENSHOTS) console.log(`unlocked ${unlockedAfter} ms after the payment (${dialect})`);
        assert.ok(unlockedAfter < UNLOCK_WITHIN_MS, `unlocked ${unlockedAfter} ms after the payment`);
        assert.match((await popup.textContent("#detail")) ?? "", /by a licence \(lifetime\)/);
        await shoot(popup, `hosted-${dialect}-3-unlocked`, { fullPage: false });
        assert.deepEqual(errors, []);
      } finally {
        await context?.close();
        await services.accessWatch.stop();
        await app.close();
        extension.remove();
        await rm(profile, { recursive: true, force: true });
      }
    });
  });
}
