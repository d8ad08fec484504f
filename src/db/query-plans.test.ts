import assert from "node:assert/strict";
import { test } from "node:test";
import { CompiledQuery, sql } from "kysely";
import { buildApp } from "../app.js";
import { listAudit, listWorkspaceAudit } from "../audit/audit.service.js";
import { listWorkspaceKeys } from "../auth/key.service.js";
import { recentActivity } from "../billing/recent-activity.service.js";
import { insertSubscription } from "../billing/subscription.store.js";
import { openDeviceSession } from "../client/client.service.js";
import { ManualClock } from "../clock.js";
import { parseConfig } from "../config.js";
import { ensurePerson } from "../customers/person.store.js";
import { emitEvent } from "../events/event.service.js";
import { exampleEvent } from "../events/examples.js";
import { insertGrant } from "../grants/grant.store.js";
import { newId } from "../ids.js";
import { overviewInsights } from "../insights/insights.service.js";
import { recordActivities } from "../insights/rollup.store.js";
import { slideWindows } from "../insights/windows.js";
import { insertPaddleCheckout, paddleCheckoutBuyer } from "../paddle/paddle-checkout.store.js";
import { deletePaddleCheckouts } from "../retention/retention.store.js";
import { createServices, type Services } from "../services.js";
import { createPgSchema, PG_URL, seedWorkspace } from "../test-support/harness.js";
import { buyLicence } from "../test-support/insights.js";
import { answer, emitExample, startReceiver, testWorker } from "../test-support/webhooks.js";
import { setupChecklist } from "../workspaces/setup.service.js";
import { createBundle, createTool } from "../workspaces/workspace.service.js";
import { openStorage, type StorageOptions } from "./database.js";
import type { Database } from "./schema.js";

// The tables every request path below must reach through an index.
const KEY_TABLES = ["customers", "people", "grants", "licences", "subscriptions", "counters", "api_keys", "devices", "access_changes"];

interface Recording {
  services: Services;
  /** Each distinct SQL text the requests ran, with the parameters of its last run. */
  queries: Map<string, readonly unknown[]>;
  close(): Promise<void>;
}

/** A fresh database that notes each distinct SQL text run while `record(true)`, with its last parameters. */
function recordingStorage(storageOptions: Omit<StorageOptions, "onQuery">) {
  const queries = new Map<string, readonly unknown[]>();
  let recording = false;
  const storage = openStorage({
    ...storageOptions,
    onQuery: (text, parameters) => {
      if (recording && !/^(explain|pragma)/i.test(text)) queries.set(text, parameters);
    },
  });
  return {
    storage,
    queries,
    record: (on: boolean) => {
      recording = on;
    },
  };
}

/**
 * Runs the request path (grants made, looked up, listed and revoked; customers retrieved
 * and listed with and without a cursor and filter) on a fresh database and records every
 * query it ran, so each engine's test can ask its own planner about the same queries.
 */
async function recordRequestPath(storageOptions: Omit<StorageOptions, "onQuery">): Promise<Recording> {
  const { storage, queries, record } = recordingStorage(storageOptions);
  const clock = new ManualClock();
  const services = await createServices(parseConfig({}), { clock, storage });
  const ws = await seedWorkspace(services, { plan: "hobby" });
  await createTool(services.db, clock, { workspace: ws.slug, id: "other", name: "Other" });
  await createBundle(services.db, clock, { workspace: ws.slug, id: "suite", name: "Suite", toolIds: [ws.tool, "other"] });
  // Two signed-in devices, for the client's access check.
  const deviceTokens = await services.db.transaction().execute(async (trx) => {
    const tokens: string[] = [];
    for (const email of ["a@example.com", "c@example.com"]) {
      const person = await ensurePerson(trx, ws.workspaceId, "test", email, clock.now());
      const device = { name: "Laptop", platform: "chrome-mac" };
      tokens.push(
        (
          await openDeviceSession(trx, {
            workspaceId: ws.workspaceId,
            env: "test",
            toolId: ws.tool,
            personId: person.id,
            licenceId: null,
            device,
            now: clock.now(),
          })
        ).token,
      );
    }
    return tokens;
  });
  const app = await buildApp(services, { logger: false });
  const call = async (method: "GET" | "POST" | "DELETE", url: string, payload?: object, headers: Record<string, string> = {}) => {
    const response = await app.inject({ method, url, payload, headers: { authorization: `Bearer ${ws.testKey}`, ...headers } });
    assert.ok(response.statusCode < 300, `${method} ${url}: ${response.body}`);
    return response.json();
  };

  record(true);
  // The access watch's loop: where the feed ends, then what it gained (client/access-watch.ts).
  await services.accessWatch.poll();
  const base = `/api/v1/tools/${ws.tool}`;
  const grant = await call("POST", `${base}/grants`, { email: "a@example.com", days: 3 }, { "idempotency-key": "k1" });
  await call("POST", `${base}/grants`, { email: "b@example.com" });
  await call("GET", `${base}/customers/a%40example.com`);
  // Lookups made together share one statement on PostgreSQL (batched-read.ts): its plan too.
  await Promise.all(["a", "b"].map((name) => call("GET", `${base}/customers/${name}%40example.com`)));
  await call("GET", `${base}/grants?email=a%40example.com`);
  const page = await call("GET", `${base}/customers?limit=1`);
  await call("GET", `${base}/customers?limit=1&cursor=${encodeURIComponent(page.next_cursor)}`);
  await call("GET", `${base}/customers?entitled=true`);
  await call("GET", `${base}/customers?entitled=false`);
  await call("DELETE", `${base}/grants/${grant.id}`);
  // The access check, alone and two at once (their reads and touches shared on PostgreSQL).
  const access = (token: string) => call("GET", `/api/client/v1/tools/${ws.tool}/access`, undefined, { authorization: `Bearer ${token}` });
  await access(deviceTokens[0] as string);
  await Promise.all(deviceTokens.map(access));
  await services.accessWatch.poll();
  record(false);
  await app.close();

  assert.ok(queries.size > 15, `only ${queries.size} queries recorded`);
  return { services, queries, close: () => storage.close() };
}

// A request may look rows up by index, never read a table whole (SQLite reports that
// as SCAN). Only the page-sized results of the list's own subqueries may be scanned, and
// literal rows (`args`, the one row of arguments the key lookup joins from; a multi-row
// insert's `SCAN 3-ROW VALUES CLAUSE`; a `SCAN CONSTANT ROW`; the `json_each` of a
// parameter, as the devices touched together; the activity flush's checks, `f` and its
// `SCAN 2 CONSTANT ROWS`, when its one-second timer fires within the recording on a slow
// machine), which are no table.
const SUBQUERIES = new Set(["w0", "w1", "m", "t", "args", "json_each", "f"]);
const ALIASES: Record<string, keyof Database> = { k: "api_keys", l: "licences", s: "subscriptions", g: "grants", c: "counters" };

test("every query on the request path finds its rows through an index (SQLite)", async () => {
  const { services, queries, close } = await recordRequestPath({ databaseUrl: null, sqliteFile: ":memory:" });
  try {
    const scans: string[] = [];
    const searched = new Set<string>();
    for (const [text, parameters] of readPerRequest(queries)) {
      const plan = await services.db.executeQuery<{ id: number; parent: number; detail: string }>(
        CompiledQuery.raw(`explain query plan ${text}`, [...parameters]),
      );
      for (const { detail, parent } of plan.rows) {
        const found = /^SEARCH (\w+)/.exec(detail)?.[1];
        if (found) searched.add(ALIASES[found] ?? found);
        const table = /^SCAN (\w+)/.exec(detail)?.[1];
        if (table && !SUBQUERIES.has(table) && !/^SCAN (\d+-ROW VALUES CLAUSE|\d+ CONSTANT ROWS|CONSTANT ROW)$/.test(detail))
          scans.push(`${detail}\n    in: ${text}`);
        // The customers list must be read in its index's order (its walks, the 2,000
        // boundary): sorting instead reads a tool's whole kind, which grows with customers.
        // The merge of the page-sized walks sorts beside a scan of a subquery, not of the table.
        const sortsList = plan.rows.some((row) => row.parent === parent && /^(SEARCH|SCAN) customers\b/.test(row.detail));
        if (/^USE TEMP B-TREE FOR (RIGHT PART OF )?ORDER BY/.test(detail) && sortsList) scans.push(`${detail}\n    in: ${text}`);
      }
    }
    assert.deepEqual(scans, []);
    for (const table of KEY_TABLES) assert.ok(searched.has(table), `no plan read ${table}`);
    // A value bound to a bare `?` that the planner looks at makes SQLite (3.54, built with
    // STAT4) plan a statement with a join again on every run: the person with their
    // sources took 288–322 µs of CPU a read at a million customers, 23–28 µs bound as `+?`
    // (db/database.ts; bench/journal.md, 2026-11-30).
    const bare = [...queries.keys()].filter((text) => /(?<!\+)\?/.test(text.replace(/'[^']*'/g, "")));
    assert.deepEqual(bare, []);
    const person = [...queries.keys()].find((text) => text.includes('from "people" as "person" where'));
    assert.ok(person, "the person with their sources is among the plans");
    const plan = await services.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${person}`, [...(queries.get(person) ?? [])]));
    const details = plan.rows.map((row) => row.detail);
    assert.ok(
      details.some((d) => /^SEARCH person USING INDEX \w+ \(workspace_id=\? AND env=\? AND email_norm=\?\)$/.test(d)),
      details.join("\n"),
    );
    for (const source of ["l", "s", "g"]) {
      assert.ok(
        details.some((d) => new RegExp(`^SEARCH ${source} USING (COVERING )?INDEX \\w+ \\(person_id=\\?`).test(d)),
        `${source}: ${details.join("\n")}`,
      );
    }
  } finally {
    await close();
  }
});

/**
 * The queries read per request: not the signing keys, read whole (a few rows, the old
 * ones pruned) at most once a minute by a process, whatever its traffic.
 */
const readPerRequest = (queries: Map<string, readonly unknown[]>) => [...queries].filter(([text]) => !text.includes('"signing_keys"'));

interface PgPlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Index Cond"?: string;
  Plans?: PgPlanNode[];
}

const PG_INDEX_READS = new Set(["Index Scan", "Index Only Scan", "Bitmap Heap Scan"]);

/** The table a Sort node orders straight from, not through a Limit; undefined when none. */
function sortsTableRows(sort: PgPlanNode): string | undefined {
  const below = (node: PgPlanNode): string | undefined => {
    if (node["Node Type"] === "Limit") return undefined;
    if (node["Relation Name"]) return node["Relation Name"];
    for (const child of node.Plans ?? []) {
      const table = below(child);
      if (table) return table;
    }
    return undefined;
  };
  for (const child of sort.Plans ?? []) {
    const table = below(child);
    if (table) return table;
  }
  return undefined;
}

function* pgNodes(node: PgPlanNode): Generator<PgPlanNode> {
  yield node;
  for (const child of node.Plans ?? []) yield* pgNodes(child);
}

/**
 * Every node of every recorded query's plan, with the query's text. The test's tables
 * hold a handful of rows, and for those PostgreSQL rightly prefers reading the whole
 * table, so its plain plans say nothing about the index. With sequential scans priced
 * out it still picks one when no index can serve the query, which is exactly the
 * missing index these tests look for.
 */
async function pgPlanNodes(
  services: Services,
  queries: Map<string, readonly unknown[]>,
  options: { bitmapScans?: boolean } = {},
): Promise<{ text: string; node: PgPlanNode }[]> {
  const found: { text: string; node: PgPlanNode }[] = [];
  await services.db.transaction().execute(async (trx) => {
    await sql`set local enable_seqscan = off`.execute(trx);
    // A bitmap scan reads rows out of order: on these few rows its sort is cheap, on a
    // table of millions it is not, and the order must come from the index.
    if (options.bitmapScans === false) await sql`set local enable_bitmapscan = off`.execute(trx);
    for (const [text, parameters] of readPerRequest(queries)) {
      // Transaction control and settings have no plan.
      if (!/^\s*(select|insert|update|delete|with)\b/i.test(text)) continue;
      const explained = await trx.executeQuery<{ "QUERY PLAN": { Plan: PgPlanNode }[] }>(CompiledQuery.raw(`explain (format json) ${text}`, [...parameters]));
      const root = explained.rows[0]?.["QUERY PLAN"][0]?.Plan;
      assert.ok(root, `no plan for ${text}`);
      for (const node of pgNodes(root)) found.push({ text, node });
    }
  });
  return found;
}

/** A sequential scan, or an index walked from end to end with no condition (the other way to read a whole table). */
const readsWholeTable = (node: PgPlanNode) =>
  node["Node Type"] === "Seq Scan" || ((node["Node Type"] === "Index Scan" || node["Node Type"] === "Index Only Scan") && node["Index Cond"] === undefined);

test("every query on the request path finds its rows through an index (PostgreSQL)", async () => {
  const { services, queries, close } = await recordRequestPath({ databaseUrl: PG_URL, pgSchema: await createPgSchema(), poolSize: 2 });
  try {
    const batched = [...queries.keys()].filter((text) => text.includes("with ordinality"));
    // The key is read whole once, then trusted from the key watch's reads (auth/key-watch.ts), whose plans are checked too.
    assert.equal(batched.length, 2, "the person's read and the device's access read, batched, are among the plans");
    assert.ok(
      [...queries.keys()].some((text) => text.includes("wrong-keys:%")),
      "the key watch's read of blocked addresses is among the plans",
    );
    const scans: string[] = [];
    const searched = new Set<string>();
    for (const { text, node } of await pgPlanNodes(services, queries)) {
      const type = node["Node Type"];
      const table = node["Relation Name"];
      if (readsWholeTable(node)) scans.push(`${type} on ${table}\n    in: ${text}`);
      else if (table && PG_INDEX_READS.has(type)) searched.add(table);
      // The customers list in its index's order (see the SQLite test); the merge of its
      // walks sorts rows already cut by a LIMIT, and a few rows of one person may be sorted.
      if (type === "Sort" && sortsTableRows(node) === "customers") scans.push(`Sort of customers rows\n    in: ${text}`);
    }
    assert.deepEqual(scans, []);
    for (const table of KEY_TABLES) assert.ok(searched.has(table), `no plan read ${table}`);
  } finally {
    await close();
  }
});

/**
 * Runs the delivery worker on a fresh database and records every query it ran: two
 * endpoints, one of them failing its second event (so it is paused), and a resend to
 * the paused one (which still goes).
 */
async function recordDeliveryPath(storageOptions: Omit<StorageOptions, "onQuery">): Promise<Recording> {
  const { storage, queries, record } = recordingStorage(storageOptions);
  const clock = new ManualClock();
  // Receivers check the signature's time against their own clock.
  clock.set(Date.now());
  const config = parseConfig({ WARDEN_SECRET_KEY: "plans-secret-key-0123456789abcdefghijklmnop", WARDEN_ALLOW_PRIVATE_WEBHOOKS: "1" });
  const services = await createServices(config, { clock, storage });
  const ws = await seedWorkspace(services);
  const app = await buildApp(services, { logger: false });
  const call = async (method: "GET" | "POST", url: string, payload?: object) => {
    const response = await app.inject({ method, url, payload, headers: { authorization: `Bearer ${ws.testKey}` } });
    assert.ok(response.statusCode < 300, `${method} ${url}: ${response.body}`);
    return response.json();
  };
  const healthy = await startReceiver();
  let answered = 0;
  const flaky = await startReceiver((request, response) => answer(answered++ === 0 ? 200 : 500)(request, response));
  try {
    await call("POST", "/api/v1/webhooks/endpoints", { url: healthy.url });
    const { endpoint } = await call("POST", "/api/v1/webhooks/endpoints", { url: flaky.url });
    // Enough that the paused endpoint still owes most of a claim (30 deliveries).
    for (let i = 0; i < 40; i++) {
      const example = exampleEvent("payment.refunded", { livemode: false, now: clock.now() });
      await services.db
        .transaction()
        .execute((trx) =>
          emitEvent(trx, { workspaceId: ws.workspaceId, env: "test", id: example.id, type: "payment.refunded", data: example.data, createdAt: clock.now() }),
        );
    }
    record(true);
    // Claims a small part of the tables, as in a database of any size: a claim of all 80
    // deliveries at once made PostgreSQL read these small tables' indexes whole.
    const worker = testWorker(services, { claimPerEndpoint: 32 });
    await worker.drain();
    const { data } = await call("GET", `/api/v1/webhooks/deliveries?endpoint=${endpoint.id}&status=succeeded`);
    // The logs by creation time (the dashboard's filter), alone and with each other filter, and a next page.
    const range = `created_after=${Math.floor(clock.now() / 1000) - 3600}&created_before=${Math.ceil(clock.now() / 1000) + 1}`;
    const events = await call("GET", `/api/v1/webhooks/events?limit=5&${range}`);
    await call("GET", `/api/v1/webhooks/events?limit=5&${range}&cursor=${encodeURIComponent(events.next_cursor)}`);
    await call("GET", `/api/v1/webhooks/events?${range}&type=payment.refunded`);
    const deliveries = await call("GET", `/api/v1/webhooks/deliveries?limit=5&${range}`);
    await call("GET", `/api/v1/webhooks/deliveries?limit=5&${range}&cursor=${encodeURIComponent(deliveries.next_cursor)}`);
    await call("GET", `/api/v1/webhooks/deliveries?${range}&endpoint=${endpoint.id}&status=failed`);
    await call("GET", `/api/v1/webhooks/deliveries?${range}&event=${events.data[0].id}`);
    await call("POST", `/api/v1/webhooks/deliveries/${data[0].id}/resend`);
    await worker.drain();
    record(false);
    assert.equal(flaky.received.length, 3, "the first event, the second (failed, then paused), the resend of the first");
    assert.deepEqual(worker.errors, []);
  } finally {
    // The receivers close when the file's tests end.
    await app.close();
  }
  return { services, queries, close: () => storage.close() };
}

// The worker finds due deliveries by endpoint: a claim that walked the due deliveries of
// every endpoint in due order read thousands of other endpoints' rows per claim.
const DELIVERY_ALIASES: Record<string, string> = { d: "deliveries", r: "deliveries", e: "webhook_endpoints", v: "events", l: "endpoint_leases" };
const DELIVERY_TABLES = new Set(["deliveries", "delivery_attempts", "webhook_endpoints", "events", "endpoint_leases"]);
// deliveries_due holds pending deliveries only (migration 009): the search for endpoints
// with pending deliveries (findDueEndpoints) starts at its first entry, a read of one
// entry with no condition. No other statement may read it without one.
const FIRST_PENDING_SQLITE = "SCAN d USING COVERING INDEX deliveries_due";
const isEndpointSearch = (text: string) => text.includes("with recursive pending");

test("the delivery worker reaches due deliveries by endpoint, never walking other endpoints' (SQLite)", async () => {
  const { services, queries, close } = await recordDeliveryPath({ databaseUrl: null, sqliteFile: ":memory:" });
  try {
    const problems: string[] = [];
    const dueSearches = new Set<string>();
    for (const [text, parameters] of queries) {
      const plan = await services.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${text}`, [...parameters]));
      for (const { detail } of plan.rows) {
        const scanned = /^SCAN (\w+)/.exec(detail)?.[1];
        if (scanned && DELIVERY_TABLES.has(DELIVERY_ALIASES[scanned] ?? scanned) && !(detail === FIRST_PENDING_SQLITE && isEndpointSearch(text)))
          problems.push(`${detail}\n    in: ${text}`);
        const search = /^SEARCH (\w+) USING (?:COVERING )?INDEX (\w+) \((.*)\)/.exec(detail);
        if (search && (DELIVERY_ALIASES[search[1] ?? ""] ?? search[1]) === "deliveries") {
          // By status alone, reading each row, is a walk of every pending delivery (the
          // recursive query's first step reads one index entry and no row).
          if (search[3] === "status=?" && !detail.includes("COVERING")) problems.push(`${detail}\n    in: ${text}`);
          if (search[3]?.includes("next_attempt_at")) {
            dueSearches.add(search[2] ?? "");
            if (!search[3].includes("endpoint_id=")) problems.push(`${detail}\n    in: ${text}`);
          }
        }
      }
    }
    assert.deepEqual(problems, []);
    assert.deepEqual([...dueSearches].sort(), ["deliveries_due", "deliveries_one_shot"]);
  } finally {
    await close();
  }
});

test("the delivery worker reaches due deliveries by endpoint, never walking other endpoints' (PostgreSQL)", async () => {
  const { services, queries, close } = await recordDeliveryPath({ databaseUrl: PG_URL, pgSchema: await createPgSchema(), poolSize: 2 });
  try {
    const problems: string[] = [];
    const dueSearches = new Set<string>();
    for (const { text, node } of await pgPlanNodes(services, queries)) {
      const type = node["Node Type"];
      const firstPending = type === "Index Only Scan" && node["Index Name"] === "deliveries_due" && isEndpointSearch(text);
      if (readsWholeTable(node) && !firstPending) problems.push(`${type} on ${node["Relation Name"]}\n    in: ${text}`);
      const condition = node["Index Cond"] ?? "";
      if (node["Relation Name"] === "deliveries" && condition.includes("next_attempt_at")) {
        dueSearches.add(node["Index Name"] ?? "");
        if (!condition.includes("endpoint_id")) problems.push(`${type} on deliveries by ${condition}\n    in: ${text}`);
      }
    }
    assert.deepEqual(problems, []);
    assert.deepEqual([...dueSearches].sort(), ["deliveries_due", "deliveries_one_shot"]);
  } finally {
    await close();
  }
});

/**
 * Runs the lists the dashboard filters (through the API's use cases) and the audit page's
 * read, and records their queries: events by type, deliveries by status and by event,
 * the count behind recovery, an owner's audit entries, a workspace environment's log.
 */
async function recordFilteredLists(storageOptions: Omit<StorageOptions, "onQuery">): Promise<Recording> {
  const { storage, queries, record } = recordingStorage(storageOptions);
  const clock = new ManualClock();
  const services = await createServices(parseConfig({ WARDEN_ALLOW_PRIVATE_WEBHOOKS: "1" }), { clock, storage });
  const ws = await seedWorkspace(services);
  const app = await buildApp(services, { logger: false });
  const call = async (url: string, payload?: object) => {
    const response = await app.inject({ method: payload ? "POST" : "GET", url, payload, headers: { authorization: `Bearer ${ws.testKey}` } });
    assert.ok(response.statusCode < 300, `${url}: ${response.body}`);
    return response.json();
  };
  const { endpoint } = await call("/api/v1/webhooks/endpoints", { url: "https://hooks.example.com/plans" });
  const eventId = await emitExample(services, ws);
  const owner = await services.db.selectFrom("owners").select("id").where("email", "=", ws.ownerEmail).executeTakeFirstOrThrow();
  record(true);
  await call("/api/v1/webhooks/events?type=dispute.closed");
  for (const status of ["pending", "failed"]) await call(`/api/v1/webhooks/deliveries?status=${status}`);
  await call(`/api/v1/webhooks/deliveries?event=${eventId}`);
  await call(`/api/v1/webhooks/endpoints/${endpoint.id}/recoverable`);
  await listAudit(services.db, owner.id, [ws.workspaceId]);
  // The workspace log page: unfiltered, by action, by owner, each over a range of days.
  const scope = { workspace: ws.slug, env: "test", from: "2026-01-01", to: "2026-12-31" };
  for (const filter of [{}, { action: "key.created" }, { owner: owner.id }]) await listWorkspaceAudit(services, { ...scope, ...filter });
  record(false);
  await app.close();
  return { services, queries, close: () => storage.close() };
}

// Each filter of the dashboard's lists has an index in the list's order (migration 020):
// without it the list walks the workspace's rows newest first and keeps the matches,
// reading every row when nothing matches (253 ms at 200,000 deliveries).
const FILTER_INDEXES: [RegExp, string][] = [
  [/from "events" where .*"type" = /, "events_type"],
  [/"status" = 'pending'/, "deliveries_pending"],
  [/"status" = 'failed'/, "deliveries_failed"],
  [/from "deliveries" where .*"event_id" = /, "deliveries_event"],
  [/"a"\."workspace_id" = /, "audit_log_scope"],
  [/"a"\."workspace_id" is null/, "audit_log_account"],
  // The workspace log (migration 033): its environment's walk and its workspace-wide one.
  [/from "audit_log" where "workspace_id" = \S+ and "env" (?:=|is) \S+ and "action" = /, "audit_log_scope_action"],
  [/from "audit_log" where "workspace_id" = \S+ and "env" (?:=|is) \S+ and "owner_id" = /, "audit_log_scope_owner"],
  [/from "audit_log" where "workspace_id" = \S+ and "env" (?:=|is) \S+ and "created_at" >= /, "audit_log_scope"],
];

function expectedIndex(text: string): string | undefined {
  return FILTER_INDEXES.find(([pattern]) => pattern.test(text))?.[1];
}

test("each filter of the dashboard's lists reads its own index, in the list's order (SQLite)", async () => {
  const { services, queries, close } = await recordFilteredLists({ databaseUrl: null, sqliteFile: ":memory:" });
  try {
    const used = new Set<string>();
    const problems: string[] = [];
    for (const [text, parameters] of queries) {
      const index = expectedIndex(text);
      if (index === undefined) continue;
      const plan = await services.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${text}`, [...parameters]));
      const details = plan.rows.map((r) => r.detail);
      if (details.some((d) => d.includes(`INDEX ${index} (`))) used.add(index);
      else problems.push(`${index} not used: ${details.join("; ")}\n    in: ${text}`);
      if (details.some((d) => /^USE TEMP B-TREE FOR ORDER BY/.test(d))) problems.push(`sorted: ${details.join("; ")}\n    in: ${text}`);
    }
    assert.deepEqual(problems, []);
    assert.deepEqual([...used].sort(), [...new Set(FILTER_INDEXES.map(([, index]) => index))].sort());
  } finally {
    await close();
  }
});

test("each filter of the dashboard's lists reads its own index, in the list's order (PostgreSQL)", async () => {
  const { services, queries, close } = await recordFilteredLists({ databaseUrl: PG_URL, pgSchema: await createPgSchema(), poolSize: 2 });
  try {
    const used = new Set<string>();
    const problems: string[] = [];
    const nodes = await pgPlanNodes(services, queries, { bitmapScans: false });
    for (const text of new Set(nodes.map((n) => n.text))) {
      const index = expectedIndex(text);
      if (index === undefined) continue;
      const mine = nodes.filter((n) => n.text === text).map((n) => n.node);
      if (mine.some((node) => node["Index Name"] === index)) used.add(index);
      else problems.push(`${index} not used: ${mine.map((node) => `${node["Node Type"]} ${node["Index Name"] ?? ""}`).join("; ")}\n    in: ${text}`);
      if (mine.some((node) => node["Node Type"] === "Sort"))
        problems.push(`sorted: ${mine.map((node) => `${node["Node Type"]} ${node["Index Name"] ?? ""}`).join("; ")}\n    in: ${text}`);
    }
    assert.deepEqual(problems, []);
    assert.deepEqual([...used].sort(), [...new Set(FILTER_INDEXES.map(([, index]) => index))].sort());
  } finally {
    await close();
  }
});

/**
 * Runs what every purchase and trial writes besides its own row, the trial outcomes'
 * settling (insights/rollup.store.ts), and records its queries: a person's trial, then a
 * licence and a subscription of theirs.
 */
async function recordPurchasePath(storageOptions: Omit<StorageOptions, "onQuery">): Promise<Recording> {
  const { storage, queries, record } = recordingStorage(storageOptions);
  const clock = new ManualClock();
  const services = await createServices(parseConfig({}), { clock, storage });
  const ws = await seedWorkspace(services);
  const at = clock.now();
  record(true);
  await services.db.transaction().execute(async (trx) => {
    const person = await ensurePerson(trx, ws.workspaceId, "test", "buyer@example.com", at);
    const grant = { workspaceId: ws.workspaceId, env: "test" as const, toolId: ws.tool, personId: person.id, revokedAt: null, note: null, createdAt: at };
    await insertGrant(trx, { ...grant, id: newId("gr"), kind: "trial", startsAt: at, endsAt: at + 14 * 86_400_000 });
    await buyLicence(trx, ws.workspaceId, person.id, "tool", ws.tool, at + 1);
    await insertSubscription(trx, {
      workspaceId: ws.workspaceId,
      env: "test",
      id: newId("sub"),
      personId: person.id,
      productKind: "tool",
      productId: ws.tool,
      planId: null,
      status: "active",
      currentPeriodStart: at,
      currentPeriodEnd: at + 30 * 86_400_000,
      cancelAtPeriodEnd: false,
      cancelAt: null,
      endedAt: null,
      seats: null,
      createdAt: at + 2,
    });
  });
  record(false);
  return { services, queries, close: () => storage.close() };
}

// A read of one person's sources goes to them through an index that starts from the
// person: SQLite has no statistics and prefers the index with the most equal columns, and
// the trials' read by workspace, environment, kind and person took grants_created, every
// trial of the workspace read on each Stripe sale (12 ms at 10,000 customers, growing with them).
// SQLite only: PostgreSQL chooses from its statistics, and on a test's few rows any index is as cheap.
const PERSON_READ = /\bfrom "(grants|licences|subscriptions)" where .*"person_id" (?:=|in)/;

test("what a purchase settles reads its person's rows from the person, not the workspace's (SQLite)", async () => {
  const { services, queries, close } = await recordPurchasePath({ databaseUrl: null, sqliteFile: ":memory:" });
  try {
    const problems: string[] = [];
    const read = new Set<string>();
    for (const [text, parameters] of queries) {
      const table = PERSON_READ.exec(text)?.[1];
      if (!table) continue;
      read.add(table);
      const plan = await services.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${text}`, [...parameters]));
      for (const { detail } of plan.rows) {
        const search = /^(?:SEARCH|SCAN) (\w+)(?: USING (?:COVERING )?INDEX \w+ \((.*)\))?/.exec(detail);
        if (search?.[1] === table && !search[2]?.includes("person_id=")) problems.push(`${detail}\n    in: ${text}`);
      }
    }
    assert.deepEqual(problems, []);
    assert.deepEqual([...read].sort(), ["grants", "licences", "subscriptions"]);
  } finally {
    await close();
  }
});

/**
 * The dashboard Overview's reads (issue 50): its figures, setup checklist, recent activity
 * and keys, for a workspace beside another that holds a key, a plan and an event, on a
 * fresh database; each must find its rows through an index (the keys by workspace:
 * migration 052), or a new workspace's Overview walks every workspace's rows. But one: the
 * look into insight_pending before the figures' fold (migration 054), which holds only the
 * changes not folded yet (about a second's) and which the fold takes whole.
 */
const PENDING_LOOK = "select 1 from insight_pending limit 1";

async function recordOverview(storageOptions: Omit<StorageOptions, "onQuery">): Promise<Recording> {
  const { storage, queries, record } = recordingStorage(storageOptions);
  const clock = new ManualClock(Date.parse("2026-11-26T12:00:00Z"));
  const services = await createServices(parseConfig({}), { clock, storage });
  await seedWorkspace(services, { plan: "hobby" });
  const ws = await seedWorkspace(services, { plan: "hobby" });
  const scope = { workspaceId: ws.workspaceId, env: "test" as const };
  record(true);
  await Promise.all([
    overviewInsights(services, scope, new Date(clock.now())),
    setupChecklist(services, scope),
    recentActivity(services, scope),
    listWorkspaceKeys(services, scope),
  ]);
  record(false);
  assert.ok(queries.size >= 6, `only ${queries.size} queries recorded`);
  return { services, queries, close: () => storage.close() };
}

test("the Overview's reads find their rows through an index (SQLite)", async () => {
  const { services, queries, close } = await recordOverview({ databaseUrl: null, sqliteFile: ":memory:" });
  try {
    const scans: string[] = [];
    for (const [text, parameters] of queries) {
      if (text === PENDING_LOOK) continue;
      const plan = await services.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${text}`, [...parameters]));
      for (const { detail } of plan.rows) if (/^SCAN /.test(detail) && detail !== "SCAN CONSTANT ROW") scans.push(`${detail}\n    in: ${text}`);
    }
    assert.deepEqual(scans, []);
    assert.ok(queries.has(PENDING_LOOK), "the figures' fold looked first");
  } finally {
    await close();
  }
});

test("the Overview's reads find their rows through an index (PostgreSQL)", async () => {
  const { services, queries, close } = await recordOverview({ databaseUrl: PG_URL, pgSchema: await createPgSchema(), poolSize: 2 });
  try {
    const scans = (await pgPlanNodes(services, queries))
      .filter(({ node, text }) => readsWholeTable(node) && text !== PENDING_LOOK)
      .map(({ text, node }) => `${node["Node Type"]} on ${node["Relation Name"]}\n    in: ${text}`);
    assert.deepEqual(scans, []);
  } finally {
    await close();
  }
});

/**
 * The activity flush (a day's first access checks, `recordActivities`) and the windows job
 * (`slideWindows`, forward and back) on a fresh database: the checks of three people over
 * two days, one of them on both sides of a midnight in one flush.
 */
async function recordActivityPath(storageOptions: Omit<StorageOptions, "onQuery">): Promise<Recording> {
  const { storage, queries, record } = recordingStorage(storageOptions);
  const services = await createServices(parseConfig({}), { clock: new ManualClock(), storage });
  const check = (personId: string, at: string) => ({
    workspaceId: "ws_plans",
    env: "live" as const,
    toolId: "t",
    personId,
    deviceId: `d-${personId}`,
    at: Date.parse(at),
  });
  await services.db.transaction().execute((trx) => recordActivities(trx, [check("p1", "2026-11-20T10:00:00Z"), check("p2", "2026-11-20T11:00:00Z")]));
  record(true);
  await services.db
    .transaction()
    .execute((trx) =>
      recordActivities(trx, [
        check("p1", "2026-11-21T23:00:00Z"),
        check("p1", "2026-11-22T01:00:00Z"),
        check("p2", "2026-11-22T02:00:00Z"),
        check("p3", "2026-11-22T03:00:00Z"),
      ]),
    );
  // Forward past the 20th (its people lose it), then back over it (they gain it again).
  await slideWindows(services.db, "2026-11-28");
  await slideWindows(services.db, "2026-11-23");
  record(false);
  // The job's list of the windows to move is read whole: a row per scope and span, once a minute.
  for (const text of queries.keys()) if (!text.includes("insight_") || text === 'select * from "insight_window_starts"') queries.delete(text);
  assert.ok(queries.size >= 8, `only ${queries.size} queries recorded`);
  return { services, queries, close: () => storage.close() };
}

// A person's activity rows are keyed by person first (migration 055): the flush and the
// job must reach them by that key, or by the tables' indexes by day, never by a walk.
test("the activity flush and the windows job reach a person's rows by key or by day (SQLite)", async () => {
  const { services, queries, close } = await recordActivityPath({ databaseUrl: null, sqliteFile: ":memory:" });
  try {
    const scans: string[] = [];
    const byPerson = new Set<string>();
    for (const [text, parameters] of queries) {
      const plan = await services.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${text}`, [...parameters]));
      for (const { detail } of plan.rows) {
        // The flush's literal rows (a multi-row insert's VALUES, the read's `f`) are no table.
        if (/^SCAN /.test(detail) && !/^SCAN (\d+-ROW VALUES CLAUSE|\d+ CONSTANT ROWS|CONSTANT ROW|f)$/.test(detail)) scans.push(`${detail}\n    in: ${text}`);
        const table = /^SEARCH (?:a|(insight_\w+)) USING PRIMARY KEY \(workspace_id=\? AND env=\? AND person_id=/.exec(detail);
        if (table) byPerson.add(table[1] ?? "insight_active_days");
      }
    }
    assert.deepEqual(scans, []);
    assert.deepEqual([...byPerson].sort(), ["insight_active_days", "insight_active_windows"]);
    const bare = [...queries.keys()].filter((text) => /(?<!\+)\?/.test(text.replace(/'[^']*'/g, "")));
    assert.deepEqual(bare, []);
  } finally {
    await close();
  }
});

test("the activity flush and the windows job reach a person's rows by key or by day (PostgreSQL)", async () => {
  const { services, queries, close } = await recordActivityPath({ databaseUrl: PG_URL, pgSchema: await createPgSchema(), poolSize: 2 });
  try {
    const scans = (await pgPlanNodes(services, queries))
      .filter(({ node }) => readsWholeTable(node))
      .map(({ text, node }) => `${node["Node Type"]} on ${node["Relation Name"]}\n    in: ${text}`);
    assert.deepEqual(scans, []);
  } finally {
    await close();
  }
});

/** The thank-you page's check of a Paddle transaction Warden made (migration 056), and its pruning by age, on a fresh database. */
async function recordPaddleCheckouts(storageOptions: Omit<StorageOptions, "onQuery">): Promise<Recording> {
  const { storage, queries, record } = recordingStorage(storageOptions);
  const clock = new ManualClock();
  const services = await createServices(parseConfig({}), { clock, storage });
  const ws = await seedWorkspace(services, { plan: "hobby" });
  const scope = { workspaceId: ws.workspaceId, env: "test" as const };
  await insertPaddleCheckout(services.db, scope, "txn_01", "p1", clock.now());
  record(true);
  await paddleCheckoutBuyer(services.db, scope, "txn_01");
  await deletePaddleCheckouts(services.db, clock.now() + 1, 500);
  record(false);
  assert.equal(queries.size, 2);
  return { services, queries, close: () => storage.close() };
}

test("a Paddle checkout is read by its key and pruned through its age index (SQLite)", async () => {
  const { services, queries, close } = await recordPaddleCheckouts({ databaseUrl: null, sqliteFile: ":memory:" });
  try {
    const scans: string[] = [];
    for (const [text, parameters] of queries) {
      const plan = await services.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${text}`, [...parameters]));
      for (const { detail } of plan.rows) if (/^SCAN /.test(detail)) scans.push(`${detail}\n    in: ${text}`);
    }
    assert.deepEqual(scans, []);
  } finally {
    await close();
  }
});

test("a Paddle checkout is read by its key and pruned through its age index (PostgreSQL)", async () => {
  const { services, queries, close } = await recordPaddleCheckouts({ databaseUrl: PG_URL, pgSchema: await createPgSchema(), poolSize: 2 });
  try {
    const scans = (await pgPlanNodes(services, queries))
      .filter(({ node }) => readsWholeTable(node))
      .map(({ text, node }) => `${node["Node Type"]} on ${node["Relation Name"]}\n    in: ${text}`);
    assert.deepEqual(scans, []);
  } finally {
    await close();
  }
});
