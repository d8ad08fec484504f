// The limits counted from leased blocks of quota (src/limits/quota-leases.ts) across FOUR
// `warden serve` processes over one PostgreSQL: never more admitted than the limit, and
// fewer only by the blocks a process holds: given back when it idles or stops (SIGTERM),
// stranded until the window ends when it is killed. SQLite is for one process (the top
// README): it gets one process and the same bursts.
import assert from "node:assert/strict";
import { before, describe, test } from "node:test";
import { systemClock } from "../src/clock.js";
import { IDLE_MS } from "../src/limits/quota-leases.js";
import { DIALECTS, seedWorkspace, unique } from "../src/test-support/harness.js";
import { createKey, createOwner, createTool, createWorkspace } from "../src/workspaces/workspace.service.js";
import {
  awayFromWindowEdges,
  type BuiltWarden,
  type HttpAnswer,
  http,
  inFlight,
  problemsWith,
  recordFigures,
  type SharedDatabase,
  sharedDatabase,
} from "./fault-support.js";

const KEY_REQUESTS_PER_MIN = 25;
const LOOKUPS_PER_DAY = 40;
const LIMIT_ENV = {
  WARDEN_LIMIT_KEY_REQUESTS_PER_MIN: String(KEY_REQUESTS_PER_MIN),
  WARDEN_LIMIT_LOOKUPS_PER_DAY: String(LOOKUPS_PER_DAY),
  WARDEN_DELIVERY_WORKER: "0",
};
// The most a process leases at once of a counter: half of what is left.
const LARGEST_BLOCK = (limit: number) => Math.floor(limit / 2);

const processesOf = (dialect: string) => (dialect === "postgres" ? 4 : 1);

interface Call {
  path: string;
  key: string;
}

/** Sends every call at once, taking turns among `servers`; fails on a broken promise or a status other than 200 and 429. */
async function burst(servers: BuiltWarden[], calls: Call[]): Promise<{ ok: number; refused: number }> {
  const answers: HttpAnswer[] = await inFlight(
    calls.map((call, i) => () => {
      const server = servers[i % servers.length];
      assert.ok(server);
      return http(server.baseUrl, "GET", call.path, { key: call.key });
    }),
  );
  const broken = answers.flatMap((a) => problemsWith(a).map((p) => `${p}: ${a.body.slice(0, 200)}`));
  assert.deepEqual(broken.slice(0, 5), [], `${broken.length} answers broke a promise`);
  const other = answers.filter((a) => a.status !== 200 && a.status !== 429);
  assert.deepEqual(
    other.map((a) => a.status),
    [],
    other[0]?.body,
  );
  return { ok: answers.filter((a) => a.status === 200).length, refused: answers.filter((a) => a.status === 429).length };
}

async function storedCount(shared: SharedDatabase, scope: string): Promise<number> {
  const row = await shared.services.db.selectFrom("counters").select("count").where("scope", "=", scope).executeTakeFirst();
  return Number(row?.count ?? 0);
}

const newKey = (shared: SharedDatabase, slug: string) => createKey(shared.services.db, systemClock, { workspace: slug, env: "test" });

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const dialect of DIALECTS) {
  const processes = processesOf(dialect);
  describe(`limits from leased blocks across ${processes} warden serve process(es) (${dialect})`, () => {
    let shared: SharedDatabase;
    before(async () => {
      shared = await sharedDatabase(dialect, processes, LIMIT_ENV);
    });

    test(`requests per key: ${KEY_REQUESTS_PER_MIN} a minute, 120 requests taking turns among the processes`, async () => {
      const ws = await seedWorkspace(shared.services);
      const key = await newKey(shared, ws.slug);
      await awayFromWindowEdges();
      const calls = Array.from({ length: 120 }, (): Call => ({ path: "/api/v1/webhooks/endpoints", key: key.key }));
      const result = await burst(shared.servers, calls);
      const stored = await storedCount(shared, `key-requests:${key.id}`);
      recordFigures(`leases-key-requests-${dialect}`, { processes, limit: KEY_REQUESTS_PER_MIN, ...result, stored });
      // Every process had more requests than it could lease: nothing is stranded, so exactly the limit.
      assert.equal(result.ok, KEY_REQUESTS_PER_MIN);
      assert.equal(stored, KEY_REQUESTS_PER_MIN);
    });

    test(`lookups across four workspaces of one owner: ${LOOKUPS_PER_DAY} a day, 160 lookups`, async () => {
      const { db } = shared.services;
      const ownerEmail = `${unique("owner")}@example.com`;
      const owner = await createOwner(db, systemClock, { email: ownerEmail });
      const workspaces = await Promise.all(
        Array.from({ length: 4 }, async () => {
          const slug = unique("ws");
          await createWorkspace(db, systemClock, { slug, name: "Owner's workspace", ownerEmail, plan: "pro" });
          await createTool(db, systemClock, { workspace: slug, id: "tool0", name: "tool0" });
          return { slug, keys: await Promise.all([1, 2, 3].map(() => shared.newKey(slug))) };
        }),
      );
      const calls = Array.from({ length: 160 }, (_, i): Call => {
        const ws = workspaces[i % 4];
        assert.ok(ws);
        return { path: `/api/v1/tools/tool0/grants?email=${i}%40example.com`, key: ws.keys[Math.floor(i / 4) % 3] as string };
      });
      const result = await burst(shared.servers, calls);
      const stored = await storedCount(shared, `lookups-owner:${owner.id}:test`);
      recordFigures(`leases-lookups-owner-${dialect}`, { processes, limit: LOOKUPS_PER_DAY, ...result, stored });
      assert.equal(result.ok, LOOKUPS_PER_DAY);
      assert.equal(stored, LOOKUPS_PER_DAY);
    });

    if (processes < 2) return;

    test("a process that idles gives its block back: the others are short of it only until then", async () => {
      await awayFromWindowEdges(30_000);
      const ws = await seedWorkspace(shared.services);
      const key = await newKey(shared, ws.slug);
      const scope = `key-requests:${key.id}`;
      const requests = (n: number) => Array.from({ length: n }, (): Call => ({ path: "/api/v1/webhooks/endpoints", key: key.key }));
      const [holder, ...others] = shared.servers;
      assert.ok(holder);
      // Three requests through one process: it leases a block and keeps the rest.
      assert.equal((await burst([holder], requests(3))).ok, 3);
      const first = await burst(others, requests(60));
      const stranded = KEY_REQUESTS_PER_MIN - 3 - first.ok;
      assert.ok(stranded >= 0, `${first.ok} admitted after 3: more than the limit`);
      assert.ok(stranded <= LARGEST_BLOCK(KEY_REQUESTS_PER_MIN), `${stranded} stranded, more than one block`);

      // Once idle, the holder gives the block back (its sweep runs every second): the counter comes down to what was admitted.
      const waitedFrom = Date.now();
      while ((await storedCount(shared, scope)) !== 3 + first.ok) {
        assert.ok(Date.now() - waitedFrom < 15 * IDLE_MS, "the idle block did not come back");
        await pause(IDLE_MS / 4);
      }
      const returnedAfterMs = Date.now() - waitedFrom;
      const second = await burst(others, requests(60));
      const stored = await storedCount(shared, scope);
      recordFigures(`leases-idle-return-${dialect}`, {
        limit: KEY_REQUESTS_PER_MIN,
        held: 3,
        firstBurst: first.ok,
        stranded,
        returnedAfterMs,
        secondBurst: second.ok,
        stored,
      });
      assert.equal(3 + first.ok + second.ok, KEY_REQUESTS_PER_MIN);
      assert.equal(stored, KEY_REQUESTS_PER_MIN);
    });

    test("a process stopped by SIGTERM gives its block back; one killed strands at most its block until the window ends", async () => {
      await awayFromWindowEdges(40_000);
      const ws = await seedWorkspace(shared.services);
      const [graceful, killed, ...rest] = shared.servers;
      assert.ok(graceful && killed && rest.length > 0);
      const requests = (key: string) => Array.from({ length: 60 }, (): Call => ({ path: "/api/v1/webhooks/endpoints", key }));

      const stoppedKey = await shared.newKey(ws.slug);
      assert.equal((await burst([graceful], requests(stoppedKey).slice(0, 3))).ok, 3);
      const exited = new Promise((resolve) => graceful.child.once("exit", resolve));
      graceful.child.kill("SIGTERM");
      await exited;
      const afterStop = await burst([killed, ...rest], requests(stoppedKey));
      assert.equal(3 + afterStop.ok, KEY_REQUESTS_PER_MIN, "the stopped process's block came back");

      const killedKey = await newKey(shared, ws.slug);
      assert.equal((await burst([killed], requests(killedKey.key).slice(0, 3))).ok, 3);
      await killed.kill();
      const afterKill = await burst(rest, requests(killedKey.key));
      const stranded = KEY_REQUESTS_PER_MIN - 3 - afterKill.ok;
      const stored = await storedCount(shared, `key-requests:${killedKey.id}`);
      recordFigures(`leases-stop-and-kill-${dialect}`, { limit: KEY_REQUESTS_PER_MIN, afterStop: afterStop.ok, afterKill: afterKill.ok, stranded, stored });
      assert.ok(stranded >= 0, "more than the limit admitted");
      assert.ok(stranded <= LARGEST_BLOCK(KEY_REQUESTS_PER_MIN), `${stranded} stranded, more than the killed process's block`);
      // The counter holds what was admitted and the killed process's block: it can only have under-admitted.
      assert.equal(stored, KEY_REQUESTS_PER_MIN);
    });
  });
}
