import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "kysely";
import { type Db, migrateToLatest, openStorage } from "../db/database.js";
import { createPgSchema, DIALECTS, PG_URL, seedCatalogue, servicesOver, testApi, testServices } from "../test-support/harness.js";
import { foldJob } from "./fold.js";
import { peopleInsights } from "./insights.service.js";
import type { InsightsQuery } from "./insights.types.js";
import { foldFigures } from "./rollup.store.js";

// Issue 48, point 5: a grant's or a sale's figures are appended to insight_pending in its
// own transaction (migration 054) and folded into the figures once a second by `warden
// serve` and before every Insights read. The reads stay exact: right after a write, and
// after many writes from several processes at once (PostgreSQL).

const pendingRows = async (db: Db) => Number((await sql<{ n: string }>`select count(*) as n from insight_pending`.execute(db)).rows[0]?.n);

const silent = { error: () => {}, info: () => {}, warn: () => {} } as never;

for (const dialect of DIALECTS) {
  describe(`Insights read after a write (${dialect})`, () => {
    test("a grant is in the very next read, by day and by whole month, whatever has been folded", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      clock.set(Date.parse("2026-11-21T12:00:00.000Z"));
      const grant = async (email: string) => {
        const r = await api.request({ method: "POST", url: "/api/v1/tools/tabmaster/grants", key: ws.testKey, payload: { email, days: 30 } });
        assert.equal(r.statusCode, 201, r.body);
      };
      await grant("first@example.com");
      // The grant's figures wait for a fold: the read folds first.
      assert.ok((await pendingRows(services.db)) > 0, "the grant's figures are pending");
      const day: InsightsQuery = { workspaceId: ws.workspaceId, env: "test", toolId: "tabmaster", from: "2026-11-21", to: "2026-11-21", grain: "day" };
      const month: InsightsQuery = { ...day, from: "2026-11-01", to: "2026-11-30", grain: "month" };
      let people = await peopleInsights(services.db, day);
      assert.equal(people.grants.total, 1);
      assert.equal(people.newCustomers.total, 1);
      assert.equal(await pendingRows(services.db), 0, "the read folded them");
      await grant("second@example.com");
      // The whole month is read from insight_months, which the fold adds to as well.
      people = await peopleInsights(services.db, month);
      assert.equal(people.grants.total, 2);
      assert.equal(people.newCustomers.total, 2);
      people = await peopleInsights(services.db, day);
      assert.equal(people.grants.total, 2);
    });

    test("the fold job of `warden serve` folds what is pending, once a second, and stops", async (t) => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      clock.set(Date.parse("2026-11-22T12:00:00.000Z"));
      const r = await api.request({ method: "POST", url: "/api/v1/tools/tabmaster/grants", key: ws.testKey, payload: { email: "job@example.com", days: 30 } });
      assert.equal(r.statusCode, 201, r.body);
      t.mock.timers.enable({ apis: ["setTimeout"] });
      const job = foldJob(services, silent);
      job.start();
      t.mock.timers.tick(1_000);
      // stop() waits for the run the tick began.
      await job.stop();
      assert.equal(await pendingRows(services.db), 0);
      const figures = await services.db
        .selectFrom("insight_days")
        .select(["value"])
        .where("workspace_id", "=", ws.workspaceId)
        .where("metric", "=", "grants")
        .where("day", "=", "2026-11-22")
        .execute();
      assert.deepEqual(
        figures.map((f) => Number(f.value)),
        [1],
      );
    });
  });
}

describe("Insights figures across processes (postgres)", () => {
  test("grants from two processes at once, each process folding as they come, then a read equals the recount of the grants and customers", async (t) => {
    const pgSchema = await createPgSchema();
    const one = openStorage({ databaseUrl: PG_URL, pgSchema, poolSize: 4 });
    const two = openStorage({ databaseUrl: PG_URL, pgSchema, poolSize: 4 });
    t.after(async () => {
      await one.close();
      await two.close();
    });
    await migrateToLatest(one.db, "postgres");
    const a = await servicesOver(one);
    const b = await servicesOver(two);
    const at = Date.parse("2026-10-30T22:00:00.000Z");
    a.clock.set(at);
    b.clock.set(at);
    const ws = await seedCatalogue(a.services);
    const apis = [await testApi(a.services), await testApi(b.services)];
    // 60 grants, ten at a time in each process, over two tools, some people granted twice
    // (new customers of a tool once); the clocks cross midnight and the month's end midway.
    let writing = true;
    const grants = async (p: 0 | 1) => {
      const api = apis[p] as (typeof apis)[number];
      for (let round = 0; round < 3; round++) {
        await Promise.all(
          Array.from({ length: 10 }, async (_, i) => {
            const n = round * 10 + i;
            const tool = n % 3 === 0 ? "linkkeeper" : "tabmaster";
            const r = await api.request({
              method: "POST",
              url: `/api/v1/tools/${tool}/grants`,
              key: ws.testKey,
              payload: { email: `p${(n * 7 + p * 5) % 40}@example.com`, days: 30 },
            });
            assert.equal(r.statusCode, 201, r.body);
          }),
        );
        (p === 0 ? a : b).clock.advance(90 * 60_000);
      }
    };
    const folds = async (db: Db) => {
      let folded = 0;
      while (writing) folded += await foldFigures(db);
      return folded;
    };
    const folding = Promise.all([folds(one.db), folds(two.db)]);
    await Promise.all([grants(0), grants(1)]);
    writing = false;
    const folded = await folding;
    assert.ok(folded[0] + folded[1] > 0, "the processes folded while the grants came");

    const count = async (table: "grants" | "customers", day: string) =>
      Number(
        (
          await sql<{ n: string }>`select count(*) as n from ${sql.table(table)}
            where workspace_id = ${ws.workspaceId} and env = 'test'
            and to_char(to_timestamp(${sql.ref(table === "grants" ? "created_at" : "since")} / 1000.0) at time zone 'UTC', 'YYYY-MM-DD') = ${day}`.execute(
            one.db,
          )
        ).rows[0]?.n,
      );
    for (const day of ["2026-10-30", "2026-10-31"]) {
      const q: InsightsQuery = { workspaceId: ws.workspaceId, env: "test", toolId: null, from: day, to: day, grain: "day" };
      const people = await peopleInsights(a.services.db, q);
      assert.equal(people.grants.total, await count("grants", day), `grants on ${day}`);
    }
    // Every grant and every customer row, by whole month (insight_months) and over all tools.
    const october: InsightsQuery = { workspaceId: ws.workspaceId, env: "test", toolId: null, from: "2026-10-01", to: "2026-10-31", grain: "month" };
    const recount = async (table: "grants" | "customers") =>
      Number(
        (
          await one.db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll<number>().as("n"))
            .where("workspace_id", "=", ws.workspaceId)
            .where("env", "=", "test")
            .executeTakeFirstOrThrow()
        ).n,
      );
    const [people, grantsMade, customers] = await Promise.all([peopleInsights(b.services.db, october), recount("grants"), recount("customers")]);
    assert.ok(grantsMade >= 50, `${grantsMade} grants`);
    const november = await peopleInsights(b.services.db, { ...october, from: "2026-11-01", to: "2026-11-30" });
    assert.equal(people.grants.total + november.grants.total, grantsMade);
    const perTool = await Promise.all(
      ["tabmaster", "linkkeeper"].map(async (toolId) => {
        const q = { ...october, toolId };
        return (
          (await peopleInsights(b.services.db, q)).newCustomers.total +
          (await peopleInsights(b.services.db, { ...q, from: "2026-11-01", to: "2026-11-30" })).newCustomers.total
        );
      }),
    );
    assert.equal(
      perTool.reduce((x, y) => x + y, 0),
      customers,
      "each customers row a new customer of its tool",
    );
    assert.equal(await pendingRows(one.db), 0);
  });
});
