// A customer's features and meters on their page, as the API's usage read answers them, and
// the owner's hand adjustment of credits through the API's use case, on both engines.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { dashboardApp, dashboardServices, TestBrowser } from "../../test-support/dashboard.js";
import { DIALECTS } from "../../test-support/harness.js";
import { seedUsageCatalogue } from "../../test-support/usage.js";
import type { MeterUsage } from "../../usage/usage.schema.js";

const EMAIL = "ada@example.com";

async function setUp(dialect: (typeof DIALECTS)[number]) {
  const env = await dashboardServices(dialect);
  const app = await dashboardApp(env);
  const ws = await seedUsageCatalogue(env.services);
  const api = async (method: "GET" | "POST", path: string, body?: unknown) => {
    const r = await app.inject({
      method,
      url: `/api/v1/tools/tabmaster${path}`,
      headers: { authorization: `Bearer ${ws.testKey}`, ...(body ? { "content-type": "application/json" } : {}) },
      ...(body ? { payload: JSON.stringify(body) } : {}),
    });
    assert.ok(r.statusCode < 300, `${method} ${path}: ${r.statusCode} ${r.body}`);
    return r.json() as Record<string, unknown>;
  };
  // Lifetime's terms: export, and 100 summaries a month; 7 spent, 50 credits for 30 days and 20 until spent.
  await api("POST", "/grants", { email: EMAIL, days: 0, plan: "lifetime" });
  await api("POST", `/customers/${encodeURIComponent(EMAIL)}/usage`, { meter: "summaries", quantity: 7 });
  await api("POST", `/customers/${encodeURIComponent(EMAIL)}/credits`, { meter: "summaries", amount: 50, note: "Outage", expires_in_days: 30 });
  await api("POST", `/customers/${encodeURIComponent(EMAIL)}/credits`, { meter: "summaries", amount: 20, note: "Thanks" });
  const browser = new TestBrowser(app);
  await browser.signIn(env.dataDir, ws.ownerEmail);
  const page = `/dashboard/w/${ws.slug}/test/customers/tabmaster/${encodeURIComponent(EMAIL)}`;
  // The session's form token, as the page's own form carries it.
  await browser.get(page);
  const usage = async () => ((await api("GET", `/customers/${encodeURIComponent(EMAIL)}/usage`)).data as MeterUsage[])[0] as MeterUsage;
  const ledger = async () =>
    (await api("GET", `/customers/${encodeURIComponent(EMAIL)}/credits`)).data as { amount: number; note: string; expires_at: string | null }[];
  return { env, app, ws, browser, page, api, usage, ledger };
}

/** The meters table's row of summaries, its cells' text without markup. */
function summariesRow(body: string): string[] {
  const row = /<tr>\s*<td[^>]*>Summaries <code class="id-secondary">summaries<\/code><\/td>([\s\S]*?)<\/tr>/.exec(body)?.[1];
  assert.ok(row, "the meter's row");
  return [...row.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((m) =>
    (m[1] ?? "")
      .replace(/<[^>]+>/g, " ")
      .replace(/\s+/g, " ")
      .trim(),
  );
}

for (const dialect of DIALECTS) {
  describe(`dashboard customer usage (${dialect})`, () => {
    test("the page shows the API's figures, the features held, and adjusts credits by hand; audited", async () => {
      const { env, ws, browser, page, usage, ledger } = await setUp(dialect);
      const now = env.clock.now();
      const before = await usage();
      assert.deepEqual([before.used, before.allowance, before.credits, before.remaining], [7, 100, 70, 163], "the API's answer");
      const lookups = async () =>
        (await env.services.limits.readDailyUsage(env.services.db, { workspaceId: ws.workspaceId, env: "test" }, now)).find(
          (u) => u.what === "Customer lookups",
        )?.used ?? 0;
      const counted = await lookups();
      const shown = await browser.get(page);
      assert.equal(shown.statusCode, 200);
      assert.equal((await lookups()) - counted, 2, "the meters count nothing more than the customer and their grants");
      assert.deepEqual(summariesRow(shown.body), [
        "7",
        "100",
        "70 50 until 21 Dec 2026, 12:00 UTC 20 until spent", // the pack of 50 lasts 30 days
        "163 summaries",
        "1 Dec 2026, 00:00 UTC", // the next calendar month
      ]);
      assert.match(shown.body, /badge-ok">On<\/span> Export/, "lifetime unlocks export");
      assert.match(shown.body, /badge-off">Off<\/span> Sync/);

      const added = await browser.post(`${page}/credits`, { meter: "summaries", change: "add", amount: "25", expires_in_days: "10", note: "Beta tester" });
      assert.equal(added.statusCode, 303);
      assert.equal(added.headers.location, `${page}?credited=1`);
      const after = await browser.get(String(added.headers.location));
      assert.match(after.body, /Credits adjusted/);
      assert.equal(summariesRow(after.body)[3], "188 summaries");
      const row = (await ledger()).find((r) => r.note === "Beta tester");
      assert.deepEqual([row?.amount, row?.expires_at], [25, "2026-12-01T12:00:00.000Z"], "the API's ledger row: 10 days from now");

      const removed = await browser.post(`${page}/credits`, { meter: "summaries", change: "remove", amount: "60", note: "Double-counted" });
      assert.equal(removed.statusCode, 303);
      const left = await usage();
      assert.equal(left.credits, 35, "60 taken, soonest-expiring first: the 25 for 10 days, then 35 of the 50");
      assert.equal(summariesRow((await browser.get(page)).body)[2], "35 15 until 21 Dec 2026, 12:00 UTC 20 until spent");
      const removal = (await ledger()).find((r) => r.note === "Double-counted");
      assert.deepEqual([removal?.amount, removal?.expires_at], [-60, null]);
      // The key's two adjustments are not in the owners' log (as the API documents); the page's two are.
      assert.equal((await browser.get("/dashboard/audit")).body.match(/Adjusted a customer&#39;s credits/g)?.length, 2);
    });

    test("refusals are the use case's, on the form's field, with what was typed; nothing is written", async () => {
      const { browser, page, ledger } = await setUp(dialect);
      const rows = (await ledger()).length;
      const refused = async (fields: Record<string, string>, field: string, message: RegExp) => {
        const r = await browser.post(`${page}/credits`, { meter: "summaries", change: "add", amount: "5", note: "Why", ...fields });
        assert.equal(r.statusCode, 400, JSON.stringify(fields));
        assert.match(r.body, message);
        assert.match(r.body, new RegExp(`id="${field}" aria-invalid="true" aria-describedby="${field}-error" autofocus`), `${field} is marked`);
        assert.match(r.body, new RegExp(`id="${field}-error"`));
        return r.body;
      };
      await refused({ meter: "tokens" }, "credits-meter", /Tool &quot;tabmaster&quot; has no meter &quot;tokens&quot; \(its meters: summaries\)\./);
      const tooMany = await refused(
        { change: "remove", amount: "71" },
        "credits-amount",
        /Only 70 summaries credits are available to remove; nothing was removed\./,
      );
      assert.match(tooMany, /<option value="remove" selected>/, "the choice kept");
      await refused({ note: "   " }, "credits-note", /note must be 1 to 200 characters: say why\./);
      await refused({ amount: "lots" }, "credits-amount", /amount must be a whole number from -1000000000 to 1000000000, not 0/);
      await refused({ amount: "0" }, "credits-amount", /amount must be a whole number/);
      await refused({ change: "remove", expires_in_days: "5" }, "credits-expires", /expires_in_days applies to credits added; a removal has no expiry\./);
      await refused({ expires_in_days: "9999" }, "credits-expires", /expires_in_days must be a whole number from 1 to 3650\./);
      await refused({ change: "give" }, "credits-change", /Choose whether to add or remove credits\./);
      const markup = await refused({ note: "", amount: "x<b>" }, "credits-amount", /amount must be/);
      assert.ok(markup.includes('value="x&lt;b&gt;"') && !markup.includes("x<b>"), "what was typed, escaped");
      assert.equal((await ledger()).length, rows, "nothing written");
      // An address typed into the lookup that is none has no meters to read; the page still opens.
      const none = await browser.get(page.replace(encodeURIComponent(EMAIL), "not-an-address"));
      assert.equal(none.statusCode, 200);
      assert.doesNotMatch(none.body, /Adjust credits/);
    });

    test("security: the form's token, another site, another workspace's owner; nothing is written", async () => {
      const { env, app, browser, page, ledger } = await setUp(dialect);
      const rows = (await ledger()).length;
      const fields = { meter: "summaries", change: "add", amount: "1000", note: "Free credits" };
      assert.equal((await browser.post(`${page}/credits`, { ...fields, _csrf: "0".repeat(64) })).statusCode, 403, "a wrong form token");
      assert.equal((await browser.post(`${page}/credits`, { ...fields, _csrf: "" })).statusCode, 403, "no form token");
      assert.equal((await browser.post(`${page}/credits`, fields, { "sec-fetch-site": "cross-site" })).statusCode, 403, "another site");
      const other = await seedUsageCatalogue(env.services);
      const intruder = new TestBrowser(app);
      await intruder.signIn(env.dataDir, other.ownerEmail);
      await intruder.get(`/dashboard/w/${other.slug}/test/customers`);
      assert.equal((await intruder.get(page)).statusCode, 404, "another workspace's customer is not found");
      const theirs = await intruder.post(`${page}/credits`, fields);
      assert.equal(theirs.statusCode, 404);
      assert.ok(!theirs.body.includes(EMAIL));
      assert.equal((await ledger()).length, rows, "nothing written");
      // Their own workspace's customer of the same address is theirs to adjust.
      const own = `/dashboard/w/${other.slug}/test/customers/tabmaster/${encodeURIComponent(EMAIL)}`;
      assert.equal((await intruder.post(`${own}/credits`, fields)).statusCode, 303);
      assert.equal((await ledger()).length, rows, "and not this workspace's");
    });
  });
}
