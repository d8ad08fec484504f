import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "kysely";
import { utcDayOf } from "../clock.js";
import { type Db, type Executor, migrateToLatest, openStorage } from "../db/database.js";
import { createPgSchema, DIALECTS, PG_URL, testServices } from "../test-support/harness.js";
import { addToFigures, type Bump, bump, foldFigures } from "./rollup.store.js";

// bump() runs prepared statements for a few figures (a grant's, a sale's) and builds one
// statement of its own size for a batch (an import's): it appends to insight_pending
// (migration 054), and foldFigures adds up what is pending, every read folding first;
// addToFigures (the access checks' flush) adds at once. Whichever way, the figures are the same.

// The tests of a file share a database: each writes a workspace of its own.
let workspaces = 0;
let WS = "";
const nextWorkspace = () => {
  workspaces += 1;
  WS = `ws_rollup_${workspaces}`;
};

/** The workspace's figures of `table`, what is pending folded in first, as an Insights read does. */
async function figures(ex: Executor, table: "insight_days" | "insight_months"): Promise<Record<string, number>> {
  await foldFigures(ex);
  const rows =
    table === "insight_days"
      ? await ex.selectFrom("insight_days").select(["metric", "day as at", "scope", "currency", "plan_id", "value"]).where("workspace_id", "=", WS).execute()
      : await ex
          .selectFrom("insight_months")
          .select(["metric", "month as at", "scope", "currency", "plan_id", "value"])
          .where("workspace_id", "=", WS)
          .execute();
  return Object.fromEntries(rows.map((r) => [[r.metric, r.at, r.scope, r.currency, r.plan_id].join(" "), Number(r.value)]));
}

const row = (metric: Bump["metric"], day: string, value: number, extra: Partial<Bump> = {}): Bump => ({
  workspaceId: WS,
  env: "live",
  metric,
  day,
  scope: "tool:tabmaster",
  value,
  ...extra,
});

test("a time's UTC day is its ISO date's, whether the time before was of the same day or not", () => {
  const times = [
    Date.parse("2026-11-27T00:00:00.000Z"),
    Date.parse("2026-11-27T23:59:59.999Z"),
    Date.parse("2026-11-28T00:00:00.000Z"),
    Date.parse("2026-11-27T12:00:00.000Z"),
    Date.parse("1969-12-31T23:59:59.999Z"),
    0,
    Date.parse("2024-02-29T08:00:00.000Z"),
  ];
  // Park and Miller's generator: the same times every run, across about fifty years.
  let seed = 11;
  for (let i = 0; i < 2_000; i++) {
    seed = (seed * 48_271) % 2_147_483_647;
    times.push((times.at(-1) ?? 0) + (i % 3 === 0 ? 1_000 : (seed % 3_000) * 60_000 * (i % 2 ? 1 : -1)));
  }
  for (const ms of times) assert.equal(utcDayOf(ms), new Date(ms).toISOString().slice(0, 10), new Date(ms).toISOString());
});

for (const dialect of DIALECTS) {
  describe(`Insights roll-up writer (${dialect})`, () => {
    test("a few figures: one row per figure and per month, summed, zero sums and daily-only counts left out of the months", async () => {
      const { services } = await testServices(dialect);
      nextWorkspace();
      await services.db.transaction().execute(async (trx) => {
        await bump(trx, [
          row("gross_one_time", "2026-10-05", 900, { currency: "eur", planId: "lifetime" }),
          row("gross_one_time", "2026-10-05", 100, { currency: "eur", planId: "lifetime" }),
          row("gross_one_time", "2026-10-06", 500, { currency: "eur", planId: "lifetime" }),
          row("grants", "2026-10-05", 1),
          row("grants", "2026-10-05", -1),
          row("active_people", "2026-10-05", 1, { scope: "*" }),
        ]);
      });
      // Again, adding to the rows written: the same prepared shapes, other counts of rows.
      await services.db.transaction().execute(async (trx) => {
        await bump(trx, [row("gross_one_time", "2026-10-06", 250, { currency: "eur", planId: "lifetime" }), row("trials", "2026-11-01", 2)]);
      });
      await bump(services.db, [row("active_people", "2026-10-05", 1, { scope: "*" })]);
      assert.deepEqual(await figures(services.db, "insight_days"), {
        "gross_one_time 2026-10-05 tool:tabmaster eur lifetime": 1000,
        "gross_one_time 2026-10-06 tool:tabmaster eur lifetime": 750,
        "trials 2026-11-01 tool:tabmaster  ": 2,
        "active_people 2026-10-05 *  ": 2,
      });
      assert.deepEqual(await figures(services.db, "insight_months"), {
        "gross_one_time 2026-10 tool:tabmaster eur lifetime": 1750,
        "trials 2026-11 tool:tabmaster  ": 2,
      });
    });

    test("a batch larger than the prepared shapes (an import's) counts the same as its figures written a few at a time", async () => {
      const { services } = await testServices(dialect);
      nextWorkspace();
      // 40 days over two months, each day twice in the batch.
      const days = Array.from({ length: 40 }, (_, i) => new Date(Date.UTC(2026, 9, 1) + i * 86_400_000).toISOString().slice(0, 10));
      const batch = [...days, ...days].map((day, i) => row("grants", day, 1 + (i % 3)));
      await bump(services.db, batch);
      const large = { days: await figures(services.db, "insight_days"), months: await figures(services.db, "insight_months") };
      await services.db.deleteFrom("insight_days").where("workspace_id", "=", WS).execute();
      await services.db.deleteFrom("insight_months").where("workspace_id", "=", WS).execute();
      for (let i = 0; i < batch.length; i += 3) await bump(services.db, batch.slice(i, i + 3));
      assert.deepEqual({ days: await figures(services.db, "insight_days"), months: await figures(services.db, "insight_months") }, large);
      assert.equal(Object.keys(large.days).length, 40);
      const total = batch.reduce((sum, r) => sum + r.value, 0);
      assert.equal(
        Object.values(large.months).reduce((a, b) => a + b, 0),
        total,
      );
      assert.deepEqual(Object.keys(large.months).sort(), ["grants 2026-10 tool:tabmaster  ", "grants 2026-11 tool:tabmaster  "]);
    });

    test("figures bumped in a transaction that fails are not written", async () => {
      const { services } = await testServices(dialect);
      nextWorkspace();
      await assert.rejects(
        services.db.transaction().execute(async (trx) => {
          await bump(trx, [row("grants", "2026-10-05", 1), row("new_customers", "2026-10-05", 1)]);
          throw new Error("the change failed after counting");
        }),
        /the change failed after counting/,
      );
      assert.deepEqual(await figures(services.db, "insight_days"), {});
      assert.deepEqual(await figures(services.db, "insight_months"), {});
    });

    // Migration 038: every fold and every flush of access checks adds to the same figure rows, so on
    // PostgreSQL their updates must be HOT (no new index entry each), which a key index
    // holding the value prevents.
    if (dialect === "postgres") {
      test("a figure added to again and again is updated in place (HOT), its day's row and its month's", async () => {
        const { services } = await testServices(dialect);
        nextWorkspace();
        const updates = await services.db.transaction().execute(async (trx) => {
          // The counts are the backend's not yet reported, from before this transaction too: the difference is this one's.
          const counts = async () =>
            (
              await sql<{ days: string; days_hot: string; months: string; months_hot: string }>`select
                pg_stat_get_xact_tuples_updated('insight_days'::regclass) as days, pg_stat_get_xact_tuples_hot_updated('insight_days'::regclass) as days_hot,
                pg_stat_get_xact_tuples_updated('insight_months'::regclass) as months, pg_stat_get_xact_tuples_hot_updated('insight_months'::regclass) as months_hot`.execute(
                trx,
              )
            ).rows[0];
          const before = await counts();
          // As the fold and the access checks' flush add to them.
          for (let i = 0; i < 20; i++) await addToFigures(trx, [row("grants", "2026-10-05", 1)]);
          const after = await counts();
          const added = (key: "days" | "days_hot" | "months" | "months_hot") => Number(after?.[key]) - Number(before?.[key]);
          return { days: added("days"), daysHot: added("days_hot"), months: added("months"), monthsHot: added("months_hot") };
        });
        // The first bump inserts both rows; the 19 after it update them, each in place.
        assert.deepEqual(updates, { days: 19, daysHot: 19, months: 19, monthsHot: 19 });
        assert.deepEqual(await figures(services.db, "insight_days"), { "grants 2026-10-05 tool:tabmaster  ": 20 });
      });
    }
  });
}

// The pending figures (migration 054): exact whatever ends a transaction, and whichever
// process folds.
for (const dialect of DIALECTS) {
  describe(`Insights figures pending and folded (${dialect})`, () => {
    const pending = async (ex: Executor) =>
      Number((await sql<{ n: string }>`select count(*) as n from insight_pending where workspace_id = ${WS}`.execute(ex)).rows[0]?.n);
    /** The figures as stored, nothing folded first. */
    const stored = async (ex: Executor) => {
      const rows = await ex.selectFrom("insight_days").select(["metric", "day", "value"]).where("workspace_id", "=", WS).execute();
      return Object.fromEntries(rows.map((r) => [`${r.metric} ${r.day}`, Number(r.value)]));
    };

    test("a change rolled back leaves no pending row; one committed leaves its figures' rows, one per figure", async () => {
      const { services } = await testServices(dialect);
      nextWorkspace();
      await assert.rejects(
        services.db.transaction().execute(async (trx) => {
          await bump(trx, [row("grants", "2026-10-05", 1), row("new_customers", "2026-10-05", 1), row("new_customers", "2026-10-05", 1, { scope: "*" })]);
          assert.equal(await pending(trx), 3, "appended in the change's transaction");
          throw new Error("the change failed after counting");
        }),
        /the change failed after counting/,
      );
      assert.equal(await pending(services.db), 0);
      await bump(services.db, [row("grants", "2026-10-05", 1), row("grants", "2026-10-05", 1)]);
      assert.equal(await pending(services.db), 1, "summed before it is appended");
      assert.deepEqual(await stored(services.db), {}, "not in the figures before a fold");
      assert.deepEqual(await figures(services.db, "insight_days"), { "grants 2026-10-05 tool:tabmaster  ": 2 });
      assert.equal(await pending(services.db), 0);
    });

    test("a fold whose transaction ends without its commit (a crash between its delete and its commit) loses nothing", async (t) => {
      const { services } = await testServices(dialect);
      nextWorkspace();
      await bump(services.db, [row("grants", "2026-10-05", 3), row("gross_one_time", "2026-10-06", 4900, { currency: "eur", planId: "lifetime" })]);
      await assert.rejects(
        services.db.transaction().execute(async (trx) => {
          assert.ok((await foldFigures(trx)) >= 2);
          assert.equal(await pending(trx), 0);
          throw new Error("the process died before the commit");
        }),
        /the process died/,
      );
      assert.equal(await pending(services.db), 2, "still pending");
      assert.deepEqual(await stored(services.db), {}, "nothing added");
      if (dialect === "sqlite") return;
      // A process whose connection is cut in the middle of its fold: the same.
      const pgSchema = await createPgSchema();
      const main = openStorage({ databaseUrl: PG_URL, pgSchema, poolSize: 2 });
      const dying = openStorage({ databaseUrl: PG_URL, pgSchema, poolSize: 1 });
      t.after(async () => {
        await main.close();
        await dying.close().catch(() => {});
      });
      await migrateToLatest(main.db, "postgres");
      await bump(main.db, [row("grants", "2026-10-05", 3)]);
      await assert.rejects(
        dying.db.transaction().execute(async (trx) => {
          assert.equal(await foldFigures(trx), 1);
          const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
          await sql`select pg_terminate_backend(${rows[0]?.pid})`.execute(main.db);
          await sql`select 1`.execute(trx);
        }),
      );
      assert.equal(await pending(main.db), 1, "still pending after the cut");
      assert.deepEqual(await stored(main.db), {});
      assert.deepEqual(await figures(main.db, "insight_days"), { "grants 2026-10-05 tool:tabmaster  ": 3 });
      assert.deepEqual(await figures(services.db, "insight_days"), {
        "grants 2026-10-05 tool:tabmaster  ": 3,
        "gross_one_time 2026-10-06 tool:tabmaster eur lifetime": 4900,
      });
      assert.deepEqual(await figures(services.db, "insight_months"), {
        "grants 2026-10 tool:tabmaster  ": 3,
        "gross_one_time 2026-10 tool:tabmaster eur lifetime": 4900,
      });
    });

    test("two processes changing the same figures, 16 connections at once, each folding as they go, add up to every change exactly", {
      skip: dialect === "sqlite" && "two processes over one PostgreSQL",
    }, async (t) => {
      const pgSchema = await createPgSchema();
      const one = openStorage({ databaseUrl: PG_URL, pgSchema, poolSize: 8 });
      const two = openStorage({ databaseUrl: PG_URL, pgSchema, poolSize: 8 });
      t.after(async () => {
        await one.close();
        await two.close();
      });
      await migrateToLatest(one.db, "postgres");
      nextWorkspace();
      let writing = true;
      const folds = async (db: Db) => {
        let n = 0;
        while (writing) n += await foldFigures(db);
        return n;
      };
      const folding = Promise.all([folds(one.db), folds(two.db)]);
      // Each writer 40 changes of the same day's and month's figures, in transactions; every
      // fifth rolled back.
      const writers = [one.db, two.db].flatMap((db) =>
        Array.from({ length: 7 }, async (_, w) => {
          for (let i = 0; i < 40; i++) {
            const change = db.transaction().execute(async (trx) => {
              await bump(trx, [row("grants", "2026-10-31", 1), row("gross_one_time", "2026-11-01", 100 + w, { currency: "eur", planId: "lifetime" })]);
              if (i % 5 === 4) throw new Error("rolled back");
            });
            await (i % 5 === 4 ? assert.rejects(change) : change);
          }
        }),
      );
      await Promise.all(writers);
      writing = false;
      const folded = await folding;
      assert.ok(folded[0] + folded[1] > 0, "folded while the changes came");
      // Two processes, seven writers each, 32 of 40 changes committed; writer w adds 100 + w.
      const grants = 2 * 7 * 32;
      const gross = 2 * 32 * (7 * 100 + 0 + 1 + 2 + 3 + 4 + 5 + 6);
      assert.deepEqual(await figures(two.db, "insight_days"), {
        "grants 2026-10-31 tool:tabmaster  ": grants,
        "gross_one_time 2026-11-01 tool:tabmaster eur lifetime": gross,
      });
      assert.deepEqual(await figures(one.db, "insight_months"), {
        "grants 2026-10 tool:tabmaster  ": grants,
        "gross_one_time 2026-11 tool:tabmaster eur lifetime": gross,
      });
    });

    test("batches of more figures than one statement takes (an import's) are appended and folded in parts, the same figures", async () => {
      const { services } = await testServices(dialect);
      nextWorkspace();
      // 2,500 figures: 50 days by 50 plans, each twice in the batch; the batch three times
      // (7,500 rows pending: more than one part of SQLite's fold).
      const days = Array.from({ length: 50 }, (_, i) => new Date(Date.UTC(2026, 8, 1) + i * 86_400_000).toISOString().slice(0, 10));
      const batch = days.flatMap((day, d) =>
        Array.from({ length: 50 }, (_, p) => [
          row("gross_one_time", day, d + p, { currency: "eur", planId: `plan${p}` }),
          row("gross_one_time", day, 1, { currency: "eur", planId: `plan${p}` }),
        ]).flat(),
      );
      for (let i = 0; i < 3; i++) await bump(services.db, batch);
      assert.equal(await pending(services.db), 7_500);
      const byDay = await figures(services.db, "insight_days");
      assert.equal(await pending(services.db), 0);
      assert.equal(Object.keys(byDay).length, 2_500);
      assert.equal(byDay["gross_one_time 2026-09-03 tool:tabmaster eur plan7"], 3 * (2 + 7 + 1));
      const byMonth = await figures(services.db, "insight_months");
      assert.equal(Object.keys(byMonth).length, 100);
      const total = batch.reduce((sum, r) => sum + r.value, 0);
      assert.equal(
        Object.values(byMonth).reduce((a, b) => a + b, 0),
        3 * total,
      );
    });
  });
}
