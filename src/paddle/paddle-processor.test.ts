// Paddle behind the processor boundary, against the stand-in for Paddle's API
// (test-support/paddle.ts) through the official SDK: Warden's checkout, a buyer's whole
// life (buy, renew, more seats, cancel at the period's end, resume, the customer portal,
// a refund, a chargeback) with the events and licence states of the Stripe twin, and the
// price paid checked against the plan named.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { refundLicence } from "../billing/licence.service.js";
import { changeOwnSubscription, openBillingPortal } from "../client/purchase.service.js";
import { DAY_MS } from "../clock.js";
import { ensurePerson } from "../customers/person.store.js";
import { derivedId } from "../ids.js";
import { startCheckout } from "../payments/checkout.service.js";
import { DIALECTS } from "../test-support/harness.js";
import { adjustmentObject, PADDLE_PRICES, paddleId, paddleTestbed, subscriptionObject, transactionObject } from "../test-support/paddle.js";
import { ofType } from "../test-support/stripe.js";
import { retirePlan } from "../workspaces/workspace.service.js";
import { findTool, findWorkspaceBySlug } from "../workspaces/workspace.store.js";

type Testbed = Awaited<ReturnType<typeof paddleTestbed>>;

async function buyer(t: Testbed) {
  const person = await ensurePerson(t.services.db, t.ws.workspaceId, "test", "ada@example.com", t.clock.now());
  const scope = {
    workspaceId: t.ws.workspaceId,
    workspaceSlug: t.ws.slug,
    env: "test" as const,
    toolId: "tabmaster",
    personId: person.id,
    email: person.email,
    licenceId: null,
  };
  return { person, scope };
}

/** The hosted Plans page's and the buy button's use case, for a signed-in buyer. */
async function checkout(t: Testbed, personId: string, plan: string, seats?: number) {
  const workspace = await findWorkspaceBySlug(t.services.db, t.ws.slug);
  const tool = await findTool(t.services.db, t.ws.workspaceId, "tabmaster");
  assert.ok(workspace && tool);
  return startCheckout(t.services, {
    workspace,
    tool,
    product: { kind: "tool", id: "tabmaster" },
    plan,
    env: "test",
    ...(seats === undefined ? {} : { seats }),
    buyer: { workspaceId: t.ws.workspaceId, env: "test", personId },
    successUrl: "https://tabmaster.example.com/thanks",
  });
}

const eventId = (t: Testbed, type: string, fact: string) => derivedId("evt", `${t.ws.workspaceId}|test|${type}|${fact}`);
const callsTo = (t: Testbed, method: string, path: RegExp) => (t.paddleApi?.calls ?? []).filter((c) => c.method === method && path.test(c.path));

for (const dialect of DIALECTS) {
  describe(`Paddle as the processor (${dialect})`, () => {
    test("checkout is a transaction Warden makes with the plan's linked price and its custom_data (the return address for the vendor's payment link page among it); its checkout.url is where the buyer goes", async () => {
      const t = await paddleTestbed(dialect, { paddleApi: true });
      const { person } = await buyer(t);
      const made = await checkout(t, person.id, "monthly", 3);
      assert.match(made.url, /^https:\/\/pay\.example\.com\/checkout\?_ptxn=txn_/);
      assert.match(made.checkout_session, /^txn_/);
      const [call, ...more] = callsTo(t, "POST", /^\/transactions$/);
      assert.equal(more.length, 0);
      assert.deepEqual(call?.body?.items, [{ price_id: PADDLE_PRICES.monthly?.id, quantity: 3 }]);
      assert.deepEqual(call?.body?.custom_data, {
        warden_tool: "tabmaster",
        warden_plan: "monthly",
        warden_seats: "3",
        warden_account: person.id,
        warden_success_url: "https://tabmaster.example.com/thanks",
      });
      // The linked price was read first (active, in the plan's currency and interval).
      assert.equal(callsTo(t, "GET", /^\/prices\/pri_/).length, 1);
    });

    test("checkout is refused for a plan linked to no Paddle price, a price of other billing, and an environment without an API key", async () => {
      const t = await paddleTestbed(dialect, { paddleApi: true });
      const { person } = await buyer(t);
      await t.services.db.deleteFrom("paddle_plan_links").where("plan_id", "=", "lifetime").execute();
      await assert.rejects(checkout(t, person.id, "lifetime"), /linked to no active Paddle price of its currency and billing in test/);
      // The monthly price linked to the one-time plan: it does not bill as the plan does.
      await t.services.db.updateTable("paddle_plan_links").set({ plan_id: "lifetime" }).where("plan_id", "=", "monthly").execute();
      await assert.rejects(checkout(t, person.id, "lifetime"), /linked to no active Paddle price/);
      assert.equal(callsTo(t, "POST", /^\/transactions$/).length, 0);
      // Paddle's refusal (here its rate limit, in its error shape) is said in Warden's words, and nothing is made.
      if (t.paddleApi) t.paddleApi.rateLimited = 1;
      await assert.rejects(checkout(t, person.id, "lifetime"), /Paddle refused: Too many requests, slow down\. \(too_many_requests\)/);

      const bare = await paddleTestbed(dialect);
      const other = await ensurePerson(bare.services.db, bare.ws.workspaceId, "test", "ada@example.com", bare.clock.now());
      await assert.rejects(checkout(bare, other.id, "monthly"), /takes no payments in test mode yet/);
    });

    test("a buyer's whole life: buy, renew, more seats, cancel at the period's end and resume from Manage, the customer portal; the events of the Stripe twin", async () => {
      const t = await paddleTestbed(dialect, { paddleApi: true });
      const { person, scope } = await buyer(t);
      const made = await checkout(t, person.id, "monthly", 3);
      const customData = { warden_tool: "tabmaster", warden_plan: "monthly", warden_account: person.id, warden_seats: "3" };
      const start = t.clock.now();
      const sub = paddleId("sub");
      const state = (o: Partial<Parameters<typeof subscriptionObject>[0]> = {}) =>
        subscriptionObject({ id: sub, status: "active", customData, startedAt: start, periodEnd: start + 30 * DAY_MS, quantity: 3, ...o });
      // Paddle holds the subscription the checkout made.
      t.paddleApi?.subscriptions.set(sub, state());

      assert.equal(await t.send("subscription.created", state()), "applied");
      assert.equal(
        await t.send(
          "transaction.completed",
          transactionObject({ id: made.checkout_session, customData, subscriptionId: sub, total: 1500, billedAt: start, origin: "web" }),
        ),
        "applied",
      );
      assert.deepEqual(
        ofType(await t.events(), "subscription.started").map((e) => [e.id, e.data.seats]),
        [[eventId(t, "subscription.started", sub), 3]],
      );

      // Renewed: the next period's transaction and state.
      t.clock.set(start + 30 * DAY_MS);
      const renewed = { periodStart: start + 30 * DAY_MS, periodEnd: start + 60 * DAY_MS };
      assert.equal(
        await t.send("transaction.completed", transactionObject({ customData, subscriptionId: sub, total: 1500, billedAt: t.clock.now() })),
        "applied",
      );
      assert.equal(await t.send("subscription.updated", state(renewed)), "applied");
      assert.equal(Number((await t.subscription(sub))?.current_period_end), start + 60 * DAY_MS);

      // More seats, bought at Paddle.
      t.clock.advance(DAY_MS);
      assert.equal(await t.send("subscription.updated", state({ ...renewed, quantity: 5 })), "applied");
      assert.equal((await t.subscription(sub))?.seats, 5);
      t.paddleApi?.subscriptions.set(sub, state({ ...renewed, quantity: 5 }));

      // Cancel at the period's end from Manage: Paddle is asked first, then Warden sends what Paddle's report would.
      t.clock.advance(DAY_MS);
      await changeOwnSubscription(t.services, scope, sub, true);
      assert.deepEqual(
        callsTo(t, "POST", new RegExp(`^/subscriptions/${sub}/cancel$`)).map((c) => c.body),
        [{ effective_from: "next_billing_period" }],
      );
      assert.equal(Number((await t.subscription(sub))?.cancel_at_period_end), 1);
      const cancelDay = new Date(t.clock.now()).toISOString().slice(0, 10);
      // Paddle's own report of it afterwards sends nothing more: the same event id.
      assert.equal(await t.send("subscription.updated", state({ ...renewed, quantity: 5, cancelAt: start + 60 * DAY_MS })), "applied");
      assert.deepEqual(
        ofType(await t.events(), "subscription.cancelled").map((e) => [e.id, e.data.immediately]),
        [[eventId(t, "subscription.cancelled", `${sub}|${cancelDay}`), false]],
      );

      // Resume from Manage: Paddle's scheduled change removed.
      t.clock.advance(DAY_MS);
      await changeOwnSubscription(t.services, scope, sub, false);
      assert.deepEqual(
        callsTo(t, "PATCH", new RegExp(`^/subscriptions/${sub}$`)).map((c) => c.body),
        [{ scheduled_change: null }],
      );
      assert.equal(Number((await t.subscription(sub))?.cancel_at_period_end), 0);

      // Paddle's customer portal, for the subscription's customer.
      const portal = await openBillingPortal(t.services, scope, sub, "https://tabmaster.example.com/manage");
      assert.match(portal.url, /^https:\/\/customer-portal\.paddle\.com\//);
      const customer = t.paddleApi?.subscriptions.get(sub)?.customer_id as string;
      assert.deepEqual(
        callsTo(t, "POST", /\/portal-sessions$/).map((c) => [c.path, c.body]),
        [[`/customers/${customer}/portal-sessions`, { subscription_ids: [sub] }]],
      );

      // Another buyer's subscription is not theirs to change.
      const stranger = { ...scope, personId: "psn_stranger" };
      await assert.rejects(changeOwnSubscription(t.services, stranger, sub, true), /No subscription/);
    });

    test("a refund from Warden is asked of Paddle (a full refund adjustment) and Paddle's approval afterwards sends nothing more; a chargeback suspends", async () => {
      const t = await paddleTestbed(dialect, { paddleApi: true });
      const { person } = await buyer(t);
      const made = await checkout(t, person.id, "lifetime");
      const customData = { warden_tool: "tabmaster", warden_plan: "lifetime", warden_account: person.id };
      assert.equal(
        await t.send("transaction.completed", transactionObject({ id: made.checkout_session, customData, total: 4900, billedAt: t.clock.now() })),
        "applied",
      );
      const [licence] = await t.licences();
      assert.ok(licence);
      const refunded = await refundLicence(t.services, { id: licence.id });
      assert.equal(refunded.at_processor, "paddle", "asked of the environment's processor");
      assert.deepEqual(
        callsTo(t, "POST", /^\/adjustments$/).map((c) => c.body),
        [{ action: "refund", type: "full", transaction_id: made.checkout_session, reason: "Refunded by the vendor through Warden" }],
      );
      assert.equal((await t.licences())[0]?.status, "revoked");
      t.clock.advance(DAY_MS);
      const approved = adjustmentObject({ action: "refund", type: "full", transactionId: made.checkout_session, total: 4900, at: t.clock.now() });
      assert.equal(await t.send("adjustment.updated", approved), "applied");
      assert.deepEqual(
        ofType(await t.events(), "payment.refunded").map((e) => e.id),
        [eventId(t, "payment.refunded", made.checkout_session)],
      );

      // A second purchase, charged back.
      const second = await checkout(t, person.id, "lifetime");
      assert.equal(
        await t.send("transaction.completed", transactionObject({ id: second.checkout_session, customData, total: 4900, billedAt: t.clock.now() })),
        "applied",
      );
      assert.equal(
        await t.send("adjustment.created", adjustmentObject({ action: "chargeback", transactionId: second.checkout_session, total: 4900, at: t.clock.now() })),
        "applied",
      );
      const suspended = (await t.licences()).find((l) => l.payment_intent === second.checkout_session);
      assert.equal(suspended?.status, "suspended");
      assert.equal(ofType(await t.events(), "payment.disputed").length, 1);
    });

    test("the price paid is checked against the plan custom_data names: a cheap price naming a dear plan, an unknown price, no plan, or more seats than paid for buys nothing and is recorded", async () => {
      const t = await paddleTestbed(dialect);
      const { person } = await buyer(t);
      const dear = { warden_tool: "tabmaster", warden_plan: "lifetime", warden_account: person.id };
      // The monthly price (5.00) paid once, custom_data naming the lifetime plan (49.00).
      const cheap = transactionObject({ customData: dear, priceId: PADDLE_PRICES.monthly?.id as string, total: 500, billedAt: t.clock.now() });
      assert.equal(await t.send("transaction.completed", cheap), "ignored");
      const unknown = transactionObject({ customData: dear, priceId: paddleId("pri"), total: 4900, billedAt: t.clock.now() });
      assert.equal(await t.send("transaction.completed", unknown), "ignored");
      // A subscription whose price is another plan's is not started either.
      const sub = subscriptionObject({
        id: paddleId("sub"),
        status: "active",
        customData: { warden_tool: "tabmaster", warden_plan: "monthly", warden_account: person.id },
        startedAt: t.clock.now(),
        periodEnd: t.clock.now() + 30 * DAY_MS,
        priceId: PADDLE_PRICES["suite-lifetime"]?.id as string,
      });
      assert.equal(await t.send("subscription.created", sub), "ignored");
      // No plan named, and the product has no default plan: billing would give the product whatever was paid.
      const planless = transactionObject({ customData: { warden_tool: "tabmaster", warden_account: person.id }, total: 1, billedAt: t.clock.now() });
      assert.equal(await t.send("transaction.completed", planless), "ignored");
      // Fifty seats named, one paid for.
      const team = transactionObject({ customData: { ...dear, warden_seats: "50" }, total: 4900, billedAt: t.clock.now() });
      assert.equal(await t.send("transaction.completed", team), "ignored");
      // The lifetime plan made the default, then retired: billing takes no retired default for
      // a purchase naming no plan (it would give the product without a plan, the top terms),
      // so its still-linked price, paid, buys nothing either.
      await t.services.db.updateTable("plans").set({ is_default: 1 }).where("workspace_id", "=", t.ws.workspaceId).where("id", "=", "lifetime").execute();
      await retirePlan(t.services.db, t.clock, { workspace: t.ws.slug, tool: "tabmaster", id: "lifetime" });
      const retiredDefault = transactionObject({
        customData: { warden_tool: "tabmaster", warden_account: person.id },
        priceId: PADDLE_PRICES.lifetime?.id as string,
        total: 4900,
        billedAt: t.clock.now(),
      });
      assert.equal(await t.send("transaction.completed", retiredDefault), "ignored");
      assert.deepEqual(await t.licences(), []);
      assert.equal(await t.subscription(sub.id), undefined);
      assert.deepEqual(
        (await t.reasons()).map((r) => r.reason),
        [
          'the price paid is linked to plan "monthly" of tool "tabmaster", not plan "lifetime" of tool "tabmaster" named in custom_data',
          `price ${unknown.items[0]?.price.id} (product ${unknown.items[0]?.price.product_id}) is linked to no plan in test: not checked against plan "lifetime" named in custom_data`,
          'the price paid is linked to plan "suite-lifetime" of bundle "suite", not plan "monthly" of tool "tabmaster" named in custom_data',
          "custom_data names no plan, and the product has no default plan offered for this billing: the price paid cannot be checked",
          "custom_data names 50 seat(s), but the items' quantity paid for is 1",
          "custom_data names no plan, and the product has no default plan offered for this billing: the price paid cannot be checked",
        ],
      );
      assert.deepEqual(await t.events(), []);
    });
  });
}
