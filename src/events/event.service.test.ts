import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Env } from "../db/schema.js";
import { newId } from "../ids.js";
import type { Services } from "../services.js";
import { DIALECTS, seedWorkspace, type TestApi, testApi, testServices, type Workspace } from "../test-support/harness.js";
import { startReceiver, testWorker } from "../test-support/webhooks.js";
import { emitEvent } from "./event.service.js";

// A refund with its data keys deliberately out of the specification's order: what is
// stored must be the specification's envelope, in its order, whatever the caller built.
function refund(ws: Workspace, options: { env?: Env; createdAt: number; id?: string }) {
  return {
    workspaceId: ws.workspaceId,
    env: options.env ?? ("test" as Env),
    id: options.id ?? newId("evt"),
    type: "payment.refunded" as const,
    createdAt: options.createdAt,
    data: { currency: "eur", amount: 2900, payment_intent: "pi_3Q", licence: "lic_abc", email: "zoë@example.com", tool: ws.tool },
  };
}

const emit = (services: Services, event: ReturnType<typeof refund>) => services.db.transaction().execute((trx) => emitEvent(trx, event));

async function addEndpoint(api: TestApi, key: string, url: string): Promise<string> {
  const response = await api.request({ method: "POST", url: "/api/v1/webhooks/endpoints", key, payload: { url } });
  assert.equal(response.statusCode, 201, response.body);
  return (response.json() as { endpoint: { id: string } }).endpoint.id;
}

async function storedEvents(services: Services, ws: Workspace, id: string) {
  return services.db.selectFrom("events").selectAll().where("workspace_id", "=", ws.workspaceId).where("id", "=", id).execute();
}

async function deliveriesOf(services: Services, eventId: string) {
  return services.db.selectFrom("deliveries").selectAll().where("event_id", "=", eventId).execute();
}

for (const dialect of DIALECTS) {
  describe(`event store (${dialect})`, () => {
    test("an emitted event is stored in the specification's envelope, byte for byte, in the caller's transaction", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const event = refund(ws, { createdAt: clock.now() + 999 });
      assert.equal(await emit(services, event), true);
      const [row, ...more] = await storedEvents(services, ws, event.id);
      assert.equal(more.length, 0);
      assert.ok(row);
      const created = Math.floor(event.createdAt / 1000);
      assert.equal(
        row.body,
        `{"id":"${event.id}","type":"payment.refunded","created":${created},"livemode":false,` +
          `"data":{"tool":"tabmaster","email":"zoë@example.com","licence":"lic_abc","payment_intent":"pi_3Q","amount":2900,"currency":"eur"}}`,
      );
      assert.equal(row.env, "test");
      assert.equal(row.type, "payment.refunded");
      assert.equal(Number(row.created_at), event.createdAt);
    });

    test("an event is stored whether or not an endpoint listens, and owes one delivery to each enabled endpoint", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const lonely = refund(ws, { createdAt: clock.now() });
      await emit(services, lonely);
      assert.equal((await storedEvents(services, ws, lonely.id)).length, 1);
      assert.equal((await deliveriesOf(services, lonely.id)).length, 0);

      const first = await addEndpoint(api, ws.testKey, "https://hooks.example.com/a");
      const second = await addEndpoint(api, ws.testKey, "https://hooks.example.com/b");
      const disabled = await addEndpoint(api, ws.testKey, "https://hooks.example.com/c");
      assert.equal((await api.request({ method: "POST", url: `/api/v1/webhooks/endpoints/${disabled}/disable`, key: ws.testKey })).statusCode, 200);
      const heard = refund(ws, { createdAt: clock.now() });
      await emit(services, heard);
      const deliveries = await deliveriesOf(services, heard.id);
      assert.deepEqual(deliveries.map((d) => d.endpoint_id).sort(), [first, second].sort());
      for (const d of deliveries) assert.deepEqual([d.status, d.attempts, Number(d.next_attempt_at)], ["pending", 0, heard.createdAt]);
    });

    test("emitting the same event id twice stores it once and delivers it once", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const receiver = await startReceiver();
      await addEndpoint(api, ws.testKey, receiver.url);
      const event = refund(ws, { createdAt: clock.now() });
      assert.equal(await emit(services, event), true);
      // The same fact reported again later (from the dashboard after the processor, say).
      clock.advance(60_000);
      assert.equal(await emit(services, { ...event, createdAt: clock.now() }), false);
      assert.equal((await storedEvents(services, ws, event.id)).length, 1);
      assert.equal((await deliveriesOf(services, event.id)).length, 1);
      const worker = testWorker(services);
      await worker.drain();
      clock.advance(60_000);
      await worker.drain();
      assert.deepEqual(receiver.ids(), [event.id]);
      assert.deepEqual(worker.errors, []);
    });

    test("an event emitted in a transaction that rolls back leaves no event and no delivery (outbox)", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const receiver = await startReceiver();
      await addEndpoint(api, ws.testKey, receiver.url);
      const event = refund(ws, { createdAt: clock.now() });
      await assert.rejects(
        services.db.transaction().execute(async (trx) => {
          assert.equal(await emitEvent(trx, event), true);
          // Inside the transaction the event and its delivery are there...
          assert.equal((await trx.selectFrom("deliveries").select("id").where("event_id", "=", event.id).execute()).length, 1);
          // ...and the state change it reports fails after it.
          throw new Error("the change the event reports failed");
        }),
        /the change the event reports failed/,
      );
      assert.deepEqual(await storedEvents(services, ws, event.id), []);
      assert.deepEqual(await deliveriesOf(services, event.id), []);
      await testWorker(services).drain();
      assert.equal(receiver.received.length, 0);
      // Having rolled back, the fact can still be reported: its id is not burnt.
      assert.equal(await emit(services, event), true);
    });

    test("events are listed newest first with cursor paging, per workspace and environment, livemode false for test keys", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const other = await seedWorkspace(services);
      const api = await testApi(services);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        clock.advance(1_000);
        const event = refund(ws, { createdAt: clock.now() });
        await emit(services, event);
        ids.push(event.id);
      }
      const live = refund(ws, { env: "live", createdAt: clock.now() });
      await emit(services, live);
      const elsewhere = refund(other, { createdAt: clock.now() });
      await emit(services, elsewhere);

      const seen: { id: string; livemode: boolean; created: number }[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const query: string = cursor === null ? "limit=2" : `limit=2&cursor=${encodeURIComponent(cursor)}`;
        const response = await api.request({ url: `/api/v1/webhooks/events?${query}`, key: ws.testKey });
        assert.equal(response.statusCode, 200, response.body);
        const page = response.json() as { data: { id: string; livemode: boolean; created: number }[]; has_more: boolean; next_cursor: string | null };
        assert.equal(page.has_more, page.next_cursor !== null);
        seen.push(...page.data);
        cursor = page.next_cursor;
        pages++;
      } while (cursor !== null && pages < 10);
      assert.equal(pages, 3);
      assert.deepEqual(
        seen.map((e) => e.id),
        [...ids].reverse(),
      );
      for (const e of seen) assert.equal(e.livemode, false);

      const liveList = await api.request({ url: "/api/v1/webhooks/events", key: ws.liveKey });
      assert.deepEqual(
        (liveList.json() as { data: { id: string; livemode: boolean }[] }).data.map((e) => [e.id, e.livemode]),
        [[live.id, true]],
      );
      const otherList = await api.request({ url: "/api/v1/webhooks/events", key: other.testKey });
      assert.deepEqual(
        (otherList.json() as { data: { id: string }[] }).data.map((e) => e.id),
        [elsewhere.id],
      );
      // The list answers the stored envelope itself.
      const [row] = await storedEvents(services, ws, ids[0] as string);
      assert.deepEqual(seen.at(-1), JSON.parse(row?.body ?? ""));

      const filtered = await api.request({ url: "/api/v1/webhooks/events?type=purchase.completed", key: ws.testKey });
      assert.deepEqual((filtered.json() as { data: unknown[] }).data, []);
      const firstPage = (await api.request({ url: "/api/v1/webhooks/events?limit=2", key: ws.testKey })).json() as { next_cursor: string };
      // A cursor is bound to its workspace, environment and filter.
      for (const [key, query] of [
        [ws.liveKey, ""],
        [other.testKey, ""],
        [ws.testKey, "&type=payment.refunded"],
        [ws.testKey, "x"],
      ] as const) {
        const response = await api.request({ url: `/api/v1/webhooks/events?cursor=${encodeURIComponent(firstPage.next_cursor)}${query}`, key });
        assert.equal(response.statusCode, 400, `${key} ${query}`);
        assert.equal((response.json() as { error: { param: string } }).error.param, "cursor");
      }
    });
  });
}
