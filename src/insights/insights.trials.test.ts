import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "kysely";
import { insertSubscription } from "../billing/subscription.store.js";
import { ensurePerson } from "../customers/person.store.js";
import { type Executor, migrateToLatest } from "../db/database.js";
import type { ProductKind } from "../db/schema.js";
import { insertGrant } from "../grants/grant.store.js";
import { newId } from "../ids.js";
import { DIALECTS, seedCatalogue, testServices } from "../test-support/harness.js";
import { buyLicence as buy } from "../test-support/insights.js";
import { emptyStorage, migrateThrough } from "../test-support/migrations.js";
import { peopleInsights } from "./insights.service.js";
import type { InsightsQuery } from "./insights.types.js";
import { foldFigures } from "./rollup.store.js";

// Trial outcomes as roll-ups (migration 037): a trial counts on its creation day, once, by
// its person's first purchase from its start: within the trial, within 30 days after its
// end, or not at all; per tool for a product containing the tool, over every tool for any.

const DAY = 86_400_000;
const START = Date.parse("2026-09-01T00:00:00.000Z");
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

async function trial(ex: Executor, workspaceId: string, personId: string, toolId: string, at: number, days = 14) {
  await insertGrant(ex, {
    id: newId("gr"),
    workspaceId,
    env: "test",
    toolId,
    personId,
    kind: "trial",
    startsAt: at,
    endsAt: at + days * DAY,
    revokedAt: null,
    note: null,
    createdAt: at,
  });
}

async function subscribe(ex: Executor, workspaceId: string, personId: string, at: number) {
  await insertSubscription(ex, {
    workspaceId,
    env: "test",
    id: newId("sub"),
    personId,
    productKind: "tool",
    productId: "tabmaster",
    planId: "monthly",
    status: "active",
    currentPeriodStart: at,
    currentPeriodEnd: at + 30 * DAY,
    cancelAtPeriodEnd: false,
    cancelAt: null,
    endedAt: null,
    seats: null,
    createdAt: at,
  });
}

for (const dialect of DIALECTS) {
  describe(`Insights trial outcomes (${dialect})`, () => {
    async function setup() {
      const { services } = await testServices(dialect);
      const ws = await seedCatalogue(services);
      let n = 0;
      const person = async () => (await ensurePerson(services.db, ws.workspaceId, "test", `trial${n++}@example.com`, START)).id;
      const outcomes = async (toolId: string | null, from = dayOf(START), to = dayOf(START + 120 * DAY), grain: InsightsQuery["grain"] = "day") =>
        (await peopleInsights(services.db, { workspaceId: ws.workspaceId, env: "test", toolId, from, to, grain })).trials;
      return { db: services.db, ws, person, outcomes };
    }

    test("a purchase within the trial, within 30 days after, and 31 days after: within, after, nothing", async () => {
      const { db, ws, person, outcomes } = await setup();
      const [a, b, c] = [await person(), await person(), await person()];
      await db.transaction().execute(async (trx) => {
        for (const p of [a, b, c]) await trial(trx, ws.workspaceId, p, "tabmaster", START + DAY);
      });
      const end = START + 15 * DAY;
      await buy(db, ws.workspaceId, a, "tool", "tabmaster", end - 1);
      await subscribe(db, ws.workspaceId, b, end + 30 * DAY - 1);
      await buy(db, ws.workspaceId, c, "tool", "tabmaster", end + 31 * DAY);
      const expected = { started: 3, paidWithinTrial: 1, paidWithin30DaysAfter: 1 };
      assert.deepEqual(await outcomes("tabmaster"), expected);
      assert.deepEqual(await outcomes(null), expected);
      assert.deepEqual(await outcomes("linkkeeper"), { started: 0, paidWithinTrial: 0, paidWithin30DaysAfter: 0 });
      // By month: September's whole month from its month rows; the same counts.
      assert.deepEqual(await outcomes("tabmaster", dayOf(START), dayOf(START + 120 * DAY), "month"), expected);
      // The trials began on 2 September: a range that ends the day before holds none of them.
      assert.deepEqual(await outcomes("tabmaster", dayOf(START - 30 * DAY), dayOf(START)), { started: 0, paidWithinTrial: 0, paidWithin30DaysAfter: 0 });
    });

    test("a second purchase does not count the trial again, nor does a free licence, nor another person's purchase", async () => {
      const { db, ws, person, outcomes } = await setup();
      const [a, b] = [await person(), await person()];
      await trial(db, ws.workspaceId, a, "tabmaster", START);
      await trial(db, ws.workspaceId, b, "tabmaster", START);
      await buy(db, ws.workspaceId, a, "tool", "tabmaster", START + 2 * DAY);
      await buy(db, ws.workspaceId, a, "bundle", "suite", START + 20 * DAY);
      await subscribe(db, ws.workspaceId, a, START + 21 * DAY);
      await buy(db, ws.workspaceId, b, "tool", "tabmaster", START + 3 * DAY, null);
      assert.deepEqual(await outcomes("tabmaster"), { started: 2, paidWithinTrial: 1, paidWithin30DaysAfter: 0 });
      assert.deepEqual(await outcomes(null), { started: 2, paidWithinTrial: 1, paidWithin30DaysAfter: 0 });
    });

    test("a bundle containing the tool converts its trial; a product without the tool converts only the page over every tool", async () => {
      const { db, ws, person, outcomes } = await setup();
      const [a, b] = [await person(), await person()];
      await trial(db, ws.workspaceId, a, "linkkeeper", START);
      await trial(db, ws.workspaceId, b, "notepad", START);
      // The suite holds tabmaster and linkkeeper, not notepad.
      await buy(db, ws.workspaceId, a, "bundle", "suite", START + DAY);
      await buy(db, ws.workspaceId, b, "bundle", "suite", START + 20 * DAY);
      assert.deepEqual(await outcomes("linkkeeper"), { started: 1, paidWithinTrial: 1, paidWithin30DaysAfter: 0 });
      assert.deepEqual(await outcomes("notepad"), { started: 1, paidWithinTrial: 0, paidWithin30DaysAfter: 0 });
      assert.deepEqual(await outcomes(null), { started: 2, paidWithinTrial: 1, paidWithin30DaysAfter: 1 });
      // One purchase decides each of a person's trials: a suite bought during two trials converts both.
      const c = await person();
      await trial(db, ws.workspaceId, c, "tabmaster", START + 2 * DAY);
      await trial(db, ws.workspaceId, c, "linkkeeper", START + 3 * DAY);
      await buy(db, ws.workspaceId, c, "bundle", "suite", START + 4 * DAY);
      assert.deepEqual(await outcomes("tabmaster"), { started: 1, paidWithinTrial: 1, paidWithin30DaysAfter: 0 });
      assert.deepEqual(await outcomes(null), { started: 4, paidWithinTrial: 3, paidWithin30DaysAfter: 1 });
    });

    test("written out of order: a trial started after its purchase was recorded, and an earlier purchase recorded after a later one", async () => {
      const { db, ws, person, outcomes } = await setup();
      const [a, b] = [await person(), await person()];
      // An import: the licence first, then the trial it fell within.
      await buy(db, ws.workspaceId, a, "tool", "tabmaster", START + 5 * DAY);
      await trial(db, ws.workspaceId, a, "tabmaster", START);
      // A purchase 20 days after the trial ended, then one within it, recorded later: within, once.
      await trial(db, ws.workspaceId, b, "tabmaster", START);
      await subscribe(db, ws.workspaceId, b, START + 34 * DAY);
      assert.deepEqual(await outcomes("tabmaster"), { started: 2, paidWithinTrial: 1, paidWithin30DaysAfter: 1 });
      await buy(db, ws.workspaceId, b, "tool", "tabmaster", START + 10 * DAY);
      assert.deepEqual(await outcomes("tabmaster"), { started: 2, paidWithinTrial: 2, paidWithin30DaysAfter: 0 });
      assert.deepEqual(await outcomes(null), { started: 2, paidWithinTrial: 2, paidWithin30DaysAfter: 0 });
      // A purchase before the trial started decides nothing.
      const c = await person();
      await buy(db, ws.workspaceId, c, "tool", "tabmaster", START + 40 * DAY - 1);
      await trial(db, ws.workspaceId, c, "tabmaster", START + 40 * DAY);
      assert.deepEqual(await outcomes("tabmaster"), { started: 3, paidWithinTrial: 2, paidWithin30DaysAfter: 0 });
    });

    if (dialect === "postgres") {
      test("two purchases committed at once count the trial once, by the first (the second decides again on what the first wrote)", async () => {
        const { db, ws, person, outcomes } = await setup();
        const a = await person();
        await trial(db, ws.workspaceId, a, "tabmaster", START);
        // A free licence first: a person's first licence marks their row, which would hold the second back sooner.
        await buy(db, ws.workspaceId, a, "tool", "notepad", START, null);
        // The second transaction reads the trial undecided, then waits on the first's update of it.
        const waiting = async () =>
          Number(
            (await sql<{ n: number }>`select count(*) as n from pg_stat_activity where wait_event_type = 'Lock' and query like 'update "grants"%'`.execute(db))
              .rows[0]?.n,
          ) > 0;
        let second: Promise<void> | null = null;
        await db.transaction().execute(async (first) => {
          await buy(first, ws.workspaceId, a, "tool", "tabmaster", START + 2 * DAY);
          // The suite (a licence of the same product would wait on the first's), 35 days on: 21 days after the
          // trial, in another month, so no row but the trial's is written by both.
          second = db.transaction().execute((trx) => buy(trx, ws.workspaceId, a, "bundle", "suite", START + 35 * DAY));
          for (let polls = 0; !(await waiting()); polls++) {
            assert.ok(polls < 2_000, "the second transaction never waited on the trial");
            await new Promise((resolve) => setImmediate(resolve));
          }
        });
        await second;
        assert.deepEqual(await outcomes("tabmaster"), { started: 1, paidWithinTrial: 1, paidWithin30DaysAfter: 0 });
        assert.deepEqual(await outcomes(null), { started: 1, paidWithinTrial: 1, paidWithin30DaysAfter: 0 });
      });
    }

    test("a trial counts on its UTC creation day, whatever day its purchase falls on", async () => {
      const { db, ws, person, outcomes } = await setup();
      const a = await person();
      const lastMinute = START + 10 * DAY - 60_000;
      await trial(db, ws.workspaceId, a, "tabmaster", lastMinute);
      await buy(db, ws.workspaceId, a, "tool", "tabmaster", lastMinute + 2 * 60_000);
      const day = dayOf(lastMinute);
      assert.deepEqual(await outcomes("tabmaster", day, day), { started: 1, paidWithinTrial: 1, paidWithin30DaysAfter: 0 });
      const next = dayOf(lastMinute + DAY);
      assert.deepEqual(await outcomes("tabmaster", next, next), { started: 0, paidWithinTrial: 0, paidWithin30DaysAfter: 0 });
    });

    test("migration 037 decides the trials kept before it, and their figures by day and by month; licences refunded in full count as refunded", async (t) => {
      const storage = await emptyStorage(dialect);
      t.after(() => storage.close());
      const { db } = storage;
      await migrateThrough(db, "035-subscription-refunds");
      const at = Date.parse("2026-10-30T22:00:00.000Z");
      await db.insertInto("workspaces").values({ id: "ws_t", slug: "ws-t", name: "T", plan: "pro", created_at: at }).execute();
      await db
        .insertInto("tools")
        .values(["tabmaster", "linkkeeper", "notepad"].map((id) => ({ workspace_id: "ws_t", id, name: id, created_at: at })))
        .execute();
      await db.insertInto("bundles").values({ workspace_id: "ws_t", id: "suite", name: "Suite", created_at: at }).execute();
      await db
        .insertInto("bundle_tools")
        .values(["tabmaster", "linkkeeper"].map((tool_id) => ({ workspace_id: "ws_t", bundle_id: "suite", tool_id })))
        .execute();
      const people = ["a", "b", "c", "d", "e"];
      await db
        .insertInto("people")
        .values(
          people.map((p) => ({ id: p, workspace_id: "ws_t", env: "live", email: `${p}@x.io`, email_norm: `${p}@x.io`, signed_in_at: null, created_at: at })),
        )
        .execute();
      const grant = (id: string, person: string, tool: string, kind: "trial" | "grant", created: number) => ({
        id,
        workspace_id: "ws_t",
        env: "live" as const,
        tool_id: tool,
        person_id: person,
        kind,
        starts_at: created,
        ends_at: created + 14 * DAY,
        revoked_at: null,
        note: null,
        created_at: created,
      });
      await db
        .insertInto("grants")
        .values([
          grant("g1", "a", "tabmaster", "trial", at),
          grant("g2", "b", "tabmaster", "trial", at),
          grant("g3", "c", "notepad", "trial", at + 3 * DAY),
          grant("g4", "d", "tabmaster", "trial", at + 3 * DAY),
          grant("g5", "e", "tabmaster", "grant", at),
        ])
        .execute();
      const licence = (id: string, person: string, kind: ProductKind, product: string, when: number, amount: number | null) => ({
        id,
        workspace_id: "ws_t",
        env: "live" as const,
        person_id: person,
        product_kind: kind,
        product_id: product,
        plan_id: null,
        status: "active" as const,
        purchased_at: when,
        amount_cents: amount,
        currency: amount === null ? null : "eur",
        created_at: when,
      });
      await db
        .insertInto("licences")
        .values([
          // a: within, then again after (counted once); c: a suite without notepad, after; d: free, then 50 days on.
          licence("l1", "a", "tool", "tabmaster", at + DAY, 4900),
          licence("l2", "a", "bundle", "suite", at + 20 * DAY, 9900),
          licence("l3", "c", "bundle", "suite", at + 20 * DAY, 9900),
          licence("l4", "d", "tool", "tabmaster", at + 4 * DAY, null),
          licence("l5", "d", "tool", "tabmaster", at + 53 * DAY, 4900),
          licence("l6", "e", "tool", "tabmaster", at + DAY, 4900),
          { ...licence("l7", "e", "bundle", "suite", at + DAY, 9900), status: "revoked" as const, refunded_at: at + 2 * DAY },
        ])
        .execute();
      await sql`insert into subscriptions (workspace_id, env, id, person_id, product_kind, product_id, plan_id, status, current_period_start, current_period_end, cancel_at_period_end, seats, created_at)
        values ('ws_t', 'live', 'sub_b', 'b', 'tool', 'tabmaster', null, 'active', ${at + 16 * DAY}, ${at + 46 * DAY}, 0, null, ${at + 16 * DAY})`.execute(db);

      await migrateToLatest(db, dialect);

      const decided = await db.selectFrom("grants").select(["id", "outcome", "outcome_any"]).orderBy("id").execute();
      assert.deepEqual(
        decided.map((g) => [g.id, g.outcome, g.outcome_any]),
        [
          ["g1", "within", "within"],
          ["g2", "after", "after"],
          ["g3", null, "after"],
          ["g4", null, null],
          ["g5", null, null],
        ],
      );
      await foldFigures(db);
      const rows = async (table: "insight_days" | "insight_months") =>
        (
          await db
            .selectFrom(table as "insight_days")
            .select([table === "insight_days" ? "day" : sql<string>`month`.as("day"), "metric", "scope", "value"])
            .where("metric", "like", "trial_paid_%")
            .execute()
        )
          .map((r) => [r.day, r.metric, r.scope, Number(r.value)])
          .sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)));
      assert.deepEqual(await rows("insight_days"), [
        ["2026-10-30", "trial_paid_after", "*", 1],
        ["2026-10-30", "trial_paid_after", "tool:tabmaster", 1],
        ["2026-10-30", "trial_paid_within", "*", 1],
        ["2026-10-30", "trial_paid_within", "tool:tabmaster", 1],
        ["2026-11-02", "trial_paid_after", "*", 1],
      ]);
      assert.deepEqual(await rows("insight_months"), [
        ["2026-10", "trial_paid_after", "*", 1],
        ["2026-10", "trial_paid_after", "tool:tabmaster", 1],
        ["2026-10", "trial_paid_within", "*", 1],
        ["2026-10", "trial_paid_within", "tool:tabmaster", 1],
        ["2026-11", "trial_paid_after", "*", 1],
      ]);
      // A licence refunded in full before counted its whole amount then: a later report of its charge adds nothing.
      const refunded = await db.selectFrom("licences").select(["id", "refunded_cents"]).where("id", "in", ["l6", "l7"]).orderBy("id").execute();
      assert.deepEqual(
        refunded.map((l) => [l.id, Number(l.refunded_cents)]),
        [
          ["l6", 0],
          ["l7", 9900],
        ],
      );
      // From then on the writer moves them: d's earlier purchase, recorded now, converts d's trial within it.
      await buy(db, "ws_t", "d", "tool", "tabmaster", at + 5 * DAY, 4900, "live");
      const d = await db.selectFrom("grants").select(["outcome", "outcome_any"]).where("id", "=", "g4").executeTakeFirstOrThrow();
      assert.deepEqual([d.outcome, d.outcome_any], ["within", "within"]);
    });
  });
}
