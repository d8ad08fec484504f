// The vendor's refund and cancellation made at Stripe when a secret key is connected
// (against a local stand-in of Stripe's API), and Stripe's later report of the same fact
// sending nothing more, on both engines.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { refundLicence } from "../billing/licence.service.js";
import { cancelSubscription } from "../billing/subscription.service.js";
import { DAY_MS } from "../clock.js";
import { ensurePerson } from "../customers/person.store.js";
import type { Dialect } from "../db/database.js";
import { DIALECTS } from "../test-support/harness.js";
import { chargeObject, ofType, paymentSession, paymentsTestbed, stripeId, subscriptionObject } from "../test-support/stripe.js";
import { startStripeApi } from "../test-support/stripe-api.js";

const SECRET_KEY = "sk_test_actionsStandIn0123";

async function setUp(dialect: Dialect) {
  const stripeApi = await startStripeApi();
  const t = await paymentsTestbed(dialect, { env: { WARDEN_STRIPE_API_URL: stripeApi.url }, secretKey: SECRET_KEY });
  return { ...t, stripeApi };
}

for (const dialect of DIALECTS) {
  describe(`vendor actions at Stripe (${dialect})`, () => {
    test("a refund is made at Stripe first, once per licence; Stripe's report of it afterwards sends nothing more", async () => {
      const t = await setUp(dialect);
      const paymentIntent = stripeId("pi");
      await t.send(
        "checkout.session.completed",
        paymentSession({ email: "ada@example.com", metadata: { warden_tool: "tabmaster" }, paymentIntent, now: t.clock.now() }),
      );
      const [licence] = await t.licences();
      const result = await refundLicence(t.services, { id: licence?.id ?? "" });
      assert.deepEqual([result.at_processor, result.refunded_now], ["stripe", true]);
      const [call] = t.stripeApi.calls;
      assert.deepEqual([call?.method, call?.path, call?.form], ["POST", "/v1/refunds", { payment_intent: paymentIntent }]);
      assert.equal(call?.headers["idempotency-key"], `warden-refund-${licence?.id}`);
      assert.equal(call?.headers.authorization, `Bearer ${SECRET_KEY}`);
      await t.send("charge.refunded", chargeObject({ paymentIntent, amount: 4900, amountRefunded: 4900 }));
      assert.equal(ofType(await t.events(), "payment.refunded").length, 1);
      // Refunding again asks Stripe nothing.
      assert.equal((await refundLicence(t.services, { id: licence?.id ?? "" })).at_processor, null);
      assert.equal(t.stripeApi.calls.length, 1);
    });

    test("a test purchase made up on the command line is refunded in Warden alone: Stripe, which never saw it, is not asked", async () => {
      const t = await setUp(dialect);
      const paymentIntent = "pi_warden_test_0123456789abcdefghijklmn";
      await t.send(
        "checkout.session.completed",
        paymentSession({ email: "ada@example.com", metadata: { warden_tool: "tabmaster" }, paymentIntent, now: t.clock.now() }),
      );
      const [licence] = await t.licences();
      const result = await refundLicence(t.services, { id: licence?.id ?? "" });
      assert.deepEqual([result.at_processor, result.refunded_now], [null, true]);
      assert.deepEqual(t.stripeApi.calls, []);
      assert.equal((await t.licences())[0]?.status, "revoked");
    });

    test("when Stripe refuses the refund, nothing changes in Warden", async () => {
      const t = await setUp(dialect);
      await t.send("checkout.session.completed", paymentSession({ email: "ada@example.com", metadata: { warden_tool: "tabmaster" }, now: t.clock.now() }));
      const [licence] = await t.licences();
      t.stripeApi.failWith = { status: 400, error: { type: "invalid_request_error", message: "This PaymentIntent has no successful charge." } };
      await assert.rejects(refundLicence(t.services, { id: licence?.id ?? "" }), /Stripe refused: This PaymentIntent has no successful charge/);
      assert.equal((await t.licences())[0]?.status, "active");
      assert.equal(ofType(await t.events(), "payment.refunded").length, 0);
    });

    test("a cancellation is made at Stripe (at period end, then at once); one Stripe does not hold is Warden's alone", async () => {
      const t = await setUp(dialect);
      const now = t.clock.now();
      const subId = stripeId("sub");
      const account = (await ensurePerson(t.services.db, t.ws.workspaceId, "test", "linus@example.com", now)).id;
      const metadata = { warden_tool: "tabmaster", warden_plan: "monthly", warden_account: account };
      await t.send(
        "customer.subscription.created",
        subscriptionObject({ id: subId, status: "active", metadata, startedAt: now, periodStart: now, periodEnd: now + 30 * DAY_MS }),
      );

      const scheduled = await cancelSubscription(t.services, { id: subId, now: false });
      assert.equal(scheduled.at_processor, "stripe");
      assert.deepEqual(
        [t.stripeApi.calls[0]?.method, t.stripeApi.calls[0]?.path, t.stripeApi.calls[0]?.form],
        ["POST", `/v1/subscriptions/${subId}`, { cancel_at_period_end: "true" }],
      );
      const ended = await cancelSubscription(t.services, { id: subId, now: true });
      assert.deepEqual([ended.at_processor, ended.ended], ["stripe", true]);
      assert.deepEqual([t.stripeApi.calls[1]?.method, t.stripeApi.calls[1]?.path], ["DELETE", `/v1/subscriptions/${subId}`]);

      // Imported from another provider: Stripe answers resource_missing, Warden cancels on its own.
      const imported = stripeId("sub");
      await t.send(
        "customer.subscription.created",
        subscriptionObject({ id: imported, status: "active", metadata, startedAt: now, periodStart: now, periodEnd: now + 30 * DAY_MS }),
      );
      t.stripeApi.unknownSubscriptions.add(imported);
      const alone = await cancelSubscription(t.services, { id: imported, now: true });
      assert.deepEqual([alone.at_processor, alone.ended], [null, true]);
    });
  });
}
