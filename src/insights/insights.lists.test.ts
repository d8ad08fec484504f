import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ensurePerson } from "../customers/person.store.js";
import { type Db, migrateToLatest, openStorage } from "../db/database.js";
import { createPgSchema, DIALECTS, PG_URL, seedCatalogue, testServices } from "../test-support/harness.js";
import { buyLicence as buy } from "../test-support/insights.js";
import { emptyStorage, migrateThrough } from "../test-support/migrations.js";
import { useInsights } from "./insights.service.js";
import { mostActiveUnpaid, scopesOfTool, windowedTopUnpaid } from "./insights.store.js";
import { type Activity, foldFigures, recordActivities } from "./rollup.store.js";
import { slideWindows } from "./windows.js";
import { SPANS, spanOf, windowStart } from "./windows.store.js";

// The Use page's two lists at scale (migration 034): most active unpaid walks each month's
// people by active days instead of grouping the range's person-days, and must answer
// exactly what that grouping answers; at risk leaves a new payer 14 days to start. The
// page's fixed ranges read the windows instead (migration 036): each window's counts and
// its list against a recount of the history, as the days pass and the windows move.

const DAY = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const FIRST = Date.parse("2026-08-01T00:00:00.000Z");
const DAYS = 92;

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
            const got = await mostActiveUnpaid(db, scope, activity, toolId, from, to, 20, null, walk);
            assert.deepEqual(
              got.map((p) => [p.personId, p.activeDays]),
              expected,
              `${JSON.stringify(walk)}, tool ${toolId}, ${from}…${to}`,
            );
          }
        }
      }
    });

    test("windows: the fixed ranges' lists and every window's counts equal a recount as the days pass, the months turn and checks come late or early", async () => {
      const { services, clock } = await testServices(dialect);
      const { db } = services;
      const ws = await seedCatalogue(services);
      const first = Date.parse("2025-11-20T00:00:00.000Z");
      const last = Date.parse("2026-12-03T00:00:00.000Z");
      const people: { id: string; tool: string }[] = [];
      for (let i = 0; i < 12; i++) {
        const { id } = await ensurePerson(db, ws.workspaceId, "test", `w${i}@example.com`, first);
        people.push({ id, tool: i % 4 === 3 ? "linkkeeper" : "tabmaster" });
        if (i % 3 === 0) await buy(db, ws.workspaceId, id, "tool", "tabmaster", first, 4900);
        else if (i % 5 === 1) await buy(db, ws.workspaceId, id, "tool", "linkkeeper", first, 1900);
      }
      const licences = await db.selectFrom("licences").selectAll().where("workspace_id", "=", ws.workspaceId).execute();
      // Every person's active days (the history the recount reads).
      const history = new Map<string, Set<string>>(people.map((p) => [p.id, new Set()]));
      const check = (i: number, at: number): Activity => {
        const p = people[i] as { id: string; tool: string };
        history.get(p.id)?.add(dayOf(at));
        return { workspaceId: ws.workspaceId, env: "test", toolId: p.tool, personId: p.id, deviceId: `dev-${p.id}`, at };
      };
      const flush = (checks: Activity[]) => db.transaction().execute((trx) => recordActivities(trx, checks));

      // Each checked day's ranges, first days written out: the last 7, 30 and 90 days, and the 12 months to the day's month.
      const firstDays: Record<string, Record<(typeof SPANS)[number], string>> = {
        "2025-12-31": { "7d": "2025-12-25", "30d": "2025-12-02", "90d": "2025-10-03", "12m": "2025-01-01" },
        "2026-01-01": { "7d": "2025-12-26", "30d": "2025-12-03", "90d": "2025-10-04", "12m": "2025-02-01" },
        "2026-02-28": { "7d": "2026-02-22", "30d": "2026-01-30", "90d": "2025-12-01", "12m": "2025-03-01" },
        "2026-03-01": { "7d": "2026-02-23", "30d": "2026-01-31", "90d": "2025-12-02", "12m": "2025-04-01" },
        "2026-06-18": { "7d": "2026-06-12", "30d": "2026-05-20", "90d": "2026-03-21", "12m": "2025-07-01" },
        "2026-12-01": { "7d": "2026-11-25", "30d": "2026-11-02", "90d": "2026-09-03", "12m": "2026-01-01" },
        "2026-12-03": { "7d": "2026-11-27", "30d": "2026-11-04", "90d": "2026-09-05", "12m": "2026-01-01" },
        "2026-12-04": { "7d": "2026-11-28", "30d": "2026-11-05", "90d": "2026-09-06", "12m": "2026-01-01" },
      };

      const verify = async (today: string, label: string) => {
        assert.ok(firstDays[today], `${today}: its ranges' first days are written above`);
        for (const toolId of [null, "tabmaster", "linkkeeper"]) {
          const inScope = (kind: string, id: string) => toolId === null || (kind === "tool" && id === toolId) || (kind === "bundle" && id === "suite");
          const paying = new Set(licences.filter((l) => l.amount_cents !== null && inScope(l.product_kind, l.product_id)).map((l) => l.person_id));
          const mine = people.filter((p) => toolId === null || p.tool === toolId);
          const scope = { workspaceId: ws.workspaceId, env: "test" as const, scopes: toolId === null ? null : await scopesOfTool(db, ws.workspaceId, toolId) };
          const activity = toolId === null ? "*" : `tool:${toolId}`;
          for (const span of SPANS) {
            const from = firstDays[today]?.[span] as string;
            const daysOf = (id: string) => [...(history.get(id) ?? [])].filter((d) => d >= from && d <= today).length;
            // The window's rows: every person with a day in it, counted.
            const rows = await db
              .selectFrom("insight_active_windows")
              .select(["person_id", "days"])
              .where("workspace_id", "=", ws.workspaceId)
              .where("scope", "=", activity)
              .where("span", "=", span)
              .execute();
            assert.deepEqual(
              rows.map((r) => [r.person_id, Number(r.days)]).sort(),
              mine
                .map((p) => [p.id, daysOf(p.id)])
                .filter(([, n]) => Number(n) > 0)
                .sort(),
              `${label}: window ${span} of ${activity}`,
            );
            const expected = mine
              .filter((p) => !paying.has(p.id))
              .map((p) => ({ id: p.id, days: daysOf(p.id) }))
              .filter((p) => p.days > 0)
              .sort((a, b) => b.days - a.days || (a.id < b.id ? -1 : 1))
              .slice(0, 5)
              .map((p) => [p.id, p.days]);
            assert.equal(spanOf(from, today, today), span);
            const windowed = await windowedTopUnpaid(db, scope, activity, span, from, today, 5);
            assert.deepEqual(
              windowed?.map((r) => [r.personId, r.days]),
              expected,
              `${label}: ${span} list of ${activity} from its window`,
            );
            const listed = await mostActiveUnpaid(db, scope, activity, toolId, from, today, 5, today);
            assert.deepEqual(
              listed.map((r) => [r.personId, r.activeDays]),
              expected,
              `${label}: ${span} list of ${activity}`,
            );
          }
        }
      };

      // Each day the flush writes the day's checks (on the days near a checkpoint; none between,
      // which the windows pass over); the job moves the windows a minute after midnight.
      const checkpoints = new Set(["2025-12-31", "2026-01-01", "2026-02-28", "2026-03-01", "2026-06-18", "2026-12-01"]);
      const near = (t: number) => [...checkpoints].some((c) => Math.abs(Date.parse(`${c}T00:00:00.000Z`) - t) <= 10 * DAY);
      for (let t = first; t <= last; t += DAY) {
        const today = dayOf(t);
        clock.set(t + 60_000);
        const busy = near(t);
        const checks = people.flatMap((_, i) => (busy && ((t / DAY) * 7 + i * 13) % 10 < (i % 5) + 1 ? [check(i, t + 3_600_000 + i * 60_000)] : []));
        if (checkpoints.has(today) && today !== dayOf(first)) {
          // Past midnight, before the job: the windows start where yesterday's ranges did; the list is counted from the months.
          const scope = { workspaceId: ws.workspaceId, env: "test" as const, scopes: null };
          assert.equal(await windowedTopUnpaid(db, scope, "*", "7d", windowStart("7d", today), today, 5), null, `${today}: a window not moved yet is not read`);
        }
        await slideWindows(db, today);
        await flush(checks);
        if (checkpoints.has(today)) await verify(today, today);
      }
      const today = dayOf(last);
      // A check of yesterday written late (a process that noted it before midnight), another's of tomorrow (a clock ahead).
      const quiet = people.findIndex((p) => ![...(history.get(p.id) ?? [])].includes(dayOf(last - DAY)));
      assert.ok(quiet >= 0);
      await flush([check(quiet, last - 3_600_000)]);
      await verify(today, "a late check");
      await flush([check(quiet, last + DAY + 3_600_000)]);
      const scope = { workspaceId: ws.workspaceId, env: "test" as const, scopes: null };
      assert.equal(
        await windowedTopUnpaid(db, scope, "*", "30d", windowStart("30d", today), today, 5),
        null,
        "a day after the range: not read from the window",
      );
      const from = "2026-11-04"; // the last 30 days to 3 December
      const expected = people
        .filter((p) => !licences.some((l) => l.person_id === p.id && l.amount_cents !== null))
        .map((p) => ({ id: p.id, days: [...(history.get(p.id) ?? [])].filter((d) => d >= from && d <= today).length }))
        .filter((p) => p.days > 0)
        .sort((a, b) => b.days - a.days || (a.id < b.id ? -1 : 1))
        .slice(0, 5)
        .map((p) => [p.id, p.days]);
      const listed = await mostActiveUnpaid(db, scope, "*", null, from, today, 5, today);
      assert.deepEqual(
        listed.map((r) => [r.personId, r.activeDays]),
        expected,
        "counted up to the range's end instead",
      );
      // The next day the job moves the windows and they answer again.
      await slideWindows(db, dayOf(last + DAY));
      await verify(dayOf(last + DAY), "the day after");
    });

    test("windows: a flush of 3,000 first checks (more rows than one statement takes) counts each in every window", async () => {
      const { services } = await testServices(dialect);
      const { db } = services;
      const ws = await seedCatalogue(services);
      const at = Date.parse("2026-11-26T09:00:00.000Z");
      const checks: Activity[] = Array.from({ length: 3000 }, (_, k) => ({
        workspaceId: ws.workspaceId,
        env: "test",
        toolId: k % 2 === 0 ? "tabmaster" : "linkkeeper",
        personId: `psn_bulk${k % 1500}`,
        deviceId: `dev-bulk${k}`,
        at: at - (k % 3) * DAY,
      }));
      await db.transaction().execute((trx) => recordActivities(trx, checks));
      const total = await db
        .selectFrom("insight_active_windows")
        .select((eb) => eb.fn.sum<number>("days").as("days"))
        .where("workspace_id", "=", ws.workspaceId)
        .where("span", "=", "12m")
        .where("scope", "=", "*")
        .executeTakeFirstOrThrow();
      // Each of the 1,500 people on their days of the three (some days twice, by two tools).
      const personDays = new Set(checks.map((c) => `${c.personId} ${dayOf(c.at)}`)).size;
      assert.equal(Number(total.days), personDays);
      await assertWindowsRecount(db, "a large flush");
    });

    test("migration 036 gives each scope already active empty windows after its newest day, and the job fills them back to today's ranges", async (t) => {
      const storage = await emptyStorage(dialect);
      t.after(() => storage.close());
      const { db } = storage;
      await migrateThrough(db, "035-subscription-refunds");
      const day = (person: string, scope: string, d: string) => ({ workspace_id: "ws_w", env: "live" as const, scope, person_id: person, day: d });
      const days = [
        day("p1", "*", "2025-11-30"),
        day("p1", "*", "2025-12-01"),
        day("p1", "*", "2026-11-20"),
        day("p1", "*", "2026-11-25"),
        day("p2", "*", "2026-09-01"),
        day("p2", "*", "2026-11-25"),
        day("p2", "tool:t", "2026-11-25"),
        day("p3", "*", "2026-11-26"),
      ];
      await db.insertInto("insight_active_days").values(days).execute();
      await migrateToLatest(db, dialect);
      const starts = await db.selectFrom("insight_window_starts").select(["scope", "span", "start"]).orderBy("scope").orderBy("span").execute();
      assert.deepEqual(
        starts.map((s) => [s.scope, s.span, s.start]),
        ["*", "tool:t"].flatMap((scope) => ["12m", "30d", "7d", "90d"].map((span) => [scope, span, scope === "*" ? "2026-11-27" : "2026-11-26"])),
      );
      assert.equal((await db.selectFrom("insight_active_windows").selectAll().execute()).length, 0);

      await slideWindows(db, "2026-11-27");
      const windows = await db.selectFrom("insight_active_windows").select(["scope", "span", "person_id", "days"]).execute();
      // The ranges' first days when today is 27 November 2026: the last 7, 30 and 90 days, and the 12 months from December.
      const firstDays = { "7d": "2026-11-21", "30d": "2026-10-29", "90d": "2026-08-30", "12m": "2025-12-01" } as const;
      const recount = ["*", "tool:t"].flatMap((scope) =>
        SPANS.flatMap((span) =>
          ["p1", "p2", "p3"]
            .map((p) => [scope, span, p, days.filter((d) => d.scope === scope && d.person_id === p && d.day >= firstDays[span]).length] as const)
            .filter(([, , , n]) => n > 0),
        ),
      );
      assert.deepEqual(windows.map((w) => [w.scope, w.span, w.person_id, Number(w.days)]).sort(), recount.map((r) => [...r]).sort());
      assert.ok(
        recount.some(([, span, p, n]) => span === "12m" && p === "p1" && n === 3),
        "12 months from 2025-12-01: not the day before",
      );
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
      const counts = async () => {
        await foldFigures(db);
        return (
          await db
            .selectFrom("insight_months")
            .select(["month", "scope", "value"])
            .where("workspace_id", "=", "ws_c")
            .where("metric", "=", "new_customers")
            .orderBy("month")
            .orderBy("scope")
            .execute()
        ).map((r) => [r.month, r.scope, Number(r.value)]);
      };
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

/** Every window's rows against a recount of insight_active_days from its start. */
async function assertWindowsRecount(db: Db, label: string): Promise<void> {
  const starts = await db.selectFrom("insight_window_starts").selectAll().execute();
  assert.ok(starts.length > 0);
  for (const w of starts) {
    const stored = await db
      .selectFrom("insight_active_windows")
      .select(["person_id", "days"])
      .where("workspace_id", "=", w.workspace_id)
      .where("env", "=", w.env)
      .where("scope", "=", w.scope)
      .where("span", "=", w.span)
      .execute();
    const recount = await db
      .selectFrom("insight_active_days")
      .select(["person_id", (eb) => eb.fn.countAll<number>().as("days")])
      .where("workspace_id", "=", w.workspace_id)
      .where("env", "=", w.env)
      .where("scope", "=", w.scope)
      .where("day", ">=", w.start)
      .groupBy("person_id")
      .execute();
    const rows = (xs: { person_id: string; days: number }[]) => xs.map((x) => [x.person_id, Number(x.days)]).sort();
    assert.deepEqual(rows(stored), rows(recount), `${label}: ${w.scope} ${w.span} from ${w.start}`);
  }
}

describe("Insights windows across processes (postgres)", () => {
  test("two processes moving the windows and flushing checks at once, some of them on the days being moved over, leave every window equal to a recount", async (t) => {
    const pgSchema = await createPgSchema();
    const one = openStorage({ databaseUrl: PG_URL, pgSchema, poolSize: 3 });
    const two = openStorage({ databaseUrl: PG_URL, pgSchema, poolSize: 3 });
    t.after(async () => {
      await one.close();
      await two.close();
    });
    await migrateToLatest(one.db, "postgres");
    const day0 = Date.parse("2026-08-01T00:00:00.000Z");
    const check = (person: number, day: number, n: number): Activity => ({
      workspaceId: "ws_p",
      env: "live",
      toolId: `t${person % 2}`,
      personId: `p${person}`,
      deviceId: `d${person}-${n}`,
      at: day0 + day * DAY + 3_600_000,
    });
    // A hundred days of history, windows moved to the 100th.
    const history: Activity[] = [];
    for (let d = 0; d < 100; d++) for (let p = 0; p < 30; p++) if ((d * 5 + p * 3) % 7 < 2) history.push(check(p, d, d));
    await one.db.transaction().execute((trx) => recordActivities(trx, history));
    await slideWindows(one.db, dayOf(day0 + 99 * DAY));
    await assertWindowsRecount(one.db, "before");
    // Then, at once: both processes move the windows on 40 days while each flushes checks of
    // those days, of the days leaving the windows and of earlier ones (clocks behind).
    const today = dayOf(day0 + 139 * DAY);
    const flushes = (db: Db, seed: number) => async () => {
      for (let k = 0; k < 25; k++) {
        // Each process its own people: two flushes of the same people in different orders may
        // deadlock on their months (rollup.store.ts), windows or not.
        const batch = Array.from({ length: 8 }, (_, j) =>
          check(2 * ((k * 11 + j * 3) % 15) + seed, (seed * 13 + k * 17 + j * 29) % 140, 1000 + seed * 1000 + k * 10 + j),
        );
        await db.transaction().execute((trx) => recordActivities(trx, batch));
      }
    };
    const moved = await Promise.all([slideWindows(one.db, today), slideWindows(two.db, today), flushes(one.db, 0)(), flushes(two.db, 1)()]);
    assert.ok(moved[0] + moved[1] > 0, "the windows moved");
    const starts = await one.db.selectFrom("insight_window_starts").select(["span", "start"]).execute();
    // The ranges' first days when today is 18 December 2026: the last 7, 30 and 90 days, and the 12 months from January.
    const firstDays: Record<string, string> = { "7d": "2026-12-12", "30d": "2026-11-19", "90d": "2026-09-20", "12m": "2026-01-01" };
    assert.equal(today, "2026-12-18");
    for (const s of starts) assert.equal(s.start, firstDays[s.span]);
    await assertWindowsRecount(one.db, "after");
  });
});
