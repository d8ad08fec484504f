// The hosted Plans page of an environment that takes its payments from Paddle: a choice
// goes to Paddle's hosted checkout (a transaction Warden made with the plan's linked price
// and its custom_data), against the stand-in for Paddle's API; on both engines.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { pagesOf, signInOnPages } from "../test-support/customer-pages.js";
import { dashboardApp, dashboardServices, TestBrowser } from "../test-support/dashboard.js";
import { DIALECTS, seedCatalogue } from "../test-support/harness.js";
import { connectTestPaddle, linkTestPaddlePrices, PADDLE_PRICES, startPaddleApi } from "../test-support/paddle.js";

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
      const chosen = await browser.post(`${base}/plans`, { plan: "monthly" });
      assert.equal(chosen.statusCode, 303, chosen.body);
      assert.match(chosen.headers.location as string, /^https:\/\/pay\.example\.com\/checkout\?_ptxn=txn_/);
      const person = await env.services.db.selectFrom("people").select("id").where("workspace_id", "=", ws.workspaceId).executeTakeFirstOrThrow();
      const made = paddleApi.calls.find((c) => c.method === "POST" && c.path === "/transactions");
      assert.deepEqual(made?.body?.items, [{ price_id: PADDLE_PRICES.monthly?.id, quantity: 1 }]);
      assert.deepEqual(made?.body?.custom_data, { warden_tool: "tabmaster", warden_plan: "monthly", warden_account: person.id });

      // A plan with no Paddle price linked is refused on the page, and Paddle is not asked.
      await env.services.db.deleteFrom("paddle_plan_links").where("plan_id", "=", "lifetime").execute();
      const unlinked = await browser.post(`${base}/plans`, { plan: "lifetime" });
      assert.equal(unlinked.statusCode, 400);
      assert.match(unlinked.body, /linked to no active Paddle price/);
      assert.equal(paddleApi.calls.filter((c) => c.method === "POST").length, 1);
    });
  });
}
