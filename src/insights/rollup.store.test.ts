import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "kysely";
import { utcDayOf } from "../clock.js";
import type { Executor } from "../db/database.js";
import { DIALECTS, testServices } from "../test-support/harness.js";
import { type Bump, bump } from "./rollup.store.js";

// bump() runs prepared upserts for a few figures (a grant's, a sale's) and builds one
// statement of its own size for a batch (an import's); on PostgreSQL the days and the
// months of a few figures are one statement. Whichever way, the figures are the same.

// The tests of a file share a database: each writes a workspace of its own.
let workspaces = 0;
let WS = "";
const nextWorkspace = () => {
  workspaces += 1;
  WS = `ws_rollup_${workspaces}`;
};

async function figures(ex: Executor, table: "insight_days" | "insight_months"): Promise<Record<string, number>> {
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

    // Migration 038: every grant and sale of a day adds to the same figure rows, so on
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
          for (let i = 0; i < 20; i++) await bump(trx, [row("grants", "2026-10-05", 1)]);
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
