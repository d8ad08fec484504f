import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { DAY_MS } from "../clock.js";
import type { Services } from "../services.js";
import { DIALECTS, seedWorkspace, type TestApi, testApi, testServices } from "../test-support/harness.js";

function post(api: TestApi, key: string, tool: string, payload: Record<string, unknown>, idempotencyKey?: string): Promise<LightMyRequestResponse> {
  return api.request({
    method: "POST",
    url: `/api/v1/tools/${tool}/grants`,
    key,
    payload,
    headers: idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey },
  });
}

async function grantIds(services: Services, workspaceId: string): Promise<string[]> {
  const rows = await services.db.selectFrom("grants").select("id").where("workspace_id", "=", workspaceId).orderBy("id").execute();
  return rows.map((r) => r.id);
}

for (const dialect of DIALECTS) {
  describe(`Idempotency-Key on create a grant (${dialect})`, () => {
    test("the same key and body answer the same grant, stored and counted once", async () => {
      const { services, clock } = await testServices(dialect, { WARDEN_LIMIT_ADDITIONS_PER_DAY: "2" });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const body = { email: "a@example.com", days: 7, note: "launch" };

      const first = await post(api, ws.testKey, ws.tool, body, "order-1");
      assert.equal(first.statusCode, 201, first.body);
      assert.equal(first.headers["idempotent-replayed"], undefined);
      clock.advance(60_000);
      const replay = await post(api, ws.testKey, ws.tool, body, "order-1");
      assert.equal(replay.statusCode, 201, replay.body);
      assert.equal(replay.headers["idempotent-replayed"], "true");
      assert.deepEqual(replay.json(), first.json());
      assert.deepEqual(await grantIds(services, ws.workspaceId), [first.json().id]);

      // Two additions a day: the replay used none, so one more grant is allowed, then no more.
      assert.equal((await post(api, ws.testKey, ws.tool, { email: "b@example.com" })).statusCode, 201);
      assert.equal((await post(api, ws.testKey, ws.tool, { email: "c@example.com" })).statusCode, 429);
      // A replay is still answered once the limit is reached: it adds nothing.
      assert.equal((await post(api, ws.testKey, ws.tool, body, "order-1")).json().id, first.json().id);
    });

    test("the same key with another body answers 400 naming Idempotency-Key, and writes nothing", async () => {
      const { services } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const first = await post(api, ws.testKey, ws.tool, { email: "a@example.com" }, "order-2");
      assert.equal(first.statusCode, 201);

      for (const other of [{ email: "b@example.com" }, { email: "a@example.com", days: 1 }, { email: "a@example.com", note: "x" }]) {
        const response = await post(api, ws.testKey, ws.tool, other, "order-2");
        assert.equal(response.statusCode, 400, response.body);
        assert.deepEqual(Object.keys(response.json().error).sort(), ["message", "param", "type"]);
        assert.equal(response.json().error.type, "invalid_request_error");
        assert.equal(response.json().error.param, "Idempotency-Key");
      }
      assert.deepEqual(await grantIds(services, ws.workspaceId), [first.json().id]);
    });

    test("after 24 hours the key is fresh again", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const first = await post(api, ws.testKey, ws.tool, { email: "a@example.com" }, "order-3");

      clock.advance(DAY_MS - 1);
      assert.equal((await post(api, ws.testKey, ws.tool, { email: "a@example.com" }, "order-3")).json().id, first.json().id);
      assert.equal((await post(api, ws.testKey, ws.tool, { email: "b@example.com" }, "order-3")).statusCode, 400);

      clock.advance(1);
      const fresh = await post(api, ws.testKey, ws.tool, { email: "b@example.com" }, "order-3");
      assert.equal(fresh.statusCode, 201, fresh.body);
      assert.notEqual(fresh.json().id, first.json().id);
      assert.equal(fresh.headers["idempotent-replayed"], undefined);
      assert.equal((await grantIds(services, ws.workspaceId)).length, 2);
    });

    test("keys are per workspace and environment", async () => {
      const { services } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const other = await seedWorkspace(services);
      const api = await testApi(services);
      const body = { email: "a@example.com" };

      const inTest = await post(api, ws.testKey, ws.tool, body, "shared");
      const inLive = await post(api, ws.liveKey, ws.tool, body, "shared");
      const elsewhere = await post(api, other.testKey, other.tool, body, "shared");
      for (const response of [inTest, inLive, elsewhere]) {
        assert.equal(response.statusCode, 201, response.body);
        assert.equal(response.headers["idempotent-replayed"], undefined);
      }
      assert.equal(new Set([inTest.json().id, inLive.json().id, elsewhere.json().id]).size, 3);
      // Another body under the same key in another environment is no mismatch either.
      assert.equal((await post(api, ws.liveKey, ws.tool, { email: "z@example.com" }, "shared-2")).statusCode, 201);
      assert.equal((await post(api, ws.testKey, ws.tool, { email: "y@example.com" }, "shared-2")).statusCode, 201);
      assert.equal((await grantIds(services, ws.workspaceId)).length, 4);
      assert.equal((await grantIds(services, other.workspaceId)).length, 1);
    });

    test("a refused creation does not keep the key", async () => {
      const { services } = await testServices(dialect, { WARDEN_LIMIT_GRANTS_PER_TOOL_PER_DAY: "1" });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      assert.equal((await post(api, ws.testKey, ws.tool, { email: "a@example.com" })).statusCode, 201);
      assert.equal((await post(api, ws.testKey, ws.tool, { email: "b@example.com" }, "order-4")).statusCode, 429);
      assert.equal((await post(api, ws.testKey, ws.tool, { email: "a@example.com", days: 1 }, "order-4")).statusCode, 429);
    });

    test("concurrent requests with one key make one grant", async () => {
      const { services } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const answers = await Promise.all(Array.from({ length: 8 }, () => post(api, ws.testKey, ws.tool, { email: "a@example.com" }, "race")));
      for (const answer of answers) assert.equal(answer.statusCode, 201, answer.body);
      assert.equal(new Set(answers.map((a) => a.json().id)).size, 1);
      assert.equal((await grantIds(services, ws.workspaceId)).length, 1);
    });
  });
}
