// Issue 46, point 6: an import carries what a person holds of a tool's terms: a grant's
// plan, each source's units already used this period and credits left, and a pack
// licence's credits. On both engines: the happy path, the refusals (nothing written), a
// second import of the same file (nothing doubled).
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { describe, test } from "node:test";
import { DAY_MS, toIso } from "../clock.js";
import { randomBase62 } from "../ids.js";
import { DIALECTS, testApi, testServices } from "../test-support/harness.js";
import { seedUsageCatalogue } from "../test-support/usage.js";
import { ImportRejected, importNdjson } from "./import.service.js";

const ndjson = (lines: object[]) => lines.map((l) => JSON.stringify(l)).join("\n");
const licenceId = () => `lic_${randomBase62(24)}`;

async function testbed(dialect: (typeof DIALECTS)[number]) {
  const { services, clock } = await testServices(dialect);
  const ws = await seedUsageCatalogue(services);
  const api = await testApi(services);
  const importText = (text: string) => importNdjson(services.db, services.clock, { workspace: ws.slug, env: "test", text });
  const run = (lines: object[]) => importText(ndjson(lines));
  /** The import of `lines`, refused: its problems. */
  const refused = (lines: object[]) =>
    run(lines).then(
      () => assert.fail("the import was accepted"),
      (error: unknown) => {
        assert.ok(error instanceof ImportRejected, String(error));
        return error;
      },
    );
  const usage = async (email: string) => {
    const r = await api.request({ url: `/api/v1/tools/tabmaster/customers/${encodeURIComponent(email)}/usage`, key: ws.testKey });
    assert.equal(r.statusCode, 200, r.body);
    return r.json().data[0];
  };
  const customer = async (email: string) => {
    const r = await api.request({ url: `/api/v1/tools/tabmaster/customers/${encodeURIComponent(email)}`, key: ws.testKey });
    assert.equal(r.statusCode, 200, r.body);
    return r.json();
  };
  const credits = () =>
    services.db
      .selectFrom("meter_credits")
      .select(["licence_id", "amount", "remaining", "expires_at", "note", "meter_id", "tool_id"])
      .where("workspace_id", "=", ws.workspaceId)
      .orderBy("amount")
      .execute()
      .then((rows) =>
        rows.map((r) => ({ ...r, amount: Number(r.amount), remaining: Number(r.remaining), expires_at: r.expires_at === null ? null : Number(r.expires_at) })),
      );
  /** Every count of units used in the workspace, smallest first. */
  const usedCounts = async () =>
    (await services.db.selectFrom("meter_usage").select("used").where("workspace_id", "=", ws.workspaceId).orderBy("used").execute()).map((u) =>
      Number(u.used),
    );
  const past = (days: number) => toIso(clock.now() - days * DAY_MS);
  return { services, clock, ws, importText, run, refused, usage, customer, credits, usedCounts, past };
}

for (const dialect of DIALECTS) {
  describe(`import of features, allowances and credits (${dialect})`, () => {
    test("a grant gives its plan's terms; each source's used counts against its allowance this period; credits come as given; a pack licence brings its plan's credits", async () => {
      const t = await testbed(dialect);
      const pack = licenceId();
      const counted = licenceId();
      const summary = await t.run([
        // Grace holds Tab Master by a grant of the monthly plan and used 120 of its 500 this month, with 300 credits left elsewhere.
        {
          type: "grant",
          email: "grace@example.com",
          tool: "tabmaster",
          plan: "monthly",
          starts_at: t.past(40),
          used: { summaries: 120 },
          credits: { summaries: { amount: 300, expires_at: toIso(t.clock.now() + 30 * DAY_MS), note: "moved from our counters" } },
        },
        // Linus subscribes monthly and used 480 of his period's 500.
        {
          type: "subscription",
          id: "sub_importedLinus",
          email: "linus@example.com",
          tool: "tabmaster",
          plan: "monthly",
          status: "active",
          current_period_start: t.past(5),
          current_period_end: toIso(t.clock.now() + 25 * DAY_MS),
          used: { summaries: 480 },
        },
        // Ada bought the pack (11 Nov 2026): its 1,000 credits come with it, lasting 365 days from the purchase.
        { type: "licence", id: pack, email: "ada@example.com", tool: "tabmaster", plan: "pack-1000", purchased_at: t.past(10) },
        // Bob bought it too, and spent 750 elsewhere: the line says what is left, and that replaces the pack's.
        {
          type: "licence",
          id: counted,
          email: "bob@example.com",
          tool: "tabmaster",
          plan: "pack-1000",
          purchased_at: t.past(10),
          credits: { summaries: { amount: 250 } },
        },
        // Cy's was spent out elsewhere: empty credits, none of the pack's.
        { type: "licence", email: "cy@example.com", tool: "tabmaster", plan: "pack-1000", purchased_at: t.past(10), credits: {} },
      ]);

      // What the lines' meters wrote is counted: Grace's and Bob's credits and Ada's pack's (Cy's `{}` writes none); Grace's and Linus's counters.
      assert.deepEqual(summary, { accounts: 0, devices: 0, licences: 3, subscriptions: 1, trials: 0, grants: 1, credits: 3, used: 2, unchanged: 0 });
      const grace = await t.customer("grace@example.com");
      assert.deepEqual(grace.features, ["export", "sync"]);
      const graceUsage = await t.usage("grace@example.com");
      assert.deepEqual(
        [graceUsage.allowance, graceUsage.used, graceUsage.allowance_remaining, graceUsage.credits, graceUsage.remaining],
        [500, 120, 380, 300, 680],
      );
      assert.equal(graceUsage.period_start, "2026-11-01T00:00:00.000Z");

      const linus = await t.usage("linus@example.com");
      assert.deepEqual([linus.allowance, linus.used, linus.remaining, linus.period_start], [500, 480, 20, t.past(5)]);

      assert.equal((await t.usage("ada@example.com")).credits, 1000);
      assert.equal((await t.usage("bob@example.com")).credits, 250);
      assert.equal((await t.usage("cy@example.com")).credits, 0);
      const rows = await t.credits();
      assert.deepEqual(rows, [
        { licence_id: counted, amount: 250, remaining: 250, expires_at: null, note: null, meter_id: "summaries", tool_id: "tabmaster" },
        {
          licence_id: null,
          amount: 300,
          remaining: 300,
          expires_at: t.clock.now() + 30 * DAY_MS,
          note: "moved from our counters",
          meter_id: "summaries",
          tool_id: "tabmaster",
        },
        {
          licence_id: pack,
          amount: 1000,
          remaining: 1000,
          expires_at: Date.parse("2027-11-11T12:00:00.000Z"),
          note: null,
          meter_id: "summaries",
          tool_id: "tabmaster",
        },
      ]);

      // A licence's credits are the licence's: refunded, what is left goes with it.
      await t.services.db.updateTable("licences").set({ status: "revoked" }).where("id", "=", counted).execute();
      assert.equal((await t.usage("bob@example.com")).credits, 0);

      // A pack refunded before the move comes with its credits taken back, given or the pack's own.
      const refunded = [licenceId(), licenceId()];
      const refundedSummary = await t.run([
        { type: "licence", id: refunded[0], email: "dan@example.com", tool: "tabmaster", plan: "pack-1000", status: "revoked", purchased_at: t.past(20) },
        {
          type: "licence",
          id: refunded[1],
          email: "dan@example.com",
          tool: "tabmaster",
          plan: "pack-1000",
          status: "revoked",
          purchased_at: t.past(20),
          credits: { summaries: { amount: 40 } },
        },
      ]);
      // Written all the same, with nothing left: counted.
      assert.deepEqual([refundedSummary.licences, refundedSummary.credits, refundedSummary.used], [2, 2, 0]);
      const dans = (await t.credits()).filter((r) => r.licence_id !== null && refunded.includes(r.licence_id));
      assert.deepEqual(
        dans.map((r) => [r.licence_id, r.amount, r.remaining]),
        [
          [refunded[1], 40, 0],
          [refunded[0], 1000, 0],
        ],
      );
      assert.equal((await t.usage("dan@example.com")).credits, 0);
    });

    test("the README's example lines with meters import as documented", async () => {
      const t = await testbed(dialect);
      const readme = await readFile(new URL("./README.md", import.meta.url), "utf8");
      const block = /```json\n([\s\S]*?)```/.exec(readme)?.[1];
      assert.ok(block, "README has a json example block");
      t.clock.set(Date.parse("2026-11-21T12:00:00.000Z"));
      await t.importText(block);
      const ada = await t.usage("ada@example.com");
      assert.deepEqual([ada.allowance, ada.used, ada.credits], [500, 120, 300]);
      assert.deepEqual((await t.customer("ada@example.com")).features, ["export", "sync"]);
      const bob = await t.usage("bob@example.com");
      assert.equal(bob.credits, 250);
    });

    test("importing the same file again writes nothing more: credits are not doubled, counters not added", async () => {
      const t = await testbed(dialect);
      const lines = [
        { type: "licence", id: licenceId(), email: "ada@example.com", tool: "tabmaster", plan: "pack-1000", purchased_at: t.past(3) },
        {
          type: "licence",
          email: "cy@example.com",
          tool: "tabmaster",
          plan: "lifetime",
          purchased_at: t.past(3),
          used: { summaries: 40 },
          credits: { summaries: { amount: 5 } },
        },
        {
          type: "trial",
          email: "dee@example.com",
          tool: "tabmaster",
          starts_at: t.past(1),
          ends_at: toIso(t.clock.now() + 13 * DAY_MS),
          used: { summaries: 7 },
        },
      ];
      const first = await t.run(lines);
      assert.deepEqual([first.licences, first.trials, first.credits, first.used, first.unchanged], [2, 1, 2, 2, 0]);
      const credits = await t.credits();
      assert.deepEqual(await t.usedCounts(), [7, 40]);
      assert.equal(credits.length, 2);

      // Cy spends 2 meanwhile: the service's count from the import on, not the file's.
      const spend = await t.services.db.selectFrom("meter_usage").select("bucket").where("used", "=", 40).executeTakeFirstOrThrow();
      await t.services.db.updateTable("meter_usage").set({ used: 42 }).where("bucket", "=", spend.bucket).execute();

      const second = await t.run(lines);
      assert.deepEqual([second.licences, second.trials, second.credits, second.used, second.unchanged], [0, 0, 0, 0, 3]);
      assert.deepEqual(await t.credits(), credits);
      assert.deepEqual(await t.usedCounts(), [7, 42]);
      assert.equal((await t.usage("ada@example.com")).credits, 1000);
    });

    test("a bad meter, number or plan is a bad line with its reason, and nothing is written", async () => {
      const t = await testbed(dialect);
      const team = licenceId();
      const refused = await t.refused([
        /* 1 */ { type: "grant", email: "a@example.com", tool: "tabmaster", starts_at: t.past(1), used: { pages: 3 } },
        /* 2 */ { type: "grant", email: "b@example.com", tool: "tabmaster", starts_at: t.past(1), used: { summaries: -1 } },
        /* 3 */ { type: "grant", email: "c@example.com", tool: "tabmaster", starts_at: t.past(1), used: { summaries: 1.5 } },
        /* 4 */ { type: "grant", email: "d@example.com", tool: "linkkeeper", starts_at: t.past(1), credits: { summaries: { amount: 10 } } },
        /* 5 */ { type: "grant", email: "e@example.com", tool: "tabmaster", starts_at: t.past(1), credits: { summaries: { amount: 0 } } },
        /* 6 */ { type: "grant", email: "f@example.com", tool: "tabmaster", starts_at: t.past(1), plan: "pack-1000" },
        /* 7 */ { type: "grant", email: "g@example.com", tool: "tabmaster", starts_at: t.past(1), plan: "platinum" },
        /* 8 */ {
          type: "licence",
          id: team,
          email: "it@example.com",
          tool: "tabmaster",
          plan: "lifetime",
          seats: 3,
          purchased_at: t.past(1),
          used: { summaries: 5 },
        },
        /* 9 */ {
          type: "grant",
          email: "h@example.com",
          tool: "tabmaster",
          starts_at: t.past(1),
          credits: { summaries: { amount: 5, note: "x", extra: 1 } },
        },
        /* 10 */ { type: "grant", email: "i@example.com", tool: "tabmaster", starts_at: t.past(1), used: { Summaries: 5 } },
        /* 11 */ {
          type: "licence",
          email: "j@example.com",
          bundle: "suite",
          plan: "suite-lifetime",
          purchased_at: t.past(1),
          credits: { links: { amount: 5 } },
        },
        /* 12 */ {
          type: "grant",
          email: "k@example.com",
          tool: "tabmaster",
          starts_at: t.past(1),
          used: { summaries: 2 },
          credits: { summaries: { amount: 9 } },
        },
      ]);
      const byLine = new Map(refused.problems.map((p) => [p.line, p.message]));
      assert.match(byLine.get(1) ?? "", /^used: tool "tabmaster" declares no meter "pages": it declares summaries$/);
      assert.match(byLine.get(2) ?? "", /used\.summaries must be >= 0/);
      assert.match(byLine.get(3) ?? "", /used\.summaries must be integer/);
      assert.match(byLine.get(4) ?? "", /^credits: tool "linkkeeper" declares no meter "summaries" \(it declares none\)$/);
      assert.match(byLine.get(5) ?? "", /credits\.summaries\.amount must be >= 1/);
      assert.match(byLine.get(6) ?? "", /plan "pack-1000" is a credit pack: it gives no access/);
      assert.match(byLine.get(7) ?? "", /no plan "platinum" for tool "tabmaster"/);
      assert.match(byLine.get(8) ?? "", /a team purchase entitles its buyer to nothing/);
      assert.match(byLine.get(9) ?? "", /unknown field "extra"/);
      assert.match(byLine.get(10) ?? "", /^used key "Summaries" is not valid: 1 to 64 lower-case letters/);
      assert.match(byLine.get(11) ?? "", /bundle "suite" declares no meter "links": it declares summaries/);
      assert.equal(byLine.has(12), false, "the good line is not reported");
      assert.match(refused.message, /has 11 bad lines; nothing was imported/);
      assert.deepEqual([await t.credits(), await t.usedCounts()], [[], []]);
      const people = await t.services.db.selectFrom("people").select("id").where("workspace_id", "=", t.ws.workspaceId).execute();
      assert.deepEqual(people, []);
    });

    test("a grant's plan is part of it: imported again with another plan, the line is refused, not overwritten", async () => {
      const t = await testbed(dialect);
      const grant = { type: "grant", email: "ada@example.com", tool: "tabmaster", starts_at: t.past(2), plan: "lifetime" };
      await t.run([grant]);
      assert.deepEqual((await t.customer("ada@example.com")).features, ["export"]);
      const refused = await t.refused([{ ...grant, plan: "monthly" }]);
      assert.match(refused.problems[0]?.message ?? "", /exists already with plan lifetime, not monthly/);
      assert.equal((await t.run([grant])).unchanged, 1);
    });
  });
}
