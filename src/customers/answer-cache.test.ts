// The answer cache: its bounds and rules alone, then in the app on both engines — a
// repeated question answered from memory, and every kind of change seen by the next
// answer. The feed is read by hand (accessWatch.poll), as the server's loop does each
// second; answer-cache.serve.test.ts runs the loop in a real second process.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { revokeWorkspaceKey } from "../auth/key.service.js";
import { openTestDispute } from "../billing/dispute.service.js";
import { refundLicence } from "../billing/licence.service.js";
import { DAY_MS, ManualClock, toIso } from "../clock.js";
import { importNdjson } from "../import/import.service.js";
import { LimitsService } from "../limits/limits.service.js";
import { clientCalls, testMailbox } from "../test-support/client.js";
import { countingServices, DIALECTS, seedCatalogue, type TestApi, testApi, testServices, type Workspace } from "../test-support/harness.js";
import { renamePlan, setOwnerSuspension } from "../workspaces/workspace.service.js";
import { AnswerCache, EVERYONE, MAX_AGE_MS, questionHash, tagsOf } from "./answer-cache.js";
import type { Customer } from "./customer.schema.js";
import { retrieveCustomerJson } from "./customer.service.js";

describe("the answer cache on its own, without the app", () => {
  const tags = tagsOf("ws_a", "test", "per_1");

  test("answers nothing until the feed is read, and drops everything when reading it fails", () => {
    const cache = new AnswerCache(1024 * 1024, new ManualClock());
    cache.set("k", { v: 1 }, { ticket: cache.ticket(), tags, changesAt: null });
    assert.equal(cache.get("k"), undefined, "not kept while the feed is not read");
    cache.listen(true);
    cache.set("k", { v: 1 }, { ticket: cache.ticket(), tags, changesAt: null });
    assert.deepEqual(cache.get("k"), { v: 1 });
    cache.listen(false);
    cache.listen(true);
    assert.equal(cache.get("k"), undefined, "a lost feed dropped it");
    assert.equal(cache.stats.bytes, 0);
    cache.close();
  });

  test("keeps to its bytes, dropping the least recently used", () => {
    const cache = new AnswerCache(32 * 1024, new ManualClock());
    cache.listen(true);
    const value = { text: "x".repeat(300) };
    for (let i = 0; i < 40; i++) {
      // Each question misses twice, as a repeated one does: a full cache keeps the second.
      for (const _ of [1, 2]) cache.set(`k${i}`, value, { ticket: cache.ticket(), tags: tagsOf("ws_a", "test", `per_${i}`), changesAt: null });
      cache.get("k0");
    }
    assert.ok(cache.stats.bytes <= 32 * 1024, `${cache.stats.bytes} bytes`);
    assert.ok(cache.stats.evictions > 0);
    assert.deepEqual(cache.get("k0"), value, "used at every turn: kept");
    assert.equal(cache.get("k1"), undefined, "the least recently used went first");
    cache.close();
  });

  test("when full, keeps an answer only if its question missed recently: questions never repeated leave the kept answers alone", () => {
    const cache = new AnswerCache(32 * 1024, new ManualClock());
    cache.listen(true);
    const value = { text: "x".repeat(300) };
    const keep = (key: string) => cache.set(key, value, { ticket: cache.ticket(), tags: tagsOf("ws_a", "test", key), changesAt: null });
    for (let i = 0; i < 8; i++) keep(`kept${i}`);
    assert.equal(cache.stats.entries, 8, "not full: kept at once");
    for (let i = 0; i < 1_000; i++) keep(`once${i}`);
    assert.equal(cache.stats.refused, 1_000 - (cache.stats.entries - 8), "refused when full");
    for (let i = 0; i < 8; i++) assert.deepEqual(cache.get(`kept${i}`), value, `kept${i} stays`);
    const before = cache.stats.evictions;
    keep("twice");
    keep("twice");
    assert.deepEqual(cache.get("twice"), value, "a second miss is kept");
    assert.equal(cache.stats.evictions, before + 1, "in place of the least recently used");
    cache.close();
  });

  test("over many evictions, hits, drops and clears, it keeps exactly what a plain LRU list behind the same doorkeeper keeps", () => {
    const cache = new AnswerCache(32 * 1024, new ManualClock());
    cache.listen(true);
    const value = { text: "x".repeat(100) };
    const bytesOf = (key: string) => key.length + JSON.stringify(value).length + 1_000;
    // The model: keys oldest first, with their bytes; and the doorkeeper's slots (1,024 at this size).
    let model: string[] = [];
    let door = new Map<number, number>();
    // Park and Miller's generator: exact in doubles, the same run every time.
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 48_271) % 2_147_483_647;
      return seed % n;
    };
    for (let step = 0; step < 5_000; step++) {
      const key = `k${random(100)}`;
      const roll = random(100);
      if (roll < 50) {
        cache.set(key, value, { ticket: cache.ticket(), tags: tagsOf("ws_a", "test", key), changesAt: null });
        const full = model.reduce((sum, k) => sum + bytesOf(k), 0) + bytesOf(key) > 32 * 1024;
        const hash = questionHash(key);
        const slot = hash & 1_023;
        const admitted = model.includes(key) || !full || door.get(slot) === hash;
        if (!model.includes(key) && full) door.set(slot, admitted ? 0 : hash);
        if (admitted) model = [...model.filter((k) => k !== key), key];
        while (model.reduce((sum, k) => sum + bytesOf(k), 0) > 32 * 1024) model.shift();
      } else if (roll < 90) {
        const hit = cache.get(key) !== undefined;
        assert.equal(hit, model.includes(key), `step ${step}: ${key}`);
        if (hit) model = [...model.filter((k) => k !== key), key];
      } else if (roll < 99) {
        cache.changed("ws_a", "test", [key]);
        model = model.filter((k) => k !== key);
      } else {
        cache.clear();
        model = [];
        door = new Map();
      }
    }
    assert.ok(cache.stats.evictions > 150, `${cache.stats.evictions} evictions`);
    assert.ok(cache.stats.refused > 300, `${cache.stats.refused} refused`);
    assert.equal(cache.stats.entries, model.length);
    cache.close();
  });

  test("expires at the earliest change a source makes by itself, and after MAX_AGE_MS in any case", () => {
    const clock = new ManualClock();
    const cache = new AnswerCache(1024 * 1024, clock);
    cache.listen(true);
    cache.set("ends", 1, { ticket: cache.ticket(), tags, changesAt: clock.now() + 5_000 });
    cache.set("holds", 2, { ticket: cache.ticket(), tags: tagsOf("ws_a", "test", "per_2"), changesAt: null });
    clock.advance(4_999);
    assert.equal(cache.get("ends"), 1);
    clock.advance(1);
    assert.equal(cache.get("ends"), undefined);
    clock.advance(MAX_AGE_MS - 5_000);
    assert.equal(cache.get("holds"), undefined);
    cache.close();
  });

  test("a change noted while written keeps its person out until the feed shows it; a read begun before a change is not kept", () => {
    const cache = new AnswerCache(1024 * 1024, new ManualClock());
    cache.listen(true);
    const ticket = cache.ticket();
    cache.writing(tags.slice(0, 1));
    cache.set("k", "old", { ticket: cache.ticket(), tags, changesAt: null });
    assert.equal(cache.get("k"), undefined, "not kept while the change is not committed");
    cache.changed("ws_a", "test", ["per_1"]);
    cache.set("k", "read before", { ticket, tags, changesAt: null });
    assert.equal(cache.get("k"), undefined, "a read that began before the change may hold the old answer");
    cache.set("k", "new", { ticket: cache.ticket(), tags, changesAt: null });
    assert.equal(cache.get("k"), "new");
    cache.changed("ws_a", "test", ["*"]);
    assert.equal(cache.get("k"), undefined, "a change of everyone in the workspace environment drops it");
    cache.close();
  });
});

const METRICS_TOKEN = "answer-cache-metrics-token-0123";
const mailbox = testMailbox();
const { signIn, check } = clientCalls(mailbox);

const retrieve = (api: TestApi, ws: Workspace, email: string) =>
  api.request({ url: `/api/v1/tools/${ws.tool}/customers/${encodeURIComponent(email)}`, key: ws.testKey });

for (const dialect of DIALECTS) {
  describe(`the answer cache in the app (${dialect})`, () => {
    async function setup() {
      const { services, clock } = await testServices(dialect, { SMTP_URL: mailbox.url, WARDEN_METRICS_TOKEN: METRICS_TOKEN });
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      // The server's loop reads the feed each second; the cache answers once it does.
      await services.accessWatch.poll();
      return { services, clock, ws, api };
    }

    test("a repeated retrieve and access check are answered from memory, counted in /metrics", async () => {
      const { services, ws, api } = await setup();
      const email = `ada-${ws.slug}@example.com`;
      assert.equal(
        (await api.request({ method: "POST", url: `/api/v1/tools/${ws.tool}/grants`, key: ws.testKey, payload: { email, days: 30 } })).statusCode,
        201,
      );
      const token = await signIn(api, ws, email);
      await services.accessWatch.poll();

      const before = services.answers.stats;
      const [first, second] = [await retrieve(api, ws, email), await retrieve(api, ws, email)];
      assert.deepEqual(second.json(), first.json());
      assert.equal(second.json().entitled, true);
      const [one, two] = [await check(api, ws.tool, token), await check(api, ws.tool, token)];
      assert.equal(two.json().state, one.json().state);
      const after = services.answers.stats;
      assert.deepEqual([after.misses - before.misses, after.hits - before.hits], [2, 2], "each first read missed, each second hit");
      assert.ok(after.bytes > 0);

      const figures = (await api.request({ url: "/metrics", headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).body;
      assert.match(figures, new RegExp(`^warden_answer_cache_hits_total ${after.hits}$`, "m"));
      assert.match(figures, new RegExp(`^warden_answer_cache_misses_total ${after.misses}$`, "m"));
      assert.match(figures, /^warden_answer_cache_evictions_total 0$/m);
      assert.match(figures, /^warden_answer_cache_refused_total 0$/m);
      assert.match(figures, new RegExp(`^warden_answer_cache_bytes ${after.bytes}$`, "m"));
    });

    test("a repeated retrieve is sent as the JSON written for the first, until a change of the person or of everyone drops it", async () => {
      const { services, ws, api } = await setup();
      const email = `json-${ws.slug}@example.com`;
      await api.request({ method: "POST", url: `/api/v1/tools/${ws.tool}/grants`, key: ws.testKey, payload: { email, days: 30 } });
      await services.accessWatch.poll();
      const person = await services.db.selectFrom("people").select("id").where("email", "=", email).executeTakeFirstOrThrow();
      const ctx = {
        services,
        principal: {
          keyId: "key_test",
          workspaceId: ws.workspaceId,
          workspaceSlug: ws.slug,
          plan: "pro" as const,
          env: "test" as const,
          ownerIds: [],
          keyRequestCounted: true,
        },
      };
      let written = 0;
      const serialize = (customer: Customer) => {
        written += 1;
        return JSON.stringify({ ...customer, written });
      };
      const first = await retrieveCustomerJson(ctx, ws.tool, email, serialize);
      const hits = services.answers.stats.hits;
      assert.equal(await retrieveCustomerJson(ctx, ws.tool, email, serialize), first, "the same text");
      assert.equal(written, 1, "written once");
      assert.equal(services.answers.stats.hits, hits + 1, "counted as one hit");

      services.answers.changed(ws.workspaceId, "test", [person.id]);
      assert.equal(JSON.parse(await retrieveCustomerJson(ctx, ws.tool, email, serialize)).written, 2, "the person changed: written again");
      services.answers.changed(ws.workspaceId, "test", [EVERYONE]);
      assert.equal(
        JSON.parse(await retrieveCustomerJson(ctx, ws.tool, email, serialize)).written,
        3,
        "a change of everyone there (a plan's features) drops it too",
      );

      // The route sends the text its own serialiser wrote (the test's is dropped first), as JSON.
      services.answers.changed(ws.workspaceId, "test", [person.id]);
      const [one, two] = [await retrieve(api, ws, email), await retrieve(api, ws, email)];
      assert.equal(two.headers["content-type"], "application/json; charset=utf-8");
      assert.equal(two.body, one.body);
      const { written: _written, ...answer } = JSON.parse(first);
      assert.deepEqual(two.json(), answer);
    });

    test("every kind of change made through this process is seen by the very next answer", async () => {
      const { services, clock, ws, api } = await setup();
      const email = `grace-${ws.slug}@example.com`;
      const token = await signIn(api, ws, email);
      // Reads the feed (as the server's loop does) and asks twice: the second answers come from memory.
      const warm = async () => {
        await services.accessWatch.poll();
        const hits = services.answers.stats.hits;
        const [r1, r2] = [await retrieve(api, ws, email), await retrieve(api, ws, email)];
        const [c1, c2] = [await check(api, ws.tool, token), await check(api, ws.tool, token)];
        assert.deepEqual(r2.json(), r1.json());
        assert.equal(c2.json().state, c1.json().state);
        assert.equal(services.answers.stats.hits, hits + 2, "answered from memory");
      };
      // The next answers after a change, with no read of the feed in between.
      const next = async () => ({ customer: (await retrieve(api, ws, email)).json(), access: (await check(api, ws.tool, token)).json() });

      // A grant, then its revocation.
      await warm();
      const granted = await api.request({ method: "POST", url: `/api/v1/tools/${ws.tool}/grants`, key: ws.testKey, payload: { email, days: 30 } });
      assert.equal(granted.statusCode, 201);
      const held = await next();
      assert.deepEqual([held.customer.via, held.access.via], ["grant", "grant"]);
      await warm();
      await api.request({ method: "DELETE", url: `/api/v1/tools/${ws.tool}/grants/${granted.json().id}`, key: ws.testKey });
      const revoked = await next();
      assert.deepEqual([revoked.customer.entitled, revoked.access.entitled], [false, false]);

      // A licence bought, its plan renamed, then refunded.
      await warm();
      const licence = JSON.stringify({
        type: "licence",
        email,
        tool: ws.tool,
        plan: "lifetime",
        purchased_at: toIso(clock.now() - 1_000),
        amount_cents: 4900,
        currency: "usd",
        payment_intent: `pi_${ws.slug}`,
      });
      await importNdjson(services.db, services.clock, { workspace: ws.slug, env: "test", text: licence });
      const bought = await next();
      assert.deepEqual([bought.customer.via, bought.customer.plan.name, bought.access.plan.name], ["licence", "Lifetime", "Lifetime"]);
      await warm();
      await renamePlan(services.db, clock, { workspace: ws.slug, tool: ws.tool, id: "lifetime", name: "Forever" });
      const renamed = await next();
      assert.deepEqual([renamed.customer.plan.name, renamed.access.plan.name], ["Forever", "Forever"]);
      await warm();
      const licenceId = (await services.db.selectFrom("licences").select("id").where("workspace_id", "=", ws.workspaceId).executeTakeFirstOrThrow()).id;
      await refundLicence(services, { id: licenceId });
      const refunded = await next();
      assert.deepEqual([refunded.customer.entitled, refunded.access.entitled], [false, false]);

      // The device signed out: its token stops at once.
      await warm();
      const device = (await api.request({ url: "/api/client/v1/devices", headers: { authorization: `Bearer ${token}` } })).json().data[0].id;
      const out = await api.request({ method: "DELETE", url: `/api/client/v1/devices/${device}`, headers: { authorization: `Bearer ${token}` } });
      assert.equal(out.statusCode, 200, out.body);
      assert.equal((await check(api, ws.tool, token)).statusCode, 401);

      // The key revoked, and the workspace suspended (another key): the API refuses at once.
      await retrieve(api, ws, email);
      const keyId = (
        await services.db.selectFrom("api_keys").select("id").where("workspace_id", "=", ws.workspaceId).where("env", "=", "test").executeTakeFirstOrThrow()
      ).id;
      const owner = await services.db.selectFrom("owners").select("id").where("email", "=", ws.ownerEmail).executeTakeFirstOrThrow();
      await revokeWorkspaceKey(services, { ownerId: owner.id, email: ws.ownerEmail }, { workspaceId: ws.workspaceId, env: "test", keyId });
      assert.equal((await retrieve(api, ws, email)).statusCode, 401);
      const live = (key: string) => api.request({ url: `/api/v1/tools/${ws.tool}/customers/${encodeURIComponent(email)}`, key });
      assert.equal((await live(ws.liveKey)).statusCode, 404, "the live environment knows no such customer");
      await setOwnerSuspension(services.db, clock, { email: ws.ownerEmail, suspended: true });
      assert.equal((await live(ws.liveKey)).statusCode, 401);
    });

    test("a dispute opened is seen by the next answer", async () => {
      const { services, clock, ws, api } = await setup();
      const email = `disputed-${ws.slug}@example.com`;
      const token = await signIn(api, ws, email);
      const licence = {
        type: "licence",
        email,
        tool: ws.tool,
        plan: "lifetime",
        purchased_at: toIso(clock.now() - 1_000),
        amount_cents: 4900,
        currency: "usd",
      };
      await importNdjson(services.db, services.clock, {
        workspace: ws.slug,
        env: "test",
        text: JSON.stringify({ ...licence, payment_intent: `pi_d_${ws.slug}` }),
      });
      await services.accessWatch.poll();
      const hits = services.answers.stats.hits;
      for (let i = 0; i < 2; i++) assert.equal((await check(api, ws.tool, token)).json().entitled, true);
      for (let i = 0; i < 2; i++) assert.equal((await retrieve(api, ws, email)).json().entitled, true);
      assert.equal(services.answers.stats.hits, hits + 2, "answered from memory");
      const licenceId = (await services.db.selectFrom("licences").select("id").where("workspace_id", "=", ws.workspaceId).executeTakeFirstOrThrow()).id;
      await openTestDispute(services, { licence: licenceId });
      assert.equal((await check(api, ws.tool, token)).json().entitled, false);
      assert.equal((await retrieve(api, ws, email)).json().entitled, false);
    });

    test("a grant that ends by itself ends on time: the kept answer expires at its end", async () => {
      const { services, clock, ws, api } = await setup();
      const email = `timed-${ws.slug}@example.com`;
      const token = await signIn(api, ws, email);
      await api.request({ method: "POST", url: `/api/v1/tools/${ws.tool}/grants`, key: ws.testKey, payload: { email, days: 1 } });
      await services.accessWatch.poll();
      for (let i = 0; i < 2; i++) assert.equal((await check(api, ws.tool, token)).json().entitled, true);
      for (let i = 0; i < 2; i++) assert.equal((await retrieve(api, ws, email)).json().entitled, true);
      clock.advance(DAY_MS - 1);
      assert.equal((await check(api, ws.tool, token)).json().entitled, true);
      clock.advance(1);
      const misses = services.answers.stats.misses;
      assert.equal((await check(api, ws.tool, token)).json().entitled, false);
      assert.equal((await retrieve(api, ws, email)).json().entitled, false);
      assert.equal(services.answers.stats.misses, misses + 2, "both kept answers expired at the grant's end and were read again");
    });

    test("an access check answered from memory reads nothing; an address blocked for wrong tokens elsewhere is refused from the watch's read", async () => {
      const { services, clock, statements } = await countingServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      const token = await signIn(api, ws, `quiet-${ws.slug}@example.com`);
      await services.accessWatch.poll();
      assert.equal((await check(api, ws.tool, token)).statusCode, 200);
      // The first check's day is written now rather than by its timer in the middle of the count.
      await services.activity.flush();
      const during = async (what: () => Promise<unknown>) => {
        const from = statements.length;
        await what();
        return statements.slice(from);
      };
      assert.deepEqual(await during(() => check(api, ws.tool, token)), [], "the same device again: no statement");

      // Another process counts 30 wrong tokens from this address (inject's 127.0.0.1): the limit.
      const other = new LimitsService(services.config.limits, services.dialect);
      for (let i = 0; i < services.config.limits.wrongKeysPerMin; i++) await other.countWrongKey(services.db, "127.0.0.1", clock.now());
      await other.close(services.db, clock.now());
      assert.equal((await check(api, ws.tool, token)).statusCode, 200, "until the watch reads the blocked addresses (within a second in a server)");
      await services.accessWatch.poll();
      const refused = await during(async () => assert.equal((await check(api, ws.tool, token)).statusCode, 429));
      assert.deepEqual(refused, [], "refused from what the watch read");

      // A watch that falls behind is not trusted: the address's count is read again.
      clock.advance(2_000);
      const read = await during(async () => assert.equal((await check(api, ws.tool, token)).statusCode, 429));
      assert.ok(
        read.some((statement) => statement.includes("counters")),
        read.join("\n"),
      );
      // The minute over, the address may check again.
      clock.advance(60_000);
      await services.accessWatch.poll();
      assert.equal((await check(api, ws.tool, token)).statusCode, 200);
    });

    test("a device signed out elsewhere (no note in this process) is refused from the next read of the feed", async () => {
      const { services, clock, ws, api } = await setup();
      const email = `out-${ws.slug}@example.com`;
      const token = await signIn(api, ws, email);
      await services.accessWatch.poll();
      for (let i = 0; i < 2; i++) assert.equal((await check(api, ws.tool, token)).statusCode, 200);
      const device = await services.db
        .selectFrom("devices")
        .innerJoin("people", "people.id", "devices.person_id")
        .select(["devices.id", "devices.person_id"])
        .where("people.email", "=", email)
        .where("devices.workspace_id", "=", ws.workspaceId)
        .executeTakeFirstOrThrow();
      // As another process signs it out (signOut: the device and the feed row in one transaction).
      await services.db.transaction().execute(async (trx) => {
        await trx.updateTable("devices").set({ signed_out_at: clock.now(), token_hash: null }).where("id", "=", device.id).execute();
        await trx
          .insertInto("access_changes")
          .values({ workspace_id: ws.workspaceId, env: "test", person_id: device.person_id, changed_at: clock.now() })
          .execute();
      });
      assert.equal((await check(api, ws.tool, token)).statusCode, 200, "until the feed is read (within a second in a server)");
      await services.accessWatch.poll();
      assert.equal((await check(api, ws.tool, token)).statusCode, 401);
    });

    test("a change written elsewhere (no note in this process) is dropped at the next read of the feed", async () => {
      const { services, clock, ws, api } = await setup();
      const email = `elsewhere-${ws.slug}@example.com`;
      const token = await signIn(api, ws, email);
      const granted = (await api.request({ method: "POST", url: `/api/v1/tools/${ws.tool}/grants`, key: ws.testKey, payload: { email, days: 30 } })).json();
      await services.accessWatch.poll();
      for (let i = 0; i < 2; i++) assert.equal((await check(api, ws.tool, token)).json().entitled, true);
      const personId = (
        await services.db.selectFrom("people").select("id").where("workspace_id", "=", ws.workspaceId).where("email", "=", email).executeTakeFirstOrThrow()
      ).id;
      // As another process writes it: the grant revoked and the feed row, with no word to this process's cache.
      await services.db.transaction().execute(async (trx) => {
        await trx.updateTable("grants").set({ revoked_at: clock.now() }).where("id", "=", granted.id).execute();
        await trx.insertInto("access_changes").values({ workspace_id: ws.workspaceId, env: "test", person_id: personId, changed_at: clock.now() }).execute();
      });
      assert.equal((await check(api, ws.tool, token)).json().entitled, true, "until the feed is read (within a second in a server)");
      await services.accessWatch.poll();
      assert.equal((await check(api, ws.tool, token)).json().entitled, false);
    });
  });
}
