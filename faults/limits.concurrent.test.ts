// Every limit of the specification's Limits table under load as an operator runs Warden:
// two `warden serve` processes over one database, 50 requests in flight split between
// them, the limits lowered by WARDEN_LIMIT_* so that a burst crosses them. A limit is
// exact: exactly that many requests succeed, never one more, and the rest are refused in
// the catalogue's shape, never with a 5xx.
import assert from "node:assert/strict";
import { before, describe, test } from "node:test";
import type { FastifyInstance } from "fastify";
import { buildApp } from "../src/app.js";
import { systemClock } from "../src/clock.js";
import { DIALECTS, seedWorkspace, unique, type Workspace } from "../src/test-support/harness.js";
import { createOwner, createTool, createWorkspace } from "../src/workspaces/workspace.service.js";
import {
  awayFromWindowEdges,
  type HttpAnswer,
  http,
  IN_FLIGHT,
  inFlight,
  problemsWith,
  recordFigures,
  type SharedDatabase,
  sharedDatabase,
} from "./fault-support.js";

const LIMITS = {
  keyRequestsPerMin: 25,
  wrongKeysPerMin: 10,
  listPagesPerMin: 12,
  rowsReadPerDay: 40,
  lookupsPerDay: 15,
  grantsPerToolPerDay: 10,
  additionsPerDay: 20,
  hobbyPasses: 15,
  exampleEventsPerDay: 10,
};
const LIMIT_ENV = {
  WARDEN_LIMIT_KEY_REQUESTS_PER_MIN: String(LIMITS.keyRequestsPerMin),
  WARDEN_LIMIT_WRONG_KEYS_PER_MIN: String(LIMITS.wrongKeysPerMin),
  WARDEN_LIMIT_LIST_PAGES_PER_MIN: String(LIMITS.listPagesPerMin),
  WARDEN_LIMIT_ROWS_READ_PER_DAY: String(LIMITS.rowsReadPerDay),
  WARDEN_LIMIT_LOOKUPS_PER_DAY: String(LIMITS.lookupsPerDay),
  WARDEN_LIMIT_GRANTS_PER_TOOL_PER_DAY: String(LIMITS.grantsPerToolPerDay),
  WARDEN_LIMIT_ADDITIONS_PER_DAY: String(LIMITS.additionsPerDay),
  WARDEN_LIMIT_HOBBY_PASSES: String(LIMITS.hobbyPasses),
  WARDEN_LIMIT_EXAMPLE_EVENTS_PER_DAY: String(LIMITS.exampleEventsPerDay),
};
// Five keys share most bursts, so that the per-key limit (25) never binds before the limit under test.
const KEYS = 5;
const PAGE = 5;

interface Call {
  method: string;
  path: string;
  key: string;
  body?: unknown;
}

interface Workspaces {
  shared: SharedDatabase;
  seeder: FastifyInstance;
}

/** Sends every call at once, alternating between the servers; answers the answers and the promises they broke. */
async function burst(w: Workspaces, calls: Call[]): Promise<{ answers: HttpAnswer[]; broken: string[] }> {
  const servers = w.shared.servers;
  const answers = await inFlight(
    calls.map((call, i) => () => {
      const server = servers[i % servers.length];
      assert.ok(server);
      return http(server.baseUrl, call.method, call.path, { key: call.key, ...(call.body !== undefined ? { body: call.body } : {}) });
    }),
    IN_FLIGHT,
  );
  const broken = answers.flatMap((a, i) => problemsWith(a).map((p) => `${p} <- ${calls[i]?.method} ${calls[i]?.path}: ${a.body.slice(0, 200)}`));
  return { answers, broken };
}

/** Checks a burst against its limit, records the figures, and fails on overshoot, undershoot, a 5xx or a broken shape. */
function expectExactly(name: string, dialect: string, result: { answers: HttpAnswer[]; broken: string[] }, okStatus: number, limit: number, refusal: number[]) {
  const ok = result.answers.filter((a) => a.status === okStatus).length;
  const statuses: Record<number, number> = {};
  for (const a of result.answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
  const fiveXx = result.answers.filter((a) => a.status >= 500).length;
  const wrongRefusals = result.answers.filter((a) => a.status !== okStatus && !refusal.includes(a.status)).length;
  const refusals = [...new Set(result.answers.filter((a) => a.status !== okStatus).map((a) => (a.json as { error?: { message?: string } })?.error?.message))];
  recordFigures(`limit-${name}-${dialect}`, { limit, tried: result.answers.length, ok, overshoot: Math.max(0, ok - limit), fiveXx, statuses, refusals });
  assert.deepEqual(result.broken.slice(0, 5), [], `${result.broken.length} answers broke a promise`);
  assert.equal(ok, limit, `${name}: ${ok} of ${result.answers.length} succeeded, the limit is ${limit} (statuses ${JSON.stringify(statuses)})`);
  assert.equal(wrongRefusals, 0, `${name}: refusals other than ${refusal.join("/")}: ${JSON.stringify(statuses)}`);
}

async function seedKeys(w: Workspaces, slug: string, count = KEYS): Promise<string[]> {
  return Promise.all(Array.from({ length: count }, () => w.shared.newKey(slug)));
}

/** Holders of the tool, made in this process, whose limits are the defaults. */
async function seedHolders(w: Workspaces, ws: { slug: string; key: string; tool: string }, count: number): Promise<string[]> {
  const emails: string[] = [];
  for (let i = 0; i < count; i++) {
    const email = `holder-${i}-${ws.slug}@example.com`;
    const response = await w.seeder.inject({
      method: "POST",
      url: `/api/v1/tools/${ws.tool}/grants`,
      headers: { authorization: `Bearer ${ws.key}` },
      payload: { email },
    });
    assert.equal(response.statusCode, 201, response.body);
    emails.push(email);
  }
  return emails;
}

/** `count` workspaces of one owner, each with `tools` tools, `keys` keys and `holders` holders of its first tool. */
async function seedOwner(w: Workspaces, count: number, options: { tools?: number; keys?: number; holders?: number } = {}) {
  const { db } = w.shared.services;
  const ownerEmail = `${unique("owner")}@example.com`;
  await createOwner(db, systemClock, { email: ownerEmail });
  return Promise.all(
    Array.from({ length: count }, async () => {
      const slug = unique("ws");
      await createWorkspace(db, systemClock, { slug, name: "Owner's workspace", ownerEmail, plan: "pro" });
      const tools = Array.from({ length: options.tools ?? 1 }, (_, i) => `tool${i}`);
      for (const id of tools) await createTool(db, systemClock, { workspace: slug, id, name: id });
      const keys = await seedKeys(w, slug, options.keys ?? 2);
      // The holders are made with a key of their own, which the burst does not use: the
      // seeder's process leases a block of its key's minute and gives it back only after a
      // second idle, so a burst on that key could be refused by the key's limit first.
      const [seedingKey = ""] = options.holders ? await seedKeys(w, slug, 1) : [];
      const holders = options.holders ? await seedHolders(w, { slug, key: seedingKey, tool: "tool0" }, options.holders) : [];
      return { slug, tools, keys, holders };
    }),
  );
}

const spread = <T>(items: T[], i: number): T => items[i % items.length] as T;

// SQLite is for one process (the top README): two processes on one file are not a
// supported set-up, so SQLite gets one process and the same 50 requests in flight.
const processesOf = (dialect: string) => (dialect === "postgres" ? 2 : 1);

for (const dialect of DIALECTS) {
  describe(`limits at ${IN_FLIGHT} requests in flight across ${processesOf(dialect)} warden serve process(es) (${dialect})`, () => {
    let w: Workspaces;
    before(async () => {
      const shared = await sharedDatabase(dialect, processesOf(dialect), { ...LIMIT_ENV, WARDEN_DELIVERY_WORKER: "0" });
      const seeder = await buildApp(shared.services, { logger: false });
      await seeder.ready();
      w = { shared, seeder };
    });

    test(`requests per key: ${LIMITS.keyRequestsPerMin} a minute`, async () => {
      const ws = await seedWorkspace(w.shared.services);
      await awayFromWindowEdges();
      const calls = Array.from({ length: IN_FLIGHT }, (): Call => ({ method: "GET", path: "/api/v1/webhooks/endpoints", key: ws.testKey }));
      expectExactly("key-requests", dialect, await burst(w, calls), 200, LIMITS.keyRequestsPerMin, [429]);
    });

    test(`list pages per workspace, all keys together: ${LIMITS.listPagesPerMin} a minute`, async () => {
      const ws = await seedWorkspace(w.shared.services);
      await seedHolders(w, { slug: ws.slug, key: ws.testKey, tool: ws.tool }, 1);
      const keys = await seedKeys(w, ws.slug);
      await awayFromWindowEdges();
      const calls = Array.from(
        { length: IN_FLIGHT },
        (_, i): Call => ({ method: "GET", path: `/api/v1/tools/${ws.tool}/customers?limit=1`, key: spread(keys, i) }),
      );
      expectExactly("list-pages", dialect, await burst(w, calls), 200, LIMITS.listPagesPerMin, [429]);
    });

    test(`rows read by lists per workspace: ${LIMITS.rowsReadPerDay} a day, pages of ${PAGE}`, async () => {
      const ws = await seedWorkspace(w.shared.services);
      await seedHolders(w, { slug: ws.slug, key: ws.testKey, tool: ws.tool }, PAGE);
      const keys = await seedKeys(w, ws.slug);
      await awayFromWindowEdges();
      const calls = Array.from(
        { length: IN_FLIGHT },
        (_, i): Call => ({ method: "GET", path: `/api/v1/tools/${ws.tool}/customers?limit=${PAGE}`, key: spread(keys, i) }),
      );
      // Each page reads PAGE rows, so the day's rows allow exactly rowsReadPerDay / PAGE pages.
      expectExactly("rows-read-workspace", dialect, await burst(w, calls), 200, LIMITS.rowsReadPerDay / PAGE, [429]);
    });

    test(`rows read by lists across an owner's workspaces: ${LIMITS.rowsReadPerDay} a day`, async () => {
      const workspaces = await seedOwner(w, 3, { holders: PAGE });
      await awayFromWindowEdges();
      const calls = Array.from({ length: IN_FLIGHT }, (_, i): Call => {
        const ws = spread(workspaces, i);
        return { method: "GET", path: `/api/v1/tools/tool0/customers?limit=${PAGE}`, key: spread(ws.keys, Math.floor(i / workspaces.length)) };
      });
      expectExactly("rows-read-owner", dialect, await burst(w, calls), 200, LIMITS.rowsReadPerDay / PAGE, [429]);
    });

    test(`lookups per workspace (retrieve a customer and list grants together): ${LIMITS.lookupsPerDay} a day`, async () => {
      const ws = await seedWorkspace(w.shared.services);
      const [email = ""] = await seedHolders(w, { slug: ws.slug, key: ws.testKey, tool: ws.tool }, 1);
      const keys = await seedKeys(w, ws.slug);
      const calls = Array.from(
        { length: IN_FLIGHT },
        (_, i): Call => ({
          method: "GET",
          path:
            i % 2 ? `/api/v1/tools/${ws.tool}/customers/${encodeURIComponent(email)}` : `/api/v1/tools/${ws.tool}/grants?email=${encodeURIComponent(email)}`,
          key: spread(keys, i),
        }),
      );
      expectExactly("lookups-workspace", dialect, await burst(w, calls), 200, LIMITS.lookupsPerDay, [429]);
    });

    test(`lookups across an owner's workspaces: ${LIMITS.lookupsPerDay} a day`, async () => {
      const workspaces = await seedOwner(w, 4, { holders: 1 });
      const calls = Array.from({ length: IN_FLIGHT }, (_, i): Call => {
        const ws = spread(workspaces, i);
        return {
          method: "GET",
          path: `/api/v1/tools/tool0/customers/${encodeURIComponent(ws.holders[0] ?? "")}`,
          key: spread(ws.keys, Math.floor(i / workspaces.length)),
        };
      });
      expectExactly("lookups-owner", dialect, await burst(w, calls), 200, LIMITS.lookupsPerDay, [429]);
    });

    test(`grants per tool: ${LIMITS.grantsPerToolPerDay} a day`, async () => {
      const ws = await seedWorkspace(w.shared.services);
      const keys = await seedKeys(w, ws.slug);
      const calls = Array.from(
        { length: IN_FLIGHT },
        (_, i): Call => ({ method: "POST", path: `/api/v1/tools/${ws.tool}/grants`, key: spread(keys, i), body: { email: `g${i}-${ws.slug}@example.com` } }),
      );
      expectExactly("grants-per-tool", dialect, await burst(w, calls), 201, LIMITS.grantsPerToolPerDay, [429]);
    });

    test(`additions per workspace: ${LIMITS.additionsPerDay} a day`, async () => {
      const [ws] = await seedOwner(w, 1, { tools: 6, keys: KEYS });
      assert.ok(ws);
      const calls = Array.from(
        { length: IN_FLIGHT },
        (_, i): Call => ({
          method: "POST",
          path: `/api/v1/tools/${spread(ws.tools, i)}/grants`,
          key: spread(ws.keys, i),
          body: { email: `a${i}-${ws.slug}@example.com` },
        }),
      );
      expectExactly("additions-workspace", dialect, await burst(w, calls), 201, LIMITS.additionsPerDay, [429]);
    });

    test(`additions across an owner's workspaces: ${LIMITS.additionsPerDay} a day`, async () => {
      const workspaces = await seedOwner(w, 3, { tools: 3, keys: 2 });
      const calls = Array.from({ length: IN_FLIGHT }, (_, i): Call => {
        const ws = spread(workspaces, i);
        const j = Math.floor(i / workspaces.length);
        return {
          method: "POST",
          path: `/api/v1/tools/${spread(ws.tools, j)}/grants`,
          key: spread(ws.keys, j),
          body: { email: `o${i}-${ws.slug}@example.com` },
        };
      });
      expectExactly("additions-owner", dialect, await burst(w, calls), 201, LIMITS.additionsPerDay, [429]);
    });

    test(`passes held at once on the Hobby plan: ${LIMITS.hobbyPasses}, then 403 plan_limit_error`, async () => {
      const ws: Workspace = await seedWorkspace(w.shared.services, { plan: "hobby" });
      const tools = ["t1", "t2", "t3", "t4", "t5", "t6"];
      for (const id of tools) await createTool(w.shared.services.db, systemClock, { workspace: ws.slug, id, name: id });
      const keys = await seedKeys(w, ws.slug);
      const calls = Array.from(
        { length: IN_FLIGHT },
        (_, i): Call => ({
          method: "POST",
          path: `/api/v1/tools/${spread(tools, i)}/grants`,
          key: spread(keys, i),
          body: { email: `h${i}-${ws.slug}@example.com` },
        }),
      );
      const result = await burst(w, calls);
      expectExactly("hobby-passes", dialect, result, 201, LIMITS.hobbyPasses, [403]);
      // And afterwards, read back: the workspace holds exactly that many passes.
      const held = await w.shared.services.db
        .selectFrom("grants")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("workspace_id", "=", ws.workspaceId)
        .executeTakeFirstOrThrow();
      assert.equal(Number(held.n), LIMITS.hobbyPasses, "grants written");
    });

    test(`example webhook events per workspace: ${LIMITS.exampleEventsPerDay} a day`, async () => {
      const ws = await seedWorkspace(w.shared.services);
      const keys = await seedKeys(w, ws.slug);
      const calls = Array.from(
        { length: IN_FLIGHT },
        (_, i): Call => ({ method: "POST", path: "/api/v1/webhooks/examples", key: spread(keys, i), body: { type: "payment.refunded" } }),
      );
      expectExactly("example-events", dialect, await burst(w, calls), 202, LIMITS.exampleEventsPerDay, [429]);
    });

    // Last: the source address is this machine's for every test of the file.
    test(`wrong keys per source address: ${LIMITS.wrongKeysPerMin} a minute, then 429`, async () => {
      await awayFromWindowEdges();
      const calls = Array.from(
        { length: IN_FLIGHT },
        (_, i): Call => ({ method: "GET", path: "/api/v1/webhooks/endpoints", key: `wk_test_${String(i).padStart(32, "0")}` }),
      );
      expectExactly("wrong-keys", dialect, await burst(w, calls), 401, LIMITS.wrongKeysPerMin, [429]);
    });
  });
}
