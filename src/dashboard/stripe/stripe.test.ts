import assert from "node:assert/strict";
import { describe, test } from "node:test";
import Stripe from "stripe";
import { dashboardApp, dashboardServices, readCode, readMail, TestBrowser } from "../../test-support/dashboard.js";
import { DIALECTS, seedCatalogue } from "../../test-support/harness.js";
import { paymentSession, stripeEvent } from "../../test-support/stripe.js";

const WEBHOOK_SECRET = "whsec_dashboardTest0123456789WXYZ";
const SECRET_KEY = "sk_test_dashboardSecretKey0123456789abcd";

for (const dialect of DIALECTS) {
  describe(`dashboard Stripe (${dialect})`, () => {
    test("connect, see the secrets by their last four only, the URL to paste and the last event; disconnect", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedCatalogue(env.services);
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const page = `/dashboard/w/${ws.slug}/test/stripe`;
      const ingest = (secret: string) => {
        const event = stripeEvent(
          "checkout.session.completed",
          paymentSession({ email: "ada@example.com", metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" }, now: env.clock.now() }),
          { now: env.clock.now() },
        );
        const payload = JSON.stringify(event);
        const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: Math.floor(env.clock.now() / 1000) });
        return app.inject({
          method: "POST",
          url: `/processor/stripe/${ws.slug}`,
          headers: { "content-type": "application/json", "stripe-signature": signature },
          payload,
        });
      };

      const fresh = await browser.get(page);
      assert.equal(fresh.statusCode, 200);
      assert.match(fresh.body, /Not receiving events/);
      assert.ok(fresh.body.includes(`value="http://127.0.0.1:8080/processor/stripe/${ws.slug}"`), "the URL to paste, on the public origin (here the default)");
      assert.ok(fresh.body.includes('<script src="/dashboard/assets/copy.js" defer></script>'));
      assert.equal(fresh.body.match(/<script/g)?.length, 1, "the one script, from this origin");
      assert.match(fresh.body, /<button type="button" class="button" data-copy="webhook-url" hidden>Copy<\/button>/);
      assert.equal((await ingest(WEBHOOK_SECRET)).statusCode, 400, "not connected yet");

      const bad = await browser.post(page, { webhook_secret: "secret" });
      assert.equal(bad.statusCode, 400);
      assert.match(bad.body, /webhook-secret must be the endpoint&#39;s signing secret from Stripe, starting with whsec_\./);
      const liveKey = await browser.post(page, { webhook_secret: WEBHOOK_SECRET, secret_key: "sk_live_abcdefgh12345678" });
      assert.match(liveKey.body, /secret-key is a live mode key; the test environment needs a test mode key\./);
      assert.equal(await readMail(env.dataDir, ws.ownerEmail).then((m) => /confirm/.test(m ?? "")), false, "no code for a refused key");

      const connected = await browser.postWithCode(env.dataDir, ws.ownerEmail, page, { webhook_secret: WEBHOOK_SECRET });
      assert.equal(connected.statusCode, 303);
      const shown = await browser.get(connected.headers.location as string);
      // Receiving events and acting in Stripe are two states: the signing secret alone gives the first.
      assert.match(shown.body, /Warden now receives Stripe&#39;s events\. Without a secret key it cannot act in Stripe/);
      assert.match(
        shown.body,
        /<dt>Receiving events<\/dt><dd><span class="badge badge-pending">Not yet<\/span> <span class="state-note">the signing secret is stored, but no event has arrived/,
      );
      assert.match(
        shown.body,
        /<dt>Can act in Stripe<\/dt><dd><span class="badge badge-off">No<\/span> <span class="state-note">no secret key: refunds and cancellations made in Warden change Warden only/,
      );
      assert.doesNotMatch(shown.body, /class="badge[^"]*">Connected</, "no one word for two states");
      assert.ok(shown.body.includes("whsec_…WXYZ"));
      assert.ok(!shown.body.includes(WEBHOOK_SECRET), "never in full");
      assert.match(shown.body, /No event received yet/);

      assert.equal((await ingest(WEBHOOK_SECRET)).statusCode, 200);
      const after = await browser.get(page);
      assert.match(after.body, /<code>checkout\.session\.completed<\/code>/);
      assert.match(after.body, /badge-ok">Applied/);
      assert.match(after.body, /<dt>Receiving events<\/dt><dd><span class="badge badge-ok">Yes<\/span> <span class="state-note">last one <time/);

      // A secret key, as the signing secret, waits for a fresh code; a wrong one stores nothing.
      const asked = await browser.post(page, { webhook_secret: WEBHOOK_SECRET, secret_key: SECRET_KEY });
      assert.equal(asked.statusCode, 200);
      assert.match(asked.body, /Confirm it is you/);
      const code = await readCode(env.dataDir, ws.ownerEmail);
      assert.match((await readMail(env.dataDir, ws.ownerEmail)) ?? "", /change the Stripe secrets of Test workspace \(test\)/);
      const wrong = await browser.post(page, {
        webhook_secret: WEBHOOK_SECRET,
        secret_key: SECRET_KEY,
        confirm: "1",
        code: code === "000000" ? "111111" : "000000",
      });
      assert.equal(wrong.statusCode, 400);
      assert.match((await browser.get(page)).body, /<dt>Can act in Stripe<\/dt><dd><span class="badge badge-off">No/);
      const stored = await browser.post(page, { webhook_secret: WEBHOOK_SECRET, secret_key: SECRET_KEY, confirm: "1", code });
      assert.equal(stored.statusCode, 303);
      const withKey = await browser.get(page);
      assert.ok(withKey.body.includes("sk_test_…abcd"));
      assert.match(withKey.body, /<dt>Can act in Stripe<\/dt><dd><span class="badge badge-ok">Yes<\/span>/);
      assert.ok(!withKey.body.includes(SECRET_KEY));

      assert.match((await browser.get(`${page}/disconnect`)).body, /Disconnect Stripe\?/);
      const gone = await browser.post(`${page}/disconnect`);
      assert.equal(gone.statusCode, 303);
      assert.match((await browser.get(gone.headers.location as string)).body, /Stripe is disconnected/);
      assert.equal((await ingest(WEBHOOK_SECRET)).statusCode, 400, "refused from the next delivery");
      // The live environment was never connected.
      assert.match((await browser.get(`/dashboard/w/${ws.slug}/live/stripe`)).body, /Not receiving events/);

      const audit = (await browser.get("/dashboard/audit")).body;
      assert.equal(audit.match(/Connected Stripe/g)?.length, 2);
      assert.match(audit, /Disconnected Stripe/);
      assert.match(audit, /<code>signing secret, secret key<\/code>/);
    });
  });
}
