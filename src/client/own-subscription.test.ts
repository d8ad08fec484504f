// The buyer's own cancellation at the period's end and its undo, through the client API:
// made at Stripe first (a local stand-in of its API), the event Stripe's own report would
// write and no second one when that report arrives, refused when Stripe does not bill
// the subscription, and nobody else's subscription reachable. SQLite and PostgreSQL.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { insertSubscription } from "../billing/subscription.store.js";
import { DAY_MS } from "../clock.js";
import { ensurePerson } from "../customers/person.store.js";
import type { Dialect } from "../db/database.js";
import { clientCalls, testMailbox } from "../test-support/client.js";
import { DIALECTS, type TestApi } from "../test-support/harness.js";
import { ofType, paymentSession, paymentsTestbed, stripeId, subscriptionObject } from "../test-support/stripe.js";
import { startStripeApi } from "../test-support/stripe-api.js";

const mailbox = testMailbox();
const { signIn, check } = clientCalls(mailbox);
const SECRET_KEY = "sk_test_ownSubscriptionStandIn";

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const change = (api: TestApi, token: string, id: string, action: "cancel" | "resume") =>
  api.request({ method: "POST", url: `/api/client/v1/subscriptions/${encodeURIComponent(id)}/${action}`, headers: bearer(token) });

async function setUp(dialect: Dialect, options: { secretKey?: boolean } = {}) {
  const stripeApi = await startStripeApi();
  const t = await paymentsTestbed(dialect, {
    env: { WARDEN_STRIPE_API_URL: stripeApi.url, SMTP_URL: mailbox.url },
    ...(options.secretKey === false ? {} : { secretKey: SECRET_KEY }),
  });
  /** A running monthly subscription bought by the address, signed in (its account named); answers its id and period end. */
  const subscribe = async (email: string) => {
    const now = t.clock.now();
    const account = (await ensurePerson(t.services.db, t.ws.workspaceId, "test", email, now)).id;
    const id = stripeId("sub");
    const periodEnd = now + 30 * DAY_MS;
    const metadata = { warden_tool: "tabmaster", warden_plan: "monthly", warden_account: account };
    assert.equal(
      await t.send("customer.subscription.created", subscriptionObject({ id, status: "active", metadata, startedAt: now, periodStart: now, periodEnd })),
      "applied",
    );
    return { id, periodEnd, metadata, startedAt: now };
  };
  return { ...t, stripeApi, subscribe };
}

for (const dialect of DIALECTS) {
  describe(`the buyer's own subscription (${dialect})`, () => {
    test("cancel at period end and resume are made at Stripe first; one event per fact, Stripe's report of it adds none", async () => {
      const t = await setUp(dialect);
      const email = `ada-${t.ws.slug}@example.com`;
      const sub = await t.subscribe(email);
      const token = await signIn(t.api, t.ws, email);

      const cancelled = await change(t.api, token, sub.id, "cancel");
      assert.equal(cancelled.statusCode, 200, cancelled.body);
      assert.deepEqual(
        [cancelled.json().id, cancelled.json().kind, cancelled.json().status, cancelled.json().cancel_at_period_end, cancelled.json().ends_at],
        [sub.id, "subscription", "active", true, "2026-12-21T12:00:00.000Z"], // the month's period bought on 21 November
      );
      assert.deepEqual(
        t.stripeApi.calls.map((c) => [c.method, c.path, c.form]),
        [["POST", `/v1/subscriptions/${sub.id}`, { cancel_at_period_end: "true" }]],
      );
      assert.equal(t.stripeApi.calls[0]?.headers.authorization, `Bearer ${SECRET_KEY}`);
      const [event] = ofType(await t.events(), "subscription.cancelled");
      assert.deepEqual([event?.data.subscription, event?.data.immediately, event?.data.ends_at], [sub.id, false, "2026-12-21T12:00:00.000Z"]);
      // Access runs until the period's end.
      assert.equal((await check(t.api, t.ws.tool, token)).json().entitled, true);

      // Stripe's own report of the change: the same fact, so the same event id, nothing more.
      const reported = subscriptionObject({ ...sub, status: "active", periodStart: sub.startedAt, cancelAtPeriodEnd: true });
      assert.equal(await t.send("customer.subscription.updated", reported, { previousAttributes: { cancel_at_period_end: false } }), "applied");
      assert.equal(ofType(await t.events(), "subscription.cancelled").length, 1);

      // Asking again changes nothing and asks Stripe nothing.
      const again = await change(t.api, token, sub.id, "cancel");
      assert.equal(again.statusCode, 200, again.body);
      assert.equal(t.stripeApi.calls.length, 1);

      t.clock.advance(60_000);
      const resumed = await change(t.api, token, sub.id, "resume");
      assert.equal(resumed.statusCode, 200, resumed.body);
      assert.deepEqual([resumed.json().cancel_at_period_end, resumed.json().ends_at], [false, null]);
      assert.deepEqual(t.stripeApi.calls[1]?.form, { cancel_at_period_end: "false" });
      const stored = await t.subscription(sub.id);
      assert.deepEqual([Number(stored?.cancel_at_period_end), stored?.cancel_at, stored?.ended_at], [0, null, null]);
      assert.equal((await change(t.api, token, sub.id, "resume")).statusCode, 200);
      assert.equal(t.stripeApi.calls.length, 2, "resuming what renews asks Stripe nothing");

      // Set to cancel again the same UTC day: the once-a-day rule sends nothing more; the next day it is sent again.
      assert.equal((await change(t.api, token, sub.id, "cancel")).statusCode, 200);
      assert.equal(ofType(await t.events(), "subscription.cancelled").length, 1);
      assert.equal((await change(t.api, token, sub.id, "resume")).statusCode, 200);
      t.clock.advance(DAY_MS);
      assert.equal((await change(t.api, token, sub.id, "cancel")).statusCode, 200);
      assert.equal(ofType(await t.events(), "subscription.cancelled").length, 2);
      assert.equal((await check(t.api, t.ws.tool, token)).json().entitled, true);
      const listed = (await t.api.request({ url: "/api/client/v1/purchases", headers: bearer(token) })).json().data;
      assert.deepEqual(
        listed.map((p: { id: string; cancel_at_period_end: boolean | null }) => [p.id, p.cancel_at_period_end]),
        [[sub.id, true]],
      );
    });

    test("without a Stripe secret key, or for a subscription Stripe does not bill, the vendor handles it: refused, nothing changes", async () => {
      const t = await setUp(dialect, { secretKey: false });
      const email = `grace-${t.ws.slug}@example.com`;
      const sub = await t.subscribe(email);
      const token = await signIn(t.api, t.ws, email);
      const refused = await change(t.api, token, sub.id, "cancel");
      assert.equal(refused.statusCode, 400, refused.body);
      assert.equal(refused.json().error.param, "id");
      assert.match(refused.json().error.message, /billed by the vendor outside Warden: ask them to cancel it/);
      assert.equal(t.stripeApi.calls.length, 0);
      assert.equal(Number((await t.subscription(sub.id))?.cancel_at_period_end), 0);
      assert.equal(ofType(await t.events(), "subscription.cancelled").length, 0);

      const withKey = await setUp(dialect);
      const imported = await withKey.subscribe(email);
      withKey.stripeApi.unknownSubscriptions.add(imported.id);
      const importedToken = await signIn(withKey.api, withKey.ws, email);
      const missing = await change(withKey.api, importedToken, imported.id, "cancel");
      assert.equal(missing.statusCode, 400, missing.body);
      assert.match(missing.json().error.message, /billed by the vendor/);
      assert.equal(Number((await withKey.subscription(imported.id))?.cancel_at_period_end), 0);
    });

    test("when Stripe refuses, nothing changes; an ended subscription and one the vendor set to end on a date are refused", async () => {
      const t = await setUp(dialect);
      const email = `linus-${t.ws.slug}@example.com`;
      const sub = await t.subscribe(email);
      const token = await signIn(t.api, t.ws, email);
      t.stripeApi.failWith = { status: 400, error: { type: "invalid_request_error", message: "This subscription is paused." } };
      const refused = await change(t.api, token, sub.id, "cancel");
      assert.equal(refused.statusCode, 400, refused.body);
      assert.match(refused.json().error.message, /Stripe refused: This subscription is paused/);
      assert.equal(Number((await t.subscription(sub.id))?.cancel_at_period_end), 0);
      assert.equal(ofType(await t.events(), "subscription.cancelled").length, 0);
      t.stripeApi.failWith = null;

      // The vendor set an end date in Stripe: only they take it back.
      const dated = subscriptionObject({ ...sub, status: "active", periodStart: sub.startedAt, cancelAt: sub.periodEnd - DAY_MS });
      await t.send("customer.subscription.updated", dated, { previousAttributes: { cancel_at: null } });
      const notYours = await change(t.api, token, sub.id, "resume");
      assert.equal(notYours.statusCode, 400, notYours.body);
      assert.match(notYours.json().error.message, /The vendor set subscription .* to end at/);

      await t.send("customer.subscription.deleted", subscriptionObject({ ...sub, status: "canceled", periodStart: sub.startedAt, endedAt: t.clock.now() }));
      const ended = await change(t.api, token, sub.id, "cancel");
      assert.equal(ended.statusCode, 400, ended.body);
      assert.match(ended.json().error.message, /ended at/);
      assert.equal(t.stripeApi.calls.filter((c) => c.method === "POST").length, 1, "only the refused call reached Stripe");
    });

    test("another person's, another workspace's or environment's subscription is 404; a key-activated device is 401", async () => {
      const t = await setUp(dialect);
      const buyer = `buyer-${t.ws.slug}@example.com`;
      const sub = await t.subscribe(buyer);
      // The same buyer's subscription in live: another environment's, so not this session's.
      const liveSub = { id: stripeId("sub") };
      const now = t.clock.now();
      await insertSubscription(t.services.db, {
        workspaceId: t.ws.workspaceId,
        env: "live",
        id: liveSub.id,
        personId: (await ensurePerson(t.services.db, t.ws.workspaceId, "live", buyer, now)).id,
        productKind: "tool",
        productId: "tabmaster",
        planId: "monthly",
        status: "active",
        currentPeriodStart: now,
        currentPeriodEnd: now + 30 * DAY_MS,
        cancelAtPeriodEnd: false,
        cancelAt: null,
        endedAt: null,
        seats: null,
        createdAt: now,
      });
      const stranger = await signIn(t.api, t.ws, `stranger-${t.ws.slug}@example.com`);
      const buyerToken = await signIn(t.api, t.ws, buyer);
      const other = await setUp(dialect);
      const otherSub = await other.subscribe(buyer);

      for (const [token, id] of [
        [stranger, sub.id],
        [buyerToken, otherSub.id],
        [buyerToken, liveSub.id],
        [buyerToken, "sub_doesNotExist"],
      ] as const) {
        for (const action of ["cancel", "resume"] as const) {
          const answer = await change(t.api, token, id, action);
          assert.equal(answer.statusCode, 404, `${action} ${id}: ${answer.body}`);
        }
      }
      assert.equal((await change(t.api, "wdt_notAToken", sub.id, "cancel")).statusCode, 401);
      assert.equal(t.stripeApi.calls.length + other.stripeApi.calls.length, 0);

      // A device activated with a licence key proved no address: it cannot cancel the buyer's subscription.
      await t.send("checkout.session.completed", paymentSession({ email: buyer, metadata: { warden_tool: "tabmaster" }, now: t.clock.now() }));
      const licence = (await t.api.request({ url: "/api/client/v1/purchases", headers: bearer(buyerToken) }))
        .json()
        .data.find((p: { kind: string }) => p.kind === "licence");
      const activated = await t.api.request({
        method: "POST",
        url: `/api/client/v1/tools/${t.ws.tool}/activate`,
        payload: { workspace: t.ws.slug, key: licence.key, device: { name: "Shared PC", platform: "chrome-windows" } },
      });
      assert.equal(activated.statusCode, 200, activated.body);
      const byKey = await change(t.api, activated.json().token, sub.id, "cancel");
      assert.equal(byKey.statusCode, 401, byKey.body);
      assert.match(byKey.json().error.message, /sign in with your email address to cancel a subscription/);
    });
  });
}
