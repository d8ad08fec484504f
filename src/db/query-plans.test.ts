import assert from "node:assert/strict";
import { test } from "node:test";
import { CompiledQuery } from "kysely";
import { buildApp } from "../app.js";
import { ManualClock } from "../clock.js";
import { parseConfig } from "../config.js";
import { createServices } from "../services.js";
import { seedWorkspace } from "../test-support/harness.js";
import { createBundle, createTool } from "../workspaces/workspace.service.js";
import { openStorage } from "./database.js";
import type { Database } from "./schema.js";

// A request may look rows up by index, never read a table whole (SQLite reports that
// as SCAN). Only the page-sized results of the list's own subqueries may be scanned, and
// literal rows (`args`, the one row of arguments the key lookup joins from; a multi-row
// insert's `SCAN 3-ROW VALUES CLAUSE`; a `SCAN CONSTANT ROW`), which are no table.
const SUBQUERIES = new Set(["w0", "w1", "m", "t", "args"]);
const ALIASES: Record<string, keyof Database> = { k: "api_keys", l: "licences", s: "subscriptions", g: "grants" };

test("every query on the request path finds its rows through an index", async () => {
  const queries = new Map<string, readonly unknown[]>();
  let recording = false;
  const storage = openStorage({
    databaseUrl: null,
    sqliteFile: ":memory:",
    onQuery: (text, parameters) => {
      if (recording && !/^(explain|pragma)/i.test(text)) queries.set(text, parameters);
    },
  });
  const clock = new ManualClock();
  const services = await createServices(parseConfig({}), { clock, storage });
  const ws = await seedWorkspace(services, { plan: "hobby" });
  await createTool(services.db, clock, { workspace: ws.slug, id: "other", name: "Other" });
  await createBundle(services.db, clock, { workspace: ws.slug, id: "suite", name: "Suite", toolIds: [ws.tool, "other"] });
  const app = await buildApp(services, { logger: false });
  const call = async (method: "GET" | "POST" | "DELETE", url: string, payload?: object, headers: Record<string, string> = {}) => {
    const response = await app.inject({ method, url, payload, headers: { authorization: `Bearer ${ws.testKey}`, ...headers } });
    assert.ok(response.statusCode < 300, `${method} ${url}: ${response.body}`);
    return response.json();
  };

  recording = true;
  const base = `/api/v1/tools/${ws.tool}`;
  const grant = await call("POST", `${base}/grants`, { email: "a@example.com", days: 3 }, { "idempotency-key": "k1" });
  await call("POST", `${base}/grants`, { email: "b@example.com" });
  await call("GET", `${base}/customers/a%40example.com`);
  await call("GET", `${base}/grants?email=a%40example.com`);
  const page = await call("GET", `${base}/customers?limit=1`);
  await call("GET", `${base}/customers?limit=1&cursor=${encodeURIComponent(page.next_cursor)}`);
  await call("GET", `${base}/customers?entitled=true`);
  await call("GET", `${base}/customers?entitled=false`);
  await call("DELETE", `${base}/grants/${grant.id}`);
  recording = false;

  assert.ok(queries.size > 15, `only ${queries.size} queries recorded`);
  const scans: string[] = [];
  const searched = new Set<string>();
  for (const [text, parameters] of queries) {
    const plan = await services.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${text}`, [...parameters]));
    for (const { detail } of plan.rows) {
      const found = /^SEARCH (\w+)/.exec(detail)?.[1];
      if (found) searched.add(ALIASES[found] ?? found);
      const table = /^SCAN (\w+)/.exec(detail)?.[1];
      if (table && !SUBQUERIES.has(table) && !/^SCAN (\d+-ROW VALUES CLAUSE|CONSTANT ROW)$/.test(detail)) scans.push(`${detail}\n    in: ${text}`);
    }
  }
  assert.deepEqual(scans, []);
  for (const table of ["customers", "people", "grants", "licences", "subscriptions", "counters", "api_keys"])
    assert.ok(searched.has(table), `no plan read ${table}`);
  await app.close();
  await storage.close();
});
