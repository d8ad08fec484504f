// SIGKILL at random moments, then start again on the same database and count. Two
// promises: no event is lost (each reaches a local receiver at least once) and each
// Stripe payment becomes exactly one licence and one purchase.completed event, however
// often Stripe's delivery of it is cut short and sent again.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import Stripe from "stripe";
import { DIALECTS, seedCatalogue, seedWorkspace } from "../src/test-support/harness.js";
import { connectTestStripe, paymentSession, stripeEvent, stripeId } from "../src/test-support/stripe.js";
import { startReceiver } from "../src/test-support/webhooks.js";
import { bySize, http, inFlight, recordFigures, type SharedDatabase, sharedDatabase } from "./fault-support.js";

const KILLS = bySize({ smoke: 1, default: 5, large: 20 });
const PAYMENTS = bySize({ smoke: 20, default: 100, large: 400 });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const randomBetween = (min: number, max: number) => min + Math.floor(Math.random() * (max - min));

const ENV = {
  WARDEN_ALLOW_PRIVATE_WEBHOOKS: "1",
  // A claim held by a killed process is taken over after this long.
  WARDEN_DELIVERY_LEASE_MS: "1500",
  WARDEN_LIMIT_EXAMPLE_EVENTS_PER_DAY: "100000",
  WARDEN_LIMIT_KEY_REQUESTS_PER_MIN: "100000",
};

const baseUrl = (shared: SharedDatabase) => {
  const server = shared.servers[0];
  assert.ok(server);
  return server.baseUrl;
};

/** Ids of the events written for the workspace: what must arrive. */
async function eventIds(shared: SharedDatabase, workspaceId: string, type?: string): Promise<string[]> {
  let query = shared.services.db.selectFrom("events").select("id").where("workspace_id", "=", workspaceId);
  if (type) query = query.where("type", "=", type);
  return (await query.execute()).map((row) => row.id);
}

for (const dialect of DIALECTS) {
  describe(`SIGKILL and restart (${dialect})`, () => {
    test(`${KILLS} kills at random moments of delivery: every event delivered at least once`, async () => {
      const shared = await sharedDatabase(dialect, 1, ENV);
      const ws = await seedWorkspace(shared.services);
      const receiver = await startReceiver(async (_request, response) => {
        await sleep(randomBetween(0, 60));
        response.end("ok");
      });
      const endpoint = await http(baseUrl(shared), "POST", "/api/v1/webhooks/endpoints", { key: ws.testKey, body: { url: receiver.url } });
      assert.equal(endpoint.status, 201, endpoint.body);

      let unanswered = 0;
      const emit = () => http(baseUrl(shared), "POST", "/api/v1/webhooks/examples", { key: ws.testKey, body: { type: "payment.refunded" } });
      for (let kill = 0; kill < KILLS; kill++) {
        // A backlog first, so that the kill finds deliveries under way.
        await inFlight(Array.from({ length: 15 }, () => emit));
        // Events keep being made while the process dies: an emit cut short may or may not have committed.
        let emitting = true;
        const emitter = (async () => {
          while (emitting) {
            try {
              await emit();
            } catch {
              unanswered++;
              return;
            }
          }
        })();
        await sleep(randomBetween(100, 900));
        await shared.killAll();
        emitting = false;
        await emitter;
        await shared.restart();
      }
      const expected = await eventIds(shared, ws.workspaceId);
      const arrived = () => new Set(receiver.ids());
      try {
        await receiver.waitFor(() => expected.every((id) => arrived().has(id)), 60_000);
      } catch {
        // Counted below.
      }
      const lost = expected.filter((id) => !arrived().has(id));
      const duplicates = receiver.ids().length - arrived().size;
      recordFigures(`kill-delivery-${dialect}`, { kills: KILLS, events: expected.length, lost: lost.length, duplicates, unansweredEmits: unanswered });
      assert.ok(expected.length > KILLS, `events were made (${expected.length})`);
      assert.deepEqual(lost, [], `${lost.length} of ${expected.length} events never arrived`);
    });

    test(`${KILLS} kills at random moments of Stripe ingest of ${PAYMENTS} payments, every delivery replayed: one licence and one purchase event each`, async () => {
      const shared = await sharedDatabase(dialect, 1, ENV);
      const ws = await seedCatalogue(shared.services);
      const secret = await connectTestStripe(shared.services, ws);
      const receiver = await startReceiver();
      const endpoint = await http(baseUrl(shared), "POST", "/api/v1/webhooks/endpoints", { key: ws.testKey, body: { url: receiver.url } });
      assert.equal(endpoint.status, 201, endpoint.body);

      const payments = Array.from({ length: PAYMENTS }, (_, i) => {
        const paymentIntent = stripeId("pi");
        const session = paymentSession({
          email: `buyer-${i}-${ws.slug}@example.com`,
          metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" },
          paymentIntent,
          now: Date.now(),
        });
        return { paymentIntent, payload: JSON.stringify(stripeEvent("checkout.session.completed", session, { now: Date.now() })) };
      });
      // Stripe sends again what was not acknowledged; here everything is sent again, acknowledged or not.
      const sendAll = () =>
        inFlight(
          payments.map((p) => async () => {
            const signature = Stripe.webhooks.generateTestHeaderString({ payload: p.payload, secret });
            try {
              const r = await http(baseUrl(shared), "POST", `/processor/stripe/${ws.slug}`, {
                body: p.payload,
                headers: { "content-type": "application/json", "stripe-signature": signature },
              });
              return r.status;
            } catch {
              return 0;
            }
          }),
          8,
        );
      for (let kill = 0; kill < KILLS; kill++) {
        const sending = sendAll();
        await sleep(randomBetween(50, 700));
        await shared.killAll();
        await sending;
        await shared.restart();
      }
      const finalStatuses = await sendAll();
      assert.deepEqual(
        finalStatuses.filter((s) => s !== 200),
        [],
        "the last replay, with the server up, is acknowledged",
      );

      const licences = await shared.services.db.selectFrom("licences").select(["payment_intent"]).where("workspace_id", "=", ws.workspaceId).execute();
      const perPayment = new Map<string, number>();
      for (const l of licences) perPayment.set(String(l.payment_intent), (perPayment.get(String(l.payment_intent)) ?? 0) + 1);
      const missingLicences = payments.filter((p) => !perPayment.has(p.paymentIntent)).length;
      const duplicateLicences = [...perPayment.values()].filter((n) => n > 1).length;
      const purchases = await eventIds(shared, ws.workspaceId, "purchase.completed");
      const arrived = () => new Set(receiver.ids());
      try {
        await receiver.waitFor(() => purchases.every((id) => arrived().has(id)), 60_000);
      } catch {
        // Counted below.
      }
      const lost = purchases.filter((id) => !arrived().has(id)).length;
      recordFigures(`kill-stripe-${dialect}`, {
        kills: KILLS,
        payments: PAYMENTS,
        licences: licences.length,
        missingLicences,
        duplicateLicences,
        purchaseEvents: purchases.length,
        eventsLost: lost,
      });
      assert.equal(missingLicences, 0, "payments without a licence");
      assert.equal(duplicateLicences, 0, "payments with more than one licence");
      assert.equal(licences.length, PAYMENTS);
      assert.equal(purchases.length, PAYMENTS, "one purchase.completed event per payment");
      assert.equal(lost, 0, "purchase events never delivered");
    });
  });
}
