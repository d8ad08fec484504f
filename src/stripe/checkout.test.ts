// Point 4 of the payments issue: the buy button's Checkout Session, created through the
// `stripe` package against a local stand-in of Stripe's API (never the internet), and
// the purchase that follows it tied back by the metadata, on both engines.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Dialect } from "../db/database.js";
import { clientCalls, testMailbox } from "../test-support/client.js";
import { DIALECTS, seedCatalogue, testApi, testServices } from "../test-support/harness.js";
import { deliver, emittedEvents, paymentSession, stripeEvent } from "../test-support/stripe.js";
import { startStripeApi } from "../test-support/stripe-api.js";
import { retirePlan } from "../workspaces/workspace.service.js";
import { connectStripe } from "./stripe-account.service.js";
import { updatePlanStripeLinks } from "./stripe-plan-link.service.js";

const SECRET_KEY = "sk_test_checkoutStandIn0123";
const WEBHOOK_SECRET = "whsec_checkoutStandIn0123";

const mailbox = testMailbox();
const { signIn } = clientCalls(mailbox);

type StandInPrice = Parameters<Awaited<ReturnType<typeof startStripeApi>>["prices"]["set"]>[1];
/** A test-mode, active, monthly, per-seat price in euros, as the stand-in serves it; `changes` make it otherwise. */
const monthlyPrice = (id: string, changes: Partial<StandInPrice> = {}): StandInPrice => ({
  id,
  livemode: false,
  active: true,
  currency: "eur",
  type: "recurring",
  recurring: { interval: "month", interval_count: 1, usage_type: "licensed" },
  ...changes,
});

async function setUp(dialect: Dialect) {
  const stripeApi = await startStripeApi();
  const { services, clock } = await testServices(dialect, { WARDEN_STRIPE_API_URL: stripeApi.url, SMTP_URL: mailbox.url });
  const ws = await seedCatalogue(services);
  await connectStripe(services, { workspace: ws.slug, env: "test", webhookSecret: WEBHOOK_SECRET, secretKey: SECRET_KEY });
  const api = await testApi(services);
  const checkout = (body: Record<string, unknown>, options: { host?: string; tool?: string; token?: string } = {}) =>
    api.request({
      method: "POST",
      url: `/api/client/v1/tools/${options.tool ?? "tabmaster"}/checkout`,
      headers: { host: options.host ?? `${ws.slug}.warden.test`, ...(options.token ? { authorization: `Bearer ${options.token}` } : {}) },
      payload: body,
    });
  return { services, clock, ws, api, stripeApi, checkout };
}

for (const dialect of DIALECTS) {
  describe(`checkout for the buy button (${dialect})`, () => {
    test("a one-time plan makes a payment-mode Checkout Session with Warden's metadata; paying it makes the licence", async () => {
      const { services, clock, ws, api, stripeApi, checkout } = await setUp(dialect);
      const response = await checkout({ plan: "lifetime", livemode: false, email: "ada@example.com", success_url: "https://tabmaster.example/thanks" });
      assert.equal(response.statusCode, 200, response.body);
      const answer = response.json() as { url: string; checkout_session: string };
      assert.match(answer.checkout_session, /^cs_test_/);
      assert.equal(answer.url, `https://checkout.stripe.com/c/pay/${answer.checkout_session}`);

      const [call, ...more] = stripeApi.calls;
      assert.equal(more.length, 0);
      assert.equal(call?.headers.authorization, `Bearer ${SECRET_KEY}`);
      assert.deepEqual(call?.form, {
        mode: "payment",
        "line_items[0][quantity]": "1",
        "line_items[0][price_data][currency]": "eur",
        "line_items[0][price_data][unit_amount]": "4900",
        "line_items[0][price_data][product_data][name]": "Tab Master (Lifetime)",
        success_url: "https://tabmaster.example/thanks",
        customer_email: "ada@example.com",
        "metadata[warden_tool]": "tabmaster",
        "metadata[warden_plan]": "lifetime",
        "payment_intent_data[metadata][warden_tool]": "tabmaster",
        "payment_intent_data[metadata][warden_plan]": "lifetime",
      });

      // Stripe reports the paid session with the metadata it was given: the licence follows.
      const session = paymentSession({
        id: answer.checkout_session,
        email: "ada@example.com",
        metadata: { warden_tool: call?.form["metadata[warden_tool]"], warden_plan: call?.form["metadata[warden_plan]"] },
        now: clock.now(),
      });
      assert.equal(await deliver(api, ws, WEBHOOK_SECRET, stripeEvent("checkout.session.completed", session, { now: clock.now() }), clock.now()), "applied");
      const [purchase] = await emittedEvents(services, ws);
      assert.equal(purchase?.type === "purchase.completed" && purchase.data.checkout_session, answer.checkout_session);
    });

    test("a retired plan is not offered at checkout; a checkout made before it was retired still makes its licence, which keeps the plan", async () => {
      const { services, clock, ws, api, stripeApi, checkout } = await setUp(dialect);
      const body = { plan: "lifetime", livemode: false, email: "ada@example.com", success_url: "https://tabmaster.example/thanks" };
      const before = await checkout(body);
      assert.equal(before.statusCode, 200, before.body);
      const retired = await retirePlan(services.db, clock, { workspace: ws.slug, tool: "tabmaster", id: "lifetime" });
      assert.equal(retired.retiredNow, true);

      const refused = await checkout(body);
      assert.equal(refused.statusCode, 400);
      assert.deepEqual(refused.json().error, {
        type: "invalid_request_error",
        message: 'Plan "lifetime" of tool "tabmaster" is no longer offered.',
        param: "plan",
      });
      assert.equal(stripeApi.calls.length, 1, "Stripe is not asked for a retired plan");
      // The subscription plan is still offered.
      assert.equal((await checkout({ ...body, plan: "monthly" })).statusCode, 200);

      const session = paymentSession({
        id: (before.json() as { checkout_session: string }).checkout_session,
        email: "ada@example.com",
        metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" },
        now: clock.now(),
      });
      assert.equal(await deliver(api, ws, WEBHOOK_SECRET, stripeEvent("checkout.session.completed", session, { now: clock.now() }), clock.now()), "applied");
      const customer = await api.request({ url: "/api/v1/tools/tabmaster/customers/ada@example.com", key: ws.testKey });
      assert.equal(customer.statusCode, 200, customer.body);
      assert.equal(customer.json().entitled, true);
      assert.equal(customer.json().plan.id, "lifetime");
    });

    test("a plan linked to a Stripe Price sells that Price: the first linked one of this mode, active, billing as the plan (currency, interval, per seat); none such, the plan inline", async () => {
      const { services, clock, stripeApi, checkout, ws } = await setUp(dialect);
      const body = { plan: "monthly", seats: 3, livemode: false, success_url: "https://tabmaster.example/thanks" };
      const linked = (prices: string[], products: string[] = []) => {
        clock.advance(1000);
        return updatePlanStripeLinks(services, { workspace: ws.slug, tool: "tabmaster", id: "monthly", prices, products });
      };
      // Linked in this order: a live-mode price, a one-time one, a yearly one, one in dollars, a metered one, an archived one, the one to sell, another that would do.
      stripeApi.prices.set("price_live", monthlyPrice("price_live", { livemode: true }));
      stripeApi.prices.set("price_once", monthlyPrice("price_once", { type: "one_time", recurring: null }));
      stripeApi.prices.set("price_yearly", monthlyPrice("price_yearly", { recurring: { interval: "year", interval_count: 1, usage_type: "licensed" } }));
      stripeApi.prices.set("price_usd", monthlyPrice("price_usd", { currency: "usd" }));
      stripeApi.prices.set("price_metered", monthlyPrice("price_metered", { recurring: { interval: "month", interval_count: 1, usage_type: "metered" } }));
      stripeApi.prices.set("price_archived", monthlyPrice("price_archived", { active: false }));
      stripeApi.prices.set("price_monthly", monthlyPrice("price_monthly"));
      stripeApi.prices.set("price_later", monthlyPrice("price_later"));
      await linked(["price_live"], ["prod_Tabmaster"]);
      await linked(["price_once"]);
      await linked(["price_yearly"]);
      await linked(["price_usd"]);
      await linked(["price_metered"]);
      await linked(["price_archived"]);
      await linked(["price_monthly"]);
      await linked(["price_later"]);

      const response = await checkout(body);
      assert.equal(response.statusCode, 200, response.body);
      const created = stripeApi.calls.find((c) => c.method === "POST" && c.path === "/v1/checkout/sessions");
      const lineItems = Object.fromEntries(Object.entries(created?.form ?? {}).filter(([k]) => k.startsWith("line_items")));
      assert.deepEqual(lineItems, { "line_items[0][quantity]": "3", "line_items[0][price]": "price_monthly" });
      assert.equal(created?.form["metadata[warden_plan]"], "monthly", "Warden's metadata as ever");
      assert.deepEqual(
        stripeApi.calls.filter((c) => c.method === "GET").map((c) => c.path),
        [
          "/v1/prices/price_live",
          "/v1/prices/price_once",
          "/v1/prices/price_yearly",
          "/v1/prices/price_usd",
          "/v1/prices/price_metered",
          "/v1/prices/price_archived",
          "/v1/prices/price_monthly",
        ],
        "asked in the order linked, until one sells; a product is not a price",
      );

      // The one-time plan's only linked price is recurring: nothing to sell it with, so it is priced inline.
      await updatePlanStripeLinks(services, { workspace: ws.slug, tool: "tabmaster", id: "lifetime", prices: ["price_lifetimeWrong"] });
      stripeApi.prices.set("price_lifetimeWrong", monthlyPrice("price_lifetimeWrong"));
      stripeApi.calls.length = 0;
      assert.equal((await checkout({ ...body, plan: "lifetime", seats: undefined })).statusCode, 200);
      const inline = stripeApi.calls.find((c) => c.method === "POST")?.form ?? {};
      assert.equal(inline["line_items[0][price]"], undefined);
      assert.equal(inline["line_items[0][price_data][unit_amount]"], "4900");
    });

    test("a subscription plan with seats makes a subscription-mode session whose subscription carries the metadata", async () => {
      const { stripeApi, checkout } = await setUp(dialect);
      const response = await checkout({
        plan: "monthly",
        seats: 5,
        livemode: false,
        success_url: "https://tabmaster.example/thanks",
        cancel_url: "https://tabmaster.example/",
      });
      assert.equal(response.statusCode, 200, response.body);
      const form = stripeApi.calls[0]?.form ?? {};
      assert.equal(form.mode, "subscription");
      assert.equal(form["line_items[0][quantity]"], "5");
      assert.equal(form["line_items[0][price_data][unit_amount]"], "500");
      assert.equal(form["line_items[0][price_data][recurring][interval]"], "month");
      assert.equal(form.cancel_url, "https://tabmaster.example/");
      assert.equal(form["metadata[warden_seats]"], "5");
      assert.equal(form["subscription_data[metadata][warden_seats]"], "5");
      assert.equal(form["subscription_data[metadata][warden_plan]"], "monthly");
      assert.equal(form["payment_intent_data[metadata][warden_tool]"], undefined);
    });

    test("a signed-in buyer's checkout names their account and address; a device of another environment is refused", async () => {
      const { services, ws, api, stripeApi, checkout } = await setUp(dialect);
      const email = `buyer-${ws.slug}@example.com`;
      const token = await signIn(api, ws, email);
      const person = await services.db
        .selectFrom("people")
        .select("id")
        .where("workspace_id", "=", ws.workspaceId)
        .where("env", "=", "test")
        .executeTakeFirstOrThrow();
      const response = await checkout(
        { workspace: ws.slug, plan: "lifetime", livemode: false, success_url: "https://tabmaster.example/thanks" },
        { host: "localhost", token },
      );
      assert.equal(response.statusCode, 200, response.body);
      const form = stripeApi.calls[0]?.form ?? {};
      assert.equal(form.customer_email, email);
      assert.equal(form["metadata[warden_account]"], person.id);
      assert.equal(form["payment_intent_data[metadata][warden_account]"], person.id);

      const live = await checkout({ plan: "lifetime", livemode: true, success_url: "https://tabmaster.example/thanks" }, { token });
      assert.equal(live.statusCode, 400);
      assert.equal(live.json().error.param, "livemode");
      const forged = await checkout({ plan: "lifetime", livemode: false, success_url: "https://tabmaster.example/thanks" }, { token: `wdt_${"x".repeat(43)}` });
      assert.equal(forged.statusCode, 401);
      assert.equal(stripeApi.calls.length, 1);
    });

    test("refusals: no workspace at the address, unknown tool or plan, a mode without a secret key, a bad body, Stripe's own refusal", async () => {
      const { stripeApi, checkout } = await setUp(dialect);
      const body = { plan: "lifetime", livemode: false, success_url: "https://tabmaster.example/thanks" };
      const cases: [Record<string, unknown>, { host?: string; tool?: string }, number, string | undefined][] = [
        [body, { host: "localhost" }, 400, "workspace"],
        [{ ...body, workspace: "someone-else" }, {}, 400, "workspace"],
        [body, { host: "nobody.warden.test" }, 404, undefined],
        [body, { tool: "nothing" }, 404, undefined],
        [{ ...body, plan: "gold" }, {}, 400, "plan"],
        [{ ...body, livemode: true }, {}, 400, "livemode"],
        [{ ...body, email: "not-an-address" }, {}, 400, "email"],
        [{ ...body, seats: 0 }, {}, 400, "seats"],
        [{ ...body, success_url: "javascript:alert(1)" }, {}, 400, "success_url"],
        [{ ...body, extra: 1 }, {}, 400, "extra"],
      ];
      for (const [payload, options, status, param] of cases) {
        const response = await checkout(payload, options);
        assert.equal(response.statusCode, status, `${JSON.stringify(payload)} ${JSON.stringify(options)}: ${response.body}`);
        if (param) assert.equal(response.json().error.param, param);
      }
      assert.equal(stripeApi.calls.length, 0);

      stripeApi.failWith = { status: 400, error: { type: "invalid_request_error", message: "Not a valid URL", param: "success_url" } };
      const refused = await checkout(body);
      assert.equal(refused.statusCode, 400, refused.body);
      assert.deepEqual(refused.json().error, { type: "invalid_request_error", message: "Stripe refused the checkout: Not a valid URL", param: "success_url" });
      stripeApi.failWith = { status: 500, error: { type: "api_error", message: "Stripe is down" } };
      const failed = await checkout(body);
      assert.equal(failed.statusCode, 500, failed.body);
      assert.doesNotMatch(failed.body, /Stripe is down/);
    });
  });
}
