// Rotating an endpoint's signing secret (webhook.service.ts rotateSecret, the worker's
// signingSecrets): for 24 hours every delivery carries the new and the old signature,
// then only the new one. Receivers check with the two libraries vendors use, against
// their own clock, so the test clock is set around the real time: rotated 2 minutes less
// than a day ago, a delivery now is inside the overlap, one 3 minutes from now is past
// it, and both timestamps are within the libraries' 5 minutes.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { Webhook as SvixWebhook } from "svix";
import { DAY_MS, MINUTE_MS, toIso } from "../clock.js";
import { emitEvent } from "../events/event.service.js";
import { exampleEvent } from "../events/examples.js";
import type { Services } from "../services.js";
import { DIALECTS, seedWorkspace, type TestApi, testApi, testServices, type Workspace } from "../test-support/harness.js";
import { answer, type ReceivedRequest, startReceiver, testWorker } from "../test-support/webhooks.js";
import type { WebhookEndpoint } from "./webhook.schema.js";

interface Rotated {
  secret: string;
  previous_secret_expires_at: string;
}

async function addEndpoint(api: TestApi, key: string, url: string): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  const response = await api.request({ method: "POST", url: "/api/v1/webhooks/endpoints", key, payload: { url } });
  assert.equal(response.statusCode, 201, response.body);
  return response.json() as { endpoint: WebhookEndpoint; secret: string };
}

async function rotate(api: TestApi, key: string, id: string): Promise<Rotated> {
  const response = await api.request({ method: "POST", url: `/api/v1/webhooks/endpoints/${id}/secret/rotate`, key });
  assert.equal(response.statusCode, 200, response.body);
  return response.json() as Rotated;
}

async function emit(services: Services, ws: Workspace): Promise<string> {
  const example = exampleEvent("payment.refunded", { livemode: false, now: services.clock.now() });
  await services.db.transaction().execute((trx) =>
    emitEvent(trx, {
      workspaceId: ws.workspaceId,
      env: "test",
      id: example.id,
      type: "payment.refunded",
      data: example.data,
      createdAt: services.clock.now(),
    }),
  );
  return example.id;
}

const headersOf = (request: ReceivedRequest) =>
  Object.fromEntries(["webhook-id", "webhook-timestamp", "webhook-signature"].map((name) => [name, String(request.headers[name])]));

/** Which of `secrets` verify the request, by each receiver library. */
function verifiedBy(request: ReceivedRequest, secrets: Record<string, string>): Record<string, string[]> {
  const result: Record<string, string[]> = {};
  for (const Webhook of [StandardWebhook, SvixWebhook]) {
    const name = Webhook === StandardWebhook ? "standardwebhooks" : "svix";
    result[name] = Object.entries(secrets)
      .filter(([, secret]) => {
        try {
          new Webhook(secret).verify(request.body, headersOf(request));
          return true;
        } catch (error) {
          // Only a signature mismatch is an answer here; a stale timestamp would be the test's fault.
          assert.match(String(error), /signature/i);
          return false;
        }
      })
      .map(([label]) => label);
  }
  return result;
}

const bothLibraries = (labels: string[]) => ({ standardwebhooks: labels, svix: labels });

for (const dialect of DIALECTS) {
  describe(`signing secret rotation (${dialect})`, () => {
    test("for 24 hours every attempt is signed with the new and the old secret, then with the new one alone", async () => {
      const { services, clock } = await testServices(dialect);
      const realNow = Date.now();
      const rotatedAt = realNow - DAY_MS + 2 * MINUTE_MS;
      clock.set(rotatedAt);
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const receiver = await startReceiver(answer(500, "not yet"));
      const { endpoint, secret: old } = await addEndpoint(api, ws.testKey, receiver.url);
      const other = (await addEndpoint(api, ws.testKey, "https://hooks.example.com/other")).secret;

      const rotated = await rotate(api, ws.testKey, endpoint.id);
      assert.match(rotated.secret, /^whsec_[A-Za-z0-9+/]{32}$/);
      assert.notEqual(rotated.secret, old);
      assert.equal(rotated.previous_secret_expires_at, toIso(rotatedAt + DAY_MS));
      const shown = await api.request({ url: `/api/v1/webhooks/endpoints/${endpoint.id}`, key: ws.testKey });
      assert.equal((shown.json() as WebhookEndpoint).previous_secret_expires_at, rotated.previous_secret_expires_at);
      const revealed = await api.request({ url: `/api/v1/webhooks/endpoints/${endpoint.id}/secret`, key: ws.testKey });
      assert.deepEqual(revealed.json(), { secret: rotated.secret }, "the new secret is the endpoint's secret");

      // Both sealed at rest, the old one with its expiry.
      const row = await services.db.selectFrom("webhook_endpoints").selectAll().where("id", "=", endpoint.id).executeTakeFirstOrThrow();
      for (const secret of [old, rotated.secret]) {
        const key = secret.slice("whsec_".length);
        for (const value of Object.values(row)) assert.ok(!String(value).includes(key), "a secret in clear in the row");
      }
      assert.equal(services.secretBox.open(row.secret_sealed), rotated.secret);
      assert.equal(services.secretBox.open(String(row.previous_secret_sealed)), old);
      assert.equal(Number(row.previous_secret_expires_at), rotatedAt + DAY_MS);

      // Inside the overlap: two v1 entries in the one header; either secret verifies, in both libraries.
      clock.set(realNow);
      await emit(services, ws);
      await testWorker(services).drain();
      const [during] = receiver.received;
      assert.ok(during);
      assert.match(String(during.headers["webhook-signature"]), /^v1,[A-Za-z0-9+/]{43}= v1,[A-Za-z0-9+/]{43}=$/);
      assert.deepEqual(verifiedBy(during, { old, new: rotated.secret, other }), bothLibraries(["old", "new"]));

      // The retry of the same delivery, attempted once the old secret has expired (the
      // attempt's time decides, not the event's): the new signature alone.
      receiver.handle = answer(200, "ok");
      clock.set(rotatedAt + DAY_MS);
      await testWorker(services).drain();
      const after = receiver.received[1];
      assert.ok(after);
      assert.equal(after.headers["webhook-id"], during.headers["webhook-id"]);
      assert.match(String(after.headers["webhook-signature"]), /^v1,[A-Za-z0-9+/]{43}=$/);
      assert.deepEqual(verifiedBy(after, { old, new: rotated.secret, other }), bothLibraries(["new"]));
      // And for new events; the endpoint no longer mentions the old secret, though the row still holds it.
      clock.set(rotatedAt + DAY_MS + MINUTE_MS);
      await emit(services, ws);
      await testWorker(services).drain();
      const later = receiver.received[2];
      assert.ok(later);
      assert.deepEqual(verifiedBy(later, { old, new: rotated.secret }), bothLibraries(["new"]));
      const now = await api.request({ url: `/api/v1/webhooks/endpoints/${endpoint.id}`, key: ws.testKey });
      assert.equal((now.json() as WebhookEndpoint).previous_secret_expires_at, null);
    });

    test("rotating twice within 24 hours drops the oldest secret; the one replaced signs for a fresh 24 hours", async () => {
      const { services, clock } = await testServices(dialect);
      const realNow = Date.now();
      clock.set(realNow - 2 * 60 * MINUTE_MS);
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const receiver = await startReceiver();
      const { endpoint, secret: first } = await addEndpoint(api, ws.testKey, receiver.url);
      const second = (await rotate(api, ws.testKey, endpoint.id)).secret;
      clock.advance(60 * MINUTE_MS);
      const third = await rotate(api, ws.testKey, endpoint.id);
      assert.equal(third.previous_secret_expires_at, toIso(clock.now() + DAY_MS), "24 hours from the second rotation");

      clock.set(realNow);
      await emit(services, ws);
      await testWorker(services).drain();
      const [request] = receiver.received;
      assert.ok(request);
      assert.equal(String(request.headers["webhook-signature"]).split(" ").length, 2);
      assert.deepEqual(verifiedBy(request, { first, second, third: third.secret }), bothLibraries(["second", "third"]));
    });

    test("two rotations at once: each answered secret signs, one as the current, one as the previous", async () => {
      const { services, clock } = await testServices(dialect);
      clock.set(Date.now());
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const receiver = await startReceiver();
      const { endpoint } = await addEndpoint(api, ws.testKey, receiver.url);
      const answered = await Promise.all([rotate(api, ws.testKey, endpoint.id), rotate(api, ws.testKey, endpoint.id)]);
      await emit(services, ws);
      await testWorker(services).drain();
      const [request] = receiver.received;
      assert.ok(request);
      assert.deepEqual(verifiedBy(request, { a: answered[0].secret, b: answered[1].secret }), bothLibraries(["a", "b"]));
    });

    test("another workspace's, another environment's or a removed endpoint cannot be rotated, and nothing changes", async () => {
      const { services } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const theirs = await seedWorkspace(services);
      const api = await testApi(services);
      const { endpoint, secret } = await addEndpoint(api, ws.testKey, "https://hooks.example.com/mine");
      const removed = await addEndpoint(api, ws.testKey, "https://hooks.example.com/removed");
      await api.request({ method: "DELETE", url: `/api/v1/webhooks/endpoints/${removed.endpoint.id}`, key: ws.testKey });
      for (const [key, id] of [
        [theirs.testKey, endpoint.id],
        [ws.liveKey, endpoint.id],
        [ws.testKey, removed.endpoint.id],
        [ws.testKey, "ep_000000000000000000000000"],
      ] as const) {
        const response = await api.request({ method: "POST", url: `/api/v1/webhooks/endpoints/${id}/secret/rotate`, key });
        assert.equal(response.statusCode, 404, response.body);
        assert.equal((response.json() as { error: { type: string } }).error.type, "not_found");
      }
      const revealed = await api.request({ url: `/api/v1/webhooks/endpoints/${endpoint.id}/secret`, key: ws.testKey });
      assert.deepEqual(revealed.json(), { secret });
      const row = await services.db
        .selectFrom("webhook_endpoints")
        .select(["previous_secret_sealed", "previous_secret_expires_at"])
        .where("id", "in", [endpoint.id, removed.endpoint.id])
        .execute();
      assert.deepEqual(row, [
        { previous_secret_sealed: null, previous_secret_expires_at: null },
        { previous_secret_sealed: null, previous_secret_expires_at: null },
      ]);
      // The API key's own actions are not owners' actions: nothing is audited.
      await rotate(api, ws.testKey, endpoint.id);
      assert.equal((await services.db.selectFrom("audit_log").select("id").where("subject", "=", endpoint.id).execute()).length, 0);
    });
  });
}
