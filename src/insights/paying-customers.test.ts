import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "kysely";
import { DAY_MS } from "../clock.js";
import { DIALECTS, seedCatalogue, testApi, testServices } from "../test-support/harness.js";
import { makeRecurringHistory } from "../test-support/insights.js";
import { emptyStorage, migrateThrough } from "../test-support/migrations.js";
import { subscriptionInsights } from "./insights.service.js";
import type { InsightsQuery, SubscriptionInsights } from "./insights.types.js";

// Revenue per paying customer (ARPPU), ARR and the monthly MRR churn rate per currency, from
// a history of subscriptions in euros and yen (test-support's makeRecurringHistory), against
// figures worked out by hand; the API answers the use case's figures.

const TODAY = Date.parse("2026-11-26T12:00:00Z");
const WEEK = { from: "2026-11-20", to: "2026-11-26", grain: "day" } as const;

const of = (s: SubscriptionInsights, currency: string) => {
  const found = s.currencies.find((c) => c.currency === currency);
  assert.ok(found, `${currency} among ${s.currencies.map((c) => c.currency)}`);
  return found;
};
const values = (points: { value: number }[]) => points.map((p) => p.value);

for (const dialect of DIALECTS) {
  describe(`revenue per paying customer, ARR and churn rate (${dialect})`, () => {
    test("all tools: each person once per currency, trials and ended subscriptions not paying, past due paying", async () => {
      const env = await testServices(dialect);
      env.clock.set(TODAY);
      const ws = await seedCatalogue(env.services);
      await makeRecurringHistory(env.services, env.clock, ws, TODAY);
      const q: InsightsQuery = { workspaceId: ws.workspaceId, env: "test", toolId: null, ...WEEK };
      const s = await subscriptionInsights(env.services.db, q);

      // Euros before the range (the end of 19 Nov): ann €5 + €20 (past due), bob €5, eve €5 + €5; dan's trial nothing.
      // MRR €40.00 over 3 people; at the end: ann €25, eve €5, €30.00 over 2.
      const eur = of(s, "eur");
      assert.deepEqual(values(eur.payingCustomers.points), [3, 3, 3, 3, 2, 2, 2], "bob ends on the 24th; eve's second ending on the 25th leaves her paying");
      assert.equal(eur.payingCustomers.previous.at(-1)?.value, 3);
      assert.deepEqual(eur.rates.revenuePerPayingCustomer, { value: 1500, previous: 1333 }, "€30.00 ÷ 2; €40.00 ÷ 3, to the cent");
      // Each day: €40.00 ÷ 3; bob gone, €35.00 ÷ 2; eve's second gone, €30.00 ÷ 2.
      assert.deepEqual(values(eur.revenuePerPayingCustomer.points), [1333, 1333, 1333, 1333, 1750, 1500, 1500]);
      assert.deepEqual(eur.rates.arr, { value: 36000, previous: 48000 });
      // €10.00 churned (bob, eve's second) of €40.00 at the start, over 7 days brought to 30.
      assert.equal(eur.rates.monthlyChurnRate, (1000 / 4000) * (30 / 7));

      // Yen: cat from the 23rd, Pro ¥1,200 and the Suite's ¥24,000 a year (¥2,000 a month), one person.
      const jpy = of(s, "jpy");
      assert.deepEqual(values(jpy.payingCustomers.points), [0, 0, 0, 1, 1, 1, 1]);
      assert.deepEqual(values(jpy.revenuePerPayingCustomer.points), [0, 0, 0, 3200, 3200, 3200, 3200], "0 where nobody pays");
      assert.deepEqual(jpy.rates.revenuePerPayingCustomer, { value: 3200, previous: null }, "nobody paid in yen before the range");
      assert.deepEqual(jpy.rates.arr, { value: 38400, previous: 0 });
      assert.equal(jpy.rates.monthlyChurnRate, null, "no MRR at the start: no rate");
    });

    test("one tool: a person counts once per product (the tool, each bundle holding it), as its MRR adds each product's", async () => {
      const env = await testServices(dialect);
      env.clock.set(TODAY);
      const ws = await seedCatalogue(env.services);
      await makeRecurringHistory(env.services, env.clock, ws, TODAY);
      const s = await subscriptionInsights(env.services.db, { workspaceId: ws.workspaceId, env: "test", toolId: "tabmaster", ...WEEK });
      // Tab Master in euros: ann €5, bob €5, eve €10 at the start (€20.00, 3 people: €6.67); ann and eve €5 each at the end.
      assert.deepEqual(of(s, "eur").rates.revenuePerPayingCustomer, { value: 500, previous: 667 });
      // In yen: cat's Pro (Tab Master) and Suite (a bundle holding it), two products: ¥3,200 ÷ 2.
      assert.deepEqual(of(s, "jpy").rates.revenuePerPayingCustomer, { value: 1600, previous: null });
      // Link Keeper: ann's past-due Team alone (and the Suite's yen).
      const lk = await subscriptionInsights(env.services.db, { workspaceId: ws.workspaceId, env: "test", toolId: "linkkeeper", ...WEEK });
      assert.deepEqual(values(of(lk, "eur").payingCustomers.points), [1, 1, 1, 1, 1, 1, 1]);
      assert.deepEqual(of(lk, "eur").rates.revenuePerPayingCustomer, { value: 2000, previous: 2000 });
    });

    test("the API's subscriptions answer carries the same figures as the use case, and another workspace's key sees none", async () => {
      const env = await testServices(dialect);
      env.clock.set(TODAY);
      const ws = await seedCatalogue(env.services);
      await makeRecurringHistory(env.services, env.clock, ws, TODAY);
      const api = await testApi(env.services);
      for (const tool of [null, "tabmaster"]) {
        const q: InsightsQuery = { workspaceId: ws.workspaceId, env: "test", toolId: tool, ...WEEK };
        const response = await api.request({
          url: `/api/v1/insights/subscriptions?from=${WEEK.from}&to=${WEEK.to}${tool ? `&tool=${tool}` : ""}`,
          key: ws.testKey,
        });
        assert.equal(response.statusCode, 200, response.body);
        const body = response.json();
        assert.deepEqual(body, JSON.parse(JSON.stringify(await subscriptionInsights(env.services.db, q))));
        // 12 × €30.00 over all; 12 × €10.00 of Tab Master's.
        assert.equal(body.currencies.find((c: { currency: string }) => c.currency === "eur").rates.arr.value, tool === null ? 36000 : 12000);
      }
      const other = await seedCatalogue(env.services);
      const theirs = (await api.request({ url: `/api/v1/insights/subscriptions?from=${WEEK.from}&to=${WEEK.to}`, key: other.testKey })).json();
      assert.deepEqual(theirs.currencies, []);
    });

    test("migration 052 counts the people paying now on its day, once per product and once over all", async (t) => {
      const storage = await emptyStorage(dialect);
      t.after(() => storage.close());
      const { db } = storage;
      await migrateThrough(db, "048-wrong-key-blocks");
      const at = TODAY - 40 * DAY_MS;
      await db.insertInto("workspaces").values({ id: "ws_m", slug: "ws-m", name: "M", plan: "pro", created_at: at }).execute();
      await db
        .insertInto("people")
        .values(
          ["ann", "eve", "bob", "cat"].map((p) => ({
            id: p,
            workspace_id: "ws_m",
            env: "live",
            email: `${p}@x.io`,
            email_norm: `${p}@x.io`,
            signed_in_at: null,
            created_at: at,
          })),
        )
        .execute();
      const sub = (id: string, person: string, kind: "tool" | "bundle", product: string, currency: string, mrr: number) => ({
        id,
        person,
        kind,
        product,
        currency,
        mrr,
      });
      const subs = [
        sub("s1", "ann", "tool", "tabmaster", "eur", 500),
        sub("s2", "ann", "tool", "linkkeeper", "eur", 2000),
        sub("s3", "eve", "tool", "tabmaster", "eur", 500),
        sub("s4", "eve", "tool", "tabmaster", "eur", 500),
        sub("s5", "bob", "tool", "tabmaster", "eur", 0), // ended
        sub("s6", "cat", "bundle", "suite", "jpy", 2000),
      ];
      for (const s of subs) {
        await db
          .insertInto("subscriptions")
          .values({
            workspace_id: "ws_m",
            env: "live",
            id: s.id,
            person_id: s.person,
            product_kind: s.kind,
            product_id: s.product,
            plan_id: null,
            status: s.mrr > 0 ? "active" : "canceled",
            current_period_start: at,
            current_period_end: at,
            cancel_at_period_end: 0,
            cancel_at: null,
            ended_at: s.mrr > 0 ? null : at,
            seats: null,
            created_at: at,
            processor_at: null,
            cancel_notified_day: null,
            account_person_id: null,
          } as never)
          .execute();
        await db
          .insertInto("insight_subscriptions")
          .values({ workspace_id: "ws_m", env: "live", subscription_id: s.id, currency: s.currency, mrr: s.mrr, contributed: 1 })
          .execute();
      }
      const { migrations } = await import("../db/migrations/index.js");
      await migrations["052-money-at-a-glance"]?.up(db as never);
      const rows = await db
        .selectFrom("insight_days")
        .select(["day", "scope", "currency", "value"])
        .where("metric", "=", "paying_people")
        .orderBy(sql`scope, currency` as never)
        .execute();
      const day = rows[0]?.day ?? "";
      assert.match(day, /^\d{4}-\d{2}-\d{2}$/);
      assert.ok(Math.abs(Date.parse(`${day}T12:00:00Z`) - Date.now()) <= DAY_MS, "the day it ran");
      assert.deepEqual(
        rows.map((r) => [r.scope, r.currency, Number(r.value)]).sort(),
        [
          ["*", "eur", 2],
          ["*", "jpy", 1],
          ["bundle:suite", "jpy", 1],
          ["tool:linkkeeper", "eur", 1],
          ["tool:tabmaster", "eur", 2],
        ].sort(),
      );
      const months = await db.selectFrom("insight_months").select(["month", "value"]).where("metric", "=", "paying_people").execute();
      assert.equal(months.length, 5);
      assert.ok(months.every((m) => m.month === day.slice(0, 7)));
    });
  });
}
