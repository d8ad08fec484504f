import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { sql } from "kysely";
import pg from "pg";
import { DAY_MS, ManualClock, MINUTE_MS } from "../clock.js";
import { parseConfig } from "../config.js";
import { ensurePerson } from "../customers/person.store.js";
import { type Dialect, openStorage, type Storage } from "../db/database.js";
import { ApiError } from "../errors/errors.js";
import { insertGrant } from "../grants/grant.store.js";
import { countPassesBeforeAdding } from "../grants/pass.store.js";
import { newId, randomBase62 } from "../ids.js";
import { createServices, type Services } from "../services.js";
import { DIALECTS, PG_URL, seedWorkspace, type TestApi, testApi, testServices, unique, type Workspace } from "../test-support/harness.js";
import { createKey, createTool, createWorkspace } from "../workspaces/workspace.service.js";

const HOUR_MS = 60 * MINUTE_MS;

function assertRateLimited(response: LightMyRequestResponse, limit: number): void {
  assert.equal(response.statusCode, 429, response.body);
  assert.equal(response.json().error.type, "rate_limit_error");
  assert.match(String(response.headers["retry-after"]), /^[1-9]\d*$/);
  assert.equal(response.headers["ratelimit-limit"], String(limit));
  assert.equal(response.headers["ratelimit-remaining"], "0");
  assert.equal(response.headers["ratelimit-reset"], response.headers["retry-after"]);
}

/** Resolves once some PostgreSQL backend of this test's schema waits on an advisory lock. */
async function waitForLockWaiter(services: Services): Promise<void> {
  for (;;) {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted`.execute(services.db);
    if ((rows[0]?.n ?? 0) > 0) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const grantsUrl = (tool: string) => `/api/v1/tools/${tool}/grants`;

function postGrant(api: TestApi, key: string, tool: string, payload: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  return api.request({ method: "POST", url: grantsUrl(tool), key, payload: { email: `${unique("p")}@example.com`, ...payload }, headers });
}

async function grantRows(services: Services, workspaceId: string): Promise<number> {
  const rows = await services.db.selectFrom("grants").select("id").where("workspace_id", "=", workspaceId).execute();
  return rows.length;
}

/** A second workspace of the same owner, with a tool of the same id and a test key. */
async function seedSibling(services: Services, ws: Workspace): Promise<Workspace> {
  const { db, clock } = services;
  const slug = unique("ws");
  const workspace = await createWorkspace(db, clock, { slug, name: "Sibling", ownerEmail: ws.ownerEmail, plan: "pro" });
  await createTool(db, clock, { workspace: slug, id: ws.tool, name: "Tab Master" });
  const testKey = (await createKey(db, clock, { workspace: slug, env: "test" })).key;
  const liveKey = (await createKey(db, clock, { workspace: slug, env: "live" })).key;
  return { slug, workspaceId: workspace.id, ownerEmail: ws.ownerEmail, tool: ws.tool, testKey, liveKey };
}

async function addCustomers(api: TestApi, ws: Workspace, count: number): Promise<void> {
  for (let i = 0; i < count; i++) assert.equal((await postGrant(api, ws.testKey, ws.tool)).statusCode, 201);
}

const nextUtcDay = (now: number) => Math.floor(now / DAY_MS) * DAY_MS + DAY_MS;

/** A database of the test's own, for tests that break it. */
async function privateStorage(dialect: Dialect): Promise<Storage> {
  if (dialect === "sqlite") {
    const storage = openStorage({ databaseUrl: null, sqliteFile: ":memory:" });
    after(() => storage.close());
    return storage;
  }
  const schema = `t_${process.pid}_${randomBase62(8).toLowerCase()}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const storage = openStorage({ databaseUrl: PG_URL, pgSchema: schema, poolSize: 2 });
  after(async () => {
    await storage.close();
    const dropper = new pg.Client({ connectionString: PG_URL });
    await dropper.connect();
    await dropper.query(`drop schema ${schema} cascade`);
    await dropper.end();
  });
  return storage;
}

async function failAdditionCounts(services: Services, dialect: Dialect, fail: boolean): Promise<void> {
  const statements =
    dialect === "sqlite"
      ? fail
        ? [
            `create trigger fail_additions_insert before insert on counters when new.scope like 'additions:%' begin select raise(abort, 'could not extend file'); end`,
            `create trigger fail_additions_update before update on counters when new.scope like 'additions:%' begin select raise(abort, 'could not extend file'); end`,
          ]
        : ["drop trigger fail_additions_insert", "drop trigger fail_additions_update"]
      : fail
        ? [
            `create function fail_additions() returns trigger language plpgsql as $$ begin if new.scope like 'additions:%' then raise exception 'could not extend file'; end if; return new; end $$`,
            "create trigger fail_additions before insert or update on counters for each row execute function fail_additions()",
          ]
        : ["drop trigger fail_additions on counters", "drop function fail_additions()"];
  for (const statement of statements) await sql.raw(statement).execute(services.db);
}

for (const dialect of DIALECTS) {
  describe(`request limits (${dialect})`, () => {
    test("requests per key per minute; a new minute resets them", async () => {
      const { services, clock } = await testServices(dialect, { WARDEN_LIMIT_KEY_REQUESTS_PER_MIN: "3" });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const url = `/api/v1/tools/${ws.tool}/customers`;

      clock.advance(15_000);
      for (let i = 0; i < 3; i++) assert.equal((await api.request({ url, key: ws.testKey })).statusCode, 200);
      const refused = await api.request({ url, key: ws.testKey });
      assertRateLimited(refused, 3);
      assert.equal(refused.headers["retry-after"], "45");
      // Every request counts, whatever it asks for, and a refused one writes nothing.
      assertRateLimited(await postGrant(api, ws.testKey, ws.tool), 3);
      assert.equal(await grantRows(services, ws.workspaceId), 0);
      // The limit is per key.
      assert.equal((await api.request({ url, key: ws.liveKey })).statusCode, 200);

      clock.advance(45_000 - 1);
      assertRateLimited(await api.request({ url, key: ws.testKey }), 3);
      clock.advance(1);
      assert.equal((await api.request({ url, key: ws.testKey })).statusCode, 200);
    });

    test("a writing request's key count is written at once; a reading one's comes from a leased block", async () => {
      const { services } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const key = await createKey(services.db, services.clock, { workspace: ws.slug, env: "test" });
      const stored = async () =>
        Number((await services.db.selectFrom("counters").select("count").where("scope", "=", `key-requests:${key.id}`).executeTakeFirst())?.count ?? 0);
      assert.equal((await postGrant(api, key.key, ws.tool)).statusCode, 201);
      assert.equal(await stored(), 1, "the grant's request alone, by the batcher");
      assert.equal((await api.request({ url: "/api/v1/webhooks/endpoints", key: key.key })).statusCode, 200);
      assert.ok((await stored()) > 2, "a read's request takes a block");
    });

    test("lookups count the key's request in their own statement: every answer counts once, errors included", async () => {
      const { services, clock } = await testServices(dialect, { WARDEN_LIMIT_KEY_REQUESTS_PER_MIN: "5", WARDEN_LIMIT_LOOKUPS_PER_DAY: "2" });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const base = `/api/v1/tools/${ws.tool}`;

      clock.advance(15_000);
      assert.equal((await api.request({ url: `${base}/customers/a%40example.com`, key: ws.testKey })).statusCode, 404);
      // A missing tool and an invalid parameter answer before any lookup is counted; the key's request still counts.
      assert.equal((await api.request({ url: "/api/v1/tools/missing-tool/customers/a%40example.com", key: ws.testKey })).statusCode, 404);
      assert.equal((await api.request({ url: `${base}/grants`, key: ws.testKey })).statusCode, 400);
      assert.equal((await api.request({ url: `${base}/grants?email=a%40example.com`, key: ws.testKey })).statusCode, 200);
      // Refused by the lookups quota: still one of the key's requests.
      assertRateLimited(await api.request({ url: `${base}/customers/a%40example.com`, key: ws.testKey }), 2);
      const refused = await api.request({ url: `${base}/customers/a%40example.com`, key: ws.testKey });
      assertRateLimited(refused, 5);
      assert.equal(refused.headers["retry-after"], "45");
      assertRateLimited(await api.request({ url: "/api/v1/tools/missing-tool/customers/a%40example.com", key: ws.testKey }), 5);
      assertRateLimited(await api.request({ url: `${base}/customers`, key: ws.testKey }), 5);
      // The live key has requests and (per environment) lookups of its own.
      assert.equal((await api.request({ url: `${base}/customers/a%40example.com`, key: ws.liveKey })).statusCode, 404);
      clock.advance(45_000);
      assertRateLimited(await api.request({ url: `${base}/customers/a%40example.com`, key: ws.testKey }), 2);
      assert.equal((await api.request({ url: `${base}/customers`, key: ws.testKey })).statusCode, 200);
    });

    test("list pages per minute per workspace, all keys of the environment together", async () => {
      const { services, clock } = await testServices(dialect, { WARDEN_LIMIT_LIST_PAGES_PER_MIN: "3" });
      const ws = await seedWorkspace(services);
      const secondKey = (await createKey(services.db, clock, { workspace: ws.slug, env: "test" })).key;
      const other = await seedWorkspace(services);
      const api = await testApi(services);
      const url = `/api/v1/tools/${ws.tool}/customers`;

      assert.equal((await api.request({ url, key: ws.testKey })).statusCode, 200);
      assert.equal((await api.request({ url, key: secondKey })).statusCode, 200);
      assert.equal((await api.request({ url: `${url}?entitled=true`, key: ws.testKey })).statusCode, 200);
      assertRateLimited(await api.request({ url, key: secondKey }), 3);
      assertRateLimited(await api.request({ url, key: ws.testKey }), 3);
      // Retrieve-a-customer is not a list page.
      assert.equal((await api.request({ url: `${url}/nobody%40example.com`, key: ws.testKey })).statusCode, 404);
      // Counters are kept per environment (decisions.md), and per workspace.
      assert.equal((await api.request({ url, key: ws.liveKey })).statusCode, 200);
      assert.equal((await api.request({ url: `/api/v1/tools/${other.tool}/customers`, key: other.testKey })).statusCode, 200);

      clock.advance(MINUTE_MS);
      assert.equal((await api.request({ url, key: secondKey })).statusCode, 200);
    });
  });

  describe(`rows read by lists (${dialect})`, () => {
    test("per workspace per day: a page reserves its size, is charged the rows it returns, and never passes the day's figure", async () => {
      const { services, clock } = await testServices(dialect, { WARDEN_LIMIT_ROWS_READ_PER_DAY: "4" });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      await addCustomers(api, ws, 3);
      const url = (limit: number) => `/api/v1/tools/${ws.tool}/customers?limit=${limit}`;

      assert.equal((await api.request({ url: url(3), key: ws.testKey })).json().data.length, 3);
      // 3 of 4 rows used: a page of 3 could pass the figure, so it is refused; a page of 1 fits.
      assertRateLimited(await api.request({ url: url(3), key: ws.testKey }), 4);
      assert.equal((await api.request({ url: url(1), key: ws.testKey })).json().data.length, 1);
      assertRateLimited(await api.request({ url: url(1), key: ws.testKey }), 4);

      clock.set(nextUtcDay(clock.now()) - 1);
      assertRateLimited(await api.request({ url: url(1), key: ws.testKey }), 4);
      clock.advance(1);
      assert.equal((await api.request({ url: url(500), key: ws.testKey })).statusCode, 429, "a page of 500 never fits in 4 rows");
      assert.equal((await api.request({ url: url(4), key: ws.testKey })).json().data.length, 3);
      // The page of 4 returned 3: the unused row was given back.
      assert.equal((await api.request({ url: url(1), key: ws.testKey })).json().data.length, 1);
    });

    test("20 concurrent pages of 5 against 40 rows a day: exactly 8 are served", async () => {
      const { services } = await testServices(dialect, { WARDEN_LIMIT_ROWS_READ_PER_DAY: "40", WARDEN_LIMIT_LIST_PAGES_PER_MIN: "1000" });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      await addCustomers(api, ws, 5);
      const answers = await Promise.all(Array.from({ length: 20 }, () => api.request({ url: `/api/v1/tools/${ws.tool}/customers?limit=5`, key: ws.testKey })));
      assert.deepEqual(answers.map((a) => a.statusCode).sort(), [...Array(8).fill(200), ...Array(12).fill(429)]);
    });

    test("an empty page still costs one row", async () => {
      const { services } = await testServices(dialect, { WARDEN_LIMIT_ROWS_READ_PER_DAY: "2" });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const url = `/api/v1/tools/${ws.tool}/customers?limit=1`;
      for (let i = 0; i < 2; i++) assert.deepEqual((await api.request({ url, key: ws.testKey })).json().data, []);
      assertRateLimited(await api.request({ url, key: ws.testKey }), 2);
    });

    test("the rows read are counted across all workspaces of one owner; another owner's workspace reads on", async () => {
      const { services } = await testServices(dialect, { WARDEN_LIMIT_ROWS_READ_PER_DAY: "4" });
      const ws = await seedWorkspace(services);
      const sibling = await seedSibling(services, ws);
      const stranger = await seedWorkspace(services);
      const api = await testApi(services);
      await addCustomers(api, ws, 3);
      await addCustomers(api, sibling, 1);
      await addCustomers(api, stranger, 3);
      const url = `/api/v1/tools/${ws.tool}/customers?limit=3`;
      const one = `/api/v1/tools/${ws.tool}/customers?limit=1`;

      assert.equal((await api.request({ url, key: ws.testKey })).json().data.length, 3);
      assert.equal((await api.request({ url: one, key: sibling.testKey })).json().data.length, 1);
      // The sibling has read 1 row of its 4, but the owner has read 4.
      assertRateLimited(await api.request({ url: one, key: sibling.testKey }), 4);
      assertRateLimited(await api.request({ url: one, key: ws.testKey }), 4);
      assert.equal((await api.request({ url, key: stranger.testKey })).statusCode, 200);
    });
  });

  describe(`customer lookups (${dialect})`, () => {
    test("per workspace: retrieve and list grants count together, before the read, in a day anchored at the first lookup", async () => {
      const { services, clock } = await testServices(dialect, { WARDEN_LIMIT_LOOKUPS_PER_DAY: "3" });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const base = `/api/v1/tools/${ws.tool}`;
      assert.equal((await postGrant(api, ws.testKey, ws.tool, { email: "known@example.com" })).statusCode, 201);

      clock.advance(3 * HOUR_MS);
      const firstLookup = clock.now();
      assert.equal((await api.request({ url: `${base}/customers/known%40example.com`, key: ws.testKey })).statusCode, 200);
      // An unknown address still costs a lookup.
      assert.equal((await api.request({ url: `${base}/customers/unknown%40example.com`, key: ws.testKey })).statusCode, 404);
      clock.advance(HOUR_MS);
      assert.equal((await api.request({ url: `${base}/grants?email=known%40example.com`, key: ws.testKey })).statusCode, 200);

      assertRateLimited(await api.request({ url: `${base}/customers/known%40example.com`, key: ws.testKey }), 3);
      assertRateLimited(await api.request({ url: `${base}/grants?email=known%40example.com`, key: ws.testKey }), 3);
      // Not a lookup: creating a grant and listing are limited elsewhere.
      assert.equal((await api.request({ url: `${base}/customers`, key: ws.testKey })).statusCode, 200);

      // Past UTC midnight, and until 24 hours after the first lookup, still refused.
      clock.set(firstLookup + 23 * HOUR_MS + 59 * MINUTE_MS);
      assertRateLimited(await api.request({ url: `${base}/customers/known%40example.com`, key: ws.testKey }), 3);
      clock.set(firstLookup + DAY_MS);
      assert.equal((await api.request({ url: `${base}/customers/known%40example.com`, key: ws.testKey })).statusCode, 200);
    });

    test("lookups, lists of grants included, are counted across all workspaces of one owner; another owner's workspace looks up on", async () => {
      const { services } = await testServices(dialect, { WARDEN_LIMIT_LOOKUPS_PER_DAY: "3" });
      const ws = await seedWorkspace(services);
      const sibling = await seedSibling(services, ws);
      const stranger = await seedWorkspace(services);
      const api = await testApi(services);
      const lookup = (w: Workspace) => api.request({ url: `/api/v1/tools/${w.tool}/customers/a%40example.com`, key: w.testKey });

      assert.equal((await lookup(ws)).statusCode, 404);
      assert.equal((await lookup(ws)).statusCode, 404);
      assert.equal((await lookup(sibling)).statusCode, 404);
      assertRateLimited(await lookup(sibling), 3);
      assertRateLimited(await api.request({ url: `/api/v1/tools/${ws.tool}/grants?email=a%40example.com`, key: sibling.testKey }), 3);
      assertRateLimited(await lookup(ws), 3);
      assert.equal((await lookup(stranger)).statusCode, 404);
    });

    test("a lookup refused by the owner's limit does not use up the workspace's own", async () => {
      const { services, clock } = await testServices(dialect, { WARDEN_LIMIT_LOOKUPS_PER_DAY: "3" });
      const ws = await seedWorkspace(services);
      const sibling = await seedSibling(services, ws);
      const api = await testApi(services);
      const lookup = (w: Workspace) => api.request({ url: `/api/v1/tools/${w.tool}/customers/a%40example.com`, key: w.testKey });

      const start = clock.now();
      assert.equal((await lookup(ws)).statusCode, 404);
      clock.advance(HOUR_MS);
      assert.equal((await lookup(sibling)).statusCode, 404);
      assert.equal((await lookup(sibling)).statusCode, 404);
      assertRateLimited(await lookup(sibling), 3);
      assertRateLimited(await lookup(sibling), 3);

      // The owner's day is over; the sibling's own day (from its first lookup) is not,
      // and it has made two lookups of three.
      clock.set(start + DAY_MS);
      assert.equal((await lookup(sibling)).statusCode, 404);
      assertRateLimited(await lookup(sibling), 3);
    });
  });

  describe(`grant limits (${dialect})`, () => {
    test("create a grant: per tool per day; another tool of the workspace is still allowed", async () => {
      const { services, clock } = await testServices(dialect, { WARDEN_LIMIT_GRANTS_PER_TOOL_PER_DAY: "2" });
      const ws = await seedWorkspace(services);
      await createTool(services.db, clock, { workspace: ws.slug, id: "second-tool", name: "Second" });
      const api = await testApi(services);

      for (let i = 0; i < 2; i++) assert.equal((await postGrant(api, ws.testKey, ws.tool)).statusCode, 201);
      assertRateLimited(await postGrant(api, ws.testKey, ws.tool), 2);
      assert.equal(await grantRows(services, ws.workspaceId), 2);
      assert.equal((await postGrant(api, ws.testKey, "second-tool")).statusCode, 201);

      clock.set(nextUtcDay(clock.now()));
      assert.equal((await postGrant(api, ws.testKey, ws.tool)).statusCode, 201);
    });

    test("additions per workspace per day, across its tools", async () => {
      const { services, clock } = await testServices(dialect, { WARDEN_LIMIT_ADDITIONS_PER_DAY: "2" });
      const ws = await seedWorkspace(services);
      await createTool(services.db, clock, { workspace: ws.slug, id: "second-tool", name: "Second" });
      const api = await testApi(services);

      assert.equal((await postGrant(api, ws.testKey, ws.tool)).statusCode, 201);
      assert.equal((await postGrant(api, ws.testKey, "second-tool")).statusCode, 201);
      assertRateLimited(await postGrant(api, ws.testKey, ws.tool), 2);
      assertRateLimited(await postGrant(api, ws.testKey, "second-tool"), 2);
      assert.equal(await grantRows(services, ws.workspaceId), 2);
      const people = await services.db.selectFrom("people").select("id").where("workspace_id", "=", ws.workspaceId).execute();
      assert.equal(people.length, 2, "a refused grant left a person behind");

      clock.set(nextUtcDay(clock.now()));
      assert.equal((await postGrant(api, ws.testKey, ws.tool)).statusCode, 201);
    });

    test("additions are counted across all workspaces of one owner; another owner's workspace adds on", async () => {
      const { services } = await testServices(dialect, { WARDEN_LIMIT_ADDITIONS_PER_DAY: "2" });
      const ws = await seedWorkspace(services);
      const sibling = await seedSibling(services, ws);
      const stranger = await seedWorkspace(services);
      const api = await testApi(services);

      assert.equal((await postGrant(api, ws.testKey, ws.tool)).statusCode, 201);
      assert.equal((await postGrant(api, sibling.testKey, sibling.tool)).statusCode, 201);
      assertRateLimited(await postGrant(api, sibling.testKey, sibling.tool), 2);
      assertRateLimited(await postGrant(api, ws.testKey, ws.tool), 2);
      assert.equal(await grantRows(services, sibling.workspaceId), 1);
      assert.equal((await postGrant(api, stranger.testKey, stranger.tool)).statusCode, 201);
    });

    test("hobby plan passes: refused at the cap with 403, freed by revoking or by expiry", async () => {
      const { services, clock } = await testServices(dialect, { WARDEN_LIMIT_HOBBY_PASSES: "2", WARDEN_LIMIT_ADDITIONS_PER_DAY: "4" });
      const ws = await seedWorkspace(services, { plan: "hobby" });
      const pro = await seedWorkspace(services, { plan: "pro" });
      const api = await testApi(services);

      const timed = await postGrant(api, ws.testKey, ws.tool, { days: 1 });
      assert.equal(timed.statusCode, 201);
      const lasting = await postGrant(api, ws.testKey, ws.tool);
      assert.equal(lasting.statusCode, 201);
      for (let i = 0; i < 2; i++) {
        const refused = await postGrant(api, ws.testKey, ws.tool);
        assert.equal(refused.statusCode, 403, refused.body);
        assert.equal(refused.json().error.type, "plan_limit_error");
      }
      assert.equal(await grantRows(services, ws.workspaceId), 2);
      // Passes are counted per environment.
      assert.equal((await postGrant(api, ws.liveKey, ws.tool)).statusCode, 201);

      assert.equal((await api.request({ method: "DELETE", url: `${grantsUrl(ws.tool)}/${lasting.json().id}`, key: ws.testKey })).statusCode, 200);
      // Four additions allowed a day: had the two refused grants used any, this would be the fifth.
      assert.equal((await postGrant(api, ws.testKey, ws.tool)).statusCode, 201);
      assert.equal((await postGrant(api, ws.testKey, ws.tool)).statusCode, 403);

      // The timed grant ends by itself; no job runs in between.
      clock.advance(DAY_MS);
      assert.equal((await postGrant(api, ws.testKey, ws.tool)).statusCode, 201);
      assert.equal((await postGrant(api, ws.testKey, ws.tool)).statusCode, 403);

      for (let i = 0; i < 3; i++) assert.equal((await postGrant(api, pro.testKey, pro.tool)).statusCode, 201);
    });
  });

  describe(`example webhook events (${dialect})`, () => {
    test("example events are limited per workspace per day, refused until the next UTC day", async () => {
      const { services, clock } = await testServices(dialect, { WARDEN_LIMIT_EXAMPLE_EVENTS_PER_DAY: "3" });
      const ws = await seedWorkspace(services);
      const other = await seedWorkspace(services);
      const subject = { workspaceId: ws.workspaceId };
      const send = () => services.limits.countExampleEvent(services.db, subject, clock.now());

      for (let i = 0; i < 3; i++) await send();
      await assert.rejects(send(), (error: unknown) => error instanceof ApiError && error.code === "rate_limited" && error.rateLimit?.limit === 3);
      await services.limits.countExampleEvent(services.db, { workspaceId: other.workspaceId }, clock.now());
      clock.set(nextUtcDay(clock.now()) - 1);
      await assert.rejects(send());
      clock.advance(1);
      await send();
    });
  });

  describe(`customers reachable by listing (${dialect})`, () => {
    test("each kind is listed up to its newest 2,000; an older one is still found by address", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      // 2,001 holders written straight to the tables: through the API this would take a minute.
      const start = clock.now() - 10 * DAY_MS;
      const holders = Array.from({ length: 2_001 }, (_, i) => ({ id: newId("psn"), email: `h${i}@example.com`, at: start + i * 1000 }));
      for (let i = 0; i < holders.length; i += 400) {
        const chunk = holders.slice(i, i + 400);
        const place = { workspace_id: ws.workspaceId, env: "test" as const };
        await services.db
          .insertInto("people")
          .values(chunk.map((h) => ({ ...place, id: h.id, email: h.email, email_norm: h.email, signed_in_at: null, created_at: h.at })))
          .execute();
        await services.db
          .insertInto("grants")
          .values(
            chunk.map((h) => ({
              ...place,
              id: newId("gr"),
              tool_id: ws.tool,
              person_id: h.id,
              kind: "grant" as const,
              starts_at: h.at,
              ends_at: null,
              revoked_at: null,
              note: null,
              created_at: h.at,
            })),
          )
          .execute();
        await services.db
          .insertInto("customers")
          .values(chunk.map((h) => ({ ...place, tool_id: ws.tool, person_id: h.id, since: h.at, signed_in: 0, kind: "holder" as const, held_until: null })))
          .execute();
      }
      const member = { id: newId("psn"), email: "member@example.com" };
      await services.db
        .insertInto("people")
        .values({
          workspace_id: ws.workspaceId,
          env: "test",
          id: member.id,
          email: member.email,
          email_norm: member.email,
          signed_in_at: start,
          created_at: start,
        })
        .execute();
      await services.db
        .insertInto("customers")
        .values({
          workspace_id: ws.workspaceId,
          env: "test",
          tool_id: ws.tool,
          person_id: member.id,
          since: start,
          signed_in: 1,
          kind: "member",
          held_until: null,
        })
        .execute();

      const listAll = async (filter: string): Promise<string[]> => {
        const emails: string[] = [];
        let cursor: string | null = null;
        do {
          const page: LightMyRequestResponse = await api.request({
            url: `/api/v1/tools/${ws.tool}/customers?limit=500${filter}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
            key: ws.testKey,
          });
          assert.equal(page.statusCode, 200, page.body);
          emails.push(...page.json().data.map((c: { email: string }) => c.email));
          cursor = page.json().next_cursor;
        } while (cursor !== null);
        return emails;
      };

      const entitled = await listAll("&entitled=true");
      assert.equal(entitled.length, 2_000);
      assert.equal(entitled[0], "h2000@example.com");
      assert.ok(!entitled.includes("h0@example.com"));
      // Without the filter the kinds mix, each under its own cap: the member, older than every holder, is listed.
      const all = await listAll("");
      assert.equal(all.length, 2_001);
      assert.equal(all.at(-1), "member@example.com");
      assert.ok(!all.includes("h0@example.com"));
      const oldest = await api.request({ url: `/api/v1/tools/${ws.tool}/customers/h0%40example.com`, key: ws.testKey });
      assert.equal(oldest.statusCode, 200, oldest.body);
      assert.equal(oldest.json().entitled, true);
    });
  });

  describe(`a limit that cannot be counted (${dialect})`, () => {
    test("answers 500 api_error without detail, and writes nothing", async () => {
      const storage = await privateStorage(dialect);
      const clock = new ManualClock();
      const services = await createServices(parseConfig({ WARDEN_DOMAIN: "warden.test" }), { clock, storage });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      await sql`alter table counters rename to counters_gone`.execute(services.db);

      const created = await postGrant(api, ws.testKey, ws.tool);
      assert.equal(created.statusCode, 500);
      const body = created.json();
      assert.deepEqual(Object.keys(body.error), ["type", "message"]);
      assert.equal(body.error.type, "api_error");
      assert.equal(body.error.message, `The service failed; retry. Request id ${created.headers["request-id"]}.`);
      assert.doesNotMatch(created.body, /counters|select|insert|sqlite|relation|\bat\b/i);
      assert.equal(await grantRows(services, ws.workspaceId), 0);

      const retrieved = await api.request({ url: `/api/v1/tools/${ws.tool}/customers/a%40example.com`, key: ws.testKey });
      assert.equal(retrieved.statusCode, 500);
      assert.equal(retrieved.json().error.type, "api_error");
    });

    test("a failing additions counter stops the grant after its idempotency claim, and nothing stays", async () => {
      const storage = await privateStorage(dialect);
      const clock = new ManualClock();
      const services = await createServices(parseConfig({ WARDEN_DOMAIN: "warden.test" }), { clock, storage });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);

      // The database itself refuses the statements that count additions, deep inside the grant's transaction.
      await failAdditionCounts(services, dialect, true);
      const refused = await postGrant(api, ws.testKey, ws.tool, { email: "a@example.com" }, { "idempotency-key": "k1" });
      assert.equal(refused.statusCode, 500, refused.body);
      assert.equal(refused.json().error.type, "api_error");
      assert.doesNotMatch(refused.body, /counters|extend file/);
      assert.equal(await grantRows(services, ws.workspaceId), 0);
      const people = await services.db.selectFrom("people").select("id").where("workspace_id", "=", ws.workspaceId).execute();
      assert.deepEqual(people, []);

      // Nothing of the failed attempt remains: the key takes a different body afresh.
      await failAdditionCounts(services, dialect, false);
      const retried = await postGrant(api, ws.testKey, ws.tool, { email: "b@example.com" }, { "idempotency-key": "k1" });
      assert.equal(retried.statusCode, 201, retried.body);
      assert.equal(await grantRows(services, ws.workspaceId), 1);
    });
  });

  describe(`limits under concurrency (${dialect})`, () => {
    test("20 concurrent grants against a limit of 5: exactly 5 are made", async () => {
      const { services } = await testServices(dialect, { WARDEN_LIMIT_GRANTS_PER_TOOL_PER_DAY: "5" });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const answers = await Promise.all(Array.from({ length: 20 }, () => postGrant(api, ws.testKey, ws.tool)));
      const statuses = answers.map((a) => a.statusCode).sort();
      assert.deepEqual(statuses, [...Array(5).fill(201), ...Array(15).fill(429)]);
      assert.equal(await grantRows(services, ws.workspaceId), 5);
    });

    test("20 concurrent grants against 5 hobby passes: exactly 5 are made", async () => {
      const { services } = await testServices(dialect, { WARDEN_LIMIT_HOBBY_PASSES: "5" });
      const ws = await seedWorkspace(services, { plan: "hobby" });
      const api = await testApi(services);
      const answers = await Promise.all(Array.from({ length: 20 }, () => postGrant(api, ws.testKey, ws.tool)));
      const statuses = answers.map((a) => a.statusCode).sort();
      assert.deepEqual(statuses, [...Array(5).fill(201), ...Array(15).fill(403)]);
      assert.equal(await grantRows(services, ws.workspaceId), 5);
    });

    test("a hobby pass made by a request whose clock read later still counts for one that read earlier", async () => {
      const { services, clock } = await testServices(dialect, { WARDEN_LIMIT_HOBBY_PASSES: "1" });
      const ws = await seedWorkspace(services, { plan: "hobby" });
      const api = await testApi(services);
      // Two concurrent requests commit in the order they take the lock, not the order they
      // read the clock: the one that commits first may have the later time.
      clock.advance(5_000);
      assert.equal((await postGrant(api, ws.testKey, ws.tool)).statusCode, 201);
      clock.advance(-5_000);
      const second = await postGrant(api, ws.testKey, ws.tool);
      assert.equal(second.statusCode, 403, second.body);
      assert.equal(await grantRows(services, ws.workspaceId), 1);
    });

    if (dialect === "postgres") {
      test("a grant waits for another transaction that counted the passes, and then counts what it added", async () => {
        const { services, clock } = await testServices(dialect, { WARDEN_LIMIT_HOBBY_PASSES: "1" });
        const ws = await seedWorkspace(services, { plan: "hobby" });
        const api = await testApi(services);
        let release = () => {};
        const gate = new Promise<void>((resolve) => {
          release = resolve;
        });
        // Another path that adds a pass (a seat, a trial) has counted and not yet committed.
        let counted = () => {};
        const hasCounted = new Promise<void>((resolve) => {
          counted = resolve;
        });
        const holder = services.db.transaction().execute(async (trx) => {
          assert.equal(await countPassesBeforeAdding(trx, ws.workspaceId, "test", clock.now(), 1), 0);
          counted();
          await gate;
          const person = await ensurePerson(trx, ws.workspaceId, "test", `${unique("held")}@example.com`, clock.now());
          const at = clock.now();
          await insertGrant(trx, {
            id: newId("gr"),
            workspaceId: ws.workspaceId,
            env: "test",
            toolId: ws.tool,
            personId: person.id,
            kind: "grant",
            startsAt: at,
            endsAt: null,
            revokedAt: null,
            note: null,
            createdAt: at,
          });
        });
        await hasCounted;
        const grant = postGrant(api, ws.testKey, ws.tool);
        // The grant must wait for the pass lock; without it, it would be made at once.
        const first = await Promise.race([grant.then(() => "answered" as const), waitForLockWaiter(services).then(() => "waiting" as const)]);
        release();
        await holder;
        assert.equal(first, "waiting");
        const answer = await grant;
        assert.equal(answer.statusCode, 403, answer.body);
      });
    }

    test("20 concurrent lookups against a limit of 5: exactly 5 are answered", async () => {
      const { services } = await testServices(dialect, { WARDEN_LIMIT_LOOKUPS_PER_DAY: "5" });
      const ws = await seedWorkspace(services);
      const sibling = await seedSibling(services, ws);
      const api = await testApi(services);
      // Two workspaces of one owner race for the owner's count as well as their own.
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => {
          const w = i % 2 === 0 ? ws : sibling;
          return api.request({ url: `/api/v1/tools/${w.tool}/customers/a%40example.com`, key: w.testKey });
        }),
      );
      const statuses = answers.map((a) => a.statusCode).sort();
      assert.deepEqual(statuses, [...Array(5).fill(404), ...Array(15).fill(429)]);
    });
  });
}
