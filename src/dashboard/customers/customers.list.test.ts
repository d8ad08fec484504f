import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { LISTED_PER_KIND } from "../../customers/customer.service.js";
import { seedCustomerRows } from "../../test-support/customer-rows.js";
import { dashboardApp, dashboardServices, TestBrowser } from "../../test-support/dashboard.js";
import { DIALECTS, seedWorkspace } from "../../test-support/harness.js";
import { createTool, listTools } from "../../workspaces/workspace.service.js";

const hrefOf = (s: string) => s.replaceAll("&amp;", "&");

for (const dialect of DIALECTS) {
  describe(`dashboard customers list: search, pages, count, limits, export (${dialect})`, () => {
    test("a search by part of an address, its count, Older and Newer; another workspace's customers never appear", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const theirs = await seedWorkspace(env.services);
      await seedCustomerRows(
        env,
        ws,
        Array.from({ length: 60 }, (_, i) => `ada${i}@example.com`),
        "member",
      );
      await seedCustomerRows(env, ws, ["grace@example.com"], "none");
      await seedCustomerRows(env, theirs, ["ada.theirs@example.com", "grace.theirs@example.com"], "member");
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const list = `/dashboard/w/${ws.slug}/test/customers`;

      const all = await browser.get(`${list}?tool=${ws.tool}`);
      assert.equal(all.statusCode, 200);
      assert.match(all.body, /61 customers\./);
      assert.match(all.body, />grace@example\.com</, "a lapsed customer is listed");
      assert.ok(!all.body.includes("theirs"));
      const older = /href="([^"]+)" rel="next">Older/.exec(all.body)?.[1];
      assert.ok(older);
      assert.ok(!all.body.includes('rel="prev"'), "the first page has no newer one");
      const second = await browser.get(hrefOf(older));
      assert.equal([...second.body.matchAll(/<tr>\n<td[^>]*><a /g)].length, 11);
      const newer = /href="([^"]+)" rel="prev">← Newer/.exec(second.body)?.[1];
      assert.ok(newer);
      const back = await browser.get(hrefOf(newer));
      assert.match(back.body, />ada59@example\.com</);

      const search = await browser.get(`${list}?tool=${ws.tool}&q=${encodeURIComponent("DA5")}`);
      assert.match(search.body, /11 customers match “DA5”/);
      assert.ok(!search.body.includes("theirs"));
      const lapsed = await browser.get(`${list}?tool=${ws.tool}&entitled=no&q=grace`);
      assert.match(lapsed.body, /1 customer matches/);
      assert.match(lapsed.body, />grace@example\.com</);
      assert.ok(!lapsed.body.includes("grace.theirs"));
      const none = await browser.get(`${list}?tool=${ws.tool}&q=${encodeURIComponent("new@example.com")}`);
      assert.match(none.body, /No customers match/);
      assert.match(none.body, /Open the page of new@example\.com<\/a> to grant access/);

      const exported = await browser.get(`${list}/export.csv?tool=${ws.tool}&entitled=all`);
      assert.equal(exported.statusCode, 200);
      assert.match(String(exported.headers["content-type"]), /^text\/csv; charset=utf-8/);
      assert.match(String(exported.headers["content-disposition"]), /^attachment; filename="customers-tabmaster-test\.csv"$/);
      const lines = exported.body.trimEnd().split("\r\n");
      assert.equal(lines.length, 62);
      assert.ok(!exported.body.includes("theirs"));

      // Their workspace's list and export are not this owner's.
      assert.equal((await browser.get(`/dashboard/w/${theirs.slug}/test/customers/export.csv?tool=${theirs.tool}`)).statusCode, 404);
      assert.equal((await browser.get(`/dashboard/w/${theirs.slug}/test/customers?tool=${theirs.tool}&q=theirs`)).statusCode, 404);
      // A cursor of this list with another search is refused, not answered.
      assert.equal((await browser.get(`${hrefOf(older)}&q=ada`)).statusCode, 400);
    });

    test("with no tool in the address the list opens on the first tool that has customers, else on the first tool", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      // A tool listed before Tab Master, with nobody yet.
      await createTool(env.services.db, env.services.clock, { workspace: ws.slug, id: "aardvark", name: "Aardvark" });
      const tools = await listTools(env.services.db, { workspace: ws.slug });
      assert.equal(tools[0]?.id, "aardvark", "listed first");
      await seedCustomerRows(env, ws, ["ada@example.com"], "member");
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const selected = (body: string) => /<option value="([^"]+)" selected>/.exec(body)?.[1];
      const opened = await browser.get(`/dashboard/w/${ws.slug}/test/customers`);
      assert.equal(selected(opened.body), ws.tool);
      assert.match(opened.body, />ada@example\.com</);
      // Named, the empty tool is shown as asked.
      const named = await browser.get(`/dashboard/w/${ws.slug}/test/customers?tool=aardvark`);
      assert.equal(selected(named.body), "aardvark");
      assert.doesNotMatch(named.body, /ada@example\.com/);
      // Nobody in the live environment: its first tool.
      assert.equal(selected((await browser.get(`/dashboard/w/${ws.slug}/live/customers`)).body), "aardvark");
    });

    test("the export needs a session, and makes a formula in an address plain text", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      await seedCustomerRows(env, ws, ["=HYPERLINK(1)@example.com", "+1@example.com", "-2@example.com", "plain@example.com"], "member");
      const url = `/dashboard/w/${ws.slug}/test/customers/export.csv?tool=${ws.tool}`;
      const anonymous = await app.inject({ url });
      assert.equal(anonymous.statusCode, 303);
      assert.match(String(anonymous.headers.location), /\/dashboard\/sign-in/);
      assert.ok(!anonymous.body.includes("example.com"));

      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const csv = (await browser.get(url)).body;
      assert.ok(csv.includes(`"'=HYPERLINK(1)@example.com"`));
      assert.ok(csv.includes(`"'+1@example.com"`));
      assert.ok(csv.includes(`"'-2@example.com"`));
      assert.ok(csv.includes(`"plain@example.com"`));
      assert.ok(!/(^|\r\n|,)"[=+\-@]/.test(csv), "no cell starts a formula");
    });

    test("past 2,000 of a kind the page says the list stops and how to find the rest", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      await seedCustomerRows(
        env,
        ws,
        Array.from({ length: LISTED_PER_KIND + 1 }, (_, i) => `many${i}@example.com`),
        "member",
      );
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const page = await browser.get(`/dashboard/w/${ws.slug}/test/customers?tool=${ws.tool}&entitled=no`);
      assert.match(page.body, /2,000 customers listed, and more\./);
      assert.match(page.body, /Only the newest 2,000 signed-in but not entitled customers are listed, as in the API\./);
      assert.match(page.body, /Search by address to find any other, or export the list as CSV: it has them all\./);
    });

    test("when the day's rows read are used up, the page names the limit and when it resets, and keeps its navigation", async () => {
      const env = await dashboardServices(dialect, { WARDEN_LIMIT_ROWS_READ_PER_DAY: "55", WARDEN_LIMIT_LIST_PAGES_PER_MIN: "1" });
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      await seedCustomerRows(env, ws, ["a@example.com", "b@example.com"], "member");
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const list = `/dashboard/w/${ws.slug}/test/customers?tool=${ws.tool}`;
      // Pages past the API's one list page a minute: the dashboard's are not counted in it.
      for (let i = 0; i < 3; i++) assert.equal((await browser.get(list)).statusCode, 200);
      // A page reserves its 50 rows and gives back what it did not return: after three
      // pages of 2, the fourth page's 50 no longer fit in 55 - 6.
      const refused = await browser.get(list);
      assert.equal(refused.statusCode, 429);
      assert.match(
        refused.body,
        /Limit reached:<\/strong> rows read by lists today for this workspace \(55\)\. It resets <time datetime="[^"]+T00:00:00\.000Z">/,
      );
      assert.match(refused.body, /The list is paused/);
      assert.match(refused.body, /<nav/, "the navigation is still there");
      assert.match(refused.body, /name="q"/, "and the list's filters");
      const exported = await browser.get(`/dashboard/w/${ws.slug}/test/customers/export.csv?tool=${ws.tool}`);
      assert.equal(exported.statusCode, 200, "2 rows fit");
      assert.equal((await browser.get(`/dashboard/w/${ws.slug}/test/customers/export.csv?tool=nosuchtool`)).statusCode, 404);
    });

    test("an export larger than the day's rows left is refused before it starts, on the list's page", async () => {
      const env = await dashboardServices(dialect, { WARDEN_LIMIT_ROWS_READ_PER_DAY: "2" });
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      await seedCustomerRows(env, ws, ["first.customer@example.com", "b@example.com", "c@example.com"], "member");
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const refused = await browser.get(`/dashboard/w/${ws.slug}/test/customers/export.csv?tool=${ws.tool}`);
      assert.equal(refused.statusCode, 429);
      assert.match(String(refused.headers["content-type"]), /^text\/html/);
      assert.match(refused.body, /Limit reached:<\/strong> rows read by lists today for this workspace \(2\)/);
      assert.ok(!refused.body.includes("first.customer@example.com"));
      const search = await browser.get(`/dashboard/w/${ws.slug}/test/customers/export.csv?tool=${ws.tool}&q=b%40`);
      assert.equal(search.statusCode, 200, "a search's 1 row fits");
      assert.equal(search.body.trimEnd().split("\r\n").length, 2);
    });
  });
}
