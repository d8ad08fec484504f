// A customer's licences, subscriptions and devices on their page, and the owner's refund
// and cancellations from it, through the use cases of `warden admin`, on both engines.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { refundLicence } from "../../billing/licence.service.js";
import { DAY_MS, toIso } from "../../clock.js";
import { derivedId } from "../../ids.js";
import { importNdjson } from "../../import/import.service.js";
import type { Services } from "../../services.js";
import { dashboardApp, dashboardServices, readCode, TestBrowser } from "../../test-support/dashboard.js";
import { DIALECTS, seedCatalogue, type Workspace } from "../../test-support/harness.js";
import { connectTestPaddle, startPaddleApi, subscriptionObject } from "../../test-support/paddle.js";
import { connectTestStripe } from "../../test-support/stripe.js";
import { startStripeApi } from "../../test-support/stripe-api.js";

const DEVICE = "<b>Ada's</b> Mac & co";

async function seed(services: Services, ws: Workspace) {
  const now = services.clock.now();
  const lines = [
    {
      type: "licence",
      email: "ada@example.com",
      tool: "tabmaster",
      plan: "lifetime",
      purchased_at: toIso(now - 10 * DAY_MS),
      amount_cents: 4900,
      currency: "eur",
      payment_intent: "pi_ada_1",
    },
    { type: "licence", email: "ada@example.com", tool: "tabmaster", status: "suspended", purchased_at: toIso(now - 20 * DAY_MS) },
    { type: "licence", email: "ada@example.com", tool: "notepad", purchased_at: toIso(now - 5 * DAY_MS) },
    {
      type: "subscription",
      id: "sub_ada_1",
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
      name: DEVICE,
      platform: "macos",
      created_at: toIso(now - 9 * DAY_MS),
      last_active_at: toIso(now - DAY_MS),
    },
  ];
  const report = await importNdjson(services.db, services.clock, { workspace: ws.slug, env: "test", text: lines.map((l) => JSON.stringify(l)).join("\n") });
  assert.ok(report, "imported");
}

async function setUp(dialect: (typeof DIALECTS)[number], limits: Record<string, string> = {}) {
  const env = await dashboardServices(dialect, limits);
  const app = await dashboardApp(env);
  const ws = await seedCatalogue(env.services);
  await seed(env.services, ws);
  const browser = new TestBrowser(app);
  await browser.signIn(env.dataDir, ws.ownerEmail);
  const page = `/dashboard/w/${ws.slug}/test/customers/tabmaster/ada%40example.com`;
  const api = async (path: string) => {
    const r = await app.inject({ url: `/api/v1${path}`, headers: { authorization: `Bearer ${ws.testKey}` } });
    assert.equal(r.statusCode, 200, r.body);
    return r.json() as Record<string, unknown>;
  };
  return { env, app, ws, browser, page, api };
}

for (const dialect of DIALECTS) {
  describe(`dashboard customer holdings (${dialect})`, () => {
    test("licences, subscriptions and devices on the customer's page, escaped, counted as the page was", async () => {
      const { env, ws, browser, page } = await setUp(dialect);
      const shown = await browser.get(page);
      assert.equal(shown.statusCode, 200);
      const body = shown.body;
      const lic = /<code class="id-secondary">(lic_\w+)<\/code><\/td>\s*<td[^>]*><span class="badge badge-ok">Active/.exec(body)?.[1];
      assert.ok(lic, "the paid licence, active");
      assert.match(body, /badge-pending">Suspended<\/span> <span class="state-note">by a dispute/);
      // The plan's name leads the row, the licence's id under it.
      assert.match(body, /<td[^>]*>Lifetime <code class="id-secondary">lic_\w+<\/code><\/td>/);
      assert.match(body, /<td class="num"[^>]*>€49\.00<\/td>/);
      assert.match(
        body,
        /<td[^>]*>Monthly <code class="id-secondary">sub_ada_1<\/code><\/td>\s*<td[^>]*><span class="badge badge-ok">active<\/span>[\s\S]*?Renews/,
      );
      assert.ok(body.includes("&lt;b&gt;Ada&#39;s&lt;/b&gt; Mac &amp; co"), "the device's name, escaped");
      assert.ok(!body.includes("<b>Ada"));
      assert.equal((body.match(/\/refund"/g) ?? []).length, 1, "only the paid licence can be refunded");
      assert.equal((body.match(/<code class="id-secondary">lic_/g) ?? []).length, 2, "another tool's licence is not on this tool's page");
      const used = (await env.services.limits.readDailyUsage(env.services.db, { workspaceId: ws.workspaceId, env: "test" }, env.clock.now())).find(
        (u) => u.what === "Customer lookups",
      )?.used;
      assert.equal(used, 2, "still two lookups: the customer and their grants");
    });

    test("a licence in a currency without decimals shows its amount in its own digits: ¥4,900, never 49.00 JPY", async () => {
      const { env, ws, browser } = await setUp(dialect);
      const line = {
        type: "licence",
        email: "kenji@example.com",
        tool: "tabmaster",
        plan: "lifetime",
        purchased_at: toIso(env.clock.now() - DAY_MS),
        amount_cents: 4900,
        currency: "jpy",
        payment_intent: "pi_kenji_1",
      };
      assert.ok(await importNdjson(env.services.db, env.services.clock, { workspace: ws.slug, env: "test", text: JSON.stringify(line) }));
      const page = `/dashboard/w/${ws.slug}/test/customers/tabmaster/kenji%40example.com`;
      const body = (await browser.get(page)).body;
      assert.match(body, /<td class="num"[^>]*>¥4,900<\/td>/, "the licence's amount");
      assert.doesNotMatch(body, /49\.00/);
    });

    test("a refund asks for a fresh code, then revokes the licence and sends payment.refunded once; audited", async () => {
      const { env, ws, browser, page, api } = await setUp(dialect);
      const lic = /action="[^"]+\/licences\/(lic_\w+)\/refund"/.exec((await browser.get(page)).body)?.[1];
      assert.ok(lic);
      const action = `${page}/licences/${lic}/refund`;

      assert.equal((await browser.post(action, { _csrf: "0".repeat(64) })).statusCode, 403, "no form token, no refund");
      const asked = await browser.post(action);
      assert.equal(asked.statusCode, 200);
      assert.match(asked.body, /we emailed a fresh 6-digit code/);
      assert.match(asked.body, /Stripe will not be asked<\/strong>: this environment has no Stripe secret key/, "no secret key: said before");
      const code = await readCode(env.dataDir, ws.ownerEmail);
      const wrong = await browser.post(action, { confirm: "1", code: code === "000000" ? "111111" : "000000" });
      assert.equal(wrong.statusCode, 400);
      assert.deepEqual((await api("/webhooks/events?type=payment.refunded")).data, []);
      assert.equal((await api("/tools/tabmaster/customers/ada%40example.com")).entitled, true, "nothing refunded without the code");

      // A wrong code spends one of the code's tries; a fresh one is asked for.
      await browser.post(action);
      const done = await browser.post(action, { confirm: "1", code: await readCode(env.dataDir, ws.ownerEmail) });
      assert.equal(done.statusCode, 303);
      const after = await browser.get(String(done.headers.location));
      assert.match(after.body, /Licence refunded/);
      assert.match(
        after.body,
        /Stripe was not asked<\/strong> \(this environment has no Stripe secret key\): refund the payment in Stripe&#39;s dashboard/,
        "and after",
      );
      assert.match(
        after.body,
        new RegExp(`<code class="id-secondary">${lic}</code></td>\\s*<td[^>]*><span class="badge badge-off">Refunded</span> <span class="state-note"><time`),
      );
      assert.equal((after.body.match(/\/refund"/g) ?? []).length, 0);

      const events = (await api("/webhooks/events?type=payment.refunded")).data as { id: string; data: { licence: string; amount: number } }[];
      assert.equal(events.length, 1);
      assert.equal(events[0]?.data.licence, lic);
      assert.equal(events[0]?.data.amount, 4900);
      // The id the processor's report of the same refund derives, so that report sends nothing more.
      assert.equal(events[0]?.id, derivedId("evt", `${ws.workspaceId}|test|payment.refunded|pi_ada_1`));
      const again = await refundLicence(env.services, { id: lic });
      assert.equal(again.refunded_now, false);
      assert.equal(((await api("/webhooks/events?type=payment.refunded")).data as unknown[]).length, 1);

      assert.match((await browser.get("/dashboard/audit")).body, /Refunded a licence/);
    });

    test("cancel at the period's end after a confirmation page, then now after a fresh code; the API's retrieve follows", async () => {
      const { env, ws, browser, page, api } = await setUp(dialect);
      const confirm = `${page}/subscriptions/sub_ada_1/cancel`;
      const shown = await browser.get(confirm);
      assert.equal(shown.statusCode, 200);
      assert.match(shown.body, /Cancel at period end/);
      assert.equal((await browser.post(confirm, { when: "period_end", _csrf: "0".repeat(64) })).statusCode, 403);
      assert.equal((await browser.post(confirm, { when: "later" })).statusCode, 400);

      const scheduled = await browser.post(confirm, { when: "period_end" });
      assert.equal(scheduled.statusCode, 303);
      assert.match((await browser.get(String(scheduled.headers.location))).body, /set to end at the end of its period/);
      let customer = await api("/tools/tabmaster/customers/ada%40example.com");
      assert.deepEqual(customer.subscription && (customer.subscription as { cancelAtPeriodEnd: boolean }).cancelAtPeriodEnd, true);
      assert.equal(customer.entitled, true);

      const asked = await browser.post(confirm, { when: "now" });
      assert.equal(asked.statusCode, 200);
      assert.match(asked.body, /we emailed a fresh 6-digit code/);
      assert.equal((await api("/tools/tabmaster/customers/ada%40example.com")).entitled, true, "not ended before the code");
      const ended = await browser.post(confirm, { when: "now", confirm: "1", code: await readCode(env.dataDir, ws.ownerEmail) });
      assert.equal(ended.statusCode, 303);
      const after = await browser.get(String(ended.headers.location));
      assert.match(after.body, /Subscription ended now/);
      assert.match(after.body, /Stripe was not asked<\/strong>[^<]*: cancel the subscription in Stripe&#39;s dashboard/);
      assert.match(after.body, /badge-off">canceled<\/span>/);
      // The summary and the table say the same: ended, at the same time (not "ends" at the period's end).
      const summary = /<dt>Subscription<\/dt><dd>canceled · ended (<time[^>]*>[^<]*<\/time>)<\/dd>/.exec(after.body)?.[1];
      assert.ok(summary, "the summary says it ended");
      assert.ok(after.body.includes(`<td data-label="Period">Ended ${summary}</td>`), "the table says the same time");
      customer = await api("/tools/tabmaster/customers/ada%40example.com");
      assert.equal((customer.subscription as { status: string } | null)?.status ?? "none", "canceled");
      assert.equal((await browser.get(confirm)).statusCode, 404, "an ended subscription has nothing to cancel");

      const audit = (await browser.get("/dashboard/audit")).body;
      assert.match(audit, /Set a subscription to end at its period/);
      assert.match(audit, /Ended a subscription now/);
    });

    test("with Stripe's secret key the confirmation and the result say Stripe is asked, and it is", async () => {
      const stripeApi = await startStripeApi();
      const { env, ws, browser, page } = await setUp(dialect, { WARDEN_STRIPE_API_URL: stripeApi.url });
      await connectTestStripe(env.services, ws, "test", "sk_test_dashboardRefund0123456789");
      const lic = /action="[^"]+\/licences\/(lic_\w+)\/refund"/.exec((await browser.get(page)).body)?.[1];
      assert.ok(lic);
      const action = `${page}/licences/${lic}/refund`;
      const asked = await browser.post(action);
      assert.match(asked.body, /Warden asks Stripe first, with this environment's secret key/);
      assert.doesNotMatch(asked.body, /Stripe will not be asked/);
      const done = await browser.post(action, { confirm: "1", code: await readCode(env.dataDir, ws.ownerEmail) });
      assert.equal(done.statusCode, 303);
      assert.match((await browser.get(String(done.headers.location))).body, /Stripe made the change too/);
      assert.deepEqual(
        stripeApi.calls.map((c) => [c.method, c.path, c.form.payment_intent]),
        [["POST", "/v1/refunds", "pi_ada_1"]],
      );

      const cancel = `${page}/subscriptions/sub_ada_1/cancel`;
      assert.match((await browser.get(cancel)).body, /Warden asks Stripe first/);
      const scheduled = await browser.post(cancel, { when: "period_end" });
      assert.match(
        (await browser.get(String(scheduled.headers.location))).body,
        /set to end at the end of its period\. The customer keeps the tool until then\. <strong>Stripe made the change too/,
      );
      assert.equal(stripeApi.calls.at(-1)?.path, "/v1/subscriptions/sub_ada_1");
    });

    test("with Paddle's API key the confirmation and the result name Paddle, and Paddle is asked; without it, Paddle's dashboard is named", async () => {
      const apiKey = "pdl_sdbx_apikey_dashboardRefund0123456789";
      const paddleApi = await startPaddleApi(apiKey);
      const { env, ws, browser, page } = await setUp(dialect, { WARDEN_PADDLE_API_URL: paddleApi.url });
      await connectTestPaddle(env.services, ws, "test", apiKey);
      const now = env.clock.now();
      paddleApi.subscriptions.set(
        "sub_ada_1",
        subscriptionObject({ id: "sub_ada_1", status: "active", customData: null, startedAt: now - DAY_MS, periodEnd: now + 29 * DAY_MS }),
      );
      const lic = /action="[^"]+\/licences\/(lic_\w+)\/refund"/.exec((await browser.get(page)).body)?.[1];
      assert.ok(lic);
      const action = `${page}/licences/${lic}/refund`;
      const asked = await browser.post(action);
      assert.match(asked.body, /Warden asks Paddle first, with this environment's API key; if Paddle refuses, nothing changes\./);
      assert.doesNotMatch(asked.body, /Stripe will not be asked|Warden asks Stripe/);
      const done = await browser.post(action, { confirm: "1", code: await readCode(env.dataDir, ws.ownerEmail) });
      assert.equal(done.statusCode, 303);
      assert.match(String(done.headers.location), /at=paddle/);
      assert.match(
        (await browser.get(String(done.headers.location))).body,
        /<strong>Paddle was asked to refund the transaction<\/strong>; Paddle approves a refund before it is made\./,
      );
      assert.deepEqual(
        paddleApi.calls.filter((c) => c.path === "/adjustments").map((c) => c.body?.transaction_id),
        ["pi_ada_1"],
      );

      const cancel = `${page}/subscriptions/sub_ada_1/cancel`;
      assert.match((await browser.get(cancel)).body, /Warden asks Paddle first/);
      const scheduled = await browser.post(cancel, { when: "period_end" });
      const result = (await browser.get(String(scheduled.headers.location))).body;
      assert.match(result, /The customer keeps the tool until then\. <strong>Paddle made the change too\.<\/strong>/);
      assert.equal(paddleApi.calls.at(-1)?.path, "/subscriptions/sub_ada_1/cancel");

      // Without an API key: Paddle is named as not asked, with what to do in Paddle's dashboard.
      await connectTestPaddle(env.services, ws, "test");
      await env.services.db.updateTable("paddle_accounts").set({ api_key_sealed: null }).execute();
      const ended = await browser.postWithCode(env.dataDir, ws.ownerEmail, cancel, { when: "now" });
      assert.match(String(ended.headers.location), /at=warden/);
      assert.match(
        (await browser.get(String(ended.headers.location))).body,
        /<strong>Paddle was not asked<\/strong> \(this environment has no Paddle API key\): cancel the subscription in Paddle&#39;s dashboard, effective immediately/,
      );
    });

    test("a refund or cancellation Stripe refuses, or a key it does not accept, says so in words with Stripe's answer under them; nothing changes", async () => {
      const stripeApi = await startStripeApi();
      const { env, ws, browser, page, api } = await setUp(dialect, { WARDEN_STRIPE_API_URL: stripeApi.url });
      await connectTestStripe(env.services, ws, "test", "sk_test_dashboardRefund0123456789");
      const lic = /action="[^"]+\/licences\/(lic_\w+)\/refund"/.exec((await browser.get(page)).body)?.[1];
      assert.ok(lic);
      const refund = async () => {
        const action = `${page}/licences/${lic}/refund`;
        await browser.post(action);
        return browser.post(action, { confirm: "1", code: await readCode(env.dataDir, ws.ownerEmail) });
      };
      const headline = (body: string) => /<p class="failure-plain">(.*?)<\/p>/s.exec(body)?.[1] ?? "";

      // The key was rolled in Stripe: a bare 500 page before; now 502, the confirmation again, in words.
      stripeApi.failWith = { status: 401, error: { type: "invalid_request_error", message: "Invalid API Key provided: sk_test_****6789" } };
      const keyRefused = await refund();
      assert.equal(keyRefused.statusCode, 502);
      assert.match(headline(keyRefused.body), /^<strong>Nothing was refunded\.<\/strong> Stripe did not accept the secret key stored here/);
      assert.doesNotMatch(headline(keyRefused.body), /Invalid API Key/);
      assert.match(
        keyRefused.body,
        /<p class="raw-detail">Stripe&#39;s answer: <code>StripeAuthenticationError: Invalid API Key provided: sk_test_\*\*\*\*6789<\/code><\/p>/,
      );
      assert.match(keyRefused.body, /<h1>Refund this licence\?<\/h1>/, "the confirmation again, with its navigation");
      assert.match(keyRefused.body, /<nav class="side" aria-label="Dashboard">/);

      // Stripe refuses the request itself: 400, and its reason in words.
      stripeApi.failWith = {
        status: 400,
        error: { type: "invalid_request_error", message: "This PaymentIntent (pi_ada_1) does not have a successful charge to refund." },
      };
      const noCharge = await refund();
      assert.equal(noCharge.statusCode, 400);
      assert.match(headline(noCharge.body), /The payment never went through in Stripe, so there is no money to return\./);
      assert.match(noCharge.body, /<code>StripeInvalidRequestError: This PaymentIntent \(pi_ada_1\) does not have a successful charge to refund\.<\/code>/);
      assert.deepEqual((await api("/webhooks/events?type=payment.refunded")).data, [], "nothing refunded");
      assert.equal((await api("/tools/tabmaster/customers/ada%40example.com")).entitled, true);

      // A cancellation Stripe cannot make, at the period's end and now.
      const cancel = `${page}/subscriptions/sub_ada_1/cancel`;
      stripeApi.failWith = {
        status: 400,
        error: { type: "invalid_request_error", message: "A canceled subscription can only update its cancellation_details and metadata." },
      };
      const atEnd = await browser.post(cancel, { when: "period_end" });
      assert.equal(atEnd.statusCode, 400);
      assert.match(headline(atEnd.body), /^<strong>Nothing was cancelled\.<\/strong> Stripe cannot change this subscription as it is now/);
      const permission =
        "The provided key 'rk_test_****6789' does not have the required permissions for this endpoint. Having the 'rak_subscription_write' permission would allow this request to continue.";
      stripeApi.failWith = { status: 403, error: { type: "invalid_request_error", message: permission } };
      await browser.post(cancel, { when: "now" });
      const now = await browser.post(cancel, { when: "now", confirm: "1", code: await readCode(env.dataDir, ws.ownerEmail) });
      assert.equal(now.statusCode, 502);
      assert.match(headline(now.body), /The restricted key stored here is not allowed to do this/);
      assert.ok(now.body.includes("StripePermissionError: The provided key"), "Stripe's answer, for support");
      const customer = await api("/tools/tabmaster/customers/ada%40example.com");
      assert.deepEqual(
        [
          (customer.subscription as { status: string; cancelAtPeriodEnd: boolean }).status,
          (customer.subscription as { cancelAtPeriodEnd: boolean }).cancelAtPeriodEnd,
        ],
        ["active", false],
      );
    });

    test("another owner's workspace, another customer's licence: 404, and nothing changes", async () => {
      const { env, app, ws, page, api } = await setUp(dialect);
      const other = await seedCatalogue(env.services);
      const stranger = new TestBrowser(app);
      await stranger.signIn(env.dataDir, other.ownerEmail);
      // The stranger's own page, for a form token of their own session.
      assert.equal((await stranger.get(`/dashboard/w/${other.slug}/test/customers`)).statusCode, 200);
      assert.equal((await stranger.get(page)).statusCode, 404);
      assert.equal((await stranger.get(`${page}/subscriptions/sub_ada_1/cancel`)).statusCode, 404);
      assert.equal((await stranger.post(`${page}/subscriptions/sub_ada_1/cancel`, { when: "period_end" })).statusCode, 404);

      // The owner's own page of another customer does not reach Ada's licence.
      const owner = new TestBrowser(app);
      await owner.signIn(env.dataDir, ws.ownerEmail);
      const lic = /action="[^"]+\/licences\/(lic_\w+)\/refund"/.exec((await owner.get(page)).body)?.[1];
      assert.ok(lic);
      const elsewhere = page.replace("ada%40example.com", "bob%40example.com");
      assert.equal((await owner.post(`${elsewhere}/licences/${lic}/refund`)).statusCode, 404);
      assert.equal((await owner.post(`${elsewhere}/subscriptions/sub_ada_1/cancel`, { when: "period_end" })).statusCode, 404);
      const customer = await api("/tools/tabmaster/customers/ada%40example.com");
      assert.equal((customer.subscription as { cancelAtPeriodEnd: boolean }).cancelAtPeriodEnd, false);
      assert.deepEqual((await api("/webhooks/events?type=payment.refunded")).data, []);
    });
  });
}
