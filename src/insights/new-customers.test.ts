import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "kysely";
import { toolScope } from "../customers/customer.service.js";
import { type CustomerRow, demoteExpiredHolders, upsertCustomerRow, upsertCustomerRows } from "../customers/customer.store.js";
import { ensurePeople } from "../customers/person.store.js";
import { type Db, type Executor, migrateToLatest } from "../db/database.js";
import { OTHER_TOOL_OF_PERSON } from "../db/migrations/034-insights-speed.js";
import type { Env } from "../db/schema.js";
import { DIALECTS, seedCatalogue, type TestEnv, testApi, testServices, type Workspace } from "../test-support/harness.js";
import { emptyStorage, migrateThrough } from "../test-support/migrations.js";
import { foldFigures } from "./rollup.store.js";

// New customers are counted by a trigger on customers (migrations 031 and 034): per tool
// at each tool's first row of a person, over all tools at the person's first row of any.
// The triggers append to insight_pending (migration 054), and the figures are read after
// a fold, as every Insights read does.

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

      await foldFigures(services.db);
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

// Many customers rows in one statement (an import's batch, upsertCustomerRows): on
// PostgreSQL the triggers count once a statement, its rows summed per figure (migration
// 039), appended to insight_pending one row per day's figure (migration 054).
const DAY = 86_400_000;

type Figure = [table: string, at: string, scope: string, value: number];

/** Every new-customers figure of the workspace environment, days then months, what is pending folded in first. */
async function figures(db: Db, workspaceId: string, env: Env): Promise<Figure[]> {
  await foldFigures(db);
  const days = await db
    .selectFrom("insight_days")
    .select(["day", "scope", "value"])
    .where("workspace_id", "=", workspaceId)
    .where("env", "=", env)
    .where("metric", "=", "new_customers")
    .orderBy("day")
    .orderBy("scope")
    .execute();
  const months = await db
    .selectFrom("insight_months")
    .select(["month", "scope", "value"])
    .where("workspace_id", "=", workspaceId)
    .where("env", "=", env)
    .where("metric", "=", "new_customers")
    .orderBy("month")
    .orderBy("scope")
    .execute();
  return [...days.map((r): Figure => ["days", r.day, r.scope, Number(r.value)]), ...months.map((r): Figure => ["months", r.month, r.scope, Number(r.value)])];
}

/**
 * The rows the triggers appended to insight_pending (PostgreSQL's statistics of the
 * transaction, which may also hold the connection's earlier ones not yet reported: compare two).
 */
async function figureWrites(trx: Executor): Promise<number> {
  const r = await sql<{ writes: string }>`select coalesce(sum(n_tup_ins + n_tup_upd), 0) as writes from pg_stat_xact_user_tables
    where relid = 'insight_pending'::regclass`.execute(trx);
  return Number(r.rows[0]?.writes);
}

for (const dialect of DIALECTS) {
  describe(`New customers, many rows a statement (${dialect})`, () => {
    const emails = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}@example.com`);
    async function peopleOf(env: TestEnv, ws: Workspace, envName: Env, addresses: readonly string[]): Promise<string[]> {
      const people = await ensurePeople(
        env.services.db,
        ws.workspaceId,
        envName,
        addresses.map((email) => ({ email, signedInAt: null })),
        env.clock.now(),
      );
      return addresses.map((email) => people.get(email)?.id ?? assert.fail(`no person for ${email}`));
    }
    const row = (personId: string, since: number): CustomerRow => ({ personId, since, signedIn: false, kind: "holder", heldUntil: null });

    test("one statement of 2,000 new people of one day counts 2,000, the figures 2,000 statements of one row write, each day's figure appended once", async () => {
      const t = await testServices(dialect);
      const { db } = t.services;
      const ws = await seedCatalogue(t.services);
      const start = Date.parse("2026-10-05T08:00:00.000Z");
      t.clock.set(start);
      const addresses = emails("bulk", 2000);
      const batched = (await peopleOf(t, ws, "test", addresses)).map((id, i) => row(id, start + i * 1000));
      await db.transaction().execute(async (trx) => {
        const before = dialect === "postgres" ? await figureWrites(trx) : 0;
        await upsertCustomerRows(trx, toolScope(ws.workspaceId, "test", "tabmaster"), batched);
        // Each row of the statement once added to the same four figures: thousands of
        // versions of those rows in one transaction, each upsert stepping over the last.
        // Summed, the day's two figures (of the tool and of all tools; the fold adds the months).
        if (dialect === "postgres") assert.equal((await figureWrites(trx)) - before, 2);
      });
      const single = (await peopleOf(t, ws, "live", addresses)).map((id, i) => row(id, start + i * 1000));
      for (const r of single) await upsertCustomerRow(db, toolScope(ws.workspaceId, "live", "tabmaster"), r);

      const expected: Figure[] = [
        ["days", "2026-10-05", "*", 2000],
        ["days", "2026-10-05", "tool:tabmaster", 2000],
        ["months", "2026-10", "*", 2000],
        ["months", "2026-10", "tool:tabmaster", 2000],
      ];
      assert.deepEqual(await figures(db, ws.workspaceId, "test"), expected);
      assert.deepEqual(await figures(db, ws.workspaceId, "live"), expected);
    });

    test("one statement moving `since` of several rows to other days moves the tool's counts; one that moves no day writes nothing", async () => {
      const t = await testServices(dialect);
      const { db } = t.services;
      const ws = await seedCatalogue(t.services);
      const start = Date.parse("2026-10-05T08:00:00.000Z");
      t.clock.set(start);
      const people = await peopleOf(t, ws, "test", emails("move", 10));
      const scope = toolScope(ws.workspaceId, "test", "tabmaster");
      await upsertCustomerRows(
        db,
        scope,
        people.slice(0, 8).map((id) => row(id, start)),
      );
      // In one statement: two rows later in the month, two into the month before, one an
      // hour later the same day, three as they were, and two people new on the 20th.
      await db.transaction().execute(async (trx) => {
        const before = dialect === "postgres" ? await figureWrites(trx) : 0;
        await upsertCustomerRows(trx, scope, [
          ...people.slice(0, 2).map((id) => row(id, start + 15 * DAY)),
          ...people.slice(2, 4).map((id) => row(id, start - 7 * DAY)),
          row(people[4] as string, start + 3_600_000),
          ...people.slice(5, 8).map((id) => row(id, start)),
          ...people.slice(8, 10).map((id) => row(id, start + 15 * DAY)),
        ]);
        // Each day's figure appended at most once by each of the statement's triggers: its
        // new rows' two, and its moved rows' three (the day moved within stays at its sum).
        if (dialect === "postgres") assert.equal((await figureWrites(trx)) - before, 5);
      });
      const moved: Figure[] = [
        ["days", "2026-09-28", "tool:tabmaster", 2],
        ["days", "2026-10-05", "*", 8],
        ["days", "2026-10-05", "tool:tabmaster", 4],
        ["days", "2026-10-20", "*", 2],
        ["days", "2026-10-20", "tool:tabmaster", 4],
        ["months", "2026-09", "tool:tabmaster", 2],
        ["months", "2026-10", "*", 10],
        ["months", "2026-10", "tool:tabmaster", 8],
      ];
      assert.deepEqual(await figures(db, ws.workspaceId, "test"), moved);

      await db.transaction().execute(async (trx) => {
        const before = dialect === "postgres" ? await figureWrites(trx) : 0;
        // Every row written again on its own day, and an update of other columns.
        await upsertCustomerRows(
          trx,
          scope,
          people.map((id, i) => row(id, [start + 15 * DAY, start - 7 * DAY, start + 7_200_000, start, start + 15 * DAY][Math.min(4, i >> 1)] as number)),
        );
        await demoteExpiredHolders(trx, scope, start + 30 * DAY);
        await trx.updateTable("customers").set({ signed_in: 1 }).where("workspace_id", "=", ws.workspaceId).execute();
        if (dialect === "postgres") assert.equal(await figureWrites(trx), before);
      });
      assert.deepEqual(await figures(db, ws.workspaceId, "test"), moved);
    });

    test("a person already a customer of another tool is not counted again over all tools", async () => {
      const t = await testServices(dialect);
      const { db } = t.services;
      const ws = await seedCatalogue(t.services);
      const first = Date.parse("2026-10-01T08:00:00.000Z");
      const people = await peopleOf(t, ws, "test", emails("other", 80));
      await upsertCustomerRows(
        db,
        toolScope(ws.workspaceId, "test", "linkkeeper"),
        people.slice(0, 50).map((id) => row(id, first)),
      );
      await upsertCustomerRows(
        db,
        toolScope(ws.workspaceId, "test", "tabmaster"),
        people.map((id) => row(id, first + 4 * DAY)),
      );
      assert.deepEqual(await figures(db, ws.workspaceId, "test"), [
        ["days", "2026-10-01", "*", 50],
        ["days", "2026-10-01", "tool:linkkeeper", 50],
        ["days", "2026-10-05", "*", 30],
        ["days", "2026-10-05", "tool:tabmaster", 80],
        ["months", "2026-10", "*", 80],
        ["months", "2026-10", "tool:linkkeeper", 50],
        ["months", "2026-10", "tool:tabmaster", 80],
      ]);
    });
  });
}

// Migration 039 against migration 034's row triggers: the same statements on a database
// migrated through 038 and on one migrated to the end leave the same figures. Among them a
// statement writing one person's rows of two tools: a row trigger, run by PostgreSQL after
// the whole statement, saw the other tool's row and counted neither over all tools; so does
// the statement trigger (SQLite's row triggers run as each row is written, and count the first).
describe("New customers on PostgreSQL, per statement as per row (migration 039)", () => {
  test("the same statements leave the same figures through migration 038 and after 039", async (t) => {
    const at = Date.parse("2026-10-30T20:00:00.000Z");
    const script = async (db: Db, pending: boolean) => {
      await db.insertInto("workspaces").values({ id: "ws_s", slug: "ws-s", name: "S", plan: "pro", created_at: at }).execute();
      await db
        .insertInto("tools")
        .values(["t1", "t2", "t3"].map((id) => ({ workspace_id: "ws_s", id, name: id, created_at: at })))
        .execute();
      const people = Array.from({ length: 300 }, (_, i) => `psn_${String(i).padStart(3, "0")}`);
      await db
        .insertInto("people")
        .values(
          people.map((id) => ({
            id,
            workspace_id: "ws_s",
            env: "live",
            email: `${id}@example.com`,
            email_norm: `${id}@example.com`,
            signed_in_at: null,
            created_at: at,
          })),
        )
        .execute();
      const customer = (tool: string, person: string, since: number) => ({
        workspace_id: "ws_s",
        env: "live" as const,
        tool_id: tool,
        person_id: person,
        since,
        signed_in: 0,
        kind: "holder" as const,
        held_until: null,
      });
      const upsert = (rows: ReturnType<typeof customer>[]) =>
        db
          .insertInto("customers")
          .values(rows)
          .onConflict((oc) =>
            oc
              .columns(["workspace_id", "env", "tool_id", "person_id"])
              .doUpdateSet((eb) => ({ since: eb.ref("excluded.since"), kind: eb.ref("excluded.kind") })),
          )
          .execute();
      // Rows over the month's last days and the next month's first.
      await upsert(people.slice(0, 100).map((p, i) => customer("t1", p, at + (i % 5) * 0.7 * DAY)));
      await upsert(people.slice(50, 150).map((p, i) => customer("t2", p, at + (i % 3) * DAY)));
      await upsert([customer("t1", "psn_200", at), customer("t2", "psn_200", at + DAY)]);
      await db
        .updateTable("customers")
        .set({ since: sql`since - ${3 * DAY}` })
        .where("tool_id", "=", "t1")
        .where("person_id", "<", "psn_030")
        .execute();
      await upsert([
        ...people.slice(50, 80).map((p, i) => customer("t2", p, at + (i % 2) * 40 * DAY)),
        ...people.slice(150, 170).map((p) => customer("t2", p, at)),
        ...people.slice(0, 20).map((p) => customer("t3", p, at + 2 * DAY)),
      ]);
      await db.updateTable("customers").set({ kind: "member" }).where("tool_id", "=", "t3").execute();
      // A day whose one customer moves away: its count stays, at 0.
      await upsert([customer("t3", "psn_250", at + 5 * DAY)]);
      await upsert([customer("t3", "psn_250", at + 6 * DAY)]);
      // After migration 054 the figures wait in insight_pending until a fold.
      if (pending) await foldFigures(db);
      const rows = async (table: "insight_days" | "insight_months") =>
        (await sql<{ scope: string; value: unknown }>`select * from ${sql.table(table)} order by 1, 2, 3, 4, 5, 6, 7`.execute(db)).rows.map((r) => ({
          ...r,
          value: Number(r.value),
        }));
      return { days: await rows("insight_days"), months: await rows("insight_months") };
    };
    const run = async (last: string | null) => {
      const storage = await emptyStorage("postgres");
      t.after(() => storage.close());
      if (last) await migrateThrough(storage.db, last);
      else await migrateToLatest(storage.db, "postgres");
      return script(storage.db, last === null);
    };
    const perRow = await run("038-insight-figures-hot");
    const perStatement = await run(null);
    // A figure that adds up to 0 has a row at 0 when its changes came in separate upserts,
    // and none when they were folded together: the reads add the same.
    const nonZero = (f: typeof perRow) => ({ days: f.days.filter((r) => r.value !== 0), months: f.months.filter((r) => r.value !== 0) });
    assert.deepEqual(nonZero(perStatement), nonZero(perRow));
    assert.ok(perRow.days.some((r) => r.value === 0) && perRow.months.length >= 8, "the script moves a day's count to 0 and writes three months");
    // New over all tools: psn_000–169 and psn_250; psn_200, whose two rows came in one statement, in neither version.
    assert.equal(
      perRow.days.filter((r) => r.scope === "*").reduce((n, r) => n + r.value, 0),
      171,
    );
  });
});
