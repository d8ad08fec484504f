// Point 1 of the payments issue: the Stripe webhook endpoint verifies signatures with the
// `stripe` package, picks the environment by livemode, applies each Stripe event once,
// and acknowledges what it cannot use without crashing, on both engines.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import Stripe from "stripe";
import { DIALECTS, seedCatalogue, testApi, testServices } from "../test-support/harness.js";
import { connectTestStripe, deliver, emittedEvents, paymentSession, sendStripeEvent, stripeEvent, stripeId } from "../test-support/stripe.js";
import { findStripeAccount } from "./stripe-account.store.js";

const MINUTE_MS = 60_000;

for (const dialect of DIALECTS) {
  describe(`Stripe ingest (${dialect})`, () => {
    test("a correctly signed event is applied; a wrong secret, a tampered body or a stale signature answers 400 and changes nothing", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      const secret = await connectTestStripe(services, ws);
      const now = clock.now();
      const session = paymentSession({ email: "ada@example.com", metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" }, now });
      const event = stripeEvent("checkout.session.completed", session, { now });

      const wrongSecret = await sendStripeEvent(api, ws, secret, event, { now, signatureSecret: `whsec_${"x".repeat(32)}` });
      assert.equal(wrongSecret.statusCode, 400, wrongSecret.body);
      assert.equal(wrongSecret.json().error.type, "invalid_request_error");
      assert.equal(wrongSecret.json().error.param, "Stripe-Signature");

      const stale = await sendStripeEvent(api, ws, secret, event, { now, signedAt: now - 6 * MINUTE_MS });
      assert.equal(stale.statusCode, 400, stale.body);
      assert.match(stale.json().error.message, /tolerance/);

      // Signed over one text, another sent: the raw body is what is verified.
      const payload = JSON.stringify(event);
      const header = Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: Math.floor(now / 1000) });
      const tampered = await api.request({
        method: "POST",
        url: `/processor/stripe/${ws.slug}`,
        headers: { "content-type": "application/json", "stripe-signature": header },
        payload: payload.replace('"amount_total":4900', '"amount_total":1'),
      });
      assert.equal(tampered.statusCode, 400, tampered.body);
      const unsigned = await api.request({ method: "POST", url: `/processor/stripe/${ws.slug}`, headers: { "content-type": "application/json" }, payload });
      assert.equal(unsigned.statusCode, 400, unsigned.body);

      assert.deepEqual(await emittedEvents(services, ws), []);
      const licences = await services.db.selectFrom("licences").select("id").where("workspace_id", "=", ws.workspaceId).execute();
      assert.equal(licences.length, 0);

      // Signed 4 minutes ago (within Stripe's five-minute tolerance, by the injected clock): applied.
      const fine = await sendStripeEvent(api, ws, secret, event, { now, signedAt: now - 4 * MINUTE_MS });
      assert.equal(fine.statusCode, 200, fine.body);
      assert.deepEqual(fine.json(), { received: true, outcome: "applied" });
      assert.equal((await emittedEvents(services, ws)).length, 1);
    });

    test("the same Stripe event delivered again is acknowledged and applied once", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      const secret = await connectTestStripe(services, ws);
      const now = clock.now();
      const event = stripeEvent(
        "checkout.session.completed",
        paymentSession({ email: "ada@example.com", metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" }, now }),
        { now },
      );
      assert.equal(await deliver(api, ws, secret, event, now), "applied");
      clock.advance(MINUTE_MS);
      assert.equal(await deliver(api, ws, secret, event, clock.now()), "duplicate");
      // Another event about the same checkout (Stripe may report it twice under new ids) creates nothing either.
      assert.equal(await deliver(api, ws, secret, { ...event, id: stripeId("evt") }, clock.now()), "applied");
      const licences = await services.db.selectFrom("licences").select("id").where("workspace_id", "=", ws.workspaceId).execute();
      assert.equal(licences.length, 1);
      assert.equal((await emittedEvents(services, ws)).length, 1);
    });

    test("an event far above the API's 16 KiB body limit is taken: Stripe's objects run to tens of kilobytes", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      const secret = await connectTestStripe(services, ws);
      const now = clock.now();
      const session = paymentSession({ email: "ada@example.com", metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" }, now });
      const bulky = { ...session, custom_text: { submit: { message: "x".repeat(200 * 1024) } } };
      assert.equal(await deliver(api, ws, secret, stripeEvent("checkout.session.completed", bulky, { now }), now), "applied");
    });

    test("livemode picks the environment and its secret; an environment not connected answers 400", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      const testSecret = await connectTestStripe(services, ws, "test");
      const now = clock.now();
      const live = stripeEvent(
        "checkout.session.completed",
        paymentSession({ email: "ada@example.com", metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" }, now }),
        { now, livemode: true },
      );
      const notConnected = await sendStripeEvent(api, ws, testSecret, live, { now });
      assert.equal(notConnected.statusCode, 400, notConnected.body);
      assert.equal(notConnected.json().error.param, "livemode");

      const liveSecret = await connectTestStripe(services, ws, "live");
      // Signed with the test secret: the live one is what verifies a live event.
      assert.equal((await sendStripeEvent(api, ws, testSecret, live, { now })).statusCode, 400);
      assert.equal(await deliver(api, ws, liveSecret, live, now), "applied");
      const [purchase] = await emittedEvents(services, ws, "live");
      assert.equal(purchase?.livemode, true);
      assert.deepEqual(await emittedEvents(services, ws, "test"), []);
    });

    test("an unknown workspace answers 404; a body that is not JSON answers 400", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      const secret = await connectTestStripe(services, ws);
      const event = stripeEvent("customer.created", { id: "cus_1", object: "customer" }, { now: clock.now() });
      const missing = await sendStripeEvent(api, { ...ws, slug: "no-such-workspace" }, secret, event, { now: clock.now() });
      assert.equal(missing.statusCode, 404, missing.body);
      const garbage = await api.request({
        method: "POST",
        url: `/processor/stripe/${ws.slug}`,
        headers: { "content-type": "application/json", "stripe-signature": "t=1,v1=00" },
        payload: "{not json",
      });
      assert.equal(garbage.statusCode, 400, garbage.body);
    });

    test("events Warden does not use, and purchases without Warden's metadata, are acknowledged and recorded with the reason", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      const secret = await connectTestStripe(services, ws);
      const now = clock.now();
      const other = stripeEvent("customer.created", { id: "cus_1", object: "customer" }, { now });
      assert.equal(await deliver(api, ws, secret, other, now), "ignored");
      const foreign = stripeEvent("checkout.session.completed", paymentSession({ email: "ada@example.com", metadata: {}, now }), { now });
      assert.equal(await deliver(api, ws, secret, foreign, now), "ignored");
      const badPlan = stripeEvent(
        "checkout.session.completed",
        paymentSession({ email: "ada@example.com", metadata: { warden_tool: "tabmaster", warden_plan: "monthly" }, now }),
        {
          now,
        },
      );
      assert.equal(await deliver(api, ws, secret, badPlan, now), "ignored");
      const rows = await services.db.selectFrom("stripe_events").select(["id", "outcome", "reason"]).where("workspace_id", "=", ws.workspaceId).execute();
      const reasons = new Map(rows.map((r) => [r.id, r.reason]));
      assert.match(String(reasons.get(other.id)), /does not use customer.created/);
      assert.match(String(reasons.get(foreign.id)), /no warden_tool or warden_bundle/);
      assert.match(String(reasons.get(badPlan.id)), /billed subscription/);
      assert.deepEqual(await emittedEvents(services, ws), []);
    });

    test("the connection keeps the secrets sealed, and a reconnection without a key keeps the stored key", async () => {
      const { services } = await testServices(dialect);
      const ws = await seedCatalogue(services);
      const { connectStripe } = await import("./stripe-account.service.js");
      const first = await connectStripe(services, { workspace: ws.slug, env: "test", webhookSecret: "whsec_first0000000", secretKey: "sk_test_abcdefgh123" });
      assert.deepEqual(first, { workspace: ws.slug, env: "test", webhook_path: `/processor/stripe/${ws.slug}`, secret_key: true });
      const second = await connectStripe(services, { workspace: ws.slug, env: "test", webhookSecret: "whsec_second000000" });
      assert.equal(second.secret_key, true);
      const stored = await findStripeAccount(services.db, ws.workspaceId, "test");
      assert.ok(stored?.secretKeySealed);
      assert.ok(!stored.webhookSecretSealed.includes("whsec_"));
      assert.equal(services.secretBox.open(stored.webhookSecretSealed), "whsec_second000000");
      assert.equal(services.secretBox.open(stored.secretKeySealed), "sk_test_abcdefgh123");
      await assert.rejects(
        connectStripe(services, { workspace: ws.slug, env: "live", webhookSecret: "whsec_live0000000", secretKey: "sk_test_abcdefgh123" }),
        /live mode key/,
      );
      await assert.rejects(connectStripe(services, { workspace: ws.slug, env: "test", webhookSecret: "not-a-secret" }), /whsec_/);
    });
  });
}
