import assert from "node:assert/strict";
import type { ServerResponse } from "node:http";
import { describe, test } from "node:test";
import { sql } from "kysely";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { Webhook as SvixWebhook } from "svix";
import { MINUTE_MS, toIso } from "../clock.js";
import { emitEvent } from "../events/event.service.js";
import { EVENT_TYPES, type EventType } from "../events/event-types.js";
import { exampleEvent } from "../events/examples.js";
import { newId } from "../ids.js";
import type { Services } from "../services.js";
import { DIALECTS, seedWorkspace, type TestApi, testApi, testServices, type Workspace } from "../test-support/harness.js";
import { answer, emitExample, type Handler, type ReceivedRequest, startReceiver, testWorker } from "../test-support/webhooks.js";
import { type AttemptOutcome, claimDueDeliveries, type DueEndpoint, findDueEndpoints, recordAttempts, releaseLeases, renewLease } from "./delivery.store.js";
import { setEndpointEnabled } from "./endpoint.store.js";
import { postWebhook } from "./sender.js";
import type { Delivery, WebhookEndpoint } from "./webhook.schema.js";

const SECOND_MS = 1000;
const HOUR_MS = 60 * MINUTE_MS;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function setup(dialect: (typeof DIALECTS)[number]) {
  const env = await testServices(dialect);
  // Receivers verify the signature's timestamp against their own clock.
  env.clock.set(Date.now());
  const ws = await seedWorkspace(env.services);
  const api = await testApi(env.services);
  return { ...env, ws, api };
}

async function addEndpoint(api: TestApi, key: string, url: string, events?: EventType[]): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
  const response = await api.request({ method: "POST", url: "/api/v1/webhooks/endpoints", key, payload: events ? { url, events } : { url } });
  assert.equal(response.statusCode, 201, response.body);
  return response.json() as { endpoint: WebhookEndpoint; secret: string };
}

/** Emits a realistic event of `type` now, in its own transaction; answers its id. */
const emit = (services: Services, ws: Workspace, type: EventType = "payment.refunded", data: Record<string, unknown> = {}) =>
  emitExample(services, ws, { type, data });

async function deliveriesOf(api: TestApi, key: string, query: string): Promise<Delivery[]> {
  const response = await api.request({ url: `/api/v1/webhooks/deliveries?limit=100&${query}`, key });
  assert.equal(response.statusCode, 200, response.body);
  return (response.json() as { data: Delivery[] }).data;
}

async function onlyDelivery(api: TestApi, key: string, eventId: string): Promise<Delivery> {
  const [delivery, ...more] = await deliveriesOf(api, key, `event=${eventId}`);
  assert.ok(delivery);
  assert.equal(more.length, 0);
  return delivery;
}

/** The worker that leases the endpoint, or null. */
async function leaseHolder(services: Services, endpointId: string): Promise<string | null> {
  const row = await services.db.selectFrom("endpoint_leases").select("locked_by").where("endpoint_id", "=", endpointId).executeTakeFirstOrThrow();
  return row.locked_by;
}

/** An attempt at a delivery by a worker, answered with `statusCode`: a success, or a failure retried in 5 s. */
function outcome(now: number, deliveryId: string, workerId: string, statusCode: number): AttemptOutcome {
  return {
    attempt: { id: newId("att"), deliveryId, attemptedAt: now, durationMs: 3, statusCode, responseBody: "", error: null, manual: false },
    workerId,
    ...(statusCode === 200
      ? { status: "succeeded" as const, nextAttemptAt: null, lastError: null }
      : { status: "pending" as const, nextAttemptAt: now + 5_000, lastError: `HTTP ${statusCode}` }),
  };
}

async function endpointOf(api: TestApi, key: string, id: string): Promise<WebhookEndpoint> {
  return (await api.request({ url: `/api/v1/webhooks/endpoints/${id}`, key })).json() as WebhookEndpoint;
}

function signedHeaders(request: ReceivedRequest): Record<string, string> {
  return Object.fromEntries(["webhook-id", "webhook-timestamp", "webhook-signature"].map((name) => [name, String(request.headers[name])]));
}

/** Holds every request open without answering (a receiver that hangs). */
function hang(held: ServerResponse[]): Handler {
  return (_request, response) => {
    held.push(response);
  };
}

for (const dialect of DIALECTS) {
  describe(`signed delivery (${dialect})`, () => {
    test("a real delivery verifies with standardwebhooks and svix and carries the stored body byte for byte", async () => {
      const { services, clock, ws, api } = await setup(dialect);
      const receiver = await startReceiver();
      const { secret } = await addEndpoint(api, ws.testKey, receiver.url);
      const other = await addEndpoint(api, ws.testKey, "https://hooks.example.com/other");
      const eventId = await emit(services, ws, "payment.refunded", { email: "zoë@exämple.com" });
      await testWorker(services).drain();

      const [request, ...more] = receiver.received;
      assert.ok(request);
      assert.equal(more.length, 0);
      const row = await services.db.selectFrom("events").select("body").where("id", "=", eventId).executeTakeFirstOrThrow();
      assert.ok(request.body.equals(Buffer.from(row.body, "utf8")), "the body sent is the stored body");
      assert.equal(request.method, "POST");
      assert.equal(request.headers["content-type"], "application/json");
      assert.equal(request.headers["content-length"], String(request.body.length));
      assert.equal(request.headers["webhook-id"], eventId);
      assert.equal(request.headers["webhook-timestamp"], String(Math.floor(clock.now() / 1000)));
      assert.match(String(request.headers["webhook-signature"]), /^v1,[A-Za-z0-9+/]{43}=$/);

      const expected = JSON.parse(row.body) as Record<string, unknown>;
      for (const Webhook of [StandardWebhook, SvixWebhook]) {
        const receiverSide = new Webhook(secret);
        assert.deepEqual(receiverSide.verify(request.body.toString("utf8"), signedHeaders(request)), expected);
        assert.deepEqual(receiverSide.verify(request.body, signedHeaders(request)), expected);
        const tampered = request.body.toString("utf8").replace('"amount":2900', '"amount":29000');
        assert.notEqual(tampered, request.body.toString("utf8"));
        assert.throws(() => receiverSide.verify(tampered, signedHeaders(request)), /signature/i, `${Webhook.name}: tampered body`);
        assert.throws(() => receiverSide.verify(request.body, { ...signedHeaders(request), "webhook-id": "evt_other" }), /signature/i);
        assert.throws(() => new Webhook(other.secret).verify(request.body, signedHeaders(request)), /signature/i, "another endpoint's secret");
      }

      // Signed with a timestamp six minutes old: refused. Four minutes: accepted.
      for (const [ageMs, valid] of [
        [6 * MINUTE_MS, false],
        [4 * MINUTE_MS, true],
      ] as const) {
        clock.set(Date.now() - ageMs);
        await emit(services, ws);
        await testWorker(services).drain();
        const late = receiver.received.at(-1) as ReceivedRequest;
        for (const Webhook of [StandardWebhook, SvixWebhook]) {
          const verify = () => new Webhook(secret).verify(late.body, signedHeaders(late));
          if (valid) verify();
          else assert.throws(verify, /timestamp too old/i, Webhook.name);
        }
      }
    });
  });

  describe(`durable delivery (${dialect})`, () => {
    test("an endpoint that chose some event types receives only those, in order of creation", async () => {
      const { services, ws, api } = await setup(dialect);
      const some = await startReceiver();
      const all = await startReceiver();
      await addEndpoint(api, ws.testKey, some.url, ["payment.refunded", "dispute.closed"]);
      await addEndpoint(api, ws.testKey, all.url);
      const ids = new Map<string, EventType>();
      for (const type of EVENT_TYPES) ids.set(await emit(services, ws, type), type);
      await testWorker(services).drain();
      const typesOf = (r: ReceivedRequest) => (JSON.parse(r.body.toString()) as { type: string }).type;
      assert.deepEqual(some.received.map(typesOf), ["payment.refunded", "dispute.closed"]);
      assert.deepEqual(all.received.map(typesOf), EVENT_TYPES);
      assert.deepEqual(all.ids(), [...ids.keys()]);
    });

    test("several events to one endpoint arrive in creation order, even within one millisecond", async () => {
      const { services, ws, api } = await setup(dialect);
      const receiver = await startReceiver();
      await addEndpoint(api, ws.testKey, receiver.url);
      const created: string[] = [];
      // Six in one transaction (one state change reporting several facts), six more alone,
      // all at the same clock reading.
      await services.db.transaction().execute(async (trx) => {
        for (const type of EVENT_TYPES) {
          const example = exampleEvent(type, { livemode: false, now: services.clock.now() });
          await emitEvent(trx, { workspaceId: ws.workspaceId, env: "test", id: example.id, type, data: example.data, createdAt: services.clock.now() });
          created.push(example.id);
        }
      });
      for (const type of EVENT_TYPES) created.push(await emit(services, ws, type));
      await testWorker(services).drain();
      assert.deepEqual(receiver.ids(), created);
    });

    test("a receiver that fails in every way then succeeds: retried on the schedule, every attempt logged", async () => {
      const { services, clock, ws, api } = await setup(dialect);
      const receiver = await startReceiver();
      const { endpoint } = await addEndpoint(api, ws.testKey, receiver.url);
      // Long enough that a loaded machine answers the other steps in time (a run on a busy
      // CI machine once took the 500 for a timeout at 300 ms).
      const worker = testWorker(services, { timeoutMs: 2_000 });
      const held: ServerResponse[] = [];
      const eventId = await emit(services, ws);
      const firstFailure = clock.now();

      // What the receiver does on each attempt, what the attempt logs (an error only when
      // there was no answer), and the delay the next attempt must follow.
      const steps: { before?: () => Promise<void>; handle: Handler; status: number | null; error: RegExp | null; delay?: [number, number] }[] = [
        { handle: answer(500, "boom"), status: 500, error: null, delay: [5 * SECOND_MS, 6 * SECOND_MS] },
        { before: () => receiver.stop(), handle: answer(200), status: null, error: /ECONNREFUSED/, delay: [5 * MINUTE_MS, 6 * MINUTE_MS] },
        { before: () => receiver.restart(), handle: hang(held), status: null, error: /timeout after 2000 ms/, delay: [30 * MINUTE_MS, 36 * MINUTE_MS] },
        // Retry-After lengthens (2.5 h after a 2 h step), to at most twice the step (10 h after 5 h)...
        { handle: answer(503, "", { "retry-after": "9000" }), status: 503, error: null, delay: [2.5 * HOUR_MS, 2.5 * HOUR_MS] },
        { handle: answer(429, "", { "retry-after": "86400" }), status: 429, error: null, delay: [10 * HOUR_MS, 10 * HOUR_MS] },
        // ...and never shortens.
        { handle: answer(429, "", { "retry-after": "1" }), status: 429, error: null, delay: [10 * HOUR_MS, 12 * HOUR_MS] },
        // A redirect is a failure and is not followed.
        { handle: answer(302, "", { location: `${receiver.url}/moved` }), status: 302, error: null, delay: [14 * HOUR_MS, 16.8 * HOUR_MS] },
        { handle: answer(200, "x".repeat(10 * 1024)), status: 200, error: null },
      ];
      let due = clock.now();
      for (const [index, step] of steps.entries()) {
        await step.before?.();
        receiver.handle = step.handle;
        if (index > 0) {
          // Not a moment early.
          clock.set(due - 1);
          await worker.drain();
          assert.equal((await onlyDelivery(api, ws.testKey, eventId)).attempts.length, index, `attempt ${index + 1} sent early`);
          clock.set(due);
        }
        await worker.drain();
        const delivery = await onlyDelivery(api, ws.testKey, eventId);
        assert.equal(delivery.attempts.length, index + 1, `attempt ${index + 1}`);
        const attempt = delivery.attempts[index];
        assert.ok(attempt);
        assert.equal(attempt.attempted_at, toIso(clock.now()));
        assert.equal(attempt.status_code, step.status, `attempt ${index + 1} status`);
        if (step.error) assert.match(attempt.error ?? "", step.error, `attempt ${index + 1} error`);
        else assert.equal(attempt.error, null);
        if (step.delay) {
          assert.equal(delivery.status, "pending");
          due = Date.parse(delivery.next_attempt_at ?? "");
          const [min, max] = step.delay;
          const delay = due - clock.now();
          assert.ok(delay >= min && delay <= max, `attempt ${index + 1}: next after ${delay} ms, expected ${min}..${max}`);
          const failing = await endpointOf(api, ws.testKey, endpoint.id);
          assert.deepEqual([failing.enabled, failing.failing_since], [true, toIso(firstFailure)]);
        }
      }
      for (const response of held) response.destroy();

      const delivery = await onlyDelivery(api, ws.testKey, eventId);
      assert.deepEqual([delivery.status, delivery.next_attempt_at], ["succeeded", null]);
      assert.deepEqual(
        delivery.attempts.map((a) => a.status_code),
        [500, null, null, 503, 429, 429, 302, 200],
      );
      const [failed500, refused, timedOut] = delivery.attempts;
      assert.equal(failed500?.response_body, "boom");
      assert.equal(refused?.response_body, null);
      assert.ok((timedOut?.duration_ms ?? 0) >= 1_900, `timeout attempt took ${timedOut?.duration_ms} ms`);
      const success = delivery.attempts.at(-1);
      assert.equal(success?.response_body, "x".repeat(4096), "the answer is cut to its first 4 KiB");
      for (const a of delivery.attempts) {
        assert.ok(Number.isInteger(a.duration_ms) && a.duration_ms >= 0);
        assert.equal(a.manual, false);
      }
      // Seven requests reached the receiver (the refused one did not), all with the event
      // id as webhook-id, each signed afresh with its own timestamp, none at the redirect.
      assert.equal(receiver.received.length, 7);
      assert.deepEqual(new Set(receiver.ids()), new Set([eventId]));
      assert.equal(new Set(receiver.received.map((r) => r.headers["webhook-timestamp"])).size, 7);
      assert.deepEqual(new Set(receiver.received.map((r) => `${r.method} ${r.path}`)), new Set(["POST /hook"]));

      const healthy = await endpointOf(api, ws.testKey, endpoint.id);
      assert.deepEqual([healthy.enabled, healthy.failing_since, healthy.last_success_at], [true, null, toIso(clock.now())]);
      assert.deepEqual(worker.errors, []);
    });

    test("after the tenth failed attempt, about 75.6 hours after the first, the delivery has failed", async () => {
      const { services, clock, ws, api } = await setup(dialect);
      const receiver = await startReceiver(answer(500));
      const { endpoint } = await addEndpoint(api, ws.testKey, receiver.url);
      const worker = testWorker(services);
      const eventId = await emit(services, ws);
      const first = clock.now();
      for (let attempt = 1; attempt <= 10; attempt++) {
        await worker.drain();
        const delivery = await onlyDelivery(api, ws.testKey, eventId);
        assert.equal(delivery.attempts.length, attempt);
        if (attempt < 10) {
          assert.equal(delivery.status, "pending");
          clock.set(Date.parse(delivery.next_attempt_at ?? ""));
        } else {
          assert.deepEqual([delivery.status, delivery.next_attempt_at], ["failed", null]);
        }
      }
      const span = clock.now() - first;
      // The schedule of decisions.md added up: 5 s + 5 min + 30 min + 2 h + 5 h + 10 h + 14 h + 20 h + 24 h.
      const schedule = 75 * HOUR_MS + 35 * MINUTE_MS + 5 * SECOND_MS;
      assert.ok(span >= schedule && span <= schedule * 1.2, `last attempt ${span / HOUR_MS} h after the first`);
      clock.advance(48 * HOUR_MS);
      await worker.drain();
      assert.equal(receiver.received.length, 10);
      // 75.6 hours of failures is short of the five days that disable an endpoint.
      assert.equal((await endpointOf(api, ws.testKey, endpoint.id)).enabled, true);
    });

    test("410 Gone disables the endpoint at once and fails what it still owed", async () => {
      const { services, ws, api } = await setup(dialect);
      const gone = await startReceiver(answer(410));
      const fine = await startReceiver();
      const { endpoint } = await addEndpoint(api, ws.testKey, gone.url);
      await addEndpoint(api, ws.testKey, fine.url);
      const ids = [await emit(services, ws), await emit(services, ws), await emit(services, ws)];
      await testWorker(services).drain();
      assert.equal(gone.received.length, 1);
      assert.deepEqual(fine.ids(), ids);
      const disabled = await endpointOf(api, ws.testKey, endpoint.id);
      assert.deepEqual([disabled.enabled, disabled.disabled_reason, disabled.disabled_at !== null], [false, "gone", true]);
      const owed = await deliveriesOf(api, ws.testKey, `endpoint=${endpoint.id}`);
      assert.deepEqual(owed.map((d) => d.status).sort(), ["failed", "failed", "failed"]);
      assert.deepEqual(owed.map((d) => d.attempts.map((a) => a.status_code)).sort(), [[], [], [410]]);

      const later = await emit(services, ws);
      await testWorker(services).drain();
      assert.equal(gone.received.length, 1);
      assert.deepEqual(await deliveriesOf(api, ws.testKey, `event=${later}&endpoint=${endpoint.id}`), []);
      assert.equal(fine.received.length, 4);
    });

    test("five days (120 h) of failures disable an endpoint; enabled again, its failed deliveries are recovered", async () => {
      const { services, clock, ws, api } = await setup(dialect);
      const receiver = await startReceiver(answer(503));
      const { endpoint } = await addEndpoint(api, ws.testKey, receiver.url);
      const worker = testWorker(services);
      const start = clock.now();
      const ids = [await emit(services, ws)];
      await worker.drain();
      // The failure just before leaves the endpoint alone for 5 s: this one comes after that.
      clock.set(start + 120 * HOUR_MS - 5 * SECOND_MS);
      ids.push(await emit(services, ws));
      await worker.drain();
      const stillOn = await endpointOf(api, ws.testKey, endpoint.id);
      assert.deepEqual([stillOn.enabled, stillOn.failing_since], [true, toIso(start)]);

      clock.set(start + 120 * HOUR_MS);
      ids.push(await emit(services, ws));
      await worker.drain();
      const off = await endpointOf(api, ws.testKey, endpoint.id);
      assert.deepEqual([off.enabled, off.disabled_reason, off.disabled_at], [false, "failing", toIso(clock.now())]);
      const owed = await deliveriesOf(api, ws.testKey, `endpoint=${endpoint.id}`);
      assert.deepEqual(
        owed.map((d) => d.status),
        ["failed", "failed", "failed"],
      );
      const sent = receiver.received.length;
      clock.advance(HOUR_MS);
      await emit(services, ws);
      await worker.drain();
      assert.equal(receiver.received.length, sent, "nothing goes to a disabled endpoint");

      const on = await api.request({ method: "POST", url: `/api/v1/webhooks/endpoints/${endpoint.id}/enable`, key: ws.testKey });
      assert.deepEqual([(on.json() as WebhookEndpoint).enabled, (on.json() as WebhookEndpoint).failing_since], [true, null]);
      receiver.handle = answer(200);
      const recovered = await api.request({
        method: "POST",
        url: `/api/v1/webhooks/endpoints/${endpoint.id}/recover`,
        key: ws.testKey,
        payload: { since: "week" },
      });
      assert.deepEqual(recovered.json(), { queued: 3 });
      await worker.drain();
      assert.deepEqual(receiver.ids().slice(sent), ids);
      const done = await deliveriesOf(api, ws.testKey, `endpoint=${endpoint.id}`);
      assert.deepEqual(
        done.map((d) => d.status),
        ["succeeded", "succeeded", "succeeded"],
      );
      assert.equal((await endpointOf(api, ws.testKey, endpoint.id)).last_success_at, toIso(clock.now()));
    });

    test("any success clears the failing streak", async () => {
      const { services, clock, ws, api } = await setup(dialect);
      const receiver = await startReceiver(answer(500));
      const { endpoint } = await addEndpoint(api, ws.testKey, receiver.url);
      const worker = testWorker(services);
      const start = clock.now();
      await emit(services, ws);
      await worker.drain();
      clock.set(start + 100 * HOUR_MS);
      receiver.handle = answer(200);
      await emit(services, ws);
      await worker.drain();
      const healed = await endpointOf(api, ws.testKey, endpoint.id);
      assert.deepEqual([healed.failing_since, healed.last_success_at], [null, toIso(clock.now())]);

      receiver.handle = answer(500);
      clock.set(start + 200 * HOUR_MS);
      await emit(services, ws);
      await worker.drain();
      clock.set(start + 319 * HOUR_MS);
      await emit(services, ws);
      await worker.drain();
      const failing = await endpointOf(api, ws.testKey, endpoint.id);
      assert.deepEqual([failing.enabled, failing.failing_since], [true, toIso(start + 200 * HOUR_MS)]);
    });

    test("a failing endpoint is left alone for 5 s after each failure, tried with one delivery at a time; the others go on", async () => {
      const { services, clock, ws, api } = await setup(dialect);
      const failing = await startReceiver(answer(500));
      const healthy = await startReceiver();
      const { endpoint } = await addEndpoint(api, ws.testKey, failing.url);
      await addEndpoint(api, ws.testKey, healthy.url);
      const worker = testWorker(services);
      const ids = [await emit(services, ws), await emit(services, ws), await emit(services, ws)];
      await worker.drain();
      assert.deepEqual(healthy.ids(), ids);
      assert.equal(failing.received.length, 1);
      // The two not tried are untouched, and the endpoint is given back, not held by this worker's lease.
      const owed = await services.db.selectFrom("deliveries").select("attempts").where("endpoint_id", "=", endpoint.id).orderBy("seq").execute();
      assert.deepEqual(
        owed.map((d) => d.attempts),
        [1, 0, 0],
      );
      assert.equal(await leaseHolder(services, endpoint.id), null);

      clock.advance(5 * SECOND_MS - 1);
      await worker.drain();
      assert.equal(failing.received.length, 1);
      clock.advance(1);
      await worker.drain();
      // The oldest due: the second event, never tried; the first's retry is not due yet.
      assert.deepEqual(failing.ids(), [ids[0], ids[1]]);

      failing.handle = answer(200);
      clock.advance(10 * SECOND_MS);
      await worker.drain();
      assert.deepEqual(failing.ids().slice(2).sort(), [...ids].sort());
      assert.deepEqual(worker.errors, []);
    });

    test("a retry due the instant a failing endpoint's pause ends goes before the deliveries never tried: oldest first", async () => {
      const { services, clock, ws, api } = await setup(dialect);
      const failing = await startReceiver(answer(500));
      await addEndpoint(api, ws.testKey, failing.url);
      // No jitter: the first retry falls due at exactly 5 s.
      const worker = testWorker(services, { random: () => 0 });
      const ids = [await emit(services, ws), await emit(services, ws)];
      await worker.drain();
      clock.advance(5 * SECOND_MS);
      await worker.drain();
      assert.deepEqual(failing.ids(), [ids[0], ids[0]]);
      assert.deepEqual(worker.errors, []);
    });

    test("a slow endpoint does not delay another endpoint's deliveries", async () => {
      const { services, ws, api } = await setup(dialect);
      const slow = await startReceiver(async (_request, response) => {
        await sleep(2_000);
        response.end("late");
      });
      const fast = await startReceiver();
      await addEndpoint(api, ws.testKey, slow.url);
      await addEndpoint(api, ws.testKey, fast.url);
      const worker = testWorker(services, { pollIntervalMs: 20 });
      const started = performance.now();
      const ids = [await emit(services, ws), await emit(services, ws), await emit(services, ws)];
      worker.start();
      try {
        await fast.waitFor(() => fast.received.length === 3, 1_500);
        // An event written while the slow endpoint is still busy with the first.
        ids.push(await emit(services, ws));
        worker.wake();
        await fast.waitFor(() => fast.received.length === 4, 1_000);
        const elapsed = performance.now() - started;
        assert.ok(elapsed < 1_500, `the fast endpoint waited ${Math.round(elapsed)} ms`);
        assert.deepEqual(fast.ids(), ids);
        assert.equal(slow.received.length, 1, "the slow endpoint is still on its first delivery");
      } finally {
        const stopped = worker.stop();
        await slow.stop();
        await stopped;
      }
      // The endpoints the worker had leased are given back at once, the slow one's too.
      const leased = await services.db
        .selectFrom("endpoint_leases as l")
        .innerJoin("webhook_endpoints as e", "e.id", "l.endpoint_id")
        .select("l.endpoint_id")
        .where("e.workspace_id", "=", ws.workspaceId)
        .where("l.locked_by", "is not", null)
        .execute();
      assert.deepEqual(leased, []);
      assert.deepEqual(worker.errors, []);
    });

    test("two workers draining the same storage at once deliver each delivery once", async () => {
      const { services, ws, api } = await setup(dialect);
      const receivers = await Promise.all(
        [0, 1, 2].map(() =>
          startReceiver(async (_request, response) => {
            await sleep(Math.random() * 5);
            response.end("ok");
          }),
        ),
      );
      for (const receiver of receivers) await addEndpoint(api, ws.testKey, receiver.url);
      const ids: string[] = [];
      for (let i = 0; i < 15; i++) ids.push(await emit(services, ws));
      const workers = [testWorker(services, { concurrency: 2 }), testWorker(services, { concurrency: 2 })];
      await Promise.all(workers.map((w) => w.drain()));
      for (const receiver of receivers) {
        assert.deepEqual([...receiver.ids()].sort(), [...ids].sort(), "each event exactly once per endpoint");
      }
      const all = await deliveriesOf(api, ws.testKey, "");
      assert.equal(all.length, 45);
      for (const d of all) assert.deepEqual([d.status, d.attempts.length], ["succeeded", 1]);
      for (const w of workers) assert.deepEqual(w.errors, []);
    });
  });

  describe(`claiming deliveries (${dialect})`, () => {
    test("endpoints with due deliveries come oldest first, leaving out busy, disabled and held ones; a paused one only for its resends", async () => {
      const { services, clock, ws, api } = await setup(dialect);
      const receiver = await startReceiver();
      const [a, b, c, off] = await Promise.all([1, 2, 3, 4].map(async (n) => (await addEndpoint(api, ws.testKey, `${receiver.url}/${n}`)).endpoint.id));
      assert.ok(a && b && c && off);
      await emit(services, ws);
      await emit(services, ws);
      const now = clock.now();
      // B has waited longest, then A, then C; D is disabled. Long before anything other
      // tests of this file left due (the search covers every workspace).
      for (const [endpoint, age] of [
        [b, 3e11],
        [a, 2e11],
        [c, 1e11],
      ] as const) {
        await services.db
          .updateTable("deliveries")
          .set({ next_attempt_at: now - age })
          .where("endpoint_id", "=", endpoint)
          .execute();
      }
      await setEndpointEnabled(services.db, off, false, "manual", now);
      const find = async (options: { limit?: number; busy?: string[]; paused?: string[] } = {}) =>
        (await findDueEndpoints(services.db, { now, limit: options.limit ?? 10, busy: options.busy ?? [], paused: options.paused ?? [] }))
          .filter((e) => [a, b, c, off].includes(e.endpointId))
          .map((e) => `${e.endpointId}${e.resendsOnly ? " resends" : ""}`);
      assert.deepEqual(await find(), [b, a, c]);
      assert.deepEqual(await find({ limit: 2 }), [b, a]);
      assert.deepEqual(await find({ busy: [b] }), [a, c]);
      assert.deepEqual(await find({ paused: [a] }), [b, c]);

      // A resend of one of A's goes even while A is paused, and alone.
      const [resend] = await services.db.selectFrom("deliveries").select("id").where("endpoint_id", "=", a).orderBy("seq", "desc").limit(1).execute();
      assert.ok(resend);
      await services.db.updateTable("deliveries").set({ one_shot: 1 }).where("id", "=", resend.id).execute();
      assert.deepEqual(await find({ paused: [a] }), [b, `${a} resends`, c]);
      const claim = (endpoints: DueEndpoint[], options: { perEndpoint?: number; workerId?: string; inFlight?: string[] } = {}) =>
        claimDueDeliveries(services.db, {
          workerId: options.workerId ?? "wkr_test",
          now,
          leaseUntil: now + 1_000,
          endpoints,
          perEndpoint: options.perEndpoint ?? 10,
          skipLocked: dialect === "postgres",
          inFlight: options.inFlight ?? [],
        });
      assert.deepEqual(
        (await claim([{ endpointId: a, resendsOnly: true }])).map((d) => d.id),
        [resend.id],
      );
      // A is leased now: no other worker finds it.
      assert.deepEqual(await find(), [b, c]);

      // B's first one only; then, with it still in flight, its second; then none of B's.
      const [first] = await claim([{ endpointId: b, resendsOnly: false }], { perEndpoint: 1 });
      assert.ok(first);
      assert.equal(first.endpointId, b);
      assert.deepEqual(await find(), [c]);
      const [second] = await claim([{ endpointId: b, resendsOnly: false }], { inFlight: [first.id] });
      assert.ok(second && second.id !== first.id);
      assert.deepEqual(await claim([{ endpointId: b, resendsOnly: false }], { inFlight: [first.id, second.id] }), []);
      // Another worker gets nothing of a leased endpoint, and an endpoint with nothing due is not leased.
      assert.deepEqual(await claim([{ endpointId: b, resendsOnly: false }], { workerId: "wkr_other" }), []);
      assert.equal(await leaseHolder(services, b), "wkr_test");
      await releaseLeases(services.db, [b], "wkr_test");
      assert.deepEqual(await claim([{ endpointId: b, resendsOnly: false }], { workerId: "wkr_other", inFlight: [first.id, second.id] }), []);
      assert.equal(await leaseHolder(services, b), null);
      // Nothing of a disabled endpoint is claimed, even when asked by name, and it is not leased.
      assert.deepEqual(await claim([{ endpointId: off, resendsOnly: false }]), []);
      assert.equal(await leaseHolder(services, off), null);
    });

    test("an endpoint owing more than one claim gets every delivery in creation order, with or without a free place to go on", async () => {
      const { services, ws, api } = await setup(dialect);
      const first = await startReceiver();
      const second = await startReceiver();
      const endpoints = [(await addEndpoint(api, ws.testKey, first.url)).endpoint.id, (await addEndpoint(api, ws.testKey, second.url)).endpoint.id];
      // Every run ends with its endpoint given back (by the record of its last attempt, or after it).
      const given = async () => assert.deepEqual(await Promise.all(endpoints.map((id) => leaseHolder(services, id))), [null, null]);
      const created: string[] = [];
      for (let i = 0; i < 40; i++) created.push(await emit(services, ws));
      // Two places: each endpoint's chain goes on claiming. One place: a chain ends after each claim.
      // Claims of 16: 40 deliveries are two full claims and a part of one.
      await testWorker(services, { concurrency: 2, claimPerEndpoint: 16 }).drain();
      assert.deepEqual(first.ids(), created);
      assert.deepEqual(second.ids(), created);
      await given();
      const more: string[] = [];
      for (let i = 0; i < 40; i++) more.push(await emit(services, ws));
      const worker = testWorker(services, { concurrency: 1, claimPerEndpoint: 16 });
      await worker.drain();
      assert.deepEqual(first.ids(), [...created, ...more]);
      assert.deepEqual(second.ids(), [...created, ...more]);
      await given();
      assert.deepEqual(worker.errors, []);
    });
  });

  describe(`delivery leases (${dialect})`, () => {
    test("a worker whose lease ran out does not settle a delivery another worker has taken", async () => {
      const { services, clock, ws, api } = await setup(dialect);
      const receiver = await startReceiver();
      const { endpoint } = await addEndpoint(api, ws.testKey, receiver.url);
      await emit(services, ws);
      const claim = (workerId: string) =>
        claimDueDeliveries(services.db, {
          workerId,
          now: clock.now(),
          leaseUntil: clock.now() + 1_000,
          endpoints: [{ endpointId: endpoint.id, resendsOnly: false }],
          perEndpoint: 10,
          skipLocked: dialect === "postgres",
        });
      const [stale] = await claim("wkr_stale");
      assert.ok(stale);
      // Held: no other worker may take the endpoint.
      assert.deepEqual(await claim("wkr_other"), []);
      await testWorker(services).drain();
      assert.equal(receiver.received.length, 0);

      // The lease runs out (the process hung): another worker takes it over.
      clock.advance(1_000);
      const [taken] = await claim("wkr_other");
      assert.equal(taken?.id, stale.id);
      assert.equal(await renewLease(services.db, endpoint.id, "wkr_stale", clock.now() + 1_000), false);
      // The first worker's attempt comes back failed, late: the delivery stays the other's.
      assert.deepEqual(await recordAttempts(services.db, [outcome(clock.now(), stale.id, "wkr_stale", 500)]), [false]);
      assert.equal(await leaseHolder(services, endpoint.id), "wkr_other");
      assert.deepEqual(await recordAttempts(services.db, [outcome(clock.now(), stale.id, "wkr_other", 200)]), [true]);
      // A failure arriving after the success changes nothing either, in the same batch or later.
      assert.deepEqual(await recordAttempts(services.db, [outcome(clock.now(), stale.id, "wkr_other", 500)]), [false]);
      // Every attempt is logged all the same: each request went out.
      const logged = await services.db.selectFrom("delivery_attempts").select("status_code").where("delivery_id", "=", stale.id).orderBy("seq").execute();
      assert.deepEqual(
        logged.map((r) => r.status_code),
        [500, 200, 500],
      );
      const row = await services.db.selectFrom("deliveries").selectAll().where("id", "=", stale.id).executeTakeFirstOrThrow();
      assert.deepEqual([row.status, row.attempts, row.next_attempt_at], ["succeeded", 1, null]);
    });

    test("an endpoint enabled again is free for any worker, and an attempt from before does not settle the resend", async () => {
      const { services, clock, ws, api } = await setup(dialect);
      const receiver = await startReceiver();
      const { endpoint } = await addEndpoint(api, ws.testKey, receiver.url);
      const eventId = await emit(services, ws);
      const [sent] = await claimDueDeliveries(services.db, {
        workerId: "wkr_before",
        now: clock.now(),
        leaseUntil: clock.now() + 60_000,
        endpoints: [{ endpointId: endpoint.id, resendsOnly: false }],
        perEndpoint: 10,
        skipLocked: dialect === "postgres",
      });
      assert.ok(sent);
      // While its attempt is in flight the endpoint is disabled (the delivery fails), enabled, and the delivery resent.
      const toggle = (enabled: boolean) =>
        api.request({ method: "POST", url: `/api/v1/webhooks/endpoints/${endpoint.id}/${enabled ? "enable" : "disable"}`, key: ws.testKey });
      assert.equal((await toggle(false)).statusCode, 200);
      assert.equal(await leaseHolder(services, endpoint.id), "wkr_before", "disabling leaves the lease alone");
      assert.equal((await toggle(true)).statusCode, 200);
      assert.equal(await leaseHolder(services, endpoint.id), null);
      const resent = await api.request({ method: "POST", url: `/api/v1/webhooks/deliveries/${sent.id}/resend`, key: ws.testKey });
      assert.equal(resent.statusCode, 202, resent.body);
      assert.deepEqual(await recordAttempts(services.db, [outcome(clock.now(), sent.id, "wkr_before", 500)]), [false]);
      // The resend goes out, once, as asked.
      const worker = testWorker(services);
      await worker.drain();
      assert.deepEqual(receiver.ids(), [eventId]);
      const delivery = await onlyDelivery(api, ws.testKey, eventId);
      assert.equal(delivery.status, "succeeded");
      assert.deepEqual(worker.errors, []);
    });

    test("an attempt that cannot be recorded keeps its endpoint leased until the lease runs out, then is sent again", async () => {
      const { services, clock, ws, api } = await setup(dialect);
      const receiver = await startReceiver();
      const { endpoint } = await addEndpoint(api, ws.testKey, receiver.url);
      const ids = [await emit(services, ws), await emit(services, ws)];
      // Every attempt's record is refused while the trigger stands.
      const refuse =
        dialect === "sqlite"
          ? [sql`create trigger refuse_attempts before insert on delivery_attempts begin select raise(abort, 'refused'); end`]
          : [
              sql`create function refuse_attempts() returns trigger language plpgsql as $$ begin raise exception 'refused'; end $$`,
              sql`create trigger refuse_attempts before insert on delivery_attempts for each row execute function refuse_attempts()`,
            ];
      for (const statement of refuse) await statement.execute(services.db);
      const worker = testWorker(services, { leaseMs: 30_000 });
      try {
        await worker.drain();
        // Both were sent (a record is written while the next is sent), neither recorded, and
        // the run ended there rather than read them again as still pending.
        assert.deepEqual(receiver.ids(), ids);
        const logged = worker.errors.map((e) => (e as unknown[])[1]);
        assert.ok(logged.length >= 2 && logged.every((message) => message === "delivery attempt could not be recorded"), JSON.stringify(logged));
        assert.ok(await leaseHolder(services, endpoint.id), "the endpoint is still leased");
        clock.advance(29_999);
        await worker.drain();
        assert.equal(receiver.received.length, 2);
      } finally {
        await sql`drop trigger refuse_attempts${dialect === "postgres" ? sql` on delivery_attempts` : sql``}`.execute(services.db);
        if (dialect === "postgres") await sql`drop function refuse_attempts()`.execute(services.db);
      }
      clock.advance(1);
      await worker.drain();
      assert.deepEqual(receiver.ids(), [...ids, ...ids]);
      assert.deepEqual(
        (await deliveriesOf(api, ws.testKey, `endpoint=${endpoint.id}`)).map((d) => [d.status, d.attempts.length]),
        [
          ["succeeded", 1],
          ["succeeded", 1],
        ],
      );
    });

    test("a delivery left pending for a disabled endpoint waits for it to be enabled again", async () => {
      const { services, clock, ws, api } = await setup(dialect);
      const receiver = await startReceiver();
      const { endpoint } = await addEndpoint(api, ws.testKey, receiver.url);
      const eventId = await emit(services, ws);
      // As when an event commits while the endpoint is being disabled: its delivery stays pending.
      await setEndpointEnabled(services.db, endpoint.id, false, "manual", clock.now());
      await testWorker(services).drain();
      assert.equal(receiver.received.length, 0);
      await api.request({ method: "POST", url: `/api/v1/webhooks/endpoints/${endpoint.id}/enable`, key: ws.testKey });
      await testWorker(services).drain();
      assert.deepEqual(receiver.ids(), [eventId]);
    });

    test("an endpoint secret that cannot be opened is logged as a failed attempt, not retried blindly", async () => {
      const { services, ws, api } = await setup(dialect);
      const receiver = await startReceiver();
      await addEndpoint(api, ws.testKey, receiver.url);
      const eventId = await emit(services, ws);
      // The same database, read by a process started with another WARDEN_SECRET_KEY.
      const other = await testServices(dialect, { WARDEN_SECRET_KEY: "another-secret-key-0123456789abcdefghijkl" });
      other.clock.set(services.clock.now());
      const worker = testWorker(other.services);
      await worker.drain();
      assert.equal(receiver.received.length, 0);
      const delivery = await onlyDelivery(api, ws.testKey, eventId);
      assert.equal(delivery.status, "pending");
      assert.match(delivery.attempts[0]?.error ?? "", /could not sign/);
      // The worker drains every due delivery of the file's database: count only this one's.
      const about = (entry: unknown) => (entry as [{ delivery?: string }] | [])[0]?.delivery;
      assert.equal(worker.errors.filter((entry) => about(entry) === delivery.id).length, 1);
    });
  });

  describe(`delivery safety (${dialect})`, () => {
    test("without WARDEN_ALLOW_PRIVATE_WEBHOOKS nothing connects to a loopback address, by name or number", async () => {
      const { services, ws, api } = await setup(dialect);
      const receiver = await startReceiver();
      const urls = [
        `http://localhost:${receiver.port}/hook`,
        `http://127.0.0.1:${receiver.port}/hook`,
        `http://[::ffff:127.0.0.1]:${receiver.port}/hook`,
        `http://[::1]:${receiver.port}/hook`,
        `http://[::7f00:1]:${receiver.port}/hook`,
        `http://[::ffff:0:7f00:1]:${receiver.port}/hook`,
        `http://[64:ff9b::7f00:1]:${receiver.port}/hook`,
        `http://[2002:7f00:1::]:${receiver.port}/hook`,
        `http://[2001:0:4136:e378:8000:63bf:80ff:fffe]:${receiver.port}/hook`,
        `http://[::]:${receiver.port}/hook`,
        `http://0.0.0.0:${receiver.port}/hook`,
        `http://2130706433:${receiver.port}/hook`,
        `http://localhost.:${receiver.port}/hook`,
        `http://metadata.google.internal:${receiver.port}/hook`,
        `http://metadata:${receiver.port}/hook`,
      ];
      // Added while private addresses were allowed, sent by a worker that refuses them.
      for (const url of urls) await addEndpoint(api, ws.testKey, url);
      const eventId = await emit(services, ws);
      await testWorker(services, { allowPrivate: false }).drain();
      assert.equal(receiver.connections, 0);
      const refused = await deliveriesOf(api, ws.testKey, `event=${eventId}`);
      assert.equal(refused.length, urls.length);
      for (const d of refused) {
        assert.equal(d.status, "pending");
        assert.deepEqual(
          d.attempts.map((a) => a.status_code),
          [null],
        );
        assert.match(d.attempts[0]?.error ?? "", /^refused: .*(private|local-only|metadata|single-label).*WARDEN_ALLOW_PRIVATE_WEBHOOKS=1/);
      }
    });

    test("an answer body is read up to 4 KiB and no further", async () => {
      const { services, ws, api } = await setup(dialect);
      const endless = await startReceiver((_request, response) => {
        response.writeHead(200, { "content-type": "text/plain" });
        const timer = setInterval(() => {
          if (response.destroyed) clearInterval(timer);
          else response.write("y".repeat(1024));
        }, 1);
      });
      await addEndpoint(api, ws.testKey, endless.url);
      const eventId = await emit(services, ws);
      await testWorker(services, { timeoutMs: 5_000 }).drain();
      const delivery = await onlyDelivery(api, ws.testKey, eventId);
      assert.equal(delivery.status, "succeeded");
      const [attempt] = delivery.attempts;
      assert.equal(attempt?.response_body, "y".repeat(4096));
      assert.ok((attempt?.duration_ms ?? Infinity) < 2_000, `read for ${attempt?.duration_ms} ms`);
    });
  });
}

describe("sender", () => {
  test("no redirect is followed, whatever its kind", async () => {
    const receiver = await startReceiver();
    for (const status of [301, 302, 303, 307, 308]) {
      receiver.handle = answer(status, "", { location: `${receiver.url}/moved` });
      const result = await postWebhook(receiver.url, { "content-type": "application/json" }, "{}", { timeoutMs: 2_000, allowPrivate: true, now: Date.now });
      assert.deepEqual([result.statusCode, result.error], [status, null]);
    }
    assert.deepEqual(new Set(receiver.received.map((r) => r.path)), new Set(["/hook"]));
  });

  test("a refused address is reported without a connection, and the call never throws", async () => {
    const receiver = await startReceiver();
    for (const url of [`http://localhost:${receiver.port}/`, `http://127.0.0.1:${receiver.port}/`, "not a url", "http://nonexistent.invalid/"]) {
      const result = await postWebhook(url, {}, "{}", { timeoutMs: 2_000, allowPrivate: false, now: Date.now });
      assert.equal(result.statusCode, null, url);
      assert.ok(result.error, url);
    }
    assert.equal(receiver.connections, 0);
  });
});

// A claim leases the endpoint (migration 012): one row written, whatever it claims.
for (const dialect of DIALECTS) {
  test(`a claim of many deliveries writes one row, its endpoint's lease (${dialect})`, async () => {
    const { services, ws, api } = await setup(dialect);
    const receiver = await startReceiver();
    const { endpoint } = await addEndpoint(api, ws.testKey, receiver.url);
    for (let i = 0; i < 20; i++) await emit(services, ws);
    const written = await services.db.transaction().execute(async (trx) => {
      // PostgreSQL: a backend's counts reach the shared statistics at most once a second;
      // until then its earlier transactions' writes (on this pooled connection) show here
      // too, so the claim's own are the difference across it.
      const count = async () => {
        if (dialect === "sqlite") return Number((await sql<{ n: number }>`select total_changes() as n`.execute(trx)).rows[0]?.n);
        const { rows } = await sql<{ n: string }>`select coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0) as n from pg_stat_xact_user_tables`.execute(trx);
        return Number(rows[0]?.n);
      };
      const before = await count();
      const now = services.clock.now();
      const claimed = await claimDueDeliveries(trx, {
        workerId: "wkr_test",
        now,
        leaseUntil: now + 1_000,
        endpoints: [{ endpointId: endpoint.id, resendsOnly: false }],
        perEndpoint: 128,
        skipLocked: dialect === "postgres",
      });
      assert.equal(claimed.length, 20);
      return (await count()) - before;
    });
    assert.equal(written, 1);
    assert.equal(await leaseHolder(services, endpoint.id), "wkr_test");
  });
}
