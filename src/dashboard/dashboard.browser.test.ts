// Journeys in a real browser (Debian's chromium driven by playwright-core) against the
// dashboard listening on 127.0.0.1: real cookies, real form posts, the real CSP. Set
// WARDEN_SCREENSHOTS=<folder> to save a picture of every screen while working on them.
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { describe, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { Webhook as SvixWebhook } from "svix";
import { DAY_MS, toIso } from "../clock.js";
import { importNdjson } from "../import/import.service.js";
import { servedInBrowser, shoot, signInToDashboard, watchPolicy } from "../test-support/browser.js";
import { dashboardServices, readCode } from "../test-support/dashboard.js";
import { DIALECTS, seedCatalogue, seedWorkspace } from "../test-support/harness.js";
import { answer, startReceiver, testWorker } from "../test-support/webhooks.js";

const JOURNEY_TIMEOUT_MS = 60_000;

/** A page signed in as `email` on the test environment's overview, and the policy violations it reports. */
async function signedIn(browser: Browser, base: string, dataDir: string, email: string, slug: string): Promise<{ page: Page; violations: string[] }> {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  const violations = watchPolicy(page);
  await signInToDashboard(page, base, dataDir, email);
  await page.waitForURL(`${base}/dashboard/w/${slug}/test`);
  return { page, violations };
}

for (const dialect of DIALECTS) {
  describe(`dashboard in a browser (${dialect})`, () => {
    test("sign in with the mailed code; a key seen once, used, revoked; a cross-site form refused", { timeout: JOURNEY_TIMEOUT_MS }, async () => {
      const env = await dashboardServices(dialect);
      const ws = await seedWorkspace(env.services);
      const { origin: base, browser, close } = await servedInBrowser(env.services);
      try {
        const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
        const page = await context.newPage();
        const violations = watchPolicy(page);

        await page.goto(`${base}/dashboard`);
        assert.equal(new URL(page.url()).pathname, "/dashboard/sign-in");
        await shoot(page, "1-sign-in");
        await page.fill("#email", ws.ownerEmail);
        await page.click("button[type=submit]");
        await page.waitForURL(`${base}/dashboard/sign-in/code`);
        await shoot(page, "2-code");
        await page.fill("#code", await readCode(env.dataDir, ws.ownerEmail));
        await page.click("form.stack button[type=submit]");
        await page.waitForURL(`${base}/dashboard/w/${ws.slug}/test`);
        assert.ok(await page.isVisible(".test-banner"));
        await shoot(page, "3-overview");

        await page.click("text=API keys");
        await page.waitForURL(`${base}/dashboard/w/${ws.slug}/test/keys`);
        await shoot(page, "4-keys");
        await page.fill("#name", "Browser test server");
        await page.click("text=Create test key");
        const key = await page.inputValue("#new-key");
        assert.match(key, /^wk_test_[0-9A-Za-z]{32}$/);
        await shoot(page, "5-key-created");
        // The POST redirected to a one-time page: a reload shows the key no more and makes no other.
        assert.match(page.url(), /\/keys\/new\/once_\w{32}$/);
        await page.reload();
        await page.waitForSelector("text=shown once and is gone");
        assert.ok(!(await page.content()).includes(key), "the key is not shown on a reload");
        await page.goto(`${base}/dashboard/w/${ws.slug}/test/keys`);
        assert.ok(!(await page.content()).includes(key), "the key is not shown again");
        assert.ok(await page.isVisible(`text=wk_test_…${key.slice(-4)}`));

        const api = () => fetch(`${base}/api/v1/tools/${ws.tool}/customers`, { headers: { authorization: `Bearer ${key}` } });
        assert.equal((await api()).status, 200);

        await page.click(`tr:has-text("Browser test server") >> text=Revoke…`);
        await shoot(page, "6-revoke-confirm");
        await page.click("button:has-text('Revoke key')");
        await page.waitForSelector("text=The API refuses it");
        assert.equal((await api()).status, 401);

        // Live: the switch in the top bar, no banner, and a live key only with a fresh mailed code.
        await page.click(".env-switch >> text=Live");
        await page.waitForURL(`${base}/dashboard/w/${ws.slug}/live/keys`);
        assert.equal(await page.isVisible(".test-banner"), false);
        await page.fill("#name", "Live server");
        await page.click("text=Create live key");
        await page.waitForSelector("text=Confirm it is you");
        await shoot(page, "7-live-key-confirm");
        await page.fill("#code", await readCode(env.dataDir, ws.ownerEmail));
        await page.click("button:has-text('Create live key')");
        assert.match(await page.inputValue("#new-key"), /^wk_live_[0-9A-Za-z]{32}$/);

        await page.goto(`${base}/dashboard/audit`);
        assert.ok(await page.isVisible("text=Revoked an API key"));
        await shoot(page, "8-audit");

        // A page of another origin (another port is another origin) posts a form at the dashboard with this browser's cookies.
        const evil = await buildEvilSite(`${base}/dashboard/w/${ws.slug}/test/keys`, { name: "Planted by another site", _csrf: "x" });
        try {
          const attacker = await context.newPage();
          await attacker.goto(evil.url);
          await attacker.click("button");
          await attacker.waitForLoadState();
          assert.match(await attacker.content(), /Request refused/);
          const refused = await attacker.title();
          assert.match(refused, /Request refused/);
          await page.goto(`${base}/dashboard/w/${ws.slug}/test/keys`);
          assert.ok(!(await page.content()).includes("Planted by another site"));
        } finally {
          await evil.close();
        }
        assert.deepEqual(violations, [], "no page breaks its own content-security policy");
      } finally {
        await close();
      }
    });

    test("webhooks: add an endpoint on a local receiver, send a test event, read the attempt with the receiver's answer, resend", {
      timeout: JOURNEY_TIMEOUT_MS,
    }, async () => {
      const env = await dashboardServices(dialect);
      env.clock.set(Date.now());
      const ws = await seedWorkspace(env.services);
      const receiver = await startReceiver(answer(200, '{"received":true,"note":"<b>hello</b>"}', { "content-type": "application/json" }));
      const worker = testWorker(env.services);
      const { origin: base, browser, close } = await servedInBrowser(env.services);
      try {
        const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
        const violations = watchPolicy(page);
        await signInToDashboard(page, base, env.dataDir, ws.ownerEmail);
        await page.waitForURL(`${base}/dashboard/w/${ws.slug}/test`);

        await page.goto(`${base}/dashboard/w/${ws.slug}/test/keys`);
        await page.click(".side >> text=Webhooks");
        await page.waitForURL(`${base}/dashboard/w/${ws.slug}/test/webhooks`);
        await page.fill("#url", receiver.url);
        await page.check("input[name='event:payment.disputed']");
        await page.check("input[name='event:subscription.cancelled']");
        await shoot(page, "9-webhooks-add");
        await page.click("button:has-text('Add endpoint')");
        assert.match(await page.inputValue("#secret"), /^whsec_/);
        await shoot(page, "10-endpoint-added");
        await page.click("text=I have stored it");
        await page.waitForSelector("text=Send a test event");
        assert.ok(await page.isVisible("text=0 of 100 today"));

        await page.selectOption("#type", "payment.disputed");
        await page.click("button:has-text('Send test event')");
        await page.waitForSelector("text=1 of 100 today");
        await worker.drain();
        assert.equal(receiver.received.length, 1);
        await page.reload();
        await shoot(page, "11-endpoint");
        await page.click("tbody >> text=Attempts");
        await page.waitForSelector("text=Attempt 1");
        assert.ok(await page.isVisible("text=HTTP 200"));
        assert.ok(await page.isVisible('pre.payload:has-text("<b>hello</b>")'), "the receiver's answer, as text");
        await page.click("button:has-text('Resend')");
        await page.waitForSelector("text=Resend queued");
        await worker.drain();
        assert.equal(receiver.received.length, 2);
        await page.reload();
        await page.waitForSelector("text=Attempt 2");
        await shoot(page, "12-delivery");

        await page.click(".facts >> a.url");
        await page.click("button:has-text('Reveal signing secret')");
        await page.waitForSelector("text=Confirm it is you");
        await shoot(page, "13-secret-confirm");
        await page.fill("#code", await readCode(env.dataDir, ws.ownerEmail));
        await page.click("button:has-text('Reveal secret')");
        assert.match(await page.inputValue("#secret"), /^whsec_/);
        await page.click("text=Done · back to the endpoint");
        await page.selectOption("#since", "week");
        await page.click("button:has-text('Review')");
        await page.waitForSelector("text=Recover deliveries?");
        await shoot(page, "14-recover-confirm");

        await page.goto(`${base}/dashboard/w/${ws.slug}/test/webhooks`);
        await shoot(page, "15-webhooks-list");

        await page.click(".side >> text=Events");
        await page.waitForSelector("text=Every event of this workspace");
        await page.selectOption("#type", "payment.disputed");
        await page.click("button:has-text('Filter')");
        await shoot(page, "16-events");
        await page.click("tbody >> text=Open");
        await page.waitForSelector("text=Payload");
        assert.match((await page.textContent("pre.payload")) ?? "", /\n {2}"type": "payment\.disputed",\n/, "the payload, indented");
        await shoot(page, "17-event");
        const here = () => page.textContent('nav[aria-label="Breadcrumb"] [aria-current="page"]');
        assert.equal(await here(), "payment.disputed", "the event's breadcrumb names its type");
        await page.goto(`${base}/dashboard/w/${ws.slug}/test/events/deliveries?status=succeeded`);
        await shoot(page, "18-deliveries");
        // Each delivery leads with its event's type, the event's id under it.
        assert.equal(await page.textContent("tbody tr:first-child td:first-child a code"), "payment.disputed");
        assert.match((await page.textContent("tbody tr:first-child td:first-child .id-secondary")) ?? "", /^evt_/);
        await page.click("tbody tr:first-child >> text=Attempts");
        await page.waitForSelector("text=Attempt 1");
        assert.equal(await here(), "Delivery of payment.disputed");
        assert.deepEqual(violations, [], "no page breaks its own content-security policy");
      } finally {
        await close();
      }
    });

    test("webhooks: rotate the signing secret after a fresh code, see the new one once, deliveries signed with both; a cross-site rotation refused", {
      timeout: JOURNEY_TIMEOUT_MS,
    }, async () => {
      const env = await dashboardServices(dialect);
      env.clock.set(Date.now());
      const ws = await seedWorkspace(env.services);
      const receiver = await startReceiver();
      const { origin: base, browser, close } = await servedInBrowser(env.services);
      try {
        const { page, violations } = await signedIn(browser, base, env.dataDir, ws.ownerEmail, ws.slug);
        await page.goto(`${base}/dashboard/w/${ws.slug}/test/webhooks`);
        await page.fill("#url", receiver.url);
        await page.click("button:has-text('Add endpoint')");
        const old = await page.inputValue("#secret");
        await page.click("text=I have stored it");
        await page.waitForSelector("text=Send a test event");
        const endpointUrl = page.url();

        // Another site's form, with this browser's cookies, rotates nothing.
        const evil = await buildEvilSite(`${endpointUrl}/secret/rotate`, { confirm: "1", code: "123456", _csrf: "x" });
        try {
          const attacker = await page.context().newPage();
          await attacker.goto(evil.url);
          await attacker.click("button");
          await attacker.waitForLoadState();
          assert.match(await attacker.title(), /Request refused/);
        } finally {
          await evil.close();
        }

        await page.click("button:has-text('Rotate signing secret')");
        await page.waitForSelector("text=Confirm it is you");
        await shoot(page, "25-rotate-confirm");
        await page.fill("#code", await readCode(env.dataDir, ws.ownerEmail));
        await page.click("button:has-text('Rotate secret')");
        await page.waitForSelector("text=Copy the new signing secret now");
        const rotated = await page.inputValue("#secret");
        assert.match(rotated, /^whsec_/);
        assert.notEqual(rotated, old);
        await shoot(page, "26-secret-rotated");
        await page.click("text=I have stored it");
        await page.waitForSelector("text=the old secret also signs until");
        assert.ok(!(await page.content()).includes(rotated), "the new secret is not shown again");
        await shoot(page, "27-endpoint-rotating");

        await page.click("button:has-text('Send test event')");
        await page.waitForSelector("text=1 of 100 today");
        await testWorker(env.services).drain();
        const [delivery] = receiver.received;
        assert.ok(delivery);
        const headers = Object.fromEntries(["webhook-id", "webhook-timestamp", "webhook-signature"].map((h) => [h, String(delivery.headers[h])]));
        assert.equal(headers["webhook-signature"]?.split(" ").length, 2, "two signatures in the one header");
        for (const Webhook of [StandardWebhook, SvixWebhook]) {
          for (const secret of [old, rotated])
            assert.equal((new Webhook(secret).verify(delivery.body, headers) as { type: string }).type, "purchase.completed");
        }
        await page.goto(`${base}/dashboard/audit`);
        assert.equal(await page.locator("text=Rotated a webhook signing secret").count(), 1);
        assert.deepEqual(violations, [], "no page breaks its own content-security policy");
      } finally {
        await close();
      }
    });

    test("customers: find an address, grant with a note, see the note, revoke", { timeout: JOURNEY_TIMEOUT_MS }, async () => {
      const env = await dashboardServices(dialect);
      const ws = await seedWorkspace(env.services);
      const { origin: base, browser, close } = await servedInBrowser(env.services);
      for (const email of ["ada@example.com", "alan@example.com"]) {
        const granted = await fetch(`${base}/api/v1/tools/${ws.tool}/grants`, {
          method: "POST",
          headers: { authorization: `Bearer ${ws.testKey}`, "content-type": "application/json" },
          body: JSON.stringify({ email, days: 30 }),
        });
        assert.equal(granted.status, 201);
      }
      try {
        const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
        const violations = watchPolicy(page);
        await signInToDashboard(page, base, env.dataDir, ws.ownerEmail);
        await page.waitForURL(`${base}/dashboard/w/${ws.slug}/test`);

        await page.goto(`${base}/dashboard/w/${ws.slug}/test/keys`);
        await page.click(".side >> text=Customers");
        await page.fill("#q", "grace@example.com");
        await page.click("button:has-text('Show')");
        await page.click("text=Open the page of grace@example.com");
        await page.waitForSelector("text=No customer with this address");
        await page.fill("#days", "14");
        await page.fill("#note", "Speaker at <Conf> & friends");
        await page.click("button:has-text('Grant')");
        await page.waitForSelector("text=Access granted");
        assert.equal(await page.textContent(".note"), "Speaker at <Conf> & friends");
        assert.ok(await page.isVisible("text=via a grant"));
        await shoot(page, "19-customer");
        await page.click("tbody >> text=Revoke…");
        await page.waitForSelector("text=Revoke this grant?");
        await page.click("button:has-text('Revoke grant')");
        await page.waitForSelector("text=Grant revoked");
        assert.ok(await page.isVisible("text=Not entitled"));

        // A revoked grant was her only access: she stays in the list, lapsed, not entitled.
        await page.click(".side >> text=Customers");
        await page.waitForSelector("text=ada@example.com");
        assert.ok(await page.isVisible("tr:has-text('grace@example.com') >> text=Not entitled"));
        await page.selectOption("#entitled", "yes");
        await page.click("button:has-text('Show')");
        await page.waitForSelector("text=2 customers.");
        assert.equal(await page.isVisible("text=grace@example.com"), false);
        await shoot(page, "20-customers");
        assert.deepEqual(violations, [], "no page breaks its own content-security policy");
      } finally {
        await close();
      }
    });

    test("a customer's licences and subscription: refund after a fresh code, cancel at the period's end", { timeout: JOURNEY_TIMEOUT_MS }, async () => {
      const env = await dashboardServices(dialect);
      const ws = await seedCatalogue(env.services);
      const now = env.clock.now();
      const lines = [
        {
          type: "licence",
          email: "ada@example.com",
          tool: "tabmaster",
          plan: "lifetime",
          purchased_at: toIso(now - 40 * DAY_MS),
          amount_cents: 4900,
          currency: "eur",
          payment_intent: "pi_b1",
        },
        {
          type: "licence",
          email: "ada@example.com",
          bundle: "suite",
          plan: "suite-lifetime",
          purchased_at: toIso(now - 80 * DAY_MS),
          amount_cents: 9900,
          currency: "eur",
          payment_intent: "pi_b2",
          seats: 5,
        },
        {
          type: "licence",
          email: "ada@example.com",
          tool: "tabmaster",
          status: "suspended",
          purchased_at: toIso(now - 90 * DAY_MS),
          amount_cents: 4900,
          currency: "eur",
          payment_intent: "pi_b3",
        },
        {
          type: "subscription",
          id: "sub_b1",
          email: "ada@example.com",
          tool: "tabmaster",
          plan: "monthly",
          status: "active",
          current_period_start: toIso(now - DAY_MS),
          current_period_end: toIso(now + 29 * DAY_MS),
        },
        {
          type: "device",
          email: "ada@example.com",
          tool: "tabmaster",
          name: "Ada's <MacBook>",
          platform: "macos",
          created_at: toIso(now - 30 * DAY_MS),
          last_active_at: toIso(now - DAY_MS),
        },
        {
          type: "device",
          email: "ada@example.com",
          tool: "tabmaster",
          name: "Old PC",
          platform: "windows",
          created_at: toIso(now - 60 * DAY_MS),
          last_active_at: toIso(now - 50 * DAY_MS),
          signed_out_at: toIso(now - 45 * DAY_MS),
        },
      ];
      await importNdjson(env.services.db, env.services.clock, { workspace: ws.slug, env: "test", text: lines.map((l) => JSON.stringify(l)).join("\n") });
      const { origin: base, browser, close } = await servedInBrowser(env.services);
      try {
        const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
        const violations = watchPolicy(page);
        await signInToDashboard(page, base, env.dataDir, ws.ownerEmail);
        await page.waitForURL(`${base}/dashboard/w/${ws.slug}/test`);

        await page.goto(`${base}/dashboard/w/${ws.slug}/test/customers/tabmaster/ada%40example.com`);
        await page.waitForSelector("text=by a dispute");
        assert.ok(await page.isVisible("text=Ada's <MacBook>"));
        assert.ok(await page.isVisible("text=Team of 5 seats"));
        await shoot(page, "21-customer-holdings");
        await page.click("tr:has-text('€49.00'):has-text('Active') >> button:has-text('Refund…')");
        await page.waitForSelector("text=Refund this licence?");
        await shoot(page, "22-refund-confirm");
        await page.fill("#code", await readCode(env.dataDir, ws.ownerEmail));
        await page.click("button:has-text('Refund €49.00')");
        await page.waitForSelector("text=Licence refunded");

        await page.click("tr:has-text('sub_b1') >> text=Cancel…");
        await page.waitForSelector("text=Cancel this subscription?");
        await shoot(page, "23-cancel-confirm");
        await page.click("button:has-text('Cancel at period end')");
        await page.waitForSelector("text=Subscription set to end");
        await shoot(page, "24-customer-after");
        const api = await fetch(`${base}/api/v1/tools/tabmaster/customers/ada%40example.com`, { headers: { authorization: `Bearer ${ws.testKey}` } });
        assert.equal(((await api.json()) as { subscription: { cancelAtPeriodEnd: boolean } }).subscription.cancelAtPeriodEnd, true);
        assert.deepEqual(violations, [], "no page breaks its own content-security policy");
      } finally {
        await close();
      }
    });
  });
}

/** A page on another origin whose form posts `fields` to `action` on the dashboard. */
async function buildEvilSite(action: string, fields: Record<string, string>): Promise<{ url: string; close(): Promise<void> }> {
  const { createServer } = await import("node:http");
  const inputs = Object.entries(fields)
    .map(([name, value]) => `<input name="${name}" value="${value}">`)
    .join("");
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(`<!doctype html><form method="post" action="${action}">${inputs}<button>Win a prize</button></form>`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
