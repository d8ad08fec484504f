import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "kysely";
import { type Db, type Dialect, migrateToLatest } from "../db/database.js";
import { DIALECTS } from "../test-support/harness.js";
import { emptyStorage, migrateThrough } from "../test-support/migrations.js";
import { recordActivities } from "./rollup.store.js";

// Migration 055: the activity tables keyed by person first, so that a person's rows of
// every scope and span share a page; their rows and their indexes by day are kept.

const TABLES = {
  insight_active_days: ["workspace_id", "env", "person_id", "scope", "day"],
  insight_active_months: ["workspace_id", "env", "person_id", "scope", "month"],
  insight_last_active: ["workspace_id", "env", "person_id", "scope"],
  insight_active_windows: ["workspace_id", "env", "person_id", "scope", "span"],
} as const;
type Table = keyof typeof TABLES;

async function rowsOf(db: Db, table: Table): Promise<string[]> {
  const rows = await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(db);
  return rows.rows
    .map((r) =>
      JSON.stringify(
        Object.keys(r)
          .sort()
          .map((k) => [k, String(r[k])]),
      ),
    )
    .sort();
}

/** The primary key's columns in order. */
async function keyOf(db: Db, dialect: Dialect, table: Table): Promise<string[]> {
  if (dialect === "postgres") {
    const { rows } = await sql<{ def: string }>`select pg_get_constraintdef(c.oid) as def from pg_constraint c
      where c.conrelid = ${table}::regclass and c.contype = 'p'`.execute(db);
    return (rows[0]?.def.match(/\((.*)\)/)?.[1] ?? "").split(", ");
  }
  const { rows } = await sql<{ name: string; pk: number }>`select name, pk from pragma_table_info(${table}) where pk > 0 order by pk`.execute(db);
  return rows.map((r) => r.name);
}

for (const dialect of DIALECTS) {
  describe(`migration 055, the activity keys (${dialect})`, () => {
    test("keeps every row and the indexes by day, keys each table by person first, and the flush writes on top", async (t) => {
      const storage = await emptyStorage(dialect);
      t.after(() => storage.close());
      const { db } = storage;
      await migrateThrough(db, "052-money-at-a-glance");
      const base = { workspace_id: "ws_k", env: "live" as const };
      await db
        .insertInto("insight_active_days")
        .values(
          ["p1", "p2"].flatMap((person_id) =>
            ["*", "tool:t"].flatMap((scope) => ["2026-11-01", "2026-11-02"].map((day) => ({ ...base, scope, person_id, day }))),
          ),
        )
        .execute();
      await db
        .insertInto("insight_active_months")
        .values(["p1", "p2"].flatMap((person_id) => ["*", "tool:t"].map((scope) => ({ ...base, scope, month: "2026-11", person_id, days: 2 }))))
        .execute();
      await db
        .insertInto("insight_last_active")
        .values(["p1", "p2"].flatMap((person_id) => ["*", "tool:t"].map((scope) => ({ ...base, scope, person_id, day: "2026-11-02" }))))
        .execute();
      await db
        .insertInto("insight_active_windows")
        .values(["p1", "p2"].flatMap((person_id) => ["7d", "30d"].map((span) => ({ ...base, scope: "*", span, person_id, days: 2 }))))
        .execute();
      const before = new Map<Table, string[]>();
      for (const table of Object.keys(TABLES) as Table[]) before.set(table, await rowsOf(db, table));

      await migrateToLatest(db, dialect);
      for (const [table, key] of Object.entries(TABLES) as [Table, readonly string[]][]) {
        assert.deepEqual(await rowsOf(db, table), before.get(table), `${table}: the same rows`);
        assert.deepEqual(await keyOf(db, dialect, table), [...key], `${table}: keyed by person first`);
      }
      // A key's second row is still refused.
      await assert.rejects(
        db
          .insertInto("insight_last_active")
          .values({ ...base, scope: "*", person_id: "p1", day: "2026-11-03" })
          .execute(),
      );
      const indexes = ["insight_active_days_by_day", "insight_active_months_by_days", "insight_last_active_by_day", "insight_active_windows_by_days"];
      const found =
        dialect === "postgres"
          ? (await sql<{ name: string }>`select indexname as name from pg_indexes where schemaname = current_schema()`.execute(db)).rows
          : (await sql<{ name: string }>`select name from sqlite_master where type = 'index'`.execute(db)).rows;
      for (const index of indexes)
        assert.ok(
          found.some((f) => f.name === index),
          `${index} is there`,
        );

      // The flush on the new keys: p1's new day counts once in each table, p3 is new.
      const at = Date.parse("2026-11-03T09:00:00Z");
      await db.transaction().execute((trx) =>
        recordActivities(trx, [
          { workspaceId: "ws_k", env: "live", toolId: "t", personId: "p1", deviceId: "d1", at },
          { workspaceId: "ws_k", env: "live", toolId: "t", personId: "p3", deviceId: "d3", at },
        ]),
      );
      const months = await db.selectFrom("insight_active_months").select(["person_id", "scope", "days"]).where("workspace_id", "=", "ws_k").execute();
      assert.deepEqual(months.map((m) => `${m.person_id} ${m.scope} ${Number(m.days)}`).sort(), [
        "p1 * 3",
        "p1 tool:t 3",
        "p2 * 2",
        "p2 tool:t 2",
        "p3 * 1",
        "p3 tool:t 1",
      ]);
      const last = await db.selectFrom("insight_last_active").select(["person_id", "scope", "day"]).where("person_id", "in", ["p1", "p3"]).execute();
      assert.deepEqual(last.map((l) => `${l.person_id} ${l.scope} ${l.day}`).sort(), [
        "p1 * 2026-11-03",
        "p1 tool:t 2026-11-03",
        "p3 * 2026-11-03",
        "p3 tool:t 2026-11-03",
      ]);
    });
  });
}
