import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { Webhook } from "standardwebhooks";
import { MINUTE_MS } from "../clock.js";
import { EVENT_TYPES } from "../events/event-types.js";
import { DIALECTS, seedWorkspace, type TestApi, testApi, testServices } from "../test-support/harness.js";
import { answer, type ReceivedRequest, startReceiver, testWorker } from "../test-support/webhooks.js";
import type { Delivery, WebhookEndpoint } from "./webhook.schema.js";

const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

interface Created {
  endpoint: WebhookEndpoint;
  secret: string;
}

function errorOf(response: LightMyRequestResponse): { type: string; param?: string; message: string } {
  return (response.json() as { error: { type: string; param?: string; message: string } }).error;
}

async function addEndpoint(api: TestApi, key: string, url: string, events?: string[]): Promise<Created> {
  const response = await api.request({ method: "POST", url: "/api/v1/webhooks/endpoints", key, payload: events ? { url, events } : { url } });
  assert.equal(response.statusCode, 201, response.body);
  return response.json() as Created;
}

async function sendExample(api: TestApi, key: string, type: string): Promise<LightMyRequestResponse> {
  return api.request({ method: "POST", url: "/api/v1/webhooks/examples", key, payload: { type } });
}

async function deliveries(api: TestApi, key: string, query = ""): Promise<Delivery[]> {
  const response = await api.request({ url: `/api/v1/webhooks/deliveries?limit=100${query}`, key });
  assert.equal(response.statusCode, 200, response.body);
  return (response.json() as { data: Delivery[] }).data;
}

function verify(secret: string, request: ReceivedRequest): { id: string; type: string } {
  const headers = Object.fromEntries(["webhook-id", "webhook-timestamp", "webhook-signature"].map((name) => [name, String(request.headers[name])]));
  return new Webhook(secret).verify(request.body.toString("utf8"), headers) as { id: string; type: string };
}

for (const dialect of DIALECTS) {
  describe(`webhook endpoints API (${dialect})`, () => {
    test("add, list, get, reveal the secret, disable, enable and remove an endpoint", async () => {
      const { services } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const created = await addEndpoint(api, ws.testKey, "https://hooks.example.com/warden", ["payment.refunded", "dispute.closed", "payment.refunded"]);
      assert.match(created.secret, /^whsec_[A-Za-z0-9+/]{32}$/);
      assert.match(created.endpoint.id, /^ep_[0-9A-Za-z]{24}$/);
      assert.deepEqual(
        { ...created.endpoint, id: "", created_at: "" },
        {
          id: "",
          url: "https://hooks.example.com/warden",
          events: ["payment.refunded", "dispute.closed"],
          description: null,
          enabled: true,
          disabled_reason: null,
          disabled_at: null,
          last_success_at: null,
          failing_since: null,
          previous_secret_expires_at: null,
          created_at: "",
        },
      );
      const id = created.endpoint.id;

      // Sealed at rest: the row holds neither the secret nor its key bytes in any form.
      const row = await services.db.selectFrom("webhook_endpoints").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
      const keyBase64 = created.secret.slice("whsec_".length);
      for (const value of Object.values(row)) {
        const text = String(value);
        assert.ok(!text.includes(keyBase64) && !text.includes(Buffer.from(keyBase64, "base64").toString("base64url")), "secret found in the row");
      }
      assert.equal(services.secretBox.open(row.secret_sealed), created.secret);

      const list = await api.request({ url: "/api/v1/webhooks/endpoints", key: ws.testKey });
      assert.deepEqual((list.json() as { data: WebhookEndpoint[] }).data, [created.endpoint]);
      const got = await api.request({ url: `/api/v1/webhooks/endpoints/${id}`, key: ws.testKey });
      assert.deepEqual(got.json(), created.endpoint);
      const revealed = await api.request({ url: `/api/v1/webhooks/endpoints/${id}/secret`, key: ws.testKey });
      assert.deepEqual(revealed.json(), { secret: created.secret });

      const disabled = await api.request({ method: "POST", url: `/api/v1/webhooks/endpoints/${id}/disable`, key: ws.testKey });
      assert.equal(disabled.statusCode, 200);
      assert.deepEqual([(disabled.json() as WebhookEndpoint).enabled, (disabled.json() as WebhookEndpoint).disabled_reason], [false, "manual"]);
      const enabled = await api.request({ method: "POST", url: `/api/v1/webhooks/endpoints/${id}/enable`, key: ws.testKey });
      assert.deepEqual(enabled.json(), created.endpoint);

      const removed = await api.request({ method: "DELETE", url: `/api/v1/webhooks/endpoints/${id}`, key: ws.testKey });
      assert.equal(removed.statusCode, 200);
      assert.equal((removed.json() as WebhookEndpoint).enabled, false);
      assert.equal((await api.request({ url: `/api/v1/webhooks/endpoints/${id}`, key: ws.testKey })).statusCode, 404);
      assert.equal((await api.request({ url: `/api/v1/webhooks/endpoints/${id}/secret`, key: ws.testKey })).statusCode, 404);
      assert.deepEqual((await api.request({ url: "/api/v1/webhooks/endpoints", key: ws.testKey })).json(), { data: [] });
      assert.equal((await api.request({ method: "DELETE", url: `/api/v1/webhooks/endpoints/${id}`, key: ws.testKey })).statusCode, 404);
    });

    test("bad URLs and unknown event types are refused with the parameter named", async () => {
      const strict = await testServices(dialect, { WARDEN_ALLOW_PRIVATE_WEBHOOKS: "0" });
      const lenient = await testServices(dialect);
      const ws = await seedWorkspace(strict.services);
      const strictApi = await testApi(strict.services);
      const lenientApi = await testApi(lenient.services);
      const post = (api: TestApi, payload: object) => api.request({ method: "POST", url: "/api/v1/webhooks/endpoints", key: ws.testKey, payload });

      const everywhere = [
        "ftp://hooks.example.com/x",
        "hooks.example.com/hook",
        "/hook",
        "https://user:pass@hooks.example.com/",
        "https://token@hooks.example.com/",
        // URL has no IPv6 zone ids: no endpoint can name an interface.
        "http://[fe80::1%25eth0]/",
      ];
      const privateOnes = [
        "http://127.0.0.1/hook",
        "http://127.1.2.3:8080/",
        "http://localhost:3000/hook",
        "http://api.localhost/",
        "http://10.0.0.1/",
        "http://192.168.1.20/",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]:3000/",
        "http://[::ffff:127.0.0.1]/",
        "http://[fd00::1]/",
        "http://0x7f000001/",
        "http://2130706433/",
        "http://0x7f.1/",
        "http://127.1/",
        "http://017700000001/",
        "http://127.0.0.1./",
        "http://0.0.0.0/",
        "http://0/",
        "http://100.100.100.200/",
        "http://198.18.0.1/",
        "http://240.0.0.1/",
        "http://224.0.0.1/",
        "http://[::]/",
        "http://[::7f00:1]/",
        "http://[::127.0.0.1]/",
        "http://[::ffff:0:7f00:1]/",
        "http://[64:ff9b::a9fe:a9fe]/",
        "http://[64:ff9b:1::808:808]/",
        "http://[2002:7f00:1::]/",
        "http://[2002:a9fe:a9fe::]/",
        "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/",
        "http://[fe80::1]/",
        "http://[ff02::1]/",
        "http://[fd00:ec2::254]/",
        "http://localhost./",
        "http://LOCALHOST../",
        "http://api.localhost./",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://metadata.google.internal./",
        "http://metadata/",
        "http://instance-data/latest/meta-data/",
        "http://printer.local/",
      ];
      for (const url of [...everywhere, ...privateOnes]) {
        const response = await post(strictApi, { url });
        assert.equal(response.statusCode, 400, url);
        assert.deepEqual([errorOf(response).type, errorOf(response).param], ["invalid_request_error", "url"], url);
      }
      assert.equal(
        errorOf(await post(strictApi, { url: "http://[2002:7f00:1::]/" })).message,
        "url points at a private or local host (2002:7f00:1:: is a private address (6to4, it carries 127.0.0.1)); set WARDEN_ALLOW_PRIVATE_WEBHOOKS=1 to allow that (local development only).",
      );
      // Public addresses in the same notations, and the IPv6 forms carrying a public IPv4 address, are accepted.
      for (const url of [
        "http://0x5db8d822/",
        "http://[::ffff:8.8.8.8]/",
        "http://[64:ff9b::8.8.8.8]/",
        "http://[2002:808:808::]/",
        "https://hooks.example.com./",
      ]) {
        assert.equal((await post(strictApi, { url })).statusCode, 201, url);
      }
      for (const url of everywhere) assert.equal((await post(lenientApi, { url })).statusCode, 400, url);
      // WARDEN_ALLOW_PRIVATE_WEBHOOKS=1 (local development, tests) lets them through.
      for (const url of privateOnes) assert.equal((await post(lenientApi, { url })).statusCode, 201, url);

      for (const events of [["payment.refunded", "payment.refund"], ["PURCHASE.COMPLETED"], ["*"]]) {
        const response = await post(strictApi, { url: "https://hooks.example.com/", events });
        assert.equal(response.statusCode, 400, events.join());
        assert.equal(errorOf(response).param, "events");
      }
      assert.equal((await post(strictApi, { url: "https://hooks.example.com/", events: [] })).statusCode, 400);
      assert.equal((await post(strictApi, { url: "https://hooks.example.com/", events: [...EVENT_TYPES] })).statusCode, 201);
    });

    test("another workspace's or environment's endpoints and deliveries are not found", async () => {
      const { services } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const other = await seedWorkspace(services);
      const api = await testApi(services);
      const receiver = await startReceiver();
      const { endpoint } = await addEndpoint(api, ws.testKey, receiver.url);
      assert.equal((await sendExample(api, ws.testKey, "payment.refunded")).statusCode, 202);
      const [delivery] = await deliveries(api, ws.testKey);
      assert.ok(delivery);
      for (const key of [other.testKey, other.liveKey, ws.liveKey]) {
        for (const [method, url, payload] of [
          ["GET", `/api/v1/webhooks/endpoints/${endpoint.id}`],
          ["GET", `/api/v1/webhooks/endpoints/${endpoint.id}/secret`],
          ["DELETE", `/api/v1/webhooks/endpoints/${endpoint.id}`],
          ["POST", `/api/v1/webhooks/endpoints/${endpoint.id}/disable`],
          ["POST", `/api/v1/webhooks/endpoints/${endpoint.id}/enable`],
          ["POST", `/api/v1/webhooks/endpoints/${endpoint.id}/recover`, { since: "day" }],
          ["GET", `/api/v1/webhooks/deliveries/${delivery.id}`],
          ["POST", `/api/v1/webhooks/deliveries/${delivery.id}/resend`],
        ] as const) {
          const response = await api.request({ method, url, key, ...(payload ? { payload } : {}) });
          assert.equal(response.statusCode, 404, `${method} ${url}`);
          assert.equal(errorOf(response).type, "not_found");
        }
        assert.deepEqual((await api.request({ url: "/api/v1/webhooks/endpoints", key })).json(), { data: [] });
        assert.deepEqual(await deliveries(api, key), []);
      }
      // Still there and untouched for its owner.
      assert.equal(((await api.request({ url: `/api/v1/webhooks/endpoints/${endpoint.id}`, key: ws.testKey })).json() as WebhookEndpoint).enabled, true);
    });
  });

  describe(`resend and recover (${dialect})`, () => {
    test("the delivery log pages by cursor, newest first, per endpoint and per status", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const receiver = await startReceiver();
      const first = (await addEndpoint(api, ws.testKey, receiver.url)).endpoint;
      const second = (await addEndpoint(api, ws.testKey, receiver.url)).endpoint;
      for (const type of ["purchase.completed", "payment.refunded", "dispute.closed"]) {
        clock.advance(1000);
        assert.equal((await sendExample(api, ws.testKey, type)).statusCode, 202);
      }
      const walk = async (query: string) => {
        const seen: Delivery[] = [];
        let cursor: string | null = null;
        let pages = 0;
        do {
          const page = await api.request({ url: `/api/v1/webhooks/deliveries?limit=2${query}${cursor ? `&cursor=${cursor}` : ""}`, key: ws.testKey });
          assert.equal(page.statusCode, 200, page.body);
          const body = page.json() as { data: Delivery[]; has_more: boolean; next_cursor: string | null };
          assert.equal(body.has_more, body.next_cursor !== null);
          seen.push(...body.data);
          cursor = body.next_cursor;
          pages += 1;
        } while (cursor !== null && pages < 10);
        return { seen, pages };
      };
      const all = await walk("");
      assert.equal(all.pages, 3);
      assert.equal(new Set(all.seen.map((d) => d.id)).size, 6, "every delivery once");
      assert.deepEqual(
        all.seen.map((d) => d.id),
        (await deliveries(api, ws.testKey)).map((d) => d.id),
        "the pages walk the same order as one page",
      );
      const firstOnly = await walk(`&endpoint=${first.id}`);
      assert.deepEqual([firstOnly.pages, firstOnly.seen.length], [2, 3]);
      assert.ok(firstOnly.seen.every((d) => d.endpoint === first.id));
      assert.equal((await walk(`&endpoint=${second.id}&status=succeeded`)).seen.length, 0);
      await testWorker(services).drain();
      assert.equal((await walk(`&endpoint=${second.id}&status=succeeded`)).seen.length, 3);
      assert.equal((await walk("&status=pending")).seen.length, 0);

      const page = (await api.request({ url: "/api/v1/webhooks/deliveries?limit=2", key: ws.testKey })).json() as { next_cursor: string };
      // One character changed inside the signature: its last character may carry bits that
      // decoding drops, so changing the end could leave the cursor valid (a flaky test).
      const at = page.next_cursor.indexOf(".") + 4;
      const forged = `${page.next_cursor.slice(0, at)}${page.next_cursor[at] === "A" ? "B" : "A"}${page.next_cursor.slice(at + 1)}`;
      const tampered = await api.request({ url: `/api/v1/webhooks/deliveries?limit=2&cursor=${forged}`, key: ws.testKey });
      assert.equal(tampered.statusCode, 400);
      assert.equal(errorOf(tampered).param, "cursor");
    });

    test("events and deliveries by creation time: epoch seconds or ISO 8601, paged within the range, the cursor bound to it", async () => {
      const { services, clock } = await testServices(dialect);
      const start = Date.parse("2026-11-20T10:00:00Z");
      clock.set(start);
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const receiver = await startReceiver();
      const { endpoint } = await addEndpoint(api, ws.testKey, receiver.url);
      const sent: string[] = [];
      // One event an hour, 10:00 to 14:00.
      for (let i = 0; i < 5; i++) {
        sent.push(((await sendExample(api, ws.testKey, "purchase.completed")).json() as { event: { id: string } }).event.id);
        clock.advance(HOUR_MS);
      }
      const page = async (list: "events" | "deliveries", query: string) => {
        const response = await api.request({ url: `/api/v1/webhooks/${list}?${query}`, key: ws.testKey });
        assert.equal(response.statusCode, 200, response.body);
        const body = response.json() as { data: { id: string; event?: string }[]; next_cursor: string | null };
        return { ids: body.data.map((d) => d.event ?? d.id), next: body.next_cursor };
      };
      const walk = async (list: "events" | "deliveries", query: string) => {
        const ids: string[] = [];
        let cursor: string | null = null;
        do {
          const got: { ids: string[]; next: string | null } = await page(list, `limit=1&${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
          ids.push(...got.ids);
          cursor = got.next;
        } while (cursor !== null && ids.length < 10);
        return ids;
      };
      const eleven = (start + HOUR_MS) / 1000;
      // At or after 11:00 (epoch seconds), before 13:00 (ISO with an offset): 11:00 and 12:00.
      const range = `created_after=${eleven}&created_before=${encodeURIComponent("2026-11-20T14:00:00+01:00")}`;
      assert.deepEqual(await walk("events", range), [sent[2], sent[1]]);
      assert.deepEqual(await walk("deliveries", `${range}&endpoint=${endpoint.id}`), [sent[2], sent[1]]);
      assert.deepEqual((await page("events", "created_after=2026-11-20T12:30:00.5Z")).ids, [sent[4], sent[3]]);
      assert.deepEqual((await page("deliveries", "created_before=2026-11-20T11:00:00Z")).ids, [sent[0]]);
      assert.deepEqual((await page("events", `created_after=${(start + 5 * HOUR_MS) / 1000}`)).ids, []);

      // A cursor is of its range: under another range, or with none, it is refused.
      const first = await page("events", `limit=1&${range}`);
      assert.ok(first.next);
      for (const other of [`created_after=${eleven - 1}`, "", `created_after=${eleven}`]) {
        const refused = await api.request({ url: `/api/v1/webhooks/events?limit=1&${other}&cursor=${encodeURIComponent(first.next)}`, key: ws.testKey });
        assert.equal(refused.statusCode, 400, other);
        assert.equal(errorOf(refused).param, "cursor");
      }
      // The same instants written the other way are the same range.
      assert.deepEqual(
        (
          await page(
            "events",
            `limit=1&created_after=2026-11-20T11:00:00Z&created_before=${(start + 3 * HOUR_MS) / 1000}&cursor=${encodeURIComponent(first.next)}`,
          )
        ).ids,
        [sent[1]],
      );

      for (const [query, param] of [
        ["created_after=yesterday", "created_after"],
        ["created_before=2026-11-20T10:00:00", "created_before"],
        ["created_after=2026-02-31T00:00:00Z", "created_after"],
        ["created_after=-5", "created_after"],
        [`created_after=${eleven}&created_before=${eleven}`, "created_before"],
      ] as const) {
        for (const list of ["events", "deliveries"]) {
          const refused = await api.request({ url: `/api/v1/webhooks/${list}?${query}`, key: ws.testKey });
          assert.equal(refused.statusCode, 400, `${list}?${query}`);
          assert.deepEqual([errorOf(refused).type, errorOf(refused).param], ["invalid_request_error", param], `${list}?${query}`);
        }
      }
      const doc = (await api.request({ url: "/api/v1/openapi.json" })).json() as { paths: Record<string, { get: { parameters: { name: string }[] } }> };
      for (const path of ["/api/v1/webhooks/events", "/api/v1/webhooks/deliveries"]) {
        const names = doc.paths[path]?.get.parameters.map((p) => p.name) ?? [];
        assert.ok(names.includes("created_after") && names.includes("created_before"), `${path}: ${names}`);
      }
    });

    test("resend: one manual attempt with the same webhook-id; a failed delivery stays failed if it fails again", async () => {
      const { services, clock } = await testServices(dialect);
      clock.set(Date.now());
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const receiver = await startReceiver(answer(500));
      const { endpoint, secret } = await addEndpoint(api, ws.testKey, receiver.url);
      const worker = testWorker(services);
      assert.equal((await sendExample(api, ws.testKey, "payment.disputed")).statusCode, 202);
      await worker.drain();
      const [pending] = await deliveries(api, ws.testKey);
      assert.ok(pending);
      assert.deepEqual([pending.status, pending.attempts.length], ["pending", 1]);
      // Disabling the endpoint fails what it still owed.
      await api.request({ method: "POST", url: `/api/v1/webhooks/endpoints/${endpoint.id}/disable`, key: ws.testKey });
      assert.equal((await deliveries(api, ws.testKey))[0]?.status, "failed");
      await api.request({ method: "POST", url: `/api/v1/webhooks/endpoints/${endpoint.id}/enable`, key: ws.testKey });

      // A resend that fails again is one attempt, not a new schedule.
      const resent = await api.request({ method: "POST", url: `/api/v1/webhooks/deliveries/${pending.id}/resend`, key: ws.testKey });
      assert.equal(resent.statusCode, 202, resent.body);
      assert.equal((resent.json() as Delivery).status, "pending");
      await worker.drain();
      const again = (await deliveries(api, ws.testKey))[0];
      assert.deepEqual(
        [again?.status, again?.next_attempt_at, again?.attempts.map((a) => [a.status_code, a.manual])],
        [
          "failed",
          null,
          [
            [500, false],
            [500, true],
          ],
        ],
      );

      receiver.handle = answer(204);
      assert.equal((await api.request({ method: "POST", url: `/api/v1/webhooks/deliveries/${pending.id}/resend`, key: ws.testKey })).statusCode, 202);
      await worker.drain();
      const done = (await api.request({ url: `/api/v1/webhooks/deliveries/${pending.id}`, key: ws.testKey })).json() as Delivery;
      assert.equal(done.status, "succeeded");
      assert.deepEqual(
        done.attempts.map((a) => [a.status_code, a.manual]),
        [
          [500, false],
          [500, true],
          [204, true],
        ],
      );
      assert.equal(receiver.received.length, 3);
      assert.deepEqual(new Set(receiver.ids()), new Set([pending.event]));
      for (const request of receiver.received) assert.equal(verify(secret, request).id, pending.event);
      // A succeeded delivery can be sent once more (the vendor lost it on their side).
      assert.equal((await api.request({ method: "POST", url: `/api/v1/webhooks/deliveries/${pending.id}/resend`, key: ws.testKey })).statusCode, 202);
      await worker.drain();
      assert.equal(receiver.received.length, 4);
      assert.equal((await api.request({ method: "POST", url: "/api/v1/webhooks/deliveries/dlv_nope/resend", key: ws.testKey })).statusCode, 404);
      assert.deepEqual(worker.errors, []);
    });

    test("resend of a delivery still being retried: one attempt now; a failure keeps its scheduled retry, a success settles it", async () => {
      const { services, clock } = await testServices(dialect);
      clock.set(Date.now());
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const receiver = await startReceiver(answer(500));
      await addEndpoint(api, ws.testKey, receiver.url);
      const worker = testWorker(services);
      assert.equal((await sendExample(api, ws.testKey, "payment.disputed")).statusCode, 202);
      await worker.drain();
      const [pending] = await deliveries(api, ws.testKey);
      assert.ok(pending);
      const scheduled = pending.next_attempt_at;
      // The test worker's jitter is a tenth of each delay: the first retry 5.5 s after the failure.
      assert.deepEqual([pending.status, pending.attempts.length], ["pending", 1]);
      assert.ok(scheduled !== null && Date.parse(scheduled) > clock.now());

      const resend = () => api.request({ method: "POST", url: `/api/v1/webhooks/deliveries/${pending.id}/resend`, key: ws.testKey });
      const first = await resend();
      assert.equal(first.statusCode, 202, first.body);
      assert.deepEqual([(first.json() as Delivery).status, (first.json() as Delivery).next_attempt_at], ["pending", new Date(clock.now()).toISOString()]);
      // Resending again before the attempt is made queues nothing more, and loses nothing of the schedule.
      assert.equal((await resend()).statusCode, 202);
      await worker.drain();
      const afterManual = (await deliveries(api, ws.testKey))[0];
      assert.deepEqual(
        [afterManual?.status, afterManual?.next_attempt_at, afterManual?.attempts.map((a) => [a.status_code, a.manual])],
        [
          "pending",
          scheduled,
          [
            [500, false],
            [500, true],
          ],
        ],
        "the manual attempt failed: the delivery waits for the retry it was scheduled for",
      );

      // The scheduled retry comes when it was due, and the manual attempt did not count
      // among the schedule's: the next delay is the second one (5 min, +10%), not the third (30 min).
      clock.set(Date.parse(scheduled as string));
      await worker.drain();
      const retried = (await deliveries(api, ws.testKey))[0];
      assert.equal(retried?.attempts.length, 3);
      assert.deepEqual([retried?.status, retried?.next_attempt_at], ["pending", new Date(clock.now() + 330_000).toISOString()]);

      receiver.handle = answer(204);
      assert.equal((await resend()).statusCode, 202);
      await worker.drain();
      const done = (await deliveries(api, ws.testKey))[0];
      assert.deepEqual(
        [done?.status, done?.next_attempt_at, done?.attempts.map((a) => [a.status_code, a.manual])],
        [
          "succeeded",
          null,
          [
            [500, false],
            [500, true],
            [500, false],
            [204, true],
          ],
        ],
      );
      // Nothing more goes once it has succeeded, when the old schedule would have been due.
      clock.advance(DAY_MS);
      await worker.drain();
      assert.equal(receiver.received.length, 4);
      assert.deepEqual(worker.errors, []);
    });

    test("a delivery of a disabled or removed endpoint cannot be resent", async () => {
      const { services } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const receiver = await startReceiver();
      const { endpoint } = await addEndpoint(api, ws.testKey, receiver.url);
      await sendExample(api, ws.testKey, "payment.refunded");
      await api.request({ method: "POST", url: `/api/v1/webhooks/endpoints/${endpoint.id}/disable`, key: ws.testKey });
      const [failed] = await deliveries(api, ws.testKey);
      assert.equal(failed?.status, "failed");
      const resend = () => api.request({ method: "POST", url: `/api/v1/webhooks/deliveries/${failed?.id}/resend`, key: ws.testKey });
      assert.equal((await resend()).statusCode, 400);
      await api.request({ method: "DELETE", url: `/api/v1/webhooks/endpoints/${endpoint.id}`, key: ws.testKey });
      assert.equal((await resend()).statusCode, 400);
      await testWorker(services).drain();
      assert.equal(receiver.received.length, 0);
      assert.equal((await deliveries(api, ws.testKey))[0]?.status, "failed");
    });

    test("recover queues only the endpoint's failed deliveries created in the last hour, day, week or month", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const receiver = await startReceiver(answer(200));
      const neighbour = await startReceiver(answer(200));
      const { endpoint } = await addEndpoint(api, ws.testKey, receiver.url);
      const other = await addEndpoint(api, ws.testKey, neighbour.url);
      const worker = testWorker(services);

      // One that succeeded, then events 40 days, 20 days, 3 days, 20 hours and 30 minutes old.
      const start = clock.now();
      await sendExample(api, ws.testKey, "purchase.completed");
      await worker.drain();
      const succeeded = receiver.ids();
      assert.equal(succeeded.length, 1);
      const ages = [40 * DAY_MS, 20 * DAY_MS, 3 * DAY_MS, 20 * HOUR_MS, 30 * MINUTE_MS];
      const end = start + 41 * DAY_MS;
      const eventIds: string[] = [];
      for (const age of ages) {
        clock.set(end - age);
        const sent = await sendExample(api, ws.testKey, "payment.refunded");
        eventIds.push((sent.json() as { event: { id: string } }).event.id);
      }
      clock.set(end);
      // Both endpoints disabled and enabled again: everything they still owed has failed.
      for (const id of [endpoint.id, other.endpoint.id]) {
        await api.request({ method: "POST", url: `/api/v1/webhooks/endpoints/${id}/disable`, key: ws.testKey });
        const recover = await api.request({ method: "POST", url: `/api/v1/webhooks/endpoints/${id}/recover`, key: ws.testKey, payload: { since: "day" } });
        assert.equal(recover.statusCode, 400, "recovering a disabled endpoint");
        await api.request({ method: "POST", url: `/api/v1/webhooks/endpoints/${id}/enable`, key: ws.testKey });
      }
      assert.equal((await deliveries(api, ws.testKey, "&status=failed")).length, 10);
      const recoverable = async (id: string) => {
        const response = await api.request({ url: `/api/v1/webhooks/endpoints/${id}/recoverable`, key: ws.testKey });
        assert.equal(response.statusCode, 200, response.body);
        return response.json();
      };
      // What recover would queue for each window: not the one that succeeded, nor the 40-day-old one.
      assert.deepEqual(await recoverable(endpoint.id), { hour: 1, day: 2, week: 3, month: 4, retrying: { hour: 0, day: 0, week: 0, month: 0 } });
      assert.equal((await api.request({ url: "/api/v1/webhooks/endpoints/ep_nope/recoverable", key: ws.testKey })).statusCode, 404);

      const recover = async (since: string) => {
        const response = await api.request({ method: "POST", url: `/api/v1/webhooks/endpoints/${endpoint.id}/recover`, key: ws.testKey, payload: { since } });
        assert.equal(response.statusCode, 202, response.body);
        const pending = await deliveries(api, ws.testKey, "&status=pending");
        await worker.drain();
        return { queued: (response.json() as { queued: number }).queued, events: pending.map((d) => d.event) };
      };
      // Newest first in the list; each window adds the next older one.
      assert.deepEqual(await recover("hour"), { queued: 1, events: [eventIds[4]] });
      assert.deepEqual(await recover("day"), { queued: 1, events: [eventIds[3]] });
      assert.deepEqual(await recover("week"), { queued: 1, events: [eventIds[2]] });
      assert.deepEqual(await recover("month"), { queued: 1, events: [eventIds[1]] });
      assert.deepEqual(await recover("month"), { queued: 0, events: [] });
      assert.deepEqual(await recoverable(endpoint.id), { hour: 0, day: 0, week: 0, month: 0, retrying: { hour: 0, day: 0, week: 0, month: 0 } });
      assert.deepEqual(
        await recoverable(other.endpoint.id),
        { hour: 1, day: 2, week: 3, month: 4, retrying: { hour: 0, day: 0, week: 0, month: 0 } },
        "the other endpoint's are its own",
      );
      assert.deepEqual(receiver.ids(), [...succeeded, eventIds[4], eventIds[3], eventIds[2], eventIds[1]]);
      assert.equal(neighbour.received.length, 1, "the other endpoint's failed deliveries are not recovered");
      const failed = await deliveries(api, ws.testKey, `&status=failed&endpoint=${endpoint.id}`);
      assert.deepEqual(
        failed.map((d) => d.event),
        [eventIds[0]],
      );
      const recovered = await deliveries(api, ws.testKey, `&status=succeeded&endpoint=${endpoint.id}`);
      for (const d of recovered.filter((r) => r.event !== succeeded[0])) assert.deepEqual(d.attempts.map((a) => a.manual).at(-1), true);

      const bad = await api.request({ method: "POST", url: `/api/v1/webhooks/endpoints/${endpoint.id}/recover`, key: ws.testKey, payload: { since: "year" } });
      assert.equal(bad.statusCode, 400);

      // The count is in the OpenAPI document, with its answer's shape.
      const doc = (await api.app.inject({ url: "/api/v1/openapi.json" })).json();
      const counted = doc.paths["/api/v1/webhooks/endpoints/{id}/recoverable"]?.get;
      assert.equal(counted?.operationId, "countRecoverableDeliveries");
      assert.deepEqual(Object.keys(counted?.responses["200"].content["application/json"].schema.properties ?? {}), [
        "hour",
        "day",
        "week",
        "month",
        "retrying",
      ]);
    });
  });

  describe(`example events through the service (${dialect})`, () => {
    test("an example of each type goes signed to every enabled endpoint, logged like any event", async () => {
      const { services, clock } = await testServices(dialect);
      // Receivers check the signature's timestamp against their own clock.
      clock.set(Date.now());
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const all = await startReceiver();
      const filtered = await startReceiver();
      const off = await startReceiver();
      const a = await addEndpoint(api, ws.testKey, all.url);
      const b = await addEndpoint(api, ws.testKey, filtered.url, ["payment.refunded"]);
      const c = await addEndpoint(api, ws.testKey, off.url);
      await api.request({ method: "POST", url: `/api/v1/webhooks/endpoints/${c.endpoint.id}/disable`, key: ws.testKey });

      const sent: { id: string; type: string; livemode: boolean }[] = [];
      for (const type of EVENT_TYPES) {
        const response = await sendExample(api, ws.testKey, type);
        assert.equal(response.statusCode, 202, response.body);
        const body = response.json() as { event: { id: string; type: string; livemode: boolean }; deliveries: number };
        assert.equal(body.deliveries, 2);
        assert.deepEqual([body.event.type, body.event.livemode], [type, false]);
        sent.push(body.event);
      }
      const worker = testWorker(services);
      await worker.drain();
      for (const [receiver, secret] of [
        [all, a.secret],
        [filtered, b.secret],
      ] as const) {
        assert.deepEqual(
          receiver.received.map((r) => verify(secret, r)),
          sent,
          "every example, in order, verified with the endpoint's own secret",
        );
        assert.throws(() => verify(secret === a.secret ? b.secret : a.secret, receiver.received[0] as ReceivedRequest));
      }
      assert.equal(off.received.length, 0);

      const events = (await api.request({ url: "/api/v1/webhooks/events?limit=10", key: ws.testKey })).json() as { data: { id: string }[] };
      assert.deepEqual(new Set(events.data.map((e) => e.id)), new Set(sent.map((e) => e.id)));
      const logged = await deliveries(api, ws.testKey);
      assert.equal(logged.length, EVENT_TYPES.length * 2, "each example to the two enabled endpoints");
      for (const d of logged) assert.deepEqual([d.status, d.attempts.length, d.attempts[0]?.status_code], ["succeeded", 1, 200]);

      const unknown = await sendExample(api, ws.testKey, "payment.refund");
      assert.deepEqual([unknown.statusCode, errorOf(unknown).param], [400, "type"]);
      const live = await sendExample(api, ws.liveKey, "payment.refunded");
      assert.deepEqual([(live.json() as { event: { livemode: boolean } }).event.livemode, (live.json() as { deliveries: number }).deliveries], [true, 0]);
      assert.deepEqual(worker.errors, []);
    });

    test("past the daily limit (test and live together) example events answer 429 rate_limit_error until the next UTC day", async () => {
      const { services, clock } = await testServices(dialect, { WARDEN_LIMIT_EXAMPLE_EVENTS_PER_DAY: "3" });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const receiver = await startReceiver();
      await addEndpoint(api, ws.testKey, receiver.url);
      clock.set(Date.parse("2026-11-21T08:00:00.000Z"));
      assert.equal((await sendExample(api, ws.testKey, "purchase.completed")).statusCode, 202);
      // Signed and sent by `warden events send --url`: counted, not stored.
      const local = await api.request({
        method: "POST",
        url: "/api/v1/webhooks/examples",
        key: ws.testKey,
        payload: { type: "payment.refunded", deliver: false },
      });
      assert.equal(local.statusCode, 202);
      assert.equal((local.json() as { deliveries: number }).deliveries, 0);
      assert.equal((await sendExample(api, ws.testKey, "dispute.closed")).statusCode, 202);
      clock.set(Date.parse("2026-11-21T23:59:59.999Z"));
      // Per workspace: the live environment's key shares the test one's count.
      for (const [key, deliver] of [
        [ws.testKey, true],
        [ws.testKey, false],
        [ws.liveKey, true],
      ] as const) {
        const refused = await api.request({
          method: "POST",
          url: "/api/v1/webhooks/examples",
          key,
          payload: { type: "payment.disputed", deliver },
        });
        assert.equal(refused.statusCode, 429);
        assert.equal(errorOf(refused).type, "rate_limit_error");
        assert.match(errorOf(refused).message, /example events/);
        assert.equal(refused.headers["retry-after"], "1");
      }
      const events = (await api.request({ url: "/api/v1/webhooks/events", key: ws.testKey })).json() as { data: { type: string }[] };
      assert.deepEqual(events.data.map((e) => e.type).sort(), ["dispute.closed", "purchase.completed"]);
      await testWorker(services).drain();
      assert.equal(receiver.received.length, 2);

      clock.set(Date.parse("2026-11-22T00:00:00.000Z"));
      assert.equal((await sendExample(api, ws.testKey, "payment.disputed")).statusCode, 202);
    });
  });
}
