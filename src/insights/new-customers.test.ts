import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "kysely";
import { OTHER_TOOL_OF_PERSON } from "../db/migrations/034-insights-speed.js";
import { DIALECTS, seedCatalogue, testApi, testServices } from "../test-support/harness.js";

// New customers are counted by a trigger on customers (migrations 031 and 034): per tool
// at each tool's first row of a person, over all tools at the person's first row of any.

for (const dialect of DIALECTS) {
  describe(`New customers, counted as customers rows are written (${dialect})`, () => {
    test("a person is new to each tool once, and new over all tools once, however many tools they hold", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      clock.set(Date.parse("2026-10-05T12:00:00.000Z"));
      for (const tool of ["tabmaster", "linkkeeper", "notepad"]) {
        const r = await api.request({ method: "POST", url: `/api/v1/tools/${tool}/grants`, key: ws.testKey, payload: { email: "many@example.com", days: 30 } });
        assert.equal(r.statusCode, 201, r.body);
      }
      const r = await api.request({ method: "POST", url: "/api/v1/tools/tabmaster/grants", key: ws.testKey, payload: { email: "one@example.com", days: 30 } });
      assert.equal(r.statusCode, 201, r.body);

      const rows = await services.db
        .selectFrom("insight_days")
        .select(["scope", "value"])
        .where("workspace_id", "=", ws.workspaceId)
        .where("metric", "=", "new_customers")
        .where("day", "=", "2026-10-05")
        .execute();
      const byScope = Object.fromEntries(rows.map((row) => [row.scope, Number(row.value)]));
      assert.deepEqual(byScope, { "*": 2, "tool:tabmaster": 2, "tool:linkkeeper": 1, "tool:notepad": 1 });
    });

    // Asked of customers by person, the test read every customer of the workspace at each
    // insert (no index leads with the person): a million-customer import never finished.
    test("the trigger's test of the person's other tools probes the customers key, never reading the workspace's customers", async () => {
      const { services } = await testServices(dialect);
      const probe = OTHER_TOOL_OF_PERSON.replaceAll("new.workspace_id", "'ws_x'")
        .replaceAll("new.env", "'live'")
        .replaceAll("new.tool_id", "'tool_x'")
        .replaceAll("new.person_id", "'person_x'");
      if (dialect === "sqlite") {
        const plan = await sql<{ detail: string }>`explain query plan select 1 where ${sql.raw(probe)}`.execute(services.db);
        const details = plan.rows.map((row) => row.detail);
        assert.ok(
          details.some((d) => /^SEARCH c USING (COVERING )?INDEX \S+ \(workspace_id=\? AND env=\? AND tool_id=\? AND person_id=\?\)/.test(d)),
          details.join("\n"),
        );
        assert.ok(!details.some((d) => /^SCAN c\b/.test(d)), details.join("\n"));
      } else {
        // On an empty test database the planner's choice of index says little; what the
        // expression decides is the shape: customers reached per tool, by the tool's key.
        const plan = await services.db.transaction().execute(async (trx) => {
          await sql`set local enable_seqscan = off`.execute(trx);
          return sql<{ "QUERY PLAN": string }>`explain select 1 where ${sql.raw(probe)}`.execute(trx);
        });
        const text = plan.rows.map((row) => row["QUERY PLAN"]).join("\n");
        assert.match(text, /SubPlan \d+\s+->\s+Index (Only )?Scan using \w+ on customers c[^\n]*\n\s+Index Cond: \([^\n]*tool_id = t\.id/, text);
      }
    });
  });
}
