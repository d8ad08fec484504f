import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { insertLicence } from "../billing/licence.store.js";
import { ensurePerson } from "../customers/person.store.js";
import { type Executor, migrateToLatest } from "../db/database.js";
import type { ProductKind } from "../db/schema.js";
import { newId } from "../ids.js";
import { DIALECTS, seedCatalogue, testServices } from "../test-support/harness.js";
import { emptyStorage, migrateThrough } from "../test-support/migrations.js";
import { useInsights } from "./insights.service.js";
import { mostActiveUnpaid, scopesOfTool } from "./insights.store.js";
import { recordActivities } from "./rollup.store.js";

// The Use page's two lists at scale (migration 034): most active unpaid walks each month's
// people by active days instead of grouping the range's person-days, and must answer
// exactly what that grouping answers; at risk leaves a new payer 14 days to start.

const DAY = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const FIRST = Date.parse("2026-08-01T00:00:00.000Z");
const DAYS = 92;

async function buy(ex: Executor, workspaceId: string, personId: string, kind: ProductKind, productId: string, at: number, amountCents: number | null) {
  await insertLicence(ex, {
    id: newId("lic"),
    workspaceId,
    env: "test",
    personId,
    productKind: kind,
    productId,
    planId: null,
    status: "active",
    purchasedAt: at,
    amountCents,
    currency: amountCents === null ? null : "eur",
    paymentIntent: null,
    checkoutSession: null,
    seats: null,
    teamLicenceId: null,
    teamSubscriptionId: null,
    createdAt: at,
  });
}

for (const dialect of DIALECTS) {
  describe(`Insights lists (${dialect})`, () => {
    test("most active unpaid: the walk of the months answers as counting every person-day does, ties, payers and partial months included", async () => {
      const { services } = await testServices(dialect);
      const { db } = services;
      const ws = await seedCatalogue(services);
      // 150 people: a dozen use it three days in four, then a fifth of the days, then a few days; each on one tool.
      const people: { id: string; tool: string; days: string[] }[] = [];
      await db.transaction().execute(async (trx) => {
        for (let i = 0; i < 150; i++) {
          const { id } = await ensurePerson(trx, ws.workspaceId, "test", `user${i}@example.com`, FIRST);
          const tool = i % 4 === 3 ? "linkkeeper" : "tabmaster";
          const active = (d: number) => (i < 12 ? (d + i) % 4 !== 0 : i < 50 ? (d * 3 + i) % 5 === 0 : (d * 7 + i * 11) % 23 === 0);
          const days: string[] = [];
          for (let d = 0; d < DAYS; d++) {
            if (!active(d)) continue;
            days.push(dayOf(FIRST + d * DAY));
            await recordActivities(trx, [
              {
                workspaceId: ws.workspaceId,
                env: "test",
                toolId: tool,
                personId: id,
                deviceId: `dev-${id}`,
                at: FIRST + d * DAY + i * 60_000,
              },
            ]);
          }
          people.push({ id, tool, days });
          // Paying: a third for Tab Master, some for the suite (Tab Master among its tools), some for Link Keeper only; a free licence pays nothing.
          if (i % 3 === 0) await buy(trx, ws.workspaceId, id, "tool", "tabmaster", FIRST, 4900);
          else if (i % 7 === 1) await buy(trx, ws.workspaceId, id, "bundle", "suite", FIRST, 9900);
          else if (i % 5 === 2) await buy(trx, ws.workspaceId, id, "tool", "linkkeeper", FIRST, 1900);
          else if (i % 11 === 4) await buy(trx, ws.workspaceId, id, "tool", "tabmaster", FIRST, null);
        }
      });
      const licences = await db.selectFrom("licences").selectAll().where("workspace_id", "=", ws.workspaceId).execute();
      const ranges = [
        ["2026-08-10", "2026-08-20"],
        ["2026-08-25", "2026-09-05"],
        ["2026-09-01", "2026-09-30"],
        ["2026-08-15", "2026-10-20"],
        ["2026-07-01", "2026-10-31"],
        ["2026-09-17", "2026-09-17"],
        ["2026-11-01", "2026-11-30"],
      ] as const;
      for (const toolId of [null, "tabmaster"]) {
        const inScope = (kind: string, id: string) => toolId === null || (kind === "tool" && id === toolId) || (kind === "bundle" && id === "suite");
        const paying = new Set(licences.filter((l) => l.amount_cents !== null && inScope(l.product_kind, l.product_id)).map((l) => l.person_id));
        const scope = { workspaceId: ws.workspaceId, env: "test" as const, scopes: toolId === null ? null : await scopesOfTool(db, ws.workspaceId, toolId) };
        const activity = toolId === null ? "*" : `tool:${toolId}`;
        for (const [from, to] of ranges) {
          const expected = people
            .filter((p) => (toolId === null || p.tool === toolId) && !paying.has(p.id))
            .map((p) => ({ id: p.id, days: p.days.filter((d) => d >= from && d <= to).length }))
            .filter((p) => p.days > 0)
            .sort((a, b) => b.days - a.days || (a.id < b.id ? -1 : 1))
            .slice(0, 20)
            .map((p) => [p.id, p.days]);
          // As the page walks it; a few rows at a time, so that the walk stops on its bound long
          // before the lists end; and counted from every person-day, as when a walk proves nothing.
          for (const walk of [{}, { batch: 3 }, { batch: 16 }, { max: 0 }]) {
            const got = await mostActiveUnpaid(db, scope, activity, toolId, from, to, 20, walk);
            assert.deepEqual(
              got.map((p) => [p.personId, p.activeDays]),
              expected,
              `${JSON.stringify(walk)}, tool ${toolId}, ${from}…${to}`,
            );
          }
        }
      }
    });

    test("at risk: a payer is listed once 14 days have passed since their purchase without an active day, not before", async () => {
      const { services, clock } = await testServices(dialect);
      const { db } = services;
      const ws = await seedCatalogue(services);
      const now = Date.parse("2026-11-26T12:00:00.000Z");
      clock.set(now);
      const person = async (name: string) => (await ensurePerson(db, ws.workspaceId, "test", `${name}@example.com`, now - 60 * DAY)).id;
      const check = (personId: string, at: number) =>
        db
          .transaction()
          .execute((trx) =>
            recordActivities(trx, [{ workspaceId: ws.workspaceId, env: "test", toolId: "tabmaster", personId, deviceId: `dev-${personId}`, at }]),
          );
      const lapsed = await person("lapsed");
      await buy(db, ws.workspaceId, lapsed, "tool", "tabmaster", now - 30 * DAY, 4900);
      await check(lapsed, now - 20 * DAY);
      const quiet = await person("quiet");
      await buy(db, ws.workspaceId, quiet, "tool", "tabmaster", now - 20 * DAY, 4900);
      const user = await person("user");
      await buy(db, ws.workspaceId, user, "tool", "tabmaster", now - 30 * DAY, 4900);
      await check(user, now - 3 * DAY);
      // Used a trial long ago, bought two days ago: not yet at risk.
      const returning = await person("returning");
      await check(returning, now - 40 * DAY);
      await buy(db, ws.workspaceId, returning, "tool", "tabmaster", now - 2 * DAY, 4900);
      // Bought an hour ago, not installed yet.
      const fresh = await person("fresh");
      await buy(db, ws.workspaceId, fresh, "tool", "tabmaster", now - 3_600_000, 4900);

      const atRisk = async (at: number) => {
        const q = { workspaceId: ws.workspaceId, env: "test" as const, toolId: "tabmaster", from: dayOf(at - 29 * DAY), to: dayOf(at), grain: "day" as const };
        return (await useInsights(services, q, new Date(at))).atRisk.map((p) => p.personId);
      };
      // Newest lapse first, then those never active.
      assert.deepEqual(await atRisk(now), [lapsed, quiet]);
      // Twelve days on, the returning buyer has had 14 days since buying; the fresh one has not (nor a day later).
      assert.deepEqual(await atRisk(now + 12 * DAY), [user, lapsed, returning, quiet]);
      assert.deepEqual(await atRisk(now + 13 * DAY), [user, lapsed, returning, quiet]);
      assert.deepEqual(await atRisk(now + 14 * DAY), [user, lapsed, returning, ...[quiet, fresh].sort()]);
    });

    test("migration 034 adds up the days written before it into months, and the customers trigger writes both from then on", async (t) => {
      const storage = await emptyStorage(dialect);
      t.after(() => storage.close());
      const { db } = storage;
      await migrateThrough(db, "033-workspace-audit");
      const figure = (metric: string, day: string, value: number) => ({
        workspace_id: "ws_m",
        env: "live" as const,
        metric,
        day,
        scope: "tool:t",
        currency: metric === "gross_one_time" ? "eur" : "",
        plan_id: "",
        value,
      });
      await db
        .insertInto("insight_days")
        .values([
          figure("gross_one_time", "2026-10-03", 100),
          figure("gross_one_time", "2026-10-30", 250),
          figure("gross_one_time", "2026-11-02", 50),
          figure("mrr", "2026-10-05", 500),
          figure("mrr", "2026-10-20", -500),
          figure("active_people", "2026-10-03", 7),
        ])
        .execute();
      const day = (person: string, d: string) => ({ workspace_id: "ws_m", env: "live" as const, scope: "*", person_id: person, day: d });
      await db
        .insertInto("insight_active_days")
        .values([day("p1", "2026-10-01"), day("p1", "2026-10-02"), day("p1", "2026-10-31"), day("p1", "2026-11-01"), day("p2", "2026-10-15")])
        .execute();

      await migrateToLatest(db, dialect);

      const months = await db.selectFrom("insight_months").select(["metric", "month", "value"]).orderBy("metric").orderBy("month").execute();
      assert.deepEqual(
        months.map((m) => [m.metric, m.month, Number(m.value)]),
        [
          ["gross_one_time", "2026-10", 350],
          ["gross_one_time", "2026-11", 50],
        ],
        "a month that adds up to nothing has no row; a daily count of people has none",
      );
      const active = await db.selectFrom("insight_active_months").select(["person_id", "month", "days"]).orderBy("person_id").orderBy("month").execute();
      assert.deepEqual(
        active.map((a) => [a.person_id, a.month, Number(a.days)]),
        [
          ["p1", "2026-10", 3],
          ["p1", "2026-11", 1],
          ["p2", "2026-10", 1],
        ],
      );

      // A new customer, then its `since` moved a month earlier: each month follows its days.
      const at = Date.parse("2026-11-20T10:00:00.000Z");
      await db.insertInto("workspaces").values({ id: "ws_c", slug: "ws-c", name: "C", plan: "pro", created_at: at }).execute();
      await db.insertInto("tools").values({ workspace_id: "ws_c", id: "t", name: "T", created_at: at }).execute();
      await db
        .insertInto("people")
        .values({ id: "psn_c", workspace_id: "ws_c", env: "live", email: "c@example.com", email_norm: "c@example.com", signed_in_at: null, created_at: at })
        .execute();
      await db
        .insertInto("customers")
        .values({ workspace_id: "ws_c", env: "live", tool_id: "t", person_id: "psn_c", since: at, signed_in: 0, kind: "holder", held_until: null })
        .execute();
      const counts = async () =>
        (
          await db
            .selectFrom("insight_months")
            .select(["month", "scope", "value"])
            .where("workspace_id", "=", "ws_c")
            .where("metric", "=", "new_customers")
            .orderBy("month")
            .orderBy("scope")
            .execute()
        ).map((r) => [r.month, r.scope, Number(r.value)]);
      assert.deepEqual(await counts(), [
        ["2026-11", "*", 1],
        ["2026-11", "tool:t", 1],
      ]);
      await db
        .updateTable("customers")
        .set({ since: at - 30 * DAY })
        .where("person_id", "=", "psn_c")
        .execute();
      assert.deepEqual(await counts(), [
        ["2026-10", "tool:t", 1],
        ["2026-11", "*", 1],
        ["2026-11", "tool:t", 0],
      ]);
    });
  });
}
