import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DAY_MS } from "../clock.js";
import type { Trx } from "../db/database.js";
import { insertGrant } from "../grants/grant.store.js";
import { newId } from "../ids.js";
import { importNdjson } from "../import/import.service.js";
import { DIALECTS, seedWorkspace, type TestApi, type TestEnv, testApi, testServices, type Workspace } from "../test-support/harness.js";
import { createTool } from "../workspaces/workspace.service.js";
import { syncCustomer, toolScope } from "./customer.service.js";
import type { ToolScope } from "./customer.store.js";
import { ensurePerson, markPersonSignedIn } from "./person.store.js";

interface Row {
  email: string;
  entitled: boolean;
  via: string | null;
  since: string;
  account: boolean;
}

/**
 * Many people at once, one second apart, each made a customer by `make` (in the same
 * transaction) through the same stores the API and sign-in write with.
 */
async function seedPeople(
  { services, clock }: TestEnv,
  ws: Workspace,
  count: number,
  prefix: string,
  make: (trx: Trx, scope: ToolScope, personId: string, now: number) => Promise<void>,
): Promise<string[]> {
  const emails: string[] = [];
  await services.db.transaction().execute(async (trx) => {
    const scope = toolScope(ws.workspaceId, "test", ws.tool);
    for (let i = 0; i < count; i++) {
      clock.advance(1000);
      const now = clock.now();
      const email = `${prefix}${i}@example.com`;
      const person = await ensurePerson(trx, ws.workspaceId, "test", email, now);
      await make(trx, scope, person.id, now);
      emails.push(email);
    }
  });
  return emails;
}

/** Holders: a grant each, until revoked. */
const seedHolders = (env: TestEnv, ws: Workspace, count: number, prefix: string) =>
  seedPeople(env, ws, count, prefix, async (trx, scope, personId, now) => {
    await insertGrant(trx, {
      id: newId("gr"),
      workspaceId: ws.workspaceId,
      env: "test",
      toolId: ws.tool,
      personId,
      kind: "grant",
      startsAt: now,
      endsAt: null,
      revokedAt: null,
      note: null,
      createdAt: now,
    });
    await syncCustomer(trx, scope, personId, now);
  });

/** Signed-in non-holders, as a sign-in records them. */
const seedMembers = (env: TestEnv, ws: Workspace, count: number, prefix: string) =>
  seedPeople(env, ws, count, prefix, async (trx, scope, personId, now) => {
    await markPersonSignedIn(trx, personId, now);
    await syncCustomer(trx, scope, personId, now, now);
  });

async function signIn({ services, clock }: TestEnv, ws: Workspace, email: string): Promise<void> {
  const { db } = services;
  clock.advance(1000);
  const now = clock.now();
  const person = await ensurePerson(db, ws.workspaceId, "test", email, now);
  await markPersonSignedIn(db, person.id, now);
  await syncCustomer(db, toolScope(ws.workspaceId, "test", ws.tool), person.id, now, now);
}

async function walk(api: TestApi, ws: Workspace, query: string): Promise<{ rows: Row[]; pages: number }> {
  const rows: Row[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const url: string = `/api/v1/tools/${ws.tool}/customers?${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
    const response = await api.request({ url, key: ws.testKey });
    assert.equal(response.statusCode, 200, response.body);
    const page = response.json();
    assert.equal(page.has_more, page.next_cursor !== null);
    rows.push(...page.data);
    cursor = page.next_cursor;
    pages++;
  } while (cursor !== null);
  return { rows, pages };
}

const grantFor = (api: TestApi, ws: Workspace, email: string, days?: number) =>
  api.request({ method: "POST", url: `/api/v1/tools/${ws.tool}/grants`, key: ws.testKey, payload: days === undefined ? { email } : { email, days } });

for (const dialect of DIALECTS) {
  describe(`list customers (${dialect})`, () => {
    test("pages newest first through holders and signed-in non-holders, each once", async () => {
      const env = await testServices(dialect);
      const { services } = env;
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const holders = await seedHolders(env, ws, 5, "holder");
      await signIn(env, ws, "member@example.com");
      // Known through an ended grant, never signed in: neither kind, so not listed.
      const revoked = (await grantFor(api, ws, "gone@example.com")).json();
      await api.request({ method: "DELETE", url: `/api/v1/tools/${ws.tool}/grants/${revoked.id}`, key: ws.testKey });

      const all = await walk(api, ws, "limit=2");
      assert.deepEqual(
        all.rows.map((r) => r.email),
        ["member@example.com", ...[...holders].reverse()],
      );
      assert.equal(all.pages, 3);
      const member = all.rows[0];
      assert.deepEqual(member && { entitled: member.entitled, via: member.via, account: member.account }, { entitled: false, via: null, account: true });
      assert.ok(all.rows.slice(1).every((r) => r.entitled && r.via === "grant" && !r.account));

      assert.deepEqual(
        (await walk(api, ws, "entitled=true&limit=3")).rows.map((r) => r.email),
        [...holders].reverse(),
      );
      assert.deepEqual(
        (await walk(api, ws, "entitled=false")).rows.map((r) => r.email),
        ["member@example.com"],
      );
    });

    test("default page is 50 rows and the last page has next_cursor null", async () => {
      const env = await testServices(dialect);
      const { services } = env;
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      await seedHolders(env, ws, 51, "p");
      const first = (await api.request({ url: `/api/v1/tools/${ws.tool}/customers`, key: ws.testKey })).json();
      assert.equal(first.data.length, 50);
      assert.equal(first.has_more, true);
      const second = (await api.request({ url: `/api/v1/tools/${ws.tool}/customers?cursor=${encodeURIComponent(first.next_cursor)}`, key: ws.testKey })).json();
      assert.deepEqual({ n: second.data.length, has_more: second.has_more, next_cursor: second.next_cursor }, { n: 1, has_more: false, next_cursor: null });
      assert.equal(second.data[0].email, "p0@example.com");
    });

    test("a timed grant leaves the holders when it ends, with no job run", async () => {
      const env = await testServices(dialect);
      const { services, clock } = env;
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      assert.equal((await grantFor(api, ws, "timed@example.com", 2)).statusCode, 201);
      await signIn(env, ws, "timed@example.com");
      assert.deepEqual(
        (await walk(api, ws, "entitled=true")).rows.map((r) => r.email),
        ["timed@example.com"],
      );

      clock.advance(2 * DAY_MS);
      assert.deepEqual((await walk(api, ws, "entitled=true")).rows, []);
      const members = (await walk(api, ws, "entitled=false")).rows;
      assert.deepEqual(
        members.map((r) => [r.email, r.entitled, r.via]),
        [["timed@example.com", false, null]],
      );
      const grants = (await api.request({ url: `/api/v1/tools/${ws.tool}/grants?email=timed@example.com`, key: ws.testKey })).json();
      assert.equal(grants.data[0].live, false);
    });

    test("since is when the person first held the tool or signed in, and does not move", async () => {
      const env = await testServices(dialect);
      const { services, clock } = env;
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const firstGrantAt = new Date(clock.now()).toISOString();
      const first = (await grantFor(api, ws, "early@example.com")).json();
      await api.request({ method: "DELETE", url: `/api/v1/tools/${ws.tool}/grants/${first.id}`, key: ws.testKey });
      clock.advance(DAY_MS);
      await grantFor(api, ws, "early@example.com");
      const rows = (await walk(api, ws, "")).rows;
      assert.deepEqual(
        rows.map((r) => [r.email, r.since]),
        [["early@example.com", firstGrantAt]],
      );
    });

    test("a team purchase's buyer, who holds nothing by it, is listed from when they signed in", async () => {
      const env = await testServices(dialect);
      const { services, clock } = env;
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const bought = new Date(clock.now() - 10 * DAY_MS).toISOString();
      const signedIn = new Date(clock.now() - DAY_MS).toISOString();
      await importNdjson(services.db, clock, {
        workspace: ws.slug,
        env: "test",
        text: [
          { type: "licence", email: "it@example.org", tool: ws.tool, seats: 3, purchased_at: bought },
          { type: "account", email: "it@example.org", signed_in_at: signedIn, tools: [ws.tool] },
        ]
          .map((line) => JSON.stringify(line))
          .join("\n"),
      });
      const rows = (await walk(api, ws, "entitled=false")).rows;
      assert.deepEqual(
        rows.map((r) => [r.email, r.since, r.entitled]),
        [["it@example.org", signedIn, false]],
      );
    });

    test("only the newest 2,000 holders are listed; older ones are still found one by one", async () => {
      const env = await testServices(dialect);
      const { services } = env;
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const holders = await seedHolders(env, ws, 2003, "h");
      await signIn(env, ws, "member@example.com");

      const listed = await walk(api, ws, "entitled=true&limit=500");
      assert.equal(listed.rows.length, 2000);
      assert.equal(listed.pages, 4);
      assert.deepEqual(
        listed.rows.map((r) => r.email),
        holders.slice(3).reverse(),
      );

      const mixed = await walk(api, ws, "limit=500");
      assert.equal(mixed.rows.length, 2001);
      assert.equal(mixed.rows[0]?.email, "member@example.com");

      const oldest = await api.request({ url: `/api/v1/tools/${ws.tool}/customers/h0%40example.com`, key: ws.testKey });
      assert.equal(oldest.statusCode, 200);
      assert.equal(oldest.json().entitled, true);
    });

    test("only the newest 2,000 signed-in non-holders are listed; older ones are still found one by one", async () => {
      const env = await testServices(dialect);
      const { services } = env;
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      // One holder older and one newer than every member: a cap over both kinds together
      // would drop the older holder, a cap per kind keeps it and drops the oldest member.
      const [olderHolder] = await seedHolders(env, ws, 1, "old-holder");
      const members = await seedMembers(env, ws, 2001, "m");
      const [newerHolder] = await seedHolders(env, ws, 1, "new-holder");
      const newestMembers = members.slice(1).reverse();

      const listed = await walk(api, ws, "entitled=false&limit=500");
      assert.equal(listed.pages, 4);
      assert.deepEqual(
        listed.rows.map((r) => r.email),
        newestMembers,
      );
      assert.ok(listed.rows.every((r) => !r.entitled && r.via === null && r.account));

      const mixed = await walk(api, ws, "limit=500");
      assert.deepEqual(
        mixed.rows.map((r) => r.email),
        [newerHolder, ...newestMembers, olderHolder],
      );

      const oldest = await api.request({ url: `/api/v1/tools/${ws.tool}/customers/${encodeURIComponent(members[0] ?? "")}`, key: ws.testKey });
      assert.equal(oldest.statusCode, 200, oldest.body);
      assert.deepEqual(
        { email: oldest.json().email, entitled: oldest.json().entitled, account: oldest.json().account },
        { email: members[0], entitled: false, account: true },
      );
    });

    test("a cursor that was altered, or belongs to another filter or tool, is refused", async () => {
      const env = await testServices(dialect);
      const { services } = env;
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      await createTool(services.db, services.clock, { workspace: ws.slug, id: "other", name: "Other" });
      await seedHolders(env, ws, 3, "c");
      const page = (await api.request({ url: `/api/v1/tools/${ws.tool}/customers?limit=1`, key: ws.testKey })).json();
      const cursor: string = page.next_cursor;
      const [payload, mac] = cursor.split(".");
      const forged = `${Buffer.from(JSON.stringify([0, "psn_x"])).toString("base64url")}.${mac}`;
      const cases = [
        `/api/v1/tools/${ws.tool}/customers?cursor=${encodeURIComponent(forged)}`,
        `/api/v1/tools/${ws.tool}/customers?cursor=${encodeURIComponent(`${payload}.AAAA`)}`,
        `/api/v1/tools/${ws.tool}/customers?cursor=garbage`,
        `/api/v1/tools/${ws.tool}/customers?entitled=true&cursor=${encodeURIComponent(cursor)}`,
        `/api/v1/tools/other/customers?cursor=${encodeURIComponent(cursor)}`,
      ];
      for (const url of cases) {
        const response = await api.request({ url, key: ws.testKey });
        assert.equal(response.statusCode, 400, url);
        assert.deepEqual(response.json().error.param, "cursor");
        assert.equal(response.json().error.type, "invalid_request_error");
      }
    });
  });
}
