import assert from "node:assert/strict";
import { describe, test } from "node:test";
import Fastify, { type LightMyRequestResponse } from "fastify";
import { sql } from "kysely";
import { ManualClock } from "../clock.js";
import { parseConfig } from "../config.js";
import { newId } from "../ids.js";
import { createServices } from "../services.js";
import { fillDiskFor } from "../test-support/full-disk.js";
import { DIALECTS, seedWorkspace, storageFor, type TestApi, testApi, testServices, type Workspace } from "../test-support/harness.js";
import { renderError, toApiError } from "./error.handler.js";

/** Every error answer is exactly {error: {type, message[, param]}}, as JSON. */
function assertError(response: LightMyRequestResponse, status: number, type: string, param?: string): void {
  assert.equal(response.statusCode, status, response.body);
  assert.match(String(response.headers["content-type"]), /^application\/json/);
  const body = response.json();
  assert.deepEqual(Object.keys(body), ["error"]);
  assert.deepEqual(Object.keys(body.error).sort(), param === undefined ? ["message", "type"] : ["message", "param", "type"]);
  assert.equal(body.error.type, type);
  assert.equal(typeof body.error.message, "string");
  assert.ok(body.error.message.length > 0);
  assert.equal(body.error.param, param);
  assert.doesNotMatch(response.body, /\bat .+:\d+:\d+|node_modules|stack/, "a stack trace leaked");
}

const big = (n: number, c = "a") => c.repeat(n);

async function setup(dialect: (typeof DIALECTS)[number]): Promise<{ api: TestApi; ws: Workspace }> {
  const { services } = await testServices(dialect);
  const ws = await seedWorkspace(services);
  return { api: await testApi(services), ws };
}

for (const dialect of DIALECTS) {
  describe(`error contract (${dialect})`, () => {
    test("unknown routes answer 404 not_found, with or without a key", async () => {
      const { api, ws } = await setup(dialect);
      for (const url of [
        "/nope",
        "/api/v1/nope",
        "/api/v1",
        "/api/v2/tools/x/customers",
        "/api/v1/tools",
        `/api/v1/tools/${ws.tool}`,
        `/api/v1/tools/${ws.tool}/licences`,
      ]) {
        assertError(await api.request({ url }), 404, "not_found");
        assertError(await api.request({ url, key: ws.testKey }), 404, "not_found");
      }
      assertError(await api.request({ method: "POST", url: "/api/v1/nope", payload: {} }), 404, "not_found");
    });

    test("a wrong method on a real path answers 405 with Allow", async () => {
      const { api, ws } = await setup(dialect);
      const base = `/api/v1/tools/${ws.tool}`;
      const cases: [string, string, string[]][] = [
        ["POST", `${base}/customers`, ["GET"]],
        ["DELETE", `${base}/customers/a%40example.com`, ["GET"]],
        ["PUT", `${base}/grants`, ["GET", "POST"]],
        ["PATCH", `${base}/grants/gr_1`, ["DELETE"]],
        ["GET", `${base}/grants/gr_1`, ["DELETE"]],
      ];
      for (const [method, url, allowed] of cases) {
        const response = await api.request({ method: method as "GET", url, key: ws.testKey });
        assertError(response, 405, "invalid_request_error");
        const allow = String(response.headers.allow).split(/,\s*/);
        for (const m of allowed) assert.ok(allow.includes(m), `${method} ${url}: Allow ${response.headers.allow} lacks ${m}`);
        assert.ok(!allow.includes(method), `${method} ${url}: Allow ${response.headers.allow} names the refused method`);
      }
    });

    test("bodies: malformed JSON 400, another Content-Type 415, more than 16 KiB 413", async () => {
      const { api, ws } = await setup(dialect);
      const url = `/api/v1/tools/${ws.tool}/grants`;
      const post = (payload: string, contentType?: string) =>
        api.request({ method: "POST", url, key: ws.testKey, payload, headers: contentType ? { "content-type": contentType } : {} });

      for (const payload of ['{"email": "a@example.com"', "{email: 'a@example.com'}", "", "nul"]) {
        assertError(await post(payload, "application/json"), 400, "invalid_request_error");
      }
      for (const payload of ["[]", '"a@example.com"', "null", "42", '{"email":"a@example.com","__proto__":{"days":5}}']) {
        assertError(await post(payload, "application/json"), 400, "invalid_request_error");
      }
      assertError(await post('{"email":"a@example.com"}', "text/plain"), 415, "invalid_request_error");
      assertError(await post("email=a%40example.com", "application/x-www-form-urlencoded"), 415, "invalid_request_error");
      assertError(await post("--x\r\n\r\n--x--", "multipart/form-data; boundary=x"), 415, "invalid_request_error");
      assertError(await post(JSON.stringify({ email: "a@example.com", note: big(17 * 1024) }), "application/json"), 413, "invalid_request_error");
      // A body of exactly the size allowed still reaches validation.
      assertError(await post(JSON.stringify({ email: "a@example.com", note: big(16 * 1024 - 40) }), "application/json"), 400, "invalid_request_error", "note");
      assert.equal((await post('{"email":"a@example.com"}', "application/json; charset=utf-8")).statusCode, 201);
    });

    test("create-grant fields: unknown, days, note and email name their param", async () => {
      const { api, ws } = await setup(dialect);
      const url = `/api/v1/tools/${ws.tool}/grants`;
      const post = (payload: Record<string, unknown>) => api.request({ method: "POST", url, key: ws.testKey, payload });

      assertError(await post({ email: "a@example.com", colour: "red" }), 400, "invalid_request_error", "colour");
      assertError(await post({}), 400, "invalid_request_error", "email");
      for (const days of [-1, 3651, 1.5, "5", null, true]) {
        assertError(await post({ email: "a@example.com", days }), 400, "invalid_request_error", "days");
      }
      for (const note of [big(201), "bad\u0000note", 7]) {
        assertError(await post({ email: "a@example.com", note }), 400, "invalid_request_error", "note");
      }
      const longLocal = big(64);
      const domain254 = `${big(63, "b")}.${big(63, "c")}.${big(57, "d")}.com`;
      for (const email of [`${longLocal}@${domain254}x`, "not-an-address", "a@b", "a b@example.com", "", "a@example.com\u0000", 5]) {
        assertError(await post({ email }), 400, "invalid_request_error", "email");
      }

      // The edges themselves are accepted.
      for (const payload of [
        { email: `${longLocal}@${domain254}` },
        { email: "b@example.com", days: 0 },
        { email: "c@example.com", days: 1 },
        { email: "d@example.com", days: 3650 },
        { email: "e@example.com", note: big(200) },
        { email: "f@example.com", note: "" },
      ]) {
        const response = await post(payload);
        assert.equal(response.statusCode, 201, `${JSON.stringify(payload).slice(0, 60)}: ${response.body}`);
      }
    });

    test("query and path parameters name their param", async () => {
      const { api, ws } = await setup(dialect);
      const base = `/api/v1/tools/${ws.tool}`;
      const get = (url: string) => api.request({ url, key: ws.testKey });

      for (const limit of ["0", "501", "abc", "1.5", "-1", ""]) {
        assertError(await get(`${base}/customers?limit=${limit}`), 400, "invalid_request_error", "limit");
      }
      assert.equal((await get(`${base}/customers?limit=500`)).statusCode, 200);
      assert.equal((await get(`${base}/customers?limit=1`)).statusCode, 200);
      assertError(await get(`${base}/customers?entitled=maybe`), 400, "invalid_request_error", "entitled");
      assertError(await get(`${base}/customers?colour=red`), 400, "invalid_request_error", "colour");
      assertError(await get(`${base}/customers?cursor=tampered`), 400, "invalid_request_error", "cursor");
      assertError(await get(`${base}/grants`), 400, "invalid_request_error", "email");
      assertError(await get(`${base}/grants?email=`), 400, "invalid_request_error", "email");
      assertError(await get(`${base}/grants?email=${big(255)}`), 400, "invalid_request_error", "email");
      assertError(await get(`/api/v1/tools/${big(65)}/customers`), 400, "invalid_request_error", "tool");
      const idempotent = await api.request({
        method: "POST",
        url: `${base}/grants`,
        key: ws.testKey,
        payload: { email: "a@example.com" },
        headers: { "idempotency-key": big(256) },
      });
      assertError(idempotent, 400, "invalid_request_error", "Idempotency-Key");
    });

    // app.ts must pass `frameworkErrors: renderError(clock)` and raise the router's
    // maxParamLength (100 by default) to an address's 254; until then Fastify answers
    // these itself, outside the contract and without a Request-Id.

    test("a URL that cannot be decoded answers 400 in the contract's shape", async () => {
      const { api, ws } = await setup(dialect);
      assertError(await api.request({ url: `/api/v1/tools/${ws.tool}/customers/%E0%A4%A`, key: ws.testKey }), 400, "invalid_request_error");
      assertError(await api.request({ url: `/api/v1/tools/${ws.tool}/customers?limit=%zz`, key: ws.testKey }), 400, "invalid_request_error", "limit");
    });

    test("an address of up to 254 characters in the path reaches the service", async () => {
      const { api, ws } = await setup(dialect);
      const email = `${big(64)}@${big(63, "b")}.${big(63, "c")}.${big(57, "d")}.com`;
      const created = await api.request({ method: "POST", url: `/api/v1/tools/${ws.tool}/grants`, key: ws.testKey, payload: { email } });
      assert.equal(created.statusCode, 201, created.body);
      const found = await api.request({ url: `/api/v1/tools/${ws.tool}/customers/${encodeURIComponent(email)}`, key: ws.testKey });
      assert.equal(found.statusCode, 200, found.body);
      assertError(await api.request({ url: `/api/v1/tools/${ws.tool}/customers/${big(255)}`, key: ws.testKey }), 400, "invalid_request_error", "email");
    });

    test("every answer carries our own Request-Id, whatever the client sends", async () => {
      const { api, ws } = await setup(dialect);
      const ids = new Set<string>();
      for (const options of [
        { url: `/api/v1/tools/${ws.tool}/customers`, key: ws.testKey },
        { url: `/api/v1/tools/${ws.tool}/customers` },
        { url: "/nope" },
        { url: "/api/v1/openapi.json" },
      ]) {
        const response = await api.request({ ...options, headers: { "request-id": "req_chosenbytheclient00000", "x-request-id": "mine" } });
        const id = String(response.headers["request-id"]);
        assert.notEqual(id, "req_chosenbytheclient00000");
        ids.add(id);
      }
      assert.equal(ids.size, 4);
    });

    test("a 500 says only that the service failed, with the request id; no stack or SQL", async () => {
      const storage = await storageFor(dialect);
      const services = await createServices(parseConfig({ WARDEN_DOMAIN: "warden.test" }), {
        clock: new ManualClock(),
        storage: { ...storage, close: async () => {} },
      });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);

      // The database fails under the request; the table comes back for the file's other tests.
      await sql`alter table people rename to people_away`.execute(services.db);
      const response = await api.request({ url: `/api/v1/tools/${ws.tool}/customers/a%40example.com`, key: ws.testKey });
      await sql`alter table people_away rename to people`.execute(services.db);
      assertError(response, 500, "api_error");
      assert.equal(response.json().error.message, `The service failed; retry. Request id ${response.headers["request-id"]}.`);
      assert.doesNotMatch(response.body, /select|people|relation|Error/);
    });

    test("a write the full disk refuses answers 503 storage_full with Retry-After; a retrieve still answers", async () => {
      const { services } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const email = "held@example.com";
      assert.equal((await api.request({ method: "POST", url: `/api/v1/tools/${ws.tool}/grants`, key: ws.testKey, payload: { email } })).statusCode, 201);
      const roomBack = [await fillDiskFor(services.db, dialect, "grants"), await fillDiskFor(services.db, dialect, "counters")];
      try {
        const refused = await api.request({ method: "POST", url: `/api/v1/tools/${ws.tool}/grants`, key: ws.testKey, payload: { email: "new@example.com" } });
        assertError(refused, 503, "api_error");
        assert.equal(refused.headers["retry-after"], "60");
        assert.equal(refused.json().error.message, "Warden's storage is full, so this change was not saved. Retry later; reads still work.");
        assert.doesNotMatch(refused.body, /SQLITE|disk_full|could not extend|grants/);
        const retrieved = await api.request({ url: `/api/v1/tools/${ws.tool}/customers/${email}`, key: ws.testKey });
        assert.equal(retrieved.statusCode, 200, retrieved.body);
      } finally {
        for (const give of roomBack.reverse()) await give();
      }
      assert.equal(
        (await api.request({ method: "POST", url: `/api/v1/tools/${ws.tool}/grants`, key: ws.testKey, payload: { email: "new@example.com" } })).statusCode,
        201,
      );
    });
  });
}

describe("the renderer as Fastify's frameworkErrors", () => {
  test("a URL Fastify cannot route answers 400 in the contract's shape, with a Request-Id", async () => {
    const app = Fastify({ logger: false, genReqId: () => newId("req"), frameworkErrors: renderError(new ManualClock()) });
    app.get("/items/:id", async () => ({ ok: true }));
    for (const url of ["/items/%E0%A4%A", `/items/${big(101)}`]) {
      const response = await app.inject({ url });
      assertError(response, 400, "invalid_request_error");
      assert.match(String(response.headers["request-id"]), /^req_[0-9A-Za-z]{24}$/);
    }
    await app.close();
  });

  test("Fastify's own 4xx errors are the client's, not a 500", () => {
    const error = Object.assign(new Error("x"), { code: "FST_ERR_SOMETHING_NEW", statusCode: 400 });
    assert.equal(toApiError(error).code, "malformed_request");
    assert.equal(toApiError(Object.assign(new Error("x"), { code: "FST_ERR_SOMETHING_NEW", statusCode: 503 })).code, "internal");
    assert.equal(toApiError(new Error("select * from counters")).code, "internal");
  });

  test("a SyntaxError a handler throws is Warden's failure (500); one a body parser gives 400 is the client's", () => {
    // A stored Idempotency-Key answer that no longer parses throws inside the handler.
    assert.equal(toApiError(new SyntaxError("Unexpected token } in JSON")).code, "internal");
    assert.equal(toApiError(Object.assign(new SyntaxError("Unexpected end of JSON input"), { statusCode: 400 })).code, "malformed_body");
  });

  test("a handler that throws a SyntaxError answers 500 internal, its text not shown", async () => {
    const app = Fastify({ logger: false, genReqId: () => newId("req") });
    app.setErrorHandler(renderError(new ManualClock()));
    app.get("/broken", async () => JSON.parse("{not json"));
    const response = await app.inject({ url: "/broken" });
    assertError(response, 500, "api_error");
    assert.doesNotMatch(response.body, /not json|Unexpected/);
    await app.close();
  });
});
