import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { paddleStatus } from "../../paddle/paddle-account.service.js";
import { dashboardApp, dashboardServices, readCode, readCodeMail, readMail, TestBrowser } from "../../test-support/dashboard.js";
import { DIALECTS, seedCatalogue, testApi } from "../../test-support/harness.js";
import { connectTestPaddle, linkTestPaddlePrices, PADDLE_PRICES, paddleEvent, paddleId, sendPaddleEvent } from "../../test-support/paddle.js";
import { connectTestStripe } from "../../test-support/stripe.js";

const API_KEY = "pdl_sdbx_apikey_dashboardPaddleKey0123456789wxyz";
const LIVE_KEY = "pdl_live_apikey_dashboardPaddleKey0123456789live";
const SECRET = "pdl_ntfset_01dashboardDestination_0123456789abcdWXYZ";
const words = (body: string) =>
  body
    .replace(/<[^>]+>/g, " ")
    .replace(/&#39;/g, "'")
    .replace(/\s+/g, " ");
const decoded = (body: string) => body.replace(/&#39;/g, "'").replace(/&quot;/g, '"');
const stepOf = (body: string, step: string) => new RegExp(`<li class="checklist-step" id="step-${step}">[\\s\\S]*?</li>`).exec(body)?.[0] ?? "";

/** The harness catalogue's workspace, its owner signed in to the dashboard. */
async function signedIn(dialect: (typeof DIALECTS)[number]) {
  const env = await dashboardServices(dialect);
  const app = await dashboardApp(env);
  const ws = await seedCatalogue(env.services);
  const browser = new TestBrowser(app);
  await browser.signIn(env.dataDir, ws.ownerEmail);
  return { env, app, ws, browser };
}

for (const dialect of DIALECTS) {
  describe(`dashboard payments: which processor (${dialect})`, () => {
    test("no processor yet: the page says so and shows both ways in, Paddle's with this workspace's URL and commands", async () => {
      const { ws, browser } = await signedIn(dialect);
      const page = await browser.get(`/dashboard/w/${ws.slug}/test/stripe`);
      assert.equal(page.statusCode, 200);
      const text = words(page.body);
      assert.match(text, /No payment processor is connected to the test environment yet: connect Stripe or Paddle/);
      assert.match(page.body, /name="webhook_secret"/, "Stripe's form");
      // Secrets are neither shown while typed nor offered back by the browser's form memory.
      for (const id of ["webhook_secret", "secret_key", "paddle_webhook_secret", "paddle_api_key"]) {
        assert.match(page.body, new RegExp(`id="${id}"[^>]* type="password" autocomplete="off"`), id);
      }
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
      const { env, ws, browser } = await signedIn(dialect);
      const path = `/dashboard/w/${ws.slug}/test/stripe`;
      const secret = await connectTestPaddle(env.services, ws, "test", API_KEY);
      await linkTestPaddlePrices(env.services, ws);

      const before = await browser.get(path);
      const text = words(before.body);
      assert.match(text, /Payments of the test environment come from Paddle Billing \(its sandbox\)/);
      assert.doesNotMatch(before.body, /<form method="post" action="[^"]*\/stripe" /, "Stripe cannot be connected beside Paddle: no form for it");
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
      assert.match(after, /Result Ignored Warden does not act on this kind of event Warden does not use customer\.created events/);
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

    test("connect Paddle from the page: wrong keys told before a code, the secrets behind a fresh code, by their last four only; disconnect", async () => {
      const { env, ws, browser } = await signedIn(dialect);
      const path = `/dashboard/w/${ws.slug}/test/stripe`;
      const api = await testApi(env.services);
      const notify = () =>
        sendPaddleEvent(api, ws, SECRET, paddleEvent("customer.created", { id: "ctm_01" }, { now: env.clock.now() }), { now: env.clock.now() });

      const fresh = await browser.get(path);
      assert.match(fresh.body, /<form method="post" action="[^"]*\/stripe\/paddle"/, "Paddle's form beside Stripe's");
      assert.match(fresh.body, /id="paddle_webhook_secret"[^>]* name="webhook_secret"/);
      assert.match(fresh.body, /id="paddle_api_key"[^>]* name="api_key" type="password"/);
      assert.ok(words(fresh.body).includes(`Or on the server: warden admin paddle connect --workspace ${ws.slug} --env test`), "the CLI second");
      assert.equal(new Set(fresh.body.match(/ id="[^"]+"/g)).size, fresh.body.match(/ id="[^"]+"/g)?.length, "no id twice on the page");

      const mailsBefore = await readMail(env.dataDir, ws.ownerEmail);
      const refusals: [Record<string, string>, RegExp][] = [
        [
          { webhook_secret: "whsec_stripeSecret0123456789" },
          /webhook-secret must be the notification destination's secret key from Paddle, starting with pdl_ntfset_\./,
        ],
        [{ webhook_secret: SECRET, api_key: LIVE_KEY }, /api-key is a live key; the test environment needs a sandbox key\./],
        [
          { webhook_secret: SECRET, api_key: "sk_test_dashboardSecretKey0123456789abcd" },
          /api-key must be a Paddle API key \(pdl_sdbx_apikey_… or pdl_live_apikey_…\)\./,
        ],
      ];
      for (const [fields, said] of refusals) {
        const refused = await browser.post(`${path}/paddle`, fields);
        assert.equal(refused.statusCode, 400, JSON.stringify(fields));
        assert.match(decoded(refused.body), said);
        assert.ok(!refused.body.includes(fields.api_key ?? "none") && !refused.body.includes(`value="${fields.webhook_secret}"`), "nothing typed sent back");
      }
      assert.equal(await readMail(env.dataDir, ws.ownerEmail), mailsBefore, "no code for a refused key");

      // A code asked, a wrong one stores nothing; the right one stores both secrets.
      const asked = await browser.post(`${path}/paddle`, { webhook_secret: SECRET, api_key: API_KEY });
      assert.equal(asked.statusCode, 200);
      assert.match(asked.body, /Confirm it is you/);
      assert.match((await readCodeMail(env.dataDir, ws.ownerEmail)) ?? "", /change the Paddle secrets of Test workspace \(test\)/);
      const code = await readCode(env.dataDir, ws.ownerEmail);
      const wrong = await browser.post(`${path}/paddle`, {
        webhook_secret: SECRET,
        api_key: API_KEY,
        confirm: "1",
        code: code === "000000" ? "111111" : "000000",
      });
      assert.equal(wrong.statusCode, 400);
      assert.equal((await paddleStatus(env.services, { workspace: ws.slug, env: "test" })).connection, null);
      const stored = await browser.post(`${path}/paddle`, { webhook_secret: SECRET, api_key: API_KEY, confirm: "1", code });
      assert.equal(stored.statusCode, 303);
      assert.equal(stored.headers.location, `${path}?done=paddle-connected`);

      const shown = await browser.get(stored.headers.location as string);
      const text = words(shown.body);
      assert.match(text, /Paddle is connected: Warden receives its notifications and can act in Paddle/);
      assert.match(text, /Payments of the test environment come from Paddle Billing \(its sandbox\)/);
      assert.ok(text.includes("pdl_ntfset_…WXYZ") && text.includes("pdl_sdbx_apikey_…wxyz"));
      assert.ok(!shown.body.includes(SECRET) && !shown.body.includes(API_KEY), "never in full");
      assert.match(text, /Replace the secrets/);
      assert.equal((await notify()).statusCode, 200, "Paddle's notifications are taken");
      assert.match(
        words((await browser.get(path)).body),
        /Result Ignored Warden does not act on this kind of event Warden does not use customer\.created events/,
      );

      // Replacing the secret key alone keeps the API key.
      const replaced = await browser.postWithCode(env.dataDir, ws.ownerEmail, `${path}/paddle`, { webhook_secret: `${SECRET}2` });
      assert.equal(replaced.statusCode, 303);
      const status = await paddleStatus(env.services, { workspace: ws.slug, env: "test" });
      assert.equal(status.connection?.webhookSecretLastFour, "XYZ2");
      assert.equal(status.connection?.apiKeyLastFour, "wxyz");

      // Test: disconnected without a code, as Stripe's test environment.
      assert.match(words((await browser.get(`${path}/paddle/disconnect`)).body), /Disconnect Paddle\? .* Paddle's next notifications are refused/);
      const gone = await browser.post(`${path}/paddle/disconnect`);
      assert.equal(gone.statusCode, 303);
      const after = words((await browser.get(gone.headers.location as string)).body);
      assert.match(after, /Paddle is disconnected: its secrets are forgotten and its notifications refused/);
      assert.match(after, /No payment processor is connected to the test environment yet/);
      assert.notEqual((await notify()).statusCode, 200, "refused from the next notification");

      const audit = words((await browser.get("/dashboard/audit")).body);
      assert.match(audit, /Connected Paddle/);
      assert.match(audit, /Disconnected Paddle/);
      assert.match((await readMail(env.dataDir, ws.ownerEmail, (m) => /Paddle was disconnected/.test(m))) ?? "", /Paddle was disconnected from Test workspace/);
    });

    test("Paddle's refusals: Stripe connected in the environment, a sandbox key for live; live asks a code to disconnect", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedCatalogue(env.services);
      await connectTestStripe(env.services, ws);
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const test = `/dashboard/w/${ws.slug}/test/stripe`;
      const live = `/dashboard/w/${ws.slug}/live/stripe`;
      await browser.get(test);

      // Stripe's page has no Paddle form, but a post made anyway is refused in words, the code asked first.
      const refused = await browser.postWithCode(env.dataDir, ws.ownerEmail, `${test}/paddle`, { webhook_secret: SECRET });
      assert.equal(refused.statusCode, 400);
      assert.match(
        decoded(refused.body),
        /The test environment of "[^"]+" is connected to Stripe: one processor per environment \(disconnect Stripe first\)\./,
      );
      assert.equal((await paddleStatus(env.services, { workspace: ws.slug, env: "test" })).connection, null);

      const sandboxForLive = await browser.post(`${live}/paddle`, { webhook_secret: SECRET, api_key: API_KEY });
      assert.equal(sandboxForLive.statusCode, 400);
      assert.match(decoded(sandboxForLive.body), /api-key is a sandbox key; the live environment needs a live key\./);
      assert.match(sandboxForLive.body, /id="paddle_api_key" aria-invalid="true"/, "the field refused is marked");
      const connected = await browser.postWithCode(env.dataDir, ws.ownerEmail, `${live}/paddle`, { webhook_secret: SECRET, api_key: LIVE_KEY });
      assert.equal(connected.statusCode, 303);
      assert.ok(words((await browser.get(live)).body).includes("pdl_live_apikey_…live"));

      const asked = await browser.post(`${live}/paddle/disconnect`);
      assert.equal(asked.statusCode, 200, "live: a code first");
      assert.match(asked.body, /name="confirm" value="1"/);
      assert.match((await readCodeMail(env.dataDir, ws.ownerEmail)) ?? "", /disconnect Paddle from Test workspace \(live\)/);
      const guessed = await browser.post(`${live}/paddle/disconnect`, { confirm: "1", code: "123456" });
      assert.equal(guessed.statusCode, 400, "a guessed code disconnects nothing");
      assert.notEqual((await paddleStatus(env.services, { workspace: ws.slug, env: "live" })).connection, null);
      const gone = await browser.postWithCode(env.dataDir, ws.ownerEmail, `${live}/paddle/disconnect`);
      assert.equal(gone.statusCode, 303);
      assert.equal((await paddleStatus(env.services, { workspace: ws.slug, env: "live" })).connection, null);
    });

    test("a plan's Paddle prices on its page, per environment: link, refusals, unlink; listed on the Payments page", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedCatalogue(env.services);
      await connectTestPaddle(env.services, ws, "test", API_KEY);
      await connectTestStripe(env.services, ws, "live");
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const plan = `/dashboard/w/${ws.slug}/test/tools/tabmaster/plans/lifetime`;
      const price = paddleId("pri");

      const before = await browser.get(plan);
      assert.match(words(before.body), /Paddle prices Test .* No Paddle price or product is linked in the sandbox/);
      assert.doesNotMatch(words((await browser.get(plan.replace("/test/", "/live/"))).body), /Paddle prices/, "live is Stripe's: no Paddle panel");

      const malformed = await browser.post(`${plan}/paddle`, { paddle_id: "price_1Q2w3E4r" });
      assert.equal(malformed.statusCode, 400);
      assert.match(malformed.body, /It must be a Paddle id such as pri_01h04vsc0qhwtsbsxh3422wjs4\./);
      assert.match(malformed.body, /id="paddle_id"[^>]*value="price_1Q2w3E4r"/, "what was typed, kept to correct");

      const linked = await browser.post(`${plan}/paddle`, { paddle_id: price });
      assert.equal(linked.statusCode, 303);
      assert.equal(linked.headers.location, `${plan}?paddle=1#paddle-prices`);
      const shown = await browser.get(linked.headers.location as string);
      assert.match(shown.body, new RegExp(`<li><code>${price}</code>`));
      assert.match(words(shown.body), /Saved\./);
      const payments = await browser.get(`/dashboard/w/${ws.slug}/test/stripe`);
      assert.ok(
        payments.body.includes(`<a href="${plan}#paddle-prices"><code>lifetime</code></a></td><td data-label="Paddle price or product"><code>${price}</code>`),
        "the Payments page's list points to the plan's page",
      );

      const taken = await browser.post(`/dashboard/w/${ws.slug}/test/tools/tabmaster/plans/monthly/paddle`, { paddle_id: price });
      assert.equal(taken.statusCode, 400);
      assert.match(taken.body, new RegExp(`${price} is linked to plan lifetime of tool tabmaster already; unlink it there first\\.`));
      // Live has ids of its own: the sandbox's price is not linked there.
      assert.deepEqual((await browser.get(plan.replace("/test/", "/live/"))).body.includes(price), false);

      const unlinked = await browser.post(`${plan}/paddle`, { unlink: price });
      assert.equal(unlinked.statusCode, 303);
      assert.doesNotMatch((await browser.get(plan)).body, new RegExp(`<li><code>${price}`));
      assert.match(words((await browser.get("/dashboard/audit")).body), /Changed a plan's Paddle prices/);
    });
  });
}
