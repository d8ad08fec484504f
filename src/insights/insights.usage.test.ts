// Usage in Insights (issue 46, point 5), on both engines: units spent per meter and day,
// written by the spend itself; the allowances used up (the list, bounded and newest first,
// and `usage.allowance_ran_out` once per person, meter and period); credit packs' revenue
// apart. Another workspace's, and the other environment's, never show.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DAY_MS } from "../clock.js";
import { ensurePerson } from "../customers/person.store.js";
import { DIALECTS, testApi, testServices, type Workspace } from "../test-support/harness.js";
import { connectTestStripe, deliver, emittedEvents, ofType, paymentSession, stripeEvent } from "../test-support/stripe.js";
import { seedUsageCatalogue } from "../test-support/usage.js";
import { recordRunOut } from "../usage/usage.store.js";

const NOV_21 = Date.parse("2026-11-21T12:00:00.000Z");

/** The range the spends of most tests fall in: the 21st alone. */
const ON_NOV_21 = "from=2026-11-21&to=2026-11-21";

interface Use {
  meters: {
    toolId: string;
    meterId: string;
    name: string;
    unit: string;
    used: { points: { date: string; value: number }[]; total: number; previousTotal: number };
  }[];
  allowanceRanOut: { personId: string; email: string; toolId: string; meterId: string; ranOutAt: string; resetsAt: string }[];
}

/** A workspace selling Tab Master's summaries (10 free a month), its API, the clock on 21 Nov 2026 at noon, and the vendor's calls each test makes. */
async function bed(dialect: (typeof DIALECTS)[number]) {
  const { services, clock } = await testServices(dialect);
  clock.set(NOV_21);
  const ws = await seedUsageCatalogue(services);
  const api = await testApi(services);
  /** `quantity` summaries spent by `email` in `workspace`: the API's answer. */
  const spend = (email: string, quantity: number, workspace: Workspace = ws) =>
    api.request({
      method: "POST",
      url: `/api/v1/tools/tabmaster/customers/${encodeURIComponent(email)}/usage`,
      key: workspace.testKey,
      payload: { meter: "summaries", quantity },
    });
  /** The same, accepted. */
  const spent = async (email: string, quantity: number, workspace: Workspace = ws) => {
    const response = await spend(email, quantity, workspace);
    assert.equal(response.statusCode, 200, response.body);
  };
  /** `amount` summaries of credits given to `email`. */
  const credit = async (email: string, amount: number) => {
    const response = await api.request({
      method: "POST",
      url: `/api/v1/tools/tabmaster/customers/${encodeURIComponent(email)}/credits`,
      key: ws.testKey,
      payload: { meter: "summaries", amount, note: "goodwill" },
    });
    assert.equal(response.statusCode, 201, response.body);
  };
  /** Insights' use figures as the holder of `key` reads them. */
  const use = async (key: string, query = ON_NOV_21): Promise<Use> => {
    const response = await api.request({ url: `/api/v1/insights/use?${query}`, key });
    assert.equal(response.statusCode, 200, response.body);
    return response.json() as Use;
  };
  return { services, clock, ws, api, spend, spent, credit, use };
}

for (const dialect of DIALECTS) {
  describe(`usage in Insights (${dialect})`, () => {
    test("units spent per meter and day: each spend's on its UTC day, by month too, against the period before; a refusal adds nothing", async () => {
      const { services, clock, ws, spend, spent, use } = await bed(dialect);
      await spent("ada@example.com", 3);
      await spent("bob@example.com", 2);
      clock.advance(DAY_MS);
      await spent("ada@example.com", 4);
      // Over what is left (3 of the 10 free): refused, and not counted.
      assert.equal((await spend("ada@example.com", 4)).statusCode, 402);

      // A day's figure may lie in several rows (one per group of people, so that their spends
      // do not wait on one row): ada's and bob's of the 21st, and one more written as a third
      // person's spend in a group of its own would be; the chart sums them.
      const stored = await services.db
        .selectFrom("insight_meter_days")
        .select(["shard", "used"])
        .where("workspace_id", "=", ws.workspaceId)
        .where("day", "=", "2026-11-21")
        .execute();
      const free = Array.from({ length: 16 }, (_, shard) => shard).find((shard) => !stored.some((r) => r.shard === shard));
      await services.db
        .insertInto("insight_meter_days")
        .values({ workspace_id: ws.workspaceId, env: "test", tool_id: "tabmaster", meter_id: "summaries", day: "2026-11-21", shard: free ?? 0, used: 10 })
        .execute();
      const days = await use(ws.testKey, "from=2026-11-20&to=2026-11-22&tool=tabmaster");
      assert.equal(days.meters.length, 1);
      const [meter] = days.meters;
      assert.deepEqual({ ...meter, used: undefined }, { toolId: "tabmaster", meterId: "summaries", name: "Summaries", unit: "summaries", used: undefined });
      assert.deepEqual(meter?.used.points, [
        { date: "2026-11-20", value: 0 },
        { date: "2026-11-21", value: 15 },
        { date: "2026-11-22", value: 4 },
      ]);
      assert.equal(meter?.used.total, 19);
      const months = await use(ws.testKey, "from=2026-11-01&to=2026-11-30&grain=month");
      assert.deepEqual(months.meters[0]?.used.points, [{ date: "2026-11", value: 19 }]);
      // The days after: nothing spent, the 19 in the period before.
      const after = await use(ws.testKey, "from=2026-11-23&to=2026-11-25");
      assert.deepEqual([after.meters[0]?.used.total, after.meters[0]?.used.previousTotal], [0, 19]);
    });

    test("units spent: another workspace's and the live environment's never show", async () => {
      const { services, ws, spent, use } = await bed(dialect);
      const other = await seedUsageCatalogue(services);
      await spent("ada@example.com", 3);
      await spent("ada@example.com", 7, other);
      const mine = await use(ws.testKey);
      const theirs = await use(other.testKey);
      const live = await use(ws.liveKey);
      assert.deepEqual(
        [mine, theirs, live].map((u) => u.meters.map((m) => m.used.total)),
        [[3], [7], [0]],
      );
    });

    test("an allowance used up: listed once, with one usage.allowance_ran_out, whether credits then pay or not; a new period is news again", async () => {
      const { services, clock, ws, spent, credit, use } = await bed(dialect);
      await spent("ada@example.com", 6);
      assert.deepEqual((await use(ws.testKey)).allowanceRanOut, []);
      await spent("ada@example.com", 4); // the free allowance's last unit
      await credit("ada@example.com", 50);
      clock.advance(60_000);
      await spent("ada@example.com", 3); // credits pay: the allowance was used up already

      // Bob's spend takes his last free units and credits pay the rest: used up too.
      await spent("bob@example.com", 1);
      await credit("bob@example.com", 5);
      clock.advance(60_000);
      await spent("bob@example.com", 12);

      const listed = (await use(ws.testKey)).allowanceRanOut;
      assert.deepEqual(
        listed.map((r) => [r.email, r.toolId, r.meterId, r.ranOutAt, r.resetsAt]),
        [
          ["bob@example.com", "tabmaster", "summaries", "2026-11-21T12:02:00.000Z", "2026-12-01T00:00:00.000Z"],
          ["ada@example.com", "tabmaster", "summaries", "2026-11-21T12:00:00.000Z", "2026-12-01T00:00:00.000Z"],
        ],
      );
      const events = ofType(await emittedEvents(services, ws), "usage.allowance_ran_out");
      assert.deepEqual(
        events.map((e) => e.data),
        [
          {
            tool: "tabmaster",
            meter: "summaries",
            email: "ada@example.com",
            user_id: listed[1]?.personId,
            allowance: 10,
            credits: 0,
            resets_at: "2026-12-01T00:00:00.000Z",
          },
          {
            tool: "tabmaster",
            meter: "summaries",
            email: "bob@example.com",
            user_id: listed[0]?.personId,
            allowance: 10,
            credits: 2,
            resets_at: "2026-12-01T00:00:00.000Z",
          },
        ],
      );

      // December: Ada's allowance is whole again, and using it up is a new period.
      clock.set(Date.parse("2026-12-02T08:00:00.000Z"));
      await spent("ada@example.com", 10);
      await spent("ada@example.com", 1);
      const both = (await use(ws.testKey, "from=2026-11-21&to=2026-12-02")).allowanceRanOut;
      assert.deepEqual(
        both.map((r) => [r.email, r.ranOutAt.slice(0, 10)]),
        [
          ["ada@example.com", "2026-12-02"],
          ["bob@example.com", "2026-11-21"],
          ["ada@example.com", "2026-11-21"],
        ],
      );
      assert.equal(ofType(await emittedEvents(services, ws), "usage.allowance_ran_out").length, 3);
      // The range's only: December's alone.
      assert.deepEqual(
        (await use(ws.testKey, "from=2026-12-01&to=2026-12-02")).allowanceRanOut.map((r) => r.ranOutAt.slice(0, 10)),
        ["2026-12-02"],
      );
    });

    test("allowances used up: another workspace's and the live environment's never show; another tool's neither", async () => {
      const { services, ws, spent, use } = await bed(dialect);
      const other = await seedUsageCatalogue(services);
      await spent("ada@example.com", 10, other);
      await spent("bob@example.com", 10);
      assert.deepEqual(
        (await use(ws.testKey)).allowanceRanOut.map((r) => r.email),
        ["bob@example.com"],
      );
      assert.deepEqual(
        (await use(other.testKey)).allowanceRanOut.map((r) => r.email),
        ["ada@example.com"],
      );
      assert.deepEqual((await use(ws.liveKey)).allowanceRanOut, []);
      assert.deepEqual((await use(ws.testKey, `${ON_NOV_21}&tool=notepad`)).allowanceRanOut, []);
      assert.equal(ofType(await emittedEvents(services, ws), "usage.allowance_ran_out").length, 1);
      assert.equal(ofType(await emittedEvents(services, ws, "live"), "usage.allowance_ran_out").length, 0);
    });

    test("allowances used up: at most 100, newest first, only those of the range's days", async () => {
      const { services, ws, use } = await bed(dialect);
      const { db } = services;
      const start = Date.parse("2026-11-21T00:00:00.000Z");
      const key = (personId: string) => ({ workspaceId: ws.workspaceId, env: "test" as const, personId, toolId: "tabmaster", meterId: "summaries" });
      // 105 on the 21st a minute apart, one the second before it begins, one the first of the 22nd.
      const at = [...Array.from({ length: 105 }, (_, i) => start + i * 60_000), start - 1000, start + DAY_MS];
      for (const [i, when] of at.entries()) {
        const person = await ensurePerson(db, ws.workspaceId, "test", `p${i}@example.com`, when);
        assert.equal(await recordRunOut(db, key(person.id), `free@${when}`, when, start + 10 * DAY_MS), true);
        // The same period again writes nothing: once per person, meter and period.
        assert.equal(await recordRunOut(db, key(person.id), `free@${when}`, when + 1, start + 10 * DAY_MS), false);
      }
      const listed = (await use(ws.testKey)).allowanceRanOut;
      assert.equal(listed.length, 100);
      assert.deepEqual(
        listed.map((r) => r.email),
        Array.from({ length: 100 }, (_, i) => `p${104 - i}@example.com`),
      );
    });

    test("credit packs' revenue apart, per currency, part of one-time; plans flagged; another workspace's never shows", async () => {
      const { services, clock, ws, api } = await bed(dialect);
      const other = await seedUsageCatalogue(services);
      const secret = await connectTestStripe(services, ws);
      const buy = async (plan: string, amount: number, currency: string) => {
        const session = paymentSession({
          email: "ada@example.com",
          metadata: { warden_tool: "tabmaster", warden_plan: plan },
          amount,
          currency,
          now: clock.now(),
        });
        assert.equal(await deliver(api, ws, secret, stripeEvent("checkout.session.completed", session, { now: clock.now() }), clock.now()), "applied");
      };
      await buy("pack-1000", 900, "eur");
      await buy("pack-1000", 900, "eur");
      await buy("lifetime", 4900, "eur");
      await buy("pack-1000", 1500, "usd");
      const revenue = async (key: string) => {
        const response = await api.request({ url: "/api/v1/insights/revenue?from=2026-11-20&to=2026-11-21&tool=tabmaster", key });
        assert.equal(response.statusCode, 200, response.body);
        return response.json() as {
          currencies: {
            currency: string;
            oneTime: { total: number };
            packs: { total: number; points: { date: string; value: number }[] };
            byPlan: { planId: string; pack: boolean; gross: number }[];
          }[];
        };
      };
      const mine = await revenue(ws.testKey);
      assert.deepEqual(
        mine.currencies.map((c) => [c.currency, c.oneTime.total, c.packs.total]),
        [
          ["eur", 6700, 1800],
          ["usd", 1500, 1500],
        ],
      );
      assert.deepEqual(mine.currencies[0]?.packs.points, [
        { date: "2026-11-20", value: 0 },
        { date: "2026-11-21", value: 1800 },
      ]);
      assert.deepEqual(
        mine.currencies[0]?.byPlan.map((p) => [p.planId, p.pack, p.gross]),
        [
          ["lifetime", false, 4900],
          ["pack-1000", true, 1800],
        ],
      );
      assert.deepEqual((await revenue(other.testKey)).currencies, []);
    });
  });
}
