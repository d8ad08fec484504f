// The Configure section in a real browser (Debian's chromium driven by playwright-core),
// from a workspace the operator made with `warden admin workspace create` and nothing
// else: a vendor builds the catalogue, connects Stripe, and a Stripe-signed checkout for
// a bundle entitles a buyer to both its tools, without a shell; a co-owner is invited,
// signs in, and is refused once removed. WARDEN_SCREENSHOTS=<folder> saves every screen.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, test } from "node:test";
import type { BrowserContext, Page } from "playwright-core";
import Stripe from "stripe";
import { main } from "../cli.js";
import { systemClock } from "../clock.js";
import { parseConfig } from "../config.js";
import { createServices } from "../services.js";
import { servedInBrowser, shoot, signInToDashboard, watchPolicy } from "../test-support/browser.js";
import { readCode, readMail } from "../test-support/dashboard.js";
import { DIALECTS, privateDatabaseEnv, unique } from "../test-support/harness.js";
import { sendTestMail } from "../test-support/mail.js";
import { freePort } from "../test-support/serve.js";
import { paymentSession, stripeEvent } from "../test-support/stripe.js";
import { listTools } from "../workspaces/workspace.service.js";

const JOURNEY_TIMEOUT_MS = 120_000;

/** The operator's whole part: an owner and an empty workspace, made with `warden admin`. */
async function operatorSetUp(env: Record<string, string>, owner: string, slug: string): Promise<void> {
  for (const argv of [
    ["admin", "owner", "create", "--email", owner],
    ["admin", "workspace", "create", "--slug", slug, "--name", "Acme Extensions", "--owner", owner],
  ]) {
    let stderr = "";
    const code = await main(argv, { stdout: () => {}, stderr: (t) => (stderr += t), env });
    assert.equal(code, 0, stderr);
  }
}

/**
 * Warden listening on 127.0.0.1 over the database the CLI wrote, with the system clock
 * (Stripe signs with real time), and a chromium to open it; `close` ends both and the services.
 */
async function serve(env: Record<string, string>) {
  const port = await freePort();
  const services = await createServices(parseConfig({ ...env, WARDEN_PUBLIC_URL: `http://127.0.0.1:${port}` }), { clock: systemClock });
  await sendTestMail(services);
  const served = await servedInBrowser(services, { port });
  return {
    services,
    base: served.origin,
    browser: served.browser,
    close: async () => {
      await served.close();
      await services.close();
    },
  };
}

/** A page that records any breach of the content-security policy. */
async function openPage(context: BrowserContext, violations: string[]): Promise<Page> {
  const page = await context.newPage();
  watchPolicy(page, violations);
  return page;
}

for (const dialect of DIALECTS) {
  describe(`dashboard Configure in a browser (${dialect})`, () => {
    test("from an empty workspace to a paid test purchase of a bundle that entitles its buyer to both tools; a co-owner in and out", {
      timeout: JOURNEY_TIMEOUT_MS,
    }, async () => {
      const env = await privateDatabaseEnv(dialect);
      const dataDir = env.WARDEN_DATA_DIR as string;
      const owner = `${unique("vendor")}@example.com`;
      const slug = unique("acme");
      await operatorSetUp(env, owner, slug);
      const { base, browser, close } = await serve(env);
      const ws = `${base}/dashboard/w/${slug}/test`;
      try {
        const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
        await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
        const violations: string[] = [];
        const page = await openPage(context, violations);
        await signInToDashboard(page, base, dataDir, owner);
        await page.waitForURL(ws);

        // Tools: the empty state says what to do; two tools, the first with two plans.
        await page.click(".side >> text=Tools and plans");
        await page.waitForSelector("text=No tools yet");
        await shoot(page, "configure-1-tools-empty");
        await page.fill("#tool-name", "Tab Master");
        await page.fill("#tool-id", "tabmaster");
        await page.fill("#tool-trial", "14");
        await page.click("button:has-text('Add tool')");
        await page.waitForURL(`${ws}/tools/tabmaster?created=1`);
        await page.fill("#plan-name", "Lifetime");
        await page.fill("#plan-id", "lifetime");
        await page.fill("#plan-amount", "49.00");
        await page.click("button:has-text('Add plan')");
        await page.waitForSelector(".notice >> text=Lifetime");
        await page.fill("#plan-name", "Monthly");
        await page.fill("#plan-id", "monthly");
        await page.check("input[name=billing][value=subscription]");
        await page.fill("#plan-amount", "5");
        await page.selectOption("#plan-interval", "month");
        await page.check("input[name=default]");
        await page.click("button:has-text('Add plan')");
        await page.waitForSelector(".notice >> text=Monthly");
        assert.ok(await page.isVisible("td.num:has-text('€49.00')"));
        assert.ok(await page.isVisible("td.num:has-text('€5.00')"));
        await shoot(page, "configure-2-tool");
        await page.click("text=All tools");
        await page.fill("#tool-name", "Link Keeper");
        await page.fill("#tool-id", "linkkeeper");
        await page.click("button:has-text('Add tool')");
        await page.waitForURL(`${ws}/tools/linkkeeper?created=1`);
        await page.click(".side >> text=Tools and plans");
        await shoot(page, "configure-3-tools");

        // A bundle of the two, sold by a plan of its own.
        await page.click(".side >> text=Bundles");
        await page.fill("#bundle-name", "Productivity suite");
        await page.fill("#bundle-id", "suite");
        await page.check("input[name='tool:tabmaster']");
        await page.check("input[name='tool:linkkeeper']");
        await shoot(page, "configure-4-bundle-add");
        await page.click("button:has-text('Add bundle')");
        await page.waitForURL(`${ws}/bundles/suite?created=1`);
        await page.fill("#plan-name", "Suite for life");
        await page.fill("#plan-id", "suite-lifetime");
        await page.fill("#plan-amount", "99");
        await page.click("button:has-text('Add plan')");
        await page.waitForSelector(".notice >> text=Suite for life");
        await shoot(page, "configure-5-bundle");

        // Payments, Stripe in test mode: the URL to paste (copied with its button), the signing secret, and the secret key after a fresh code.
        await page.click(".side >> text=Payments");
        await page.waitForSelector("text=Not receiving events");
        const webhookUrl = await page.inputValue("#webhook-url");
        assert.equal(webhookUrl, `${base}/processor/stripe/${slug}`);
        await page.click("button[data-copy=webhook-url]");
        await page.waitForSelector("button[data-copy=webhook-url]:has-text('Copied')");
        // Read in the page: the test's own types know no DOM, hence the declared shape.
        const clipboard = await page.evaluate(() =>
          (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText(),
        );
        assert.equal(clipboard, webhookUrl);
        await shoot(page, "configure-6-stripe-connect");
        const webhookSecret = `whsec_${unique("journey").replace("-", "")}`;
        await page.fill("#webhook_secret", webhookSecret);
        await page.fill("#secret_key", "sk_test_journeySecretKey0123456789");
        await page.click("button:has-text('Connect Stripe')");
        await page.waitForSelector("text=Confirm it is you");
        await page.fill("#code", await readCode(dataDir, owner));
        await page.click("button:has-text('Save the secrets')");
        await page.waitForSelector("text=Stripe is connected");
        assert.ok(await page.isVisible(`text=whsec_…${webhookSecret.slice(-4)}`));
        assert.ok(await page.isVisible("text=sk_test_…6789"));
        assert.ok(!(await page.content()).includes(webhookSecret), "never shown again in full");

        // Stripe reports a paid checkout of the bundle, signed with the endpoint's secret, at the URL the page gave.
        const session = paymentSession({
          email: "ada@example.com",
          metadata: { warden_bundle: "suite", warden_plan: "suite-lifetime" },
          amount: 9900,
          now: Date.now(),
        });
        const payload = JSON.stringify(stripeEvent("checkout.session.completed", session, { now: Date.now() }));
        const delivered = await fetch(webhookUrl, {
          method: "POST",
          headers: { "content-type": "application/json", "stripe-signature": Stripe.webhooks.generateTestHeaderString({ payload, secret: webhookSecret }) },
          body: payload,
        });
        assert.equal(delivered.status, 200);
        assert.deepEqual(await delivered.json(), { received: true, outcome: "applied" });
        await page.reload();
        assert.ok(await page.isVisible("dd:has-text('checkout.session.completed')"));
        assert.ok(await page.isVisible(".badge:has-text('Applied')"));
        await shoot(page, "configure-7-stripe-connected");

        // The buyer holds both tools of the bundle.
        for (const tool of ["tabmaster", "linkkeeper"]) {
          await page.goto(`${ws}/customers?tool=${tool}`);
          assert.ok(await page.isVisible("tr:has-text('ada@example.com') >> text=Entitled"), tool);
          assert.ok(await page.isVisible("tr:has-text('ada@example.com') >> text=via a licence"), tool);
        }
        await shoot(page, "configure-8-customers");

        // A co-owner: invited by mail, signs in with a code in their own browser, sees the workspace.
        const colleague = `${unique("colleague")}@example.com`;
        await page.click(".side >> text=Owners");
        await page.fill("#email", colleague);
        await page.click("button:has-text('Send invitation')");
        await page.waitForSelector("text=Confirm it is you");
        await page.fill("#code", await readCode(dataDir, owner));
        await page.click("button:has-text('Send invitation')");
        await page.waitForSelector("text=Invitation sent to");
        await shoot(page, "configure-9-owners");
        assert.match((await readMail(dataDir, colleague)) ?? "", /co-own Acme Extensions/);
        const theirContext = await browser.newContext({ viewport: { width: 1280, height: 800 } });
        const theirs = await openPage(theirContext, violations);
        await signInToDashboard(theirs, base, dataDir, colleague);
        await theirs.waitForURL(ws);
        assert.ok(await theirs.isVisible(".switcher >> text=Acme Extensions"));
        await theirs.click(".side >> text=Tools and plans");
        assert.ok(await theirs.isVisible("text=Tab Master"));

        // Removed, the co-owner's next request is refused.
        await page.reload();
        await page.click(`tr:has-text('${colleague}') >> text=Remove…`);
        await shoot(page, "configure-10-owner-remove");
        await page.click("button:has-text('Remove owner')");
        await page.waitForSelector("text=Confirm it is you");
        await page.fill("#code", await readCode(dataDir, owner));
        await page.click("button:has-text('Remove owner')");
        await page.waitForSelector("text=is no longer an owner");
        await theirs.reload();
        assert.match(await theirs.title(), /Not found/);
        assert.equal(await theirs.isVisible("text=Tab Master"), false);

        await page.goto(`${base}/dashboard/audit`);
        for (const action of [
          "Added a tool",
          "Added a plan",
          "Added a bundle",
          "Connected Stripe",
          "Invited a co-owner",
          "Joined as a co-owner",
          "Removed an owner",
        ]) {
          assert.ok(await page.isVisible(`text=${action}`), action);
        }
        await shoot(page, "configure-11-audit");
        assert.deepEqual(violations, [], "no page breaks its own content-security policy");
      } finally {
        await close();
      }
    });

    test("a form of another site aimed at the Configure pages is refused, and changes nothing", { timeout: JOURNEY_TIMEOUT_MS }, async () => {
      const env = await privateDatabaseEnv(dialect);
      const dataDir = env.WARDEN_DATA_DIR as string;
      const owner = `${unique("vendor")}@example.com`;
      const slug = unique("acme");
      await operatorSetUp(env, owner, slug);
      const { services, base, browser, close } = await serve(env);
      const targets = [
        { path: "tools", fields: { id: "planted", name: "Planted" } },
        { path: "owners/invite", fields: { email: "attacker@example.com" } },
        { path: "stripe", fields: { webhook_secret: "whsec_plantedByAnotherSite" } },
      ];
      // Another origin (another port), serving one auto-labelled form per target.
      const evil = createServer((_req, res) => {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
        res.end(
          `<!doctype html>${targets
            .map(
              (t, i) =>
                `<form method="post" action="${base}/dashboard/w/${slug}/test/${t.path}">${Object.entries(t.fields)
                  .map(([n, v]) => `<input name="${n}" value="${v}">`)
                  .join("")}<input name="_csrf" value="x"><button id="b${i}">Win a prize</button></form>`,
            )
            .join("")}`,
        );
      });
      await new Promise<void>((resolve) => evil.listen(0, "127.0.0.1", resolve));
      const evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}/`;
      try {
        const context = await browser.newContext();
        const page = await context.newPage();
        await signInToDashboard(page, base, dataDir, owner);
        await page.waitForURL(`${base}/dashboard/w/${slug}/test`);
        for (let i = 0; i < targets.length; i++) {
          const attacker = await context.newPage();
          await attacker.goto(evilUrl);
          await attacker.click(`#b${i}`);
          await attacker.waitForLoadState();
          assert.match(await attacker.title(), /Request refused/, targets[i]?.path);
          await attacker.close();
        }
        assert.deepEqual(await listTools(services.db, { workspace: slug }), []);
        await page.goto(`${base}/dashboard/w/${slug}/test/owners`);
        assert.ok(await page.isVisible("text=No open invitations"));
        await page.goto(`${base}/dashboard/w/${slug}/test/stripe`);
        assert.ok(await page.isVisible("text=Not receiving events"));
      } finally {
        await close();
        await new Promise<void>((resolve) => evil.close(() => resolve()));
      }
    });
  });
}
