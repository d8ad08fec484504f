import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ensurePerson } from "../customers/person.store.js";
import type { Db } from "../db/database.js";
import { DIALECTS, seedWorkspace, testServices } from "../test-support/harness.js";
import { ActivityCounter } from "./activity.js";
import { type Activity, recordActivities } from "./rollup.store.js";

const AT = Date.parse("2026-10-05T10:00:00.000Z");
const DAY = 86_400_000;

async function rowCount(db: Db, table: "insight_active_days" | "insight_last_active", workspaceId: string): Promise<number> {
  const row = await db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("workspace_id", "=", workspaceId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The use figures of a workspace as stored: "metric day scope" → value, without rows of 0. */
async function useFigures(db: Db, workspaceId: string): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom("insight_days")
    .select(["metric", "day", "scope", "value"])
    .where("workspace_id", "=", workspaceId)
    .where("metric", "in", ["active_devices", "active_people", "active_people_7", "active_people_30"])
    .execute();
  return new Map(rows.filter((r) => Number(r.value) !== 0).map((r) => [`${r.metric} ${r.day} ${r.scope}`, Number(r.value)]));
}

/** The same figures recounted from the checks alone: distinct devices and people a day, people active in the 7 and 30 days ending on a day. */
function recount(checks: readonly Activity[]): Map<string, number> {
  const day = (at: number) => new Date(at).toISOString().slice(0, 10);
  const add = (into: Map<string, number>, key: string) => into.set(key, (into.get(key) ?? 0) + 1);
  const figures = new Map<string, number>();
  for (const key of new Set(checks.map((c) => `${c.deviceId}|${day(c.at)}|tool:${c.toolId}`))) {
    const [, d, scope] = key.split("|");
    add(figures, `active_devices ${d} ${scope}`);
  }
  const personDays = new Set(checks.flatMap((c) => [`tool:${c.toolId}`, "*"].map((scope) => `${scope}|${c.personId}|${Math.floor(c.at / DAY)}`)));
  for (const key of personDays) {
    const [scope, , d] = key.split("|");
    add(figures, `active_people ${day(Number(d) * DAY)} ${scope}`);
  }
  for (const n of [7, 30]) {
    const ends = new Set<string>();
    for (const key of personDays) {
      const [scope, person, d] = key.split("|");
      for (let t = Number(d); t < Number(d) + n; t++) ends.add(`${scope}|${person}|${t}`);
    }
    for (const key of ends) {
      const [scope, , t] = key.split("|");
      add(figures, `active_people_${n} ${day(Number(t) * DAY)} ${scope}`);
    }
  }
  return figures;
}

async function figure(db: Db, workspaceId: string, metric: string): Promise<number> {
  const rows = await db.selectFrom("insight_days").select("value").where("workspace_id", "=", workspaceId).where("metric", "=", metric).execute();
  return rows.reduce((sum, row) => sum + Number(row.value), 0);
}

// A test that counts the transactions of its own flushes: the counter's timer (a second of
// real time, which a busy machine's flush can outlast) never writes during it.
const NO_TIMER_WRITE = 2 ** 31 - 1;

for (const dialect of DIALECTS) {
  describe(`The access checks' days, written once a second (${dialect})`, () => {
    test("checks are only noted; a flush writes each device's day once, with the person's figures", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const counter = new ActivityCounter(services.db);
      const people = [];
      for (let i = 0; i < 5; i++) people.push(await ensurePerson(services.db, ws.workspaceId, "test", `p${i}@example.com`, clock.now()));
      // Five people, two devices each, three checks per device.
      for (let check = 0; check < 3; check++) {
        for (const [i, person] of people.entries()) {
          for (const device of [0, 1]) {
            counter.note({
              workspaceId: ws.workspaceId,
              env: "test",
              toolId: ws.tool,
              personId: person.id,
              deviceId: `d-${ws.workspaceId}-${i}-${device}`,
              at: AT,
            });
          }
        }
      }
      assert.equal(await figure(services.db, ws.workspaceId, "active_devices"), 0, "nothing is written at the check");
      await counter.flush();
      assert.equal(await figure(services.db, ws.workspaceId, "active_devices"), 10);
      // Per tool and over all tools, each person once.
      assert.equal(await figure(services.db, ws.workspaceId, "active_people"), 10);
      // Noted again the same day: nothing more to write.
      counter.note({
        workspaceId: ws.workspaceId,
        env: "test",
        toolId: ws.tool,
        personId: people[0]?.id ?? "",
        deviceId: `d-${ws.workspaceId}-0-0`,
        at: AT + 60_000,
      });
      await counter.flush();
      assert.equal(await figure(services.db, ws.workspaceId, "active_devices"), 10);
    });

    test("two processes noting the same device's day count it once: the insert of the day decides", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const person = await ensurePerson(services.db, ws.workspaceId, "test", "both@example.com", clock.now());
      const check = { workspaceId: ws.workspaceId, env: "test" as const, toolId: ws.tool, personId: person.id, deviceId: `d-${ws.workspaceId}`, at: AT };
      const [one, two] = [new ActivityCounter(services.db), new ActivityCounter(services.db)];
      one.note(check);
      two.note({ ...check, at: AT + 1000 });
      await Promise.all([one.flush(), two.flush()]);
      assert.equal(await figure(services.db, ws.workspaceId, "active_devices"), 1);
      assert.equal(await figure(services.db, ws.workspaceId, "active_people"), 2, "the tool's and all tools' once each");
    });

    test("two processes flushing the same people's first checks in opposite orders both commit, each day counted once", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const people: { id: string }[] = [];
      for (let i = 0; i < 60; i++) people.push(await ensurePerson(services.db, ws.workspaceId, "test", `o${i}@example.com`, clock.now()));
      const check = (i: number, device: string) => ({
        workspaceId: ws.workspaceId,
        env: "test" as const,
        toolId: ws.tool,
        personId: people[i]?.id ?? "",
        deviceId: `${device}-${ws.workspaceId}-${i}`,
        at: AT,
      });
      for (let round = 0; round < 3; round++) {
        const [one, two] = [new ActivityCounter(services.db), new ActivityCounter(services.db)];
        // Each person's second device in the other process, noted in the reverse order:
        // both write the same people's month and last-active rows.
        for (let i = 0; i < people.length; i++) one.note({ ...check(i, `a${round}`), at: AT + round * 86_400_000 });
        for (let i = people.length - 1; i >= 0; i--) two.note({ ...check(i, `b${round}`), at: AT + round * 86_400_000 });
        await Promise.all([one.flush(), two.flush()]);
      }
      assert.equal(await figure(services.db, ws.workspaceId, "active_devices"), 2 * 60 * 3);
      assert.equal(await figure(services.db, ws.workspaceId, "active_people"), 2 * 60 * 3, "each person once a day, per tool and over all tools");
    });

    test("a storm of first checks: N devices' first checks at once count N device-days and each person's day once", async () => {
      const { services } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const counter = new ActivityCounter(services.db);
      // Just after midnight UTC every device's check is its first of the day: 600 devices of
      // 400 people (the first 200 have two), each checked twice, noted in one second.
      const midnight = Date.parse("2026-10-06T00:00:05.000Z");
      for (let check = 0; check < 2; check++) {
        for (let i = 0; i < 600; i++) {
          const person = i % 400;
          counter.note({
            workspaceId: ws.workspaceId,
            env: "test",
            toolId: ws.tool,
            personId: `p${person}`,
            deviceId: `d${i}-${ws.workspaceId}`,
            at: midnight + check * 1000,
          });
        }
      }
      await counter.flush();
      assert.equal(await figure(services.db, ws.workspaceId, "active_devices"), 600);
      assert.equal(await rowCount(services.db, "insight_active_days", ws.workspaceId), 800, "each person's day once per tool and over all tools");
      assert.equal(await figure(services.db, ws.workspaceId, "active_people"), 800);
      assert.equal(await figure(services.db, ws.workspaceId, "active_people_7"), 7 * 800, "a first day counts in the 7 windows ending on it and after");
      assert.equal(await figure(services.db, ws.workspaceId, "active_people_30"), 30 * 800);
      assert.equal(await rowCount(services.db, "insight_last_active", ws.workspaceId), 800);
      const months = await services.db.selectFrom("insight_active_months").select("days").where("workspace_id", "=", ws.workspaceId).execute();
      assert.equal(
        months.reduce((sum, m) => sum + Number(m.days), 0),
        800,
      );
      // The same storm noted again in another process (its memory empty): every insert finds its row, nothing more is counted.
      const again = new ActivityCounter(services.db);
      for (let i = 0; i < 600; i++) {
        again.note({
          workspaceId: ws.workspaceId,
          env: "test",
          toolId: ws.tool,
          personId: `p${i % 400}`,
          deviceId: `d${i}-${ws.workspaceId}`,
          at: midnight + 60_000,
        });
      }
      await again.flush();
      assert.equal(await figure(services.db, ws.workspaceId, "active_devices"), 600);
      assert.equal(await figure(services.db, ws.workspaceId, "active_people_30"), 30 * 800);
    });

    test("checks of many days written together count what a recount of them counts, as when written one at a time in any order", async () => {
      const { services } = await testServices(dialect);
      const [together, oneByOne] = [await seedWorkspace(services), await seedWorkspace(services)];
      // A seeded shuffle: 30 people, 45 devices, checks on days spread over two months with
      // gaps, several days of one person in one flush, some checks late (an earlier day after a later one).
      let seed = 48;
      const random = () => {
        seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
        return seed / 2_147_483_648;
      };
      const history: (Omit<Activity, "workspaceId" | "deviceId"> & { device: number })[] = [];
      const devices: { person: string; device: number }[] = Array.from({ length: 45 }, (_, i) => ({ person: `p${i % 30}`, device: i }));
      for (let i = 0; i < 400; i++) {
        const { person, device } = devices[Math.floor(random() * devices.length)] ?? { person: "p0", device: 0 };
        history.push({ env: "test", toolId: "tabmaster", personId: person, device, at: AT + Math.floor(random() * 60) * DAY + Math.floor(random() * DAY) });
      }
      const checksOf = (workspaceId: string): Activity[] => history.map(({ device, ...h }) => ({ ...h, workspaceId, deviceId: `d${device}-${workspaceId}` }));
      // In two flushes of 200 checks, each with all sorts of days.
      const first = checksOf(together.workspaceId);
      for (const part of [first.slice(0, 200), first.slice(200)]) await services.db.transaction().execute((trx) => recordActivities(trx, part));
      for (const check of checksOf(oneByOne.workspaceId)) await services.db.transaction().execute((trx) => recordActivities(trx, [check]));
      const expected = recount(first);
      assert.deepEqual(new Map([...(await useFigures(services.db, together.workspaceId))].sort()), new Map([...expected].sort()));
      assert.deepEqual(new Map([...(await useFigures(services.db, oneByOne.workspaceId))].sort()), new Map([...expected].sort()));
    });

    test("a failed write keeps the days for the next one; close writes what is noted", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const person = await ensurePerson(services.db, ws.workspaceId, "test", "later@example.com", clock.now());
      let down = true;
      // The database as the counter sees it: away, then back.
      const db = new Proxy(services.db, {
        get(target, name) {
          if (name === "transaction" && down) return () => ({ execute: () => Promise.reject(new Error("connection refused")) });
          const value = Reflect.get(target, name);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
      const counter = new ActivityCounter(db);
      counter.note({ workspaceId: ws.workspaceId, env: "test", toolId: ws.tool, personId: person.id, deviceId: `d1-${ws.workspaceId}`, at: AT });
      await assert.rejects(counter.flush(), /connection refused/);
      assert.equal(await figure(services.db, ws.workspaceId, "active_devices"), 0);
      down = false;
      counter.note({ workspaceId: ws.workspaceId, env: "test", toolId: ws.tool, personId: person.id, deviceId: `d2-${ws.workspaceId}`, at: AT });
      await counter.close();
      assert.equal(await figure(services.db, ws.workspaceId, "active_devices"), 2, "the day kept through the failure and the one noted after");
    });

    test("between two parts the event loop turns: a request waiting is answered before the next part is written", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const person = await ensurePerson(services.db, ws.workspaceId, "test", "turns@example.com", clock.now());
      let transactions = 0;
      const db = new Proxy(services.db, {
        get(target, name) {
          if (name === "transaction") transactions += 1;
          const value = Reflect.get(target, name);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
      const counter = new ActivityCounter(db, NO_TIMER_WRITE);
      for (let i = 0; i < 250; i++) {
        counter.note({ workspaceId: ws.workspaceId, env: "test", toolId: ws.tool, personId: person.id, deviceId: `d${i}-${ws.workspaceId}`, at: AT });
      }
      // A request arriving meanwhile is an I/O callback: it runs when the event loop turns, as this does.
      let partsBeforeTheRequest = -1;
      setImmediate(() => {
        partsBeforeTheRequest = transactions;
      });
      await counter.flush();
      assert.equal(transactions, 3, "250 checks in three parts");
      assert.ok(partsBeforeTheRequest >= 1 && partsBeforeTheRequest < 3, `the request ran after ${partsBeforeTheRequest} part(s) begun`);
      assert.equal(await figure(services.db, ws.workspaceId, "active_devices"), 250);
    });

    test("a flush of more checks than a transaction takes writes them in parts; a part that fails keeps itself and the rest", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const person = await ensurePerson(services.db, ws.workspaceId, "test", "many@example.com", clock.now());
      // The database fails every transaction after the first (one part of a hundred checks).
      let transactions = 0;
      let failAfter = 1;
      const db = new Proxy(services.db, {
        get(target, name) {
          if (name === "transaction") {
            transactions += 1;
            if (transactions > failAfter) return () => ({ execute: () => Promise.reject(new Error("connection refused")) });
          }
          const value = Reflect.get(target, name);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
      const counter = new ActivityCounter(db, NO_TIMER_WRITE);
      for (let i = 0; i < 250; i++) {
        counter.note({ workspaceId: ws.workspaceId, env: "test", toolId: ws.tool, personId: person.id, deviceId: `d${i}-${ws.workspaceId}`, at: AT });
      }
      await assert.rejects(counter.flush(), /connection refused/);
      assert.equal(transactions, 2, "the first part committed, the second failed and the third was not tried");
      assert.equal(await figure(services.db, ws.workspaceId, "active_devices"), 100);
      failAfter = Number.POSITIVE_INFINITY;
      transactions = 0;
      await counter.flush();
      assert.equal(transactions, 2, "the 150 kept, in two parts");
      assert.equal(await figure(services.db, ws.workspaceId, "active_devices"), 250);
      assert.equal(await figure(services.db, ws.workspaceId, "active_people"), 2, "the person once per tool and over all tools");
    });
  });
}
