import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { dashboardApp, dashboardServices, TestBrowser } from "../../test-support/dashboard.js";
import { DIALECTS, seedWorkspace } from "../../test-support/harness.js";

const MAC_CHROME = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
const LINUX_FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0";

for (const dialect of DIALECTS) {
  describe(`dashboard sessions (${dialect})`, () => {
    test("an owner sees their sessions (browser, address, signed in, last seen) and ends one, or all but this one", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const laptop = new TestBrowser(app, "203.0.113.7", MAC_CHROME);
      await laptop.signIn(env.dataDir, ws.ownerEmail);
      env.clock.advance(5 * 60_000);
      const stolen = new TestBrowser(app, "198.51.100.9", LINUX_FIREFOX);
      await stolen.signIn(env.dataDir, ws.ownerEmail);
      const third = new TestBrowser(app, "192.0.2.1", "<script>alert(1)</script>");
      await third.signIn(env.dataDir, ws.ownerEmail);
      env.clock.advance(2 * 60_000);
      assert.equal((await stolen.get(`/dashboard/w/${ws.slug}/test`)).statusCode, 200, "seen again, later");

      const page = await laptop.get("/dashboard/sessions");
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /Chrome on macOS<\/strong> <span class="badge badge-ok">This browser<\/span>/);
      assert.match(page.body, /Firefox on Linux/);
      for (const address of ["203.0.113.7", "198.51.100.9", "192.0.2.1"]) assert.ok(page.body.includes(`<td data-label="Address">${address}</td>`), address);
      assert.ok(page.body.includes("&lt;script&gt;alert(1)&lt;/script&gt;"), "a User-Agent is escaped");
      assert.doesNotMatch(page.body, /<script>alert/);
      assert.ok(page.body.includes("21 Nov 2026, 12:07 UTC"), "the stolen session's last request");
      assert.match(page.body, /End all 2 other sessions/);
      assert.match(page.body, /href="\/dashboard\/sessions" aria-current="page">Sessions</);

      // End the one that is not yours: its very next request is sent to sign in.
      const stolenId = /198\.51\.100\.9[\s\S]*?\/dashboard\/sessions\/(oss_\w+)\/end/.exec(page.body)?.[1];
      assert.ok(stolenId);
      const ended = await laptop.post(`/dashboard/sessions/${stolenId}/end`);
      assert.equal(ended.statusCode, 303);
      assert.match((await laptop.get(ended.headers.location as string)).body, /1 session ended/);
      assert.equal((await stolen.get(`/dashboard/w/${ws.slug}/test`)).headers.location, "/dashboard/sign-in?expired=1");
      assert.equal((await laptop.post(`/dashboard/sessions/${stolenId}/end`)).statusCode, 404, "ended already");

      // All but this one.
      await laptop.get("/dashboard/sessions");
      const all = await laptop.post("/dashboard/sessions/end-others");
      assert.equal(all.headers.location, "/dashboard/sessions?ended=1");
      assert.equal((await third.get("/dashboard")).headers.location, "/dashboard/sign-in?expired=1");
      const alone = await laptop.get("/dashboard/sessions");
      assert.match(alone.body, /This is your only session/);
      assert.doesNotMatch(alone.body, /Firefox on Linux/);

      const audit = (await laptop.get("/dashboard/audit")).body;
      assert.equal(audit.match(/Ended another session/g)?.length, 2);
    });

    test("opened from a workspace environment, Sessions and the account's log keep it: its navigation, switchers and banner, after an ending too; another owner's workspace is ignored", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const theirs = await seedWorkspace(env.services);
      const me = new TestBrowser(app);
      await me.signIn(env.dataDir, ws.ownerEmail);
      const other = new TestBrowser(app, "198.51.100.9");
      await other.signIn(env.dataDir, ws.ownerEmail);

      const overview = (await me.get(`/dashboard/w/${ws.slug}/live`)).body;
      const here = `workspace=${ws.slug}&amp;env=live`;
      assert.ok(overview.includes(`href="/dashboard/sessions?${here}"`), "the navigation's Sessions link names where it was opened");
      assert.ok(overview.includes(`href="/dashboard/audit?${here}"`));

      const page = (await me.get(`/dashboard/sessions?workspace=${ws.slug}&env=live`)).body;
      assert.ok(page.includes(`href="/dashboard/w/${ws.slug}/live/customers"`), "the workspace's sections stay in the navigation");
      assert.ok(page.includes(`href="/dashboard/sessions?workspace=${ws.slug}&amp;env=test">Test</a>`), "the environment switch stays on Sessions");
      assert.match(page, /href="\/dashboard\/sessions\?workspace=[^"]+" aria-current="page">Sessions</);
      assert.match(page, /<li>Account<\/li>/, "the breadcrumbs are the account's");
      const id = /\/dashboard\/sessions\/(oss_\w+)\/end\?workspace=/.exec(page)?.[1];
      assert.ok(id, "an ending's form carries the workspace environment");
      const ended = await me.post(`/dashboard/sessions/${id}/end?workspace=${ws.slug}&env=live`);
      assert.equal(ended.headers.location, `/dashboard/sessions?workspace=${ws.slug}&env=live&ended=1`);
      const log = (await me.get(`/dashboard/audit?workspace=${ws.slug}&env=test`)).body;
      assert.ok(log.includes(`href="/dashboard/w/${ws.slug}/test/customers"`));
      assert.match(log, /class="test-banner"/);

      // A workspace the owner does not own, or an environment that is none, is no context: the plain account page.
      for (const query of [`workspace=${theirs.slug}&env=live`, `workspace=${ws.slug}&env=prod`]) {
        const plain = await me.get(`/dashboard/sessions?${query}`);
        assert.equal(plain.statusCode, 200);
        assert.doesNotMatch(plain.body, /\/customers"/, query);
        assert.ok(!plain.body.includes(theirs.slug), "nothing of another owner's workspace");
      }
    });

    test("another owner's session cannot be listed or ended, nor this one; forms need the session's token", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const mine = await seedWorkspace(env.services);
      const theirs = await seedWorkspace(env.services);
      const me = new TestBrowser(app);
      await me.signIn(env.dataDir, mine.ownerEmail);
      const them = new TestBrowser(app, "198.51.100.20");
      await them.signIn(env.dataDir, theirs.ownerEmail);
      const theirPage = await them.get("/dashboard/sessions");
      assert.doesNotMatch(theirPage.body, /\/sessions\/oss_\w+\/end/, "this session offers no End button: signing out ends it");

      const myPage = await me.get("/dashboard/sessions");
      assert.doesNotMatch(myPage.body, /198\.51\.100\.20/, "nobody else's sessions are listed");
      const ids = await sessionIdsOf(env, theirs.ownerEmail);
      assert.equal(ids.length, 1);
      for (const id of ids) {
        assert.equal((await me.post(`/dashboard/sessions/${id}/end`)).statusCode, 404);
        // Their own session, through their own form, is not "another" session either.
        await them.get("/dashboard/sessions");
        assert.equal((await them.post(`/dashboard/sessions/${id}/end`)).statusCode, 404);
      }
      assert.equal((await them.get("/dashboard")).statusCode, 303);
      assert.notEqual((await them.get("/dashboard")).headers.location, "/dashboard/sign-in?expired=1", "still signed in");

      assert.equal((await me.post("/dashboard/sessions/end-others", { _csrf: "0".repeat(64) })).statusCode, 403);
      assert.equal((await me.post("/dashboard/sessions/end-others", {}, { "sec-fetch-site": "cross-site" })).statusCode, 403);
    });
  });
}

/** An owner's session ids, read as only a test may: the pages never show another owner's. */
async function sessionIdsOf(env: Awaited<ReturnType<typeof dashboardServices>>, email: string): Promise<string[]> {
  const rows = await env.services.db
    .selectFrom("owner_sessions as s")
    .innerJoin("owners as o", "o.id", "s.owner_id")
    .select("s.id")
    .where("o.email", "=", email)
    .execute();
  return rows.map((r) => r.id);
}
