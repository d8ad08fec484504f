import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "kysely";
import { DAY_MS } from "../clock.js";
import { ApiError } from "../errors/errors.js";
import type { RequestContext } from "../services.js";
import { seedCustomerRows } from "../test-support/customer-rows.js";
import { DIALECTS, seedWorkspace, type TestEnv, testApi, testServices, type Workspace } from "../test-support/harness.js";
import { listWorkspaceOwnerIds } from "../workspaces/workspace.service.js";
import {
  type BrowseOptions,
  browseCustomers,
  type CustomerBrowseResult,
  EXPORT_CHUNK,
  exportCustomers,
  LISTED_PER_KIND,
  listCustomers,
  SEARCH_MATCHES,
  toolScope,
} from "./customer.service.js";
import { upsertCustomerRow } from "./customer.store.js";
import { ensurePeople } from "./person.store.js";

async function contextFor({ services }: TestEnv, ws: Workspace, env: "test" | "live" = "test"): Promise<RequestContext> {
  return {
    services,
    principal: {
      keyId: "test-browse",
      workspaceId: ws.workspaceId,
      workspaceSlug: ws.slug,
      plan: "pro",
      env,
      ownerIds: await listWorkspaceOwnerIds(services.db, ws.workspaceId),
      keyRequestCounted: true,
    },
  };
}

const emailsOf = (page: CustomerBrowseResult) => page.data.map((c) => c.email);
const browse = (ctx: RequestContext, ws: Workspace, options: Partial<BrowseOptions> & { limit?: number; entitled?: boolean; cursor?: string } = {}) => {
  const { limit, entitled, cursor, ...rest } = options;
  return browseCustomers(
    ctx,
    ws.tool,
    { ...(limit === undefined ? {} : { limit }), ...(entitled === undefined ? {} : { entitled }), ...(cursor === undefined ? {} : { cursor }) },
    { lapsed: true, ...rest },
  );
};

for (const dialect of DIALECTS) {
  describe(`browse customers: search, paging both ways, counts, export (${dialect})`, () => {
    test("a search finds part of an address anywhere from 3 characters, the start from 1, in any case, and only this tool's customers in this workspace environment", async () => {
      const env = await testServices(dialect);
      const ws = await seedWorkspace(env.services);
      const other = await seedWorkspace(env.services);
      await seedCustomerRows(env, ws, ["Ada.Lovelace@Example.com", "grace_hopper@navy.example", "alan%turing@example.org", 'quote"d@example.net'], "member");
      await seedCustomerRows(env, ws, ["lapsed.ada@example.com"], "none");
      // The same addresses in another workspace, and in this workspace's live environment.
      await seedCustomerRows(env, other, ["ada.lovelace@example.com", "ada.other@example.com"], "member");
      await seedCustomerRows(env, ws, ["ada.live@example.com"], "member", "live");
      const ctx = await contextFor(env, ws);
      const found = async (search: string) => emailsOf(await browse(ctx, ws, { search })).sort();

      assert.deepEqual(await found("ada"), ["Ada.Lovelace@Example.com", "lapsed.ada@example.com"]);
      assert.deepEqual(await found("LOVELACE@EXAMPLE"), ["Ada.Lovelace@Example.com"]);
      assert.deepEqual(await found("a"), ["Ada.Lovelace@Example.com", "alan%turing@example.org"], "one character: the start only");
      assert.deepEqual(await found("gr"), ["grace_hopper@navy.example"]);
      assert.deepEqual(await found("e_h"), ["grace_hopper@navy.example"], "_ is a character, not any character");
      assert.deepEqual(await found("e%h"), [], "% is a character, not any run of them");
      assert.deepEqual(await found("n%t"), ["alan%turing@example.org"]);
      assert.deepEqual(await found('e"d@'), ['quote"d@example.net']);
      assert.deepEqual(await found("nobody"), []);
      // A whole address: PostgreSQL asks its index for the part before the @, then checks the rest.
      assert.deepEqual(await found("ada.lovelace@example.com"), ["Ada.Lovelace@Example.com"]);
      assert.deepEqual(await found("ada.lovelace@example.org"), []);
      assert.deepEqual(await found("n%turing@example.org"), ["alan%turing@example.org"]);
      assert.deepEqual(await found("@"), [], "no address starts with @");
      const page = await browse(ctx, ws, { search: "ada" });
      assert.deepEqual(page.total, { count: 2, cut: [], moreMatches: false });

      // Filters hold in a search: the lapsed customer is not entitled, and not signed in.
      assert.deepEqual(emailsOf(await browse(ctx, ws, { search: "ada", entitled: false })).sort(), ["Ada.Lovelace@Example.com", "lapsed.ada@example.com"]);
      assert.deepEqual(emailsOf(await browse(ctx, ws, { search: "ada", entitled: true })), []);
      assert.deepEqual(emailsOf(await browse(ctx, ws, { search: "ada", lapsed: false })), ["Ada.Lovelace@Example.com"]);
    });

    test("the search index is written with the person, in their transaction: a rolled-back person is never found, a granted one at once", async () => {
      const env = await testServices(dialect);
      const ws = await seedWorkspace(env.services);
      const ctx = await contextFor(env, ws);
      await assert.rejects(
        env.services.db.transaction().execute(async (trx) => {
          await ensurePeople(trx, ws.workspaceId, "test", [{ email: "rolled.back@example.com", signedInAt: null }], env.clock.now());
          throw new Error("undone");
        }),
        /undone/,
      );
      const api = await testApi(env.services);
      const created = await api.request({
        method: "POST",
        url: `/api/v1/tools/${ws.tool}/grants`,
        key: ws.testKey,
        payload: { email: "granted.now@example.com" },
      });
      assert.equal(created.statusCode, 201);
      assert.deepEqual(emailsOf(await browse(ctx, ws, { search: "ed.now" })), ["granted.now@example.com"]);
      assert.deepEqual(emailsOf(await browse(ctx, ws, { search: "rolled" })), []);
      if (dialect === "sqlite") {
        // The index itself holds no row for the rolled-back person (the search's join to people would hide one).
        const left = await sql<{ n: number }>`select count(*) as n from people_search where people_search match '"rolled.back@"'`.execute(env.services.db);
        assert.equal(Number(left.rows[0]?.n), 0);
        const kept = await sql<{ n: number }>`select count(*) as n from people_search where people_search match '"granted.now@"'`.execute(env.services.db);
        assert.equal(Number(kept.rows[0]?.n), 1);
      }
    });

    test("Not entitled lists lapsed customers with signed-in ones in the dashboard; the API lists signed-in ones only, as specified", async () => {
      const env = await testServices(dialect);
      const ws = await seedWorkspace(env.services);
      const api = await testApi(env.services);
      // A grant of one day that ran out: the customer held the tool once, never signed in.
      const created = await api.request({
        method: "POST",
        url: `/api/v1/tools/${ws.tool}/grants`,
        key: ws.testKey,
        payload: { email: "lapsed@example.com", days: 1 },
      });
      assert.equal(created.statusCode, 201);
      env.clock.advance(1000);
      await seedCustomerRows(env, ws, ["member@example.com"], "member");
      env.clock.advance(2 * DAY_MS);
      const ctx = await contextFor(env, ws);
      const notEntitled = await browse(ctx, ws, { entitled: false });
      assert.deepEqual(emailsOf(notEntitled), ["member@example.com", "lapsed@example.com"]);
      assert.equal(notEntitled.data[1]?.entitled, false);
      assert.equal(notEntitled.total.count, 2);
      assert.deepEqual(emailsOf(await browse(ctx, ws)), ["member@example.com", "lapsed@example.com"]);
      const listed = await listCustomers(ctx, ws.tool, { entitled: false });
      assert.deepEqual(
        listed.data.map((c) => c.email),
        ["member@example.com"],
      );
    });

    test("pages go both ways by keyset, in the list and in a search, and the first page has no previous one", async () => {
      const env = await testServices(dialect);
      const ws = await seedWorkspace(env.services);
      const emails = Array.from({ length: 7 }, (_, i) => `walk${i}@example.com`);
      await seedCustomerRows(env, ws, emails, "member");
      const ctx = await contextFor(env, ws);
      for (const search of [undefined, "walk"]) {
        const options = { limit: 3, ...(search ? { search } : {}) };
        const first = await browse(ctx, ws, options);
        assert.deepEqual(emailsOf(first), ["walk6@example.com", "walk5@example.com", "walk4@example.com"]);
        assert.equal(first.previous_cursor, null);
        assert.ok(first.next_cursor);
        const second = await browse(ctx, ws, { ...options, cursor: first.next_cursor });
        assert.deepEqual(emailsOf(second), ["walk3@example.com", "walk2@example.com", "walk1@example.com"]);
        const third = await browse(ctx, ws, { ...options, cursor: second.next_cursor ?? "" });
        assert.deepEqual(emailsOf(third), ["walk0@example.com"]);
        assert.equal(third.next_cursor, null);
        assert.ok(third.previous_cursor);
        const back = await browse(ctx, ws, { ...options, before: third.previous_cursor });
        assert.deepEqual(emailsOf(back), emailsOf(second));
        assert.ok(back.next_cursor && back.previous_cursor);
        const top = await browse(ctx, ws, { ...options, before: back.previous_cursor });
        assert.deepEqual(emailsOf(top), emailsOf(first));
        assert.equal(top.previous_cursor, null, "back at the newest: nothing newer");
        assert.equal(first.total.count, 7);
      }
      // A cursor of the list is not one of a search (nor the other way round).
      const listFirst = await browse(ctx, ws, { limit: 3 });
      await assert.rejects(
        browse(ctx, ws, { limit: 3, search: "walk", cursor: listFirst.next_cursor ?? "" }),
        (e: unknown) => e instanceof ApiError && e.param === "cursor",
      );
      await assert.rejects(
        browse(ctx, ws, { limit: 3, search: "walk1", before: listFirst.next_cursor ?? "" }),
        (e: unknown) => e instanceof ApiError && e.param === "cursor",
      );
    });

    test("the count stops where the list does: past 2,000 a kind it says the kind is cut; a search past 1,000 matches says so", async () => {
      const env = await testServices(dialect);
      const ws = await seedWorkspace(env.services);
      await seedCustomerRows(
        env,
        ws,
        Array.from({ length: LISTED_PER_KIND + 1 }, (_, i) => `many${i}@example.com`),
        "member",
      );
      await seedCustomerRows(env, ws, ["one.holder@example.com"], "holder");
      const ctx = await contextFor(env, ws);
      const all = await browse(ctx, ws, { limit: 1 });
      assert.deepEqual(all.total, { count: LISTED_PER_KIND + 1, cut: ["member"], moreMatches: false });
      const holders = await browse(ctx, ws, { limit: 1, entitled: true });
      assert.deepEqual(holders.total, { count: 1, cut: [], moreMatches: false });
      // A search reaches past the newest 2,000: the oldest is found.
      assert.deepEqual(emailsOf(await browse(ctx, ws, { search: "many0@" })), ["many0@example.com"]);
      const wide = await browse(ctx, ws, { search: "many", limit: 10 });
      assert.deepEqual(wide.total, { count: SEARCH_MATCHES, cut: [], moreMatches: true });
      assert.equal(wide.data.length, 10);
    });

    test("the dashboard's pages count rows read but not the API's list pages per minute; the API's still does", async () => {
      const env = await testServices(dialect, { WARDEN_LIMIT_LIST_PAGES_PER_MIN: "1", WARDEN_LIMIT_ROWS_READ_PER_DAY: "5" });
      const ws = await seedWorkspace(env.services);
      await seedCustomerRows(env, ws, ["a@example.com", "b@example.com"], "member");
      const ctx = await contextFor(env, ws);
      assert.equal((await browse(ctx, ws, { limit: 2 })).data.length, 2);
      assert.equal((await listCustomers(ctx, ws.tool, { limit: 1 })).data.length, 1, "the API's one page this minute is still there");
      await assert.rejects(listCustomers(ctx, ws.tool, { limit: 1 }), (e: unknown) => e instanceof ApiError && e.limit === "list-pages");
      // Rows: 2 + 1 read; a page of 2 more fits, then the day's 5 are used.
      assert.equal((await browse(ctx, ws, { limit: 2 })).data.length, 2);
      await assert.rejects(browse(ctx, ws, { limit: 1 }), (e: unknown) => e instanceof ApiError && e.limit === "rows-read" && e.rateLimit !== undefined);
    });

    test("an export reads 20,000 rows a chunk at a time as they are asked for, never holding them all, and gives back what it did not write", async () => {
      const env = await testServices(dialect);
      const ws = await seedWorkspace(env.services);
      const count = 20_000;
      await seedCustomerRows(
        env,
        ws,
        Array.from({ length: count }, (_, i) => `row${i}@example.com`),
        "member",
      );
      const ctx = await contextFor(env, ws);
      const exported = await exportCustomers(ctx, ws.tool, { entitled: false }, { lapsed: true });
      assert.equal(exported.rows, count);
      const first = await exported.chunks.next();
      assert.ok(!first.done);
      assert.equal(first.value.length, EXPORT_CHUNK);
      assert.equal(first.value[0]?.email, `row${count - 1}@example.com`);
      // The oldest row now holds the tool: an export that had read everything up front would still write it.
      const scope = toolScope(ws.workspaceId, "test", ws.tool);
      const people = await ensurePeople(env.services.db, ws.workspaceId, "test", [{ email: "row0@example.com", signedInAt: null }], env.clock.now());
      const oldest = people.get("row0@example.com");
      assert.ok(oldest);
      await upsertCustomerRow(env.services.db, scope, {
        personId: oldest.id,
        since: env.clock.now() - count * 1000,
        signedIn: true,
        kind: "holder",
        heldUntil: null,
      });
      let written = first.value.length;
      let last = "";
      for await (const chunk of exported.chunks) {
        assert.ok(chunk.length <= EXPORT_CHUNK, "a chunk at a time");
        written += chunk.length;
        last = chunk[chunk.length - 1]?.email ?? last;
      }
      assert.equal(written, count - 1);
      assert.equal(last, "row1@example.com");
      const usage = await env.services.limits.readDailyUsage(env.services.db, { workspaceId: ws.workspaceId, env: "test" }, env.clock.now());
      assert.equal(usage.find((u) => u.what === "Rows read by lists")?.used, count - 1, "the row it did not write is given back");
    });

    test("without its index (PostgreSQL without pg_trgm) a search answers the same", async () => {
      const env = await testServices(dialect);
      const ws = await seedWorkspace(env.services);
      await seedCustomerRows(env, ws, ["ada.lovelace@example.com", "grace_hopper@example.com", "alan@example.org"], "member");
      const ctx = await contextFor(env, ws);
      const searches = ["ada", "a", "al", "e_h", "lovelace@example.com", "@example.org"];
      const found = async () => Promise.all(searches.map(async (search) => emailsOf(await browse(ctx, ws, { search })).sort()));
      const indexed = await found();
      assert.deepEqual(indexed, [
        ["ada.lovelace@example.com"],
        ["ada.lovelace@example.com", "alan@example.org"],
        ["alan@example.org"],
        ["grace_hopper@example.com"],
        ["ada.lovelace@example.com"],
        ["alan@example.org"],
      ]);
      if (dialect !== "postgres") return;
      // The file's own schema: no other test file sees it (the tests after this one search without it).
      await sql`drop index people_email_search`.execute(env.services.db);
      assert.deepEqual(await found(), indexed);
    });

    test("an export that does not fit in the day's rows read is refused before it starts", async () => {
      const env = await testServices(dialect, { WARDEN_LIMIT_ROWS_READ_PER_DAY: "3" });
      const ws = await seedWorkspace(env.services);
      await seedCustomerRows(env, ws, ["a@example.com", "b@example.com", "c@example.com", "d@example.com"], "member");
      const ctx = await contextFor(env, ws);
      await assert.rejects(
        exportCustomers(ctx, ws.tool, { entitled: undefined }, { lapsed: true }),
        (e: unknown) => e instanceof ApiError && e.limit === "rows-read",
      );
      const fits = await exportCustomers(ctx, ws.tool, { entitled: undefined }, { lapsed: true, search: "a@" });
      assert.equal(fits.rows, 1);
    });
  });
}
