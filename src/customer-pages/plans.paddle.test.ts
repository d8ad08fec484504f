// The hosted Plans page of an environment that takes its payments from Paddle: a choice
// goes to Paddle's hosted checkout (a transaction Warden made with the plan's linked price
// and its custom_data), against the stand-in for Paddle's API; and the thank-you page the
// buyer is sent back to with the transaction's id, which tells nothing of another's
// checkout; on both engines.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { insertPaddleCheckout } from "../paddle/paddle-checkout.store.js";
import { pagesOf, signInOnPages } from "../test-support/customer-pages.js";
import { dashboardApp, dashboardServices, TestBrowser } from "../test-support/dashboard.js";
import { apiOver, DIALECTS, seedCatalogue } from "../test-support/harness.js";
import {
  connectTestPaddle,
  linkTestPaddlePrices,
  PADDLE_PRICES,
  paddleEvent,
  paddleId,
  sendPaddleEvent,
  startPaddleApi,
  transactionObject,
} from "../test-support/paddle.js";
import { connectTestStripe } from "../test-support/stripe.js";

const API_KEY = "pdl_sdbx_apikey_plansPage0123456789";

for (const dialect of DIALECTS) {
  describe(`Plans page with Paddle (${dialect})`, () => {
    test("signed in, a choice goes to Paddle's checkout with the plan's price, the seats and the buyer in custom_data; the page lets its form go on to it", async () => {
      const paddleApi = await startPaddleApi(API_KEY);
      const env = await dashboardServices(dialect, { WARDEN_PADDLE_API_URL: paddleApi.url, WARDEN_PUBLIC_URL: "https://warden.example.com" });
      const app = await dashboardApp(env);
      const ws = await seedCatalogue(env.services);
      await connectTestPaddle(env.services, ws, "test", API_KEY);
      await linkTestPaddlePrices(env.services, ws);
      const base = pagesOf(ws);
      const browser = new TestBrowser(app);
      const email = `buyer-${ws.slug}@example.com`;
      await signInOnPages(browser, env.dataDir, base, email);

      const page = await browser.get(`${base}/plans`);
      assert.equal(page.statusCode, 200);
      assert.match(String(page.headers["content-security-policy"]), /form-action 'self' https:;/, "Paddle's checkout is on the vendor's payment-link domain");
      assert.match(page.body, /checkout is on Paddle&#39;s secure page/);
      assert.doesNotMatch(page.body, /Stripe/);
      const chosen = await browser.post(`${base}/plans`, { plan: "monthly" });
      assert.equal(chosen.statusCode, 303, chosen.body);
      assert.match(chosen.headers.location as string, /^https:\/\/pay\.example\.com\/checkout\?_ptxn=txn_/);
      const person = await env.services.db.selectFrom("people").select("id").where("workspace_id", "=", ws.workspaceId).executeTakeFirstOrThrow();
      const made = paddleApi.calls.find((c) => c.method === "POST" && c.path === "/transactions");
      assert.deepEqual(made?.body?.items, [{ price_id: PADDLE_PRICES.monthly?.id, quantity: 1 }]);
      assert.deepEqual(made?.body?.custom_data, {
        warden_tool: "tabmaster",
        warden_plan: "monthly",
        warden_account: person.id,
        // Where the vendor's payment link page sends the buyer once paid, the transaction's id in place of the template.
        warden_success_url: `https://warden.example.com${base}/checkout/success?session_id={CHECKOUT_SESSION_ID}`,
      });

      // A plan with no Paddle price linked is refused on the page, and Paddle is not asked.
      await env.services.db.deleteFrom("paddle_plan_links").where("plan_id", "=", "lifetime").execute();
      const unlinked = await browser.post(`${base}/plans`, { plan: "lifetime" });
      assert.equal(unlinked.statusCode, 400);
      assert.match(unlinked.body, /linked to no active Paddle price/);
      assert.equal(paddleApi.calls.filter((c) => c.method === "POST").length, 1);
    });

    test("the thank-you page after Paddle's checkout: confirming until Paddle's notifications arrive, then what was bought; nothing for a made-up id, one Warden did not open, another person's, workspace's or environment's transaction, or a Stripe environment", async () => {
      const paddleApi = await startPaddleApi(API_KEY);
      const env = await dashboardServices(dialect, { WARDEN_PADDLE_API_URL: paddleApi.url, WARDEN_PUBLIC_URL: "https://warden.example.com" });
      const app = await dashboardApp(env);
      const ws = await seedCatalogue(env.services);
      const secret = await connectTestPaddle(env.services, ws, "test", API_KEY);
      await linkTestPaddlePrices(env.services, ws);
      const base = pagesOf(ws);
      const buyer = new TestBrowser(app);
      await signInOnPages(buyer, env.dataDir, base, `ada-${ws.slug}@example.com`);
      const chosen = await buyer.post(`${base}/plans`, { plan: "monthly" });
      const txn = new URL(chosen.headers.location as string).searchParams.get("_ptxn") as string;
      const thanks = `${base}/checkout/success?session_id=${txn}`;

      // Paid at Paddle, back before its notifications: Warden asks Paddle for the transaction, and waits.
      const waiting = await buyer.get(thanks);
      assert.equal(waiting.statusCode, 200);
      assert.match(waiting.body, /<h1>Confirming your payment<\/h1>/);
      assert.match(waiting.body, /Paddle has sent you back/);
      assert.ok(waiting.body.includes(`href="${thanks}"`), "Check again comes back here");
      assert.ok(paddleApi.calls.some((c) => c.method === "GET" && c.path === `/transactions/${txn}`));

      // Someone else signed in with the id: nothing, before the purchase and after.
      const other = new TestBrowser(app);
      await signInOnPages(other, env.dataDir, base, `grace-${ws.slug}@example.com`);
      const notTheirs = await other.get(thanks);
      assert.equal(notTheirs.statusCode, 404);
      assert.match(notTheirs.body, /Checkout not recognised/);

      const now = env.clock.now();
      for (const { type, data } of paddleApi.payCheckout(txn, now)) {
        const sent = await sendPaddleEvent(apiOver(app), ws, secret, paddleEvent(type, data, { now }), { now });
        assert.equal(sent.json().outcome, "applied", sent.body);
      }
      const confirmed = await buyer.get(thanks);
      assert.equal(confirmed.statusCode, 200);
      assert.match(confirmed.body, /You bought <strong>Tab Master \(Monthly\)<\/strong> as a subscription\./);
      assert.match(confirmed.body, /It renews on <time/);
      assert.match(confirmed.body, /A receipt comes from Paddle by mail\./);
      assert.doesNotMatch(confirmed.body, /Stripe/);
      for (const page of [await other.get(thanks), await other.get(`${base}/checkout/success?session_id=${txn}&lang=de`)]) {
        assert.equal(page.statusCode, 404);
        assert.doesNotMatch(page.body, /Monthly|Monatlich|ada-/);
      }

      // A made-up transaction id: Paddle holds none, so nothing is waited for.
      const madeUp = await buyer.get(`${base}/checkout/success?session_id=${paddleId("txn")}`);
      assert.equal(madeUp.statusCode, 404);
      assert.match(madeUp.body, /Checkout not recognised/);
      // A transaction Paddle holds that Warden did not open (no warden_tool or warden_bundle in its custom_data): nothing either.
      const foreign = paddleId("txn");
      paddleApi.transactions.set(foreign, transactionObject({ id: foreign, customData: { order: "42" }, total: 500, billedAt: now }));
      const notWardens = await buyer.get(`${base}/checkout/success?session_id=${foreign}`);
      assert.equal(notWardens.statusCode, 404);
      assert.ok(!paddleApi.calls.some((c) => c.path === `/transactions/${foreign}`), "Paddle is asked only about a transaction Warden made");
      // Not an id at all, or a Stripe Checkout Session's in a Paddle environment: refused without asking Paddle.
      // Signed out, any id is waited for, and Paddle is not asked (the page is anyone's to open).
      const asked = paddleApi.calls.length;
      const signedOut = await new TestBrowser(app).get(`${base}/checkout/success?session_id=${paddleId("txn")}`);
      assert.equal(signedOut.statusCode, 200);
      assert.match(signedOut.body, /<h1>Confirming your payment<\/h1>/);
      assert.equal((await buyer.get(`${base}/checkout/success?session_id=javascript:alert(1)`)).statusCode, 400);
      assert.equal((await buyer.get(`${base}/checkout/success?session_id=cs_test_a1B2c3`)).statusCode, 404);
      assert.equal(paddleApi.calls.length, asked);

      // The live environment takes its payments from Stripe: a Paddle transaction id names no checkout there.
      await connectTestStripe(env.services, ws, "live");
      const live = await buyer.get(`${pagesOf(ws, "live")}/checkout/success?session_id=${txn}`);
      assert.equal(live.statusCode, 404);
      assert.doesNotMatch(live.body, /Monthly/);

      // Another workspace connected to the same Paddle account: its pages tell nothing of this one's purchase.
      const elsewhere = await seedCatalogue(env.services);
      await connectTestPaddle(env.services, elsewhere, "test", API_KEY);
      const stranger = await new TestBrowser(app).get(`${pagesOf(elsewhere)}/checkout/success?session_id=${txn}`);
      assert.doesNotMatch(stranger.body, /Monthly|ada-/);
      const signedInThere = new TestBrowser(app);
      await signInOnPages(signedInThere, env.dataDir, pagesOf(elsewhere), `ada-${ws.slug}@example.com`);
      assert.equal((await signedInThere.get(`${pagesOf(elsewhere)}/checkout/success?session_id=${txn}`)).statusCode, 404);
    });

    test("the thank-you page asks Paddle only about a transaction Warden made for the person signed in, at most once per transaction in 5 s, and reads Paddle's failures as pending", async () => {
      const paddleApi = await startPaddleApi(API_KEY);
      const env = await dashboardServices(dialect, { WARDEN_PADDLE_API_URL: paddleApi.url, WARDEN_PUBLIC_URL: "https://warden.example.com" });
      const app = await dashboardApp(env);
      const ws = await seedCatalogue(env.services);
      await connectTestPaddle(env.services, ws, "test", API_KEY);
      await linkTestPaddlePrices(env.services, ws);
      const base = pagesOf(ws);
      const buyer = new TestBrowser(app);
      await signInOnPages(buyer, env.dataDir, base, `ada-${ws.slug}@example.com`);
      const asks = () => paddleApi.calls.filter((c) => c.method === "GET" && c.path.startsWith("/transactions/")).length;

      // Made-up ids, however many: the same 404, and not one call to Paddle.
      for (let i = 0; i < 100; i++) {
        const page = await buyer.get(`${base}/checkout/success?session_id=${paddleId("txn")}`);
        assert.equal(page.statusCode, 404);
      }
      assert.equal(asks(), 0);

      const chosen = await buyer.post(`${base}/plans`, { plan: "monthly" });
      const txn = new URL(chosen.headers.location as string).searchParams.get("_ptxn") as string;
      const thanks = `${base}/checkout/success?session_id=${txn}`;
      const recorded = await env.services.db.selectFrom("paddle_checkouts").selectAll().where("transaction_id", "=", txn).execute();
      assert.equal(recorded.length, 1, "Warden records the transaction it created");
      // Reloaded: Paddle is asked once, and its answer kept for 5 s.
      for (let i = 0; i < 5; i++) assert.match((await buyer.get(thanks)).body, /<h1>Confirming your payment<\/h1>/);
      assert.equal(asks(), 1);
      env.clock.advance(5_000);
      await buyer.get(thanks);
      assert.equal(asks(), 2);

      // Paddle rate-limits (429), or answers an error: the buyer is told to wait, not shown an error.
      env.clock.advance(5_000);
      paddleApi.rateLimited = 1;
      const limited = await buyer.get(thanks);
      assert.equal(limited.statusCode, 200);
      assert.match(limited.body, /<h1>Confirming your payment<\/h1>/);
      assert.equal(asks(), 3);
      // A key Paddle no longer takes (403): still pending.
      env.clock.advance(5_000);
      await connectTestPaddle(env.services, ws, "test", "pdl_sdbx_apikey_revoked00000000000000");
      const refused = await buyer.get(thanks);
      assert.equal(refused.statusCode, 200);
      assert.match(refused.body, /<h1>Confirming your payment<\/h1>/);

      // Another person signed in, with the id Warden made for Ada: the same 404, and no call.
      const before = asks();
      const other = new TestBrowser(app);
      await signInOnPages(other, env.dataDir, base, `grace-${ws.slug}@example.com`);
      env.clock.advance(5_000);
      assert.equal((await other.get(thanks)).statusCode, 404);
      assert.equal(asks(), before);

      // A transaction Warden made signed out (the buy button) belongs to nobody yet: confirming, and no call.
      const anonymous = paddleId("txn");
      await insertPaddleCheckout(env.services.db, { workspaceId: ws.workspaceId, env: "test" }, anonymous, null, env.clock.now());
      const waits = await other.get(`${base}/checkout/success?session_id=${anonymous}`);
      assert.equal(waits.statusCode, 200);
      assert.match(waits.body, /<h1>Confirming your payment<\/h1>/);
      assert.equal(asks(), before);
    });
  });
}
