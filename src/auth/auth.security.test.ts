import assert from "node:assert/strict";
import { createHash, randomInt } from "node:crypto";
import { describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { sql } from "kysely";
import { randomBase62 } from "../ids.js";
import { DIALECTS, seedWorkspace, type TestApi, testApi, testServices, unique } from "../test-support/harness.js";
import { createKey, createTool, revokeKey, setOwnerSuspension } from "../workspaces/workspace.service.js";

// Wrong keys are counted per source address in the file's shared database, so every
// test sends from an address of its own and never eats another test's allowance.
const newAddress = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

function assertError(response: LightMyRequestResponse, status: number, type: string): void {
  assert.equal(response.statusCode, status, response.body);
  const body = response.json();
  assert.deepEqual(Object.keys(body), ["error"]);
  assert.equal(body.error.type, type);
}

function customersUrl(tool: string): string {
  return `/api/v1/tools/${tool}/customers`;
}

async function get(
  api: TestApi,
  url: string,
  key: string | undefined,
  extra: { host?: string; remoteAddress?: string; headers?: Record<string, string> } = {},
) {
  return api.request({
    url,
    ...(key === undefined ? {} : { key }),
    remoteAddress: extra.remoteAddress ?? newAddress(),
    headers: { ...(extra.host ? { host: extra.host } : {}), ...extra.headers },
  });
}

for (const dialect of DIALECTS) {
  describe(`authentication (${dialect})`, () => {
    test("no key, a malformed key or an unknown key answers 401 authentication_error", async () => {
      const { services } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const url = customersUrl(ws.tool);
      const body32 = randomBase62(32);

      assertError(await get(api, url, undefined), 401, "authentication_error");
      const malformed = [
        `wk_prod_${body32}`, // wrong prefix
        `sk_test_${body32}`,
        `wk_test_${body32.slice(1)}`, // 31 characters
        `wk_test_${body32}x`, // 33 characters
        `wk_test_${body32.slice(1)}-`, // not base62
        `wk_test_${body32.slice(1)}é`,
        ws.testKey.toUpperCase().replace("WK_TEST_", "wk_TEST_"),
      ];
      for (const key of malformed) assertError(await get(api, url, key), 401, "authentication_error");
      for (const header of [`Basic ${ws.testKey}`, `Bearer ${ws.testKey} extra`, `Bearer`, ws.testKey]) {
        assertError(await get(api, url, undefined, { headers: { authorization: header } }), 401, "authentication_error");
      }
      assertError(await get(api, url, `wk_test_${body32}`), 401, "authentication_error");
      assertError(await get(api, url, `wk_live_${body32}`), 401, "authentication_error");

      assert.equal((await get(api, url, ws.testKey)).statusCode, 200);
      assert.equal((await get(api, url, ws.liveKey)).statusCode, 200);
    });

    test("the auth scheme is case-insensitive, as HTTP says", async () => {
      const { services } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const response = await get(api, customersUrl(ws.tool), undefined, { headers: { authorization: `bearer ${ws.testKey}` } });
      assert.equal(response.statusCode, 200, response.body);
    });

    test("a key revoked while the app runs answers 401 on the very next request", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const created = await createKey(services.db, clock, { workspace: ws.slug, env: "test" });
      assert.equal((await get(api, customersUrl(ws.tool), created.key)).statusCode, 200);

      await revokeKey(services.db, clock, { id: created.id });
      assertError(await get(api, customersUrl(ws.tool), created.key), 401, "authentication_error");
      // The workspace's other keys are untouched.
      assert.equal((await get(api, customersUrl(ws.tool), ws.testKey)).statusCode, 200);
    });

    test("in a serving process, keys are trusted between two turns of the key watch: a change behind its back is refused after the next turn, its own at once", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const url = customersUrl(ws.tool);
      const created = await createKey(services.db, clock, { workspace: ws.slug, env: "test" });
      const source = newAddress();
      assert.equal((await get(api, url, created.key, { remoteAddress: source })).statusCode, 200);
      await services.accessWatch.poll();

      // Another process (an operator's SQL here) revokes the key: until the watch's next
      // turn this process still answers from memory; after it, 401.
      await sql`update api_keys set revoked_at = ${clock.now()} where id = ${created.id}`.execute(services.db);
      assert.equal((await get(api, url, created.key, { remoteAddress: source })).statusCode, 200);
      await services.accessWatch.poll();
      assertError(await get(api, url, created.key, { remoteAddress: source }), 401, "authentication_error");

      // Another process's wrong keys block an address: refused once the watch has read it.
      assert.equal((await get(api, url, ws.testKey, { remoteAddress: source })).statusCode, 200);
      await services.accessWatch.poll();
      await sql`update counters set count = 30 where scope = ${`wrong-keys:${source}`}`.execute(services.db);
      assert.equal((await get(api, url, ws.testKey, { remoteAddress: source })).statusCode, 200);
      await services.accessWatch.poll();
      assertError(await get(api, url, ws.testKey, { remoteAddress: source }), 429, "rate_limit_error");

      // This process's own revocation and suspension apply to its next request.
      const second = await createKey(services.db, clock, { workspace: ws.slug, env: "test" });
      assert.equal((await get(api, url, second.key)).statusCode, 200);
      await services.accessWatch.poll();
      await revokeKey(services.db, clock, { id: second.id });
      assertError(await get(api, url, second.key), 401, "authentication_error");
      assert.equal((await get(api, url, ws.liveKey)).statusCode, 200);
      await services.accessWatch.poll();
      await setOwnerSuspension(services.db, clock, { email: ws.ownerEmail, suspended: true });
      assertError(await get(api, url, ws.liveKey), 401, "authentication_error");
    });

    test("a suspended owner's keys answer 401 until the owner is unsuspended", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const other = await seedWorkspace(services);
      const api = await testApi(services);

      await setOwnerSuspension(services.db, clock, { email: ws.ownerEmail, suspended: true });
      assertError(await get(api, customersUrl(ws.tool), ws.testKey), 401, "authentication_error");
      assertError(await get(api, customersUrl(ws.tool), ws.liveKey), 401, "authentication_error");
      assert.equal((await get(api, customersUrl(other.tool), other.testKey)).statusCode, 200);

      await setOwnerSuspension(services.db, clock, { email: ws.ownerEmail, suspended: false });
      assert.equal((await get(api, customersUrl(ws.tool), ws.testKey)).statusCode, 200);
    });

    test("a Host naming another workspace answers 401; a Host naming none uses the key's workspace", async () => {
      const { services } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const other = await seedWorkspace(services);
      const api = await testApi(services);
      const url = customersUrl(ws.tool);

      for (const host of [
        `${other.slug}.warden.test`,
        `${other.slug}.warden.test:8443`,
        `${unique("nobody")}.warden.test`,
        `${other.slug.toUpperCase()}.WARDEN.TEST`,
        // A fully qualified name's trailing dot names the same address.
        `${other.slug}.warden.test.`,
        `${other.slug}.warden.test.:443`,
        `${other.slug}.WARDEN.test..`,
        // Under the domain but not a workspace's address: no fallback to the key's own.
        `x.${ws.slug}.warden.test`,
        `${ws.slug}_x.warden.test`,
      ]) {
        assertError(await get(api, url, ws.testKey, { host }), 401, "authentication_error");
      }
      for (const host of [
        `${ws.slug}.warden.test`,
        `${ws.slug}.warden.test:8443`,
        `${ws.slug.toUpperCase()}.Warden.Test`,
        `${ws.slug}.warden.test.`,
        `${ws.slug}.warden.test.:8443`,
        "warden.test.",
        "localhost",
        "localhost:8080",
        "127.0.0.1",
        "127.0.0.1:8080",
        "[::1]:8080",
        "warden.test",
      ]) {
        const response = await get(api, url, ws.testKey, { host });
        assert.equal(response.statusCode, 200, `${host}: ${response.body}`);
      }
    });

    test("keys are stored only as a SHA-256 hash", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const created = await createKey(services.db, clock, { workspace: ws.slug, env: "live", name: "ci" });
      assert.match(created.key, /^wk_live_[0-9A-Za-z]{32}$/);
      const rows = await services.db.selectFrom("api_keys").selectAll().where("workspace_id", "=", ws.workspaceId).execute();
      assert.equal(rows.length, 3);
      const stored = JSON.stringify(rows);
      for (const key of [ws.testKey, ws.liveKey, created.key]) {
        assert.ok(!stored.includes(key), "a key is stored in plain text");
        assert.ok(!stored.includes(key.slice(8)), "a key's random part is stored in plain text");
      }
      const row = rows.find((r) => r.id === created.id);
      assert.equal(row?.hash, createHash("sha256").update(created.key).digest("hex"));
    });
  });

  describe(`isolation (${dialect})`, () => {
    test("a test key never sees live data, and the reverse", async () => {
      const { services } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const base = `/api/v1/tools/${ws.tool}`;

      const live = await api.request({ method: "POST", url: `${base}/grants`, key: ws.liveKey, payload: { email: "live@example.com" } });
      assert.equal(live.statusCode, 201, live.body);
      const testGrant = await api.request({ method: "POST", url: `${base}/grants`, key: ws.testKey, payload: { email: "test@example.com" } });
      assert.equal(testGrant.statusCode, 201, testGrant.body);

      const listed = await api.request({ url: `${base}/grants?email=live%40example.com`, key: ws.testKey });
      assert.equal(listed.statusCode, 200);
      assert.deepEqual(listed.json(), { data: [] });
      assertError(await api.request({ url: `${base}/customers/live%40example.com`, key: ws.testKey }), 404, "not_found");
      assertError(await api.request({ method: "DELETE", url: `${base}/grants/${live.json().id}`, key: ws.testKey }), 404, "not_found");
      const testCustomers = await api.request({ url: `${base}/customers`, key: ws.testKey });
      assert.deepEqual(
        testCustomers.json().data.map((c: { email: string }) => c.email),
        ["test@example.com"],
      );

      // The reverse: the live key sees its own grant and not the test one.
      assert.equal((await api.request({ url: `${base}/grants?email=live%40example.com`, key: ws.liveKey })).json().data.length, 1);
      assert.deepEqual((await api.request({ url: `${base}/grants?email=test%40example.com`, key: ws.liveKey })).json(), { data: [] });
      assertError(await api.request({ url: `${base}/customers/test%40example.com`, key: ws.liveKey }), 404, "not_found");
      assertError(await api.request({ method: "DELETE", url: `${base}/grants/${testGrant.json().id}`, key: ws.liveKey }), 404, "not_found");
      const liveCustomers = await api.request({ url: `${base}/customers`, key: ws.liveKey });
      assert.deepEqual(
        liveCustomers.json().data.map((c: { email: string }) => c.email),
        ["live@example.com"],
      );
    });

    test("another workspace's tool or grant, or a missing tool, answers 404 not_found", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const other = await seedWorkspace(services);
      const theirs = unique("theirs");
      await createTool(services.db, clock, { workspace: other.slug, id: theirs, name: "Their tool" });
      const api = await testApi(services);

      const theirGrant = await api.request({
        method: "POST",
        url: `/api/v1/tools/${other.tool}/grants`,
        key: other.testKey,
        payload: { email: "a@example.com" },
      });
      assert.equal(theirGrant.statusCode, 201);

      for (const tool of [theirs, "missing-tool"]) {
        assertError(await api.request({ url: `/api/v1/tools/${tool}/customers`, key: ws.testKey }), 404, "not_found");
        assertError(await api.request({ url: `/api/v1/tools/${tool}/customers/a%40example.com`, key: ws.testKey }), 404, "not_found");
        assertError(await api.request({ url: `/api/v1/tools/${tool}/grants?email=a%40example.com`, key: ws.testKey }), 404, "not_found");
        const created = await api.request({ method: "POST", url: `/api/v1/tools/${tool}/grants`, key: ws.testKey, payload: { email: "a@example.com" } });
        assertError(created, 404, "not_found");
      }
      // Both workspaces have a tool "tabmaster": an id from the other one is still not ours.
      assertError(await api.request({ method: "DELETE", url: `/api/v1/tools/${ws.tool}/grants/${theirGrant.json().id}`, key: ws.testKey }), 404, "not_found");
      assertError(await api.request({ url: `/api/v1/tools/${ws.tool}/customers/a%40example.com`, key: ws.testKey }), 404, "not_found");
      const grants = await services.db.selectFrom("grants").select("id").where("workspace_id", "=", ws.workspaceId).execute();
      assert.deepEqual(grants, []);
    });
  });

  describe(`wrong-key limit (${dialect})`, () => {
    async function sendWrongKeys(api: TestApi, url: string, count: number, remoteAddress: string, headers: Record<string, string> = {}) {
      for (let i = 0; i < count; i++) {
        assertError(await get(api, url, `wk_test_${randomBase62(32)}`, { remoteAddress, headers }), 401, "authentication_error");
      }
    }

    test("thirty wrong keys a minute from one address answer 429 until the minute passes; other addresses go on", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const url = customersUrl(ws.tool);
      const source = newAddress();
      clock.advance(5_000);

      // Malformed, unknown and revoked keys all count as wrong.
      const revoked = await createKey(services.db, clock, { workspace: ws.slug, env: "test" });
      await revokeKey(services.db, clock, { id: revoked.id });
      assertError(await get(api, url, "wk_test_short", { remoteAddress: source }), 401, "authentication_error");
      assertError(await get(api, url, revoked.key, { remoteAddress: source }), 401, "authentication_error");
      await sendWrongKeys(api, url, 28, source);

      const blocked = await get(api, url, `wk_test_${randomBase62(32)}`, { remoteAddress: source });
      assertError(blocked, 429, "rate_limit_error");
      assert.equal(blocked.headers["retry-after"], "55");
      assert.equal(blocked.headers["ratelimit-limit"], "30");
      assert.equal(blocked.headers["ratelimit-remaining"], "0");
      assert.equal(blocked.headers["ratelimit-reset"], "55");

      // Even the right key is refused from that address; another address is not.
      assertError(await get(api, url, ws.testKey, { remoteAddress: source }), 429, "rate_limit_error");
      assert.equal((await get(api, url, ws.testKey, { remoteAddress: newAddress() })).statusCode, 200);

      clock.advance(54_999);
      assertError(await get(api, url, ws.testKey, { remoteAddress: source }), 429, "rate_limit_error");
      clock.advance(1);
      assert.equal((await get(api, url, ws.testKey, { remoteAddress: source })).statusCode, 200);
    });

    test("29 wrong keys leave the address free", async () => {
      const { services } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const source = newAddress();
      await sendWrongKeys(api, customersUrl(ws.tool), 29, source);
      assert.equal((await get(api, customersUrl(ws.tool), ws.testKey, { remoteAddress: source })).statusCode, 200);
    });

    test("X-Forwarded-For is ignored unless WARDEN_TRUST_PROXY is set", async () => {
      const { services } = await testServices(dialect, { WARDEN_LIMIT_WRONG_KEYS_PER_MIN: "3" });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const url = customersUrl(ws.tool);
      const proxy = newAddress();

      // Each wrong key claims another client address; all are counted against the socket's.
      for (let i = 0; i < 3; i++) {
        await sendWrongKeys(api, url, 1, proxy, { "x-forwarded-for": newAddress() });
      }
      assertError(await get(api, url, ws.testKey, { remoteAddress: proxy, headers: { "x-forwarded-for": newAddress() } }), 429, "rate_limit_error");
    });

    test("behind a trusted proxy, the address the proxy appended to X-Forwarded-For is the source", async () => {
      const { services } = await testServices(dialect, { WARDEN_LIMIT_WRONG_KEYS_PER_MIN: "3", WARDEN_TRUST_PROXY: "true" });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const url = customersUrl(ws.tool);
      const proxy = newAddress();
      const attacker = newAddress();

      // A client cannot dodge the limit by writing its own X-Forwarded-For: the proxy
      // appends the real address, and only that right-most entry is believed.
      for (let i = 0; i < 3; i++) {
        await sendWrongKeys(api, url, 1, proxy, { "x-forwarded-for": `${newAddress()}, ${attacker}` });
      }
      assertError(await get(api, url, ws.testKey, { remoteAddress: proxy, headers: { "x-forwarded-for": attacker } }), 429, "rate_limit_error");
      // Other clients behind the same proxy are unaffected.
      const other = await get(api, url, ws.testKey, { remoteAddress: proxy, headers: { "x-forwarded-for": newAddress() } });
      assert.equal(other.statusCode, 200, other.body);
    });
  });
}
