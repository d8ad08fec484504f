import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { dashboardApp, dashboardServices, TestBrowser } from "../../test-support/dashboard.js";
import { DIALECTS, seedCatalogue, testApi } from "../../test-support/harness.js";
import { connectTestPaddle, linkTestPaddlePrices, PADDLE_PRICES, paddleEvent, sendPaddleEvent } from "../../test-support/paddle.js";
import { connectTestStripe } from "../../test-support/stripe.js";

const API_KEY = "pdl_sdbx_apikey_dashboardPaddleKey0123456789wxyz";
const words = (body: string) =>
  body
    .replace(/<[^>]+>/g, " ")
    .replace(/&#39;/g, "'")
    .replace(/\s+/g, " ");
const stepOf = (body: string, step: string) => new RegExp(`<li class="checklist-step" id="step-${step}">[\\s\\S]*?</li>`).exec(body)?.[0] ?? "";

for (const dialect of DIALECTS) {
  describe(`dashboard payments: which processor (${dialect})`, () => {
    test("no processor yet: the page says so and shows both ways in, Paddle's with this workspace's URL and commands", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedCatalogue(env.services);
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const page = await browser.get(`/dashboard/w/${ws.slug}/test/stripe`);
      assert.equal(page.statusCode, 200);
      const text = words(page.body);
      assert.match(text, /No payment processor is connected to the test environment yet: connect Stripe or Paddle/);
      assert.match(page.body, /name="webhook_secret"/, "Stripe's form");
      assert.ok(page.body.includes(`value="http://127.0.0.1:8080/processor/paddle/${ws.slug}"`), "Paddle's URL on the public origin");
      assert.match(text, /Paddle's sandbox/);
      assert.ok(text.includes(`warden admin paddle connect --workspace ${ws.slug} --env test --webhook-secret pdl_ntfset_… --api-key pdl_sdbx_apikey_…`));
      for (const type of ["transaction.completed", "subscription.canceled", "adjustment.updated"]) assert.ok(text.includes(type), type);
      const live = words((await browser.get(`/dashboard/w/${ws.slug}/live/stripe`)).body);
      assert.ok(live.includes("--env live --webhook-secret pdl_ntfset_… --api-key pdl_live_apikey_…"), "live's key is a live one");
      assert.match(live, /your live Paddle account/);

      const revenue = words((await browser.get(`/dashboard/w/${ws.slug}/test/insights/revenue?tool=all&range=30d`)).body);
      assert.match(revenue, /No payment processor is connected to this environment yet\. Connect Stripe or Paddle/);
    });

    test("Paddle connected: its status by last four only, its last event, the plans' prices; the setup step and Insights follow it", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedCatalogue(env.services);
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const path = `/dashboard/w/${ws.slug}/test/stripe`;
      const secret = await connectTestPaddle(env.services, ws, "test", API_KEY);
      await linkTestPaddlePrices(env.services, ws);

      const before = await browser.get(path);
      const text = words(before.body);
      assert.match(text, /Payments of the test environment come from Paddle Billing \(its sandbox\)/);
      assert.doesNotMatch(before.body, /name="webhook_secret"/, "Stripe cannot be connected beside Paddle: no form for it");
      assert.match(text, /Stripe cannot be connected to this environment while Paddle is/);
      assert.match(text, /Receiving events Not yet/);
      assert.match(text, /Can act in Paddle Yes/);
      assert.ok(text.includes(`pdl_ntfset_…${secret.slice(-4)}`));
      assert.ok(text.includes(`pdl_sdbx_apikey_…${API_KEY.slice(-4)}`));
      assert.ok(!before.body.includes(secret) && !before.body.includes(API_KEY), "the secrets never in full");
      for (const [plan, price] of Object.entries(PADDLE_PRICES)) assert.match(text, new RegExp(`${plan} ${price.id}`), plan);
      assert.ok(before.body.includes(`value="http://127.0.0.1:8080/processor/paddle/${ws.slug}"`));

      const overview = async () => (await browser.get(`/dashboard/w/${ws.slug}/test`)).body;
      assert.match(stepOf(await overview(), "payments"), /To do/, "connected, no notification yet");
      assert.match(words(stepOf(await overview(), "payments")), /Connect payments \(test\) and receive an event/);

      const api = await testApi(env.services);
      const event = paddleEvent("customer.created", { id: "ctm_01" }, { now: env.clock.now() });
      assert.equal((await sendPaddleEvent(api, ws, secret, event, { now: env.clock.now() })).statusCode, 200);
      const after = words((await browser.get(path)).body);
      assert.match(after, /Receiving events Yes last one/);
      assert.ok(after.includes(`customer.created ${event.event_id}`));
      assert.match(after, /Result Ignored Warden does not use customer\.created events/);
      assert.match(stepOf(await overview(), "payments"), /Done/, "a Paddle notification received ticks the step");
      assert.match(stepOf((await browser.get(`/dashboard/w/${ws.slug}/live`)).body, "payments"), /To do/, "live is its own step");

      const revenue = words((await browser.get(`/dashboard/w/${ws.slug}/test/insights/revenue?tool=all&range=30d`)).body);
      assert.match(revenue, /Money here comes from Paddle Billing, as Paddle reports it/);
      assert.match(revenue, /Revenue comes from Paddle's notifications/);
      const people = words((await browser.get(`/dashboard/w/${ws.slug}/test/insights/people?tool=all&range=30d`)).body);
      assert.doesNotMatch(people, /Money here comes from/, "the line is revenue's");
    });

    test("Stripe connected: the page is Stripe's, without Paddle's way in; another workspace's owner sees nothing of it", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedCatalogue(env.services);
      const other = await seedCatalogue(env.services);
      await connectTestStripe(env.services, ws);
      await connectTestPaddle(env.services, other, "test", API_KEY);
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const text = words((await browser.get(`/dashboard/w/${ws.slug}/test/stripe`)).body);
      assert.match(text, /Payments of the test environment come from your Stripe account's test mode/);
      assert.doesNotMatch(text, /Or connect Paddle|pdl_ntfset_/);
      assert.match(words((await browser.get(`/dashboard/w/${ws.slug}/test/insights/revenue?tool=all&range=30d`)).body), /Money here comes from Stripe\./);
      assert.equal((await browser.get(`/dashboard/w/${other.slug}/test/stripe`)).statusCode, 404, "not this owner's workspace");
    });
  });
}
