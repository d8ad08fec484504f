import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { DIALECTS, seedWorkspace, type TestApi, testApi, testServices } from "../test-support/harness.js";
import { answer, startReceiver, testWorker } from "../test-support/webhooks.js";
import type { Delivery, WebhookEndpoint } from "./webhook.schema.js";

// Editing and removing an endpoint, a test event for one endpoint, and recovery of the
// deliveries still being retried: what the dashboard's endpoint page calls, through the API.

const errorOf = (response: LightMyRequestResponse) => (response.json() as { error: { type: string; param?: string; message: string } }).error;

async function addEndpoint(api: TestApi, key: string, payload: object): Promise<WebhookEndpoint> {
  const response = await api.request({ method: "POST", url: "/api/v1/webhooks/endpoints", key, payload });
  assert.equal(response.statusCode, 201, response.body);
  return (response.json() as { endpoint: WebhookEndpoint }).endpoint;
}

const patch = (api: TestApi, key: string, id: string, payload: object) =>
  api.request({ method: "PATCH", url: `/api/v1/webhooks/endpoints/${id}`, key, payload });

async function deliveriesOf(api: TestApi, key: string, endpoint: string): Promise<Delivery[]> {
  const response = await api.request({ url: `/api/v1/webhooks/deliveries?limit=100&endpoint=${endpoint}`, key });
  assert.equal(response.statusCode, 200, response.body);
  return (response.json() as { data: Delivery[] }).data;
}

for (const dialect of DIALECTS) {
  describe(`editing and removing an endpoint (${dialect})`, () => {
    test("PATCH changes the URL, the event types and the description; what is absent stays; events null is every type", async () => {
      const { services } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const added = await addEndpoint(api, ws.testKey, { url: "https://a.example.com/hook", events: ["payment.refunded"], description: "  Fulfilment  " });
      assert.equal(added.description, "Fulfilment");

      const edited = await patch(api, ws.testKey, added.id, { url: "https://b.example.com/hook", events: ["dispute.closed", "payment.disputed"] });
      assert.equal(edited.statusCode, 200, edited.body);
      assert.deepEqual(
        { ...(edited.json() as WebhookEndpoint) },
        { ...added, url: "https://b.example.com/hook", events: ["dispute.closed", "payment.disputed"] },
      );
      const all = await patch(api, ws.testKey, added.id, { events: null, description: "" });
      assert.deepEqual([(all.json() as WebhookEndpoint).events, (all.json() as WebhookEndpoint).description], [null, null]);
      const stored = (await api.request({ url: `/api/v1/webhooks/endpoints/${added.id}`, key: ws.testKey })).json() as WebhookEndpoint;
      assert.deepEqual([stored.url, stored.events, stored.description], ["https://b.example.com/hook", null, null]);
    });

    test("PATCH re-checks the URL as when adding (private hosts, scheme), refuses unknown types and empty bodies", async () => {
      const { services } = await testServices(dialect, { WARDEN_ALLOW_PRIVATE_WEBHOOKS: "0" });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const added = await addEndpoint(api, ws.testKey, { url: "https://a.example.com/hook" });
      for (const [payload, param] of [
        [{ url: "http://169.254.169.254/latest/meta-data" }, "url"],
        [{ url: "http://localhost:8080/" }, "url"],
        [{ url: "ftp://a.example.com/" }, "url"],
        [{ url: "https://user:pw@a.example.com/" }, "url"],
        [{ events: ["payment.refund"] }, "events"],
        [{ description: "x".repeat(501) }, "description"],
      ] as const) {
        const refused = await patch(api, ws.testKey, added.id, payload);
        assert.equal(refused.statusCode, 400, JSON.stringify(payload));
        assert.equal(errorOf(refused).param, param, JSON.stringify(payload));
      }
      assert.equal((await patch(api, ws.testKey, added.id, {})).statusCode, 400);
      const unchanged = (await api.request({ url: `/api/v1/webhooks/endpoints/${added.id}`, key: ws.testKey })).json() as WebhookEndpoint;
      assert.deepEqual(unchanged, added);
    });

    test("another workspace's endpoint, or the other environment's, is 404 to PATCH and DELETE and stays as it was", async () => {
      const { services } = await testServices(dialect);
      const ours = await seedWorkspace(services);
      const theirs = await seedWorkspace(services);
      const api = await testApi(services);
      const added = await addEndpoint(api, theirs.testKey, { url: "https://theirs.example.com/hook" });
      for (const key of [ours.testKey, theirs.liveKey]) {
        assert.equal((await patch(api, key, added.id, { url: "https://evil.example.com/" })).statusCode, 404);
        assert.equal((await api.request({ method: "DELETE", url: `/api/v1/webhooks/endpoints/${added.id}`, key })).statusCode, 404);
      }
      const still = (await api.request({ url: `/api/v1/webhooks/endpoints/${added.id}`, key: theirs.testKey })).json() as WebhookEndpoint;
      assert.deepEqual(still, added);
    });

    test("DELETE fails the waiting deliveries and keeps them in the log; the endpoint is then 404", async () => {
      const { services, clock } = await testServices(dialect);
      clock.set(Date.now());
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const receiver = await startReceiver(answer(500));
      const added = await addEndpoint(api, ws.testKey, { url: receiver.url });
      await api.request({ method: "POST", url: "/api/v1/webhooks/examples", key: ws.testKey, payload: { type: "payment.refunded" } });
      await testWorker(services).drain();
      assert.equal((await deliveriesOf(api, ws.testKey, added.id))[0]?.status, "pending");
      assert.equal((await api.request({ method: "DELETE", url: `/api/v1/webhooks/endpoints/${added.id}`, key: ws.testKey })).statusCode, 200);
      const kept = await deliveriesOf(api, ws.testKey, added.id);
      assert.deepEqual(
        kept.map((d) => [d.status, d.attempts.length]),
        [["failed", 1]],
      );
      assert.equal((await api.request({ url: `/api/v1/webhooks/endpoints/${added.id}`, key: ws.testKey })).statusCode, 404);
      assert.equal((await patch(api, ws.testKey, added.id, { description: "back?" })).statusCode, 404);
    });
  });

  describe(`a test event for one endpoint (${dialect})`, () => {
    test("with endpoint, the example goes to that endpoint only; it must be enabled and listen for the type", async () => {
      const { services, clock } = await testServices(dialect);
      clock.set(Date.now());
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const mine = await startReceiver();
      const other = await startReceiver();
      const purchases = await addEndpoint(api, ws.testKey, { url: mine.url, events: ["purchase.completed"] });
      await addEndpoint(api, ws.testKey, { url: other.url });
      const send = (payload: object) => api.request({ method: "POST", url: "/api/v1/webhooks/examples", key: ws.testKey, payload });

      const sent = await send({ type: "purchase.completed", endpoint: purchases.id });
      assert.equal(sent.statusCode, 202, sent.body);
      assert.equal((sent.json() as { deliveries: number }).deliveries, 1);
      await testWorker(services).drain();
      assert.deepEqual([mine.received.length, other.received.length], [1, 0]);

      const wrongType = await send({ type: "subscription.started", endpoint: purchases.id });
      assert.deepEqual([wrongType.statusCode, errorOf(wrongType).param], [400, "type"]);
      const theirs = await seedWorkspace(services);
      const foreign = await api.request({
        method: "POST",
        url: "/api/v1/webhooks/examples",
        key: theirs.testKey,
        payload: { type: "purchase.completed", endpoint: purchases.id },
      });
      assert.equal(foreign.statusCode, 404);
      await api.request({ method: "POST", url: `/api/v1/webhooks/endpoints/${purchases.id}/disable`, key: ws.testKey });
      const disabled = await send({ type: "purchase.completed", endpoint: purchases.id });
      assert.deepEqual([disabled.statusCode, errorOf(disabled).param], [400, "endpoint"]);

      // Without endpoint: every enabled endpoint, as documented (the CLI's behaviour).
      const everyone = await send({ type: "payment.refunded" });
      assert.equal((everyone.json() as { deliveries: number }).deliveries, 1);
    });
  });

  describe(`recovering deliveries still being retried (${dialect})`, () => {
    test("recoverable counts failed and retrying apart; include_retrying attempts both, keeping the retry schedule", async () => {
      const { services, clock } = await testServices(dialect);
      clock.set(Date.now());
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const receiver = await startReceiver(answer(500));
      const added = await addEndpoint(api, ws.testKey, { url: receiver.url });
      const worker = testWorker(services);
      const send = (type: string) => api.request({ method: "POST", url: "/api/v1/webhooks/examples", key: ws.testKey, payload: { type } });
      // One failed (disabled meanwhile), then two retrying.
      await send("payment.refunded");
      await worker.drain();
      await api.request({ method: "POST", url: `/api/v1/webhooks/endpoints/${added.id}/disable`, key: ws.testKey });
      await api.request({ method: "POST", url: `/api/v1/webhooks/endpoints/${added.id}/enable`, key: ws.testKey });
      await send("dispute.closed");
      await send("payment.disputed");
      // A worker leaves a failing endpoint alone for 5 s after a failure: each delivery gets its first attempt in turn.
      for (let i = 0; i < 5 && (await deliveriesOf(api, ws.testKey, added.id)).some((d) => d.attempts.length === 0); i++) {
        clock.advance(6_000);
        await testWorker(services).drain();
      }
      const before = await deliveriesOf(api, ws.testKey, added.id);
      assert.deepEqual(before.map((d) => d.status).sort(), ["failed", "pending", "pending"]);

      const counts = await api.request({ url: `/api/v1/webhooks/endpoints/${added.id}/recoverable`, key: ws.testKey });
      assert.deepEqual(counts.json(), { hour: 1, day: 1, week: 1, month: 1, retrying: { hour: 2, day: 2, week: 2, month: 2 } });

      const onlyFailed = await api.request({
        method: "POST",
        url: `/api/v1/webhooks/endpoints/${added.id}/recover`,
        key: ws.testKey,
        payload: { since: "day" },
      });
      assert.deepEqual(onlyFailed.json(), { queued: 1 });
      await testWorker(services).drain();
      const both = await api.request({
        method: "POST",
        url: `/api/v1/webhooks/endpoints/${added.id}/recover`,
        key: ws.testKey,
        payload: { since: "day", include_retrying: true },
      });
      assert.deepEqual(both.json(), { queued: 3 });
      const retryAt = new Map(before.filter((d) => d.status === "pending").map((d) => [d.id, d.next_attempt_at]));
      await testWorker(services).drain();
      for (const d of await deliveriesOf(api, ws.testKey, added.id)) {
        if (!retryAt.has(d.id)) continue;
        // A manual attempt now that failed: still pending, at the retry its schedule had planned.
        assert.deepEqual([d.status, d.next_attempt_at, d.attempts.at(-1)?.manual], ["pending", retryAt.get(d.id), true]);
      }
    });
  });
}
