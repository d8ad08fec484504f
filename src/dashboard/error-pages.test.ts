import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "kysely";
import { breadcrumbTrail, dashboardApp, dashboardServices, TestBrowser } from "../test-support/dashboard.js";
import { DIALECTS, seedWorkspace } from "../test-support/harness.js";

/** The signed-in frame: the side navigation and the workspace switcher. */
const hasNavigation = (body: string) => body.includes('<nav class="side" aria-label="Dashboard">') && body.includes('<details class="switcher">');

for (const dialect of DIALECTS) {
  describe(`dashboard error pages (${dialect})`, () => {
    test("signed in, a 404 or 403 keeps the navigation, with the address's workspace when it is the owner's", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);

      // An address no route knows, inside the owner's workspace: its navigation, Live on screen.
      const missing = await browser.get(`/dashboard/w/${ws.slug}/live/keys/nothing/here/at/all`);
      assert.equal(missing.statusCode, 404);
      assert.ok(hasNavigation(missing.body));
      assert.match(missing.body, /<h1>Not found<\/h1>/);
      assert.match(missing.body, /<nav class="env-switch" aria-label="Environment">/, "the workspace environment is on screen");
      assert.ok(missing.body.includes(`href="/dashboard/w/${ws.slug}/live/keys" aria-current="page"`), "the section of the address is marked");
      assert.match(missing.body, /<span aria-current="page">Not found<\/span>/, "breadcrumbs end at the error");
      assert.ok(missing.body.includes(`<a class="button primary" href="/dashboard/w/${ws.slug}/live">Back to the dashboard</a>`));

      // A route's refusal (a workspace the owner does not own) and an unknown top-level path: navigation, no workspace.
      for (const path of ["/dashboard/w/not-mine/test/keys", "/dashboard/no-such-page"]) {
        const page = await browser.get(path);
        assert.equal(page.statusCode, 404, path);
        assert.ok(hasNavigation(page.body), path);
        assert.doesNotMatch(page.body, /class="env-switch"/, `${path}: no workspace on screen`);
        assert.ok(page.body.includes('<a class="button primary" href="/dashboard">Back to the dashboard</a>'), path);
      }

      // A form from another site: refused, navigation kept, nothing done.
      const refused = await browser.post(`/dashboard/w/${ws.slug}/test/keys`, { name: "x" }, { "sec-fetch-site": "cross-site" });
      assert.equal(refused.statusCode, 403);
      assert.ok(hasNavigation(refused.body));
      assert.match(refused.body, /sent from another site/);
    });

    test("a 500 and a 429 keep the navigation and the breadcrumbs; the 429 names its limit and when it resets", async () => {
      const env = await dashboardServices(dialect, { WARDEN_LIMIT_EXAMPLE_EVENTS_PER_DAY: "1" });
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);

      // The database fails under the request (as the API's 500 test does it); the table comes back after.
      await sql`alter table people rename to people_away`.execute(env.services.db);
      const failed = await browser.get(`/dashboard/w/${ws.slug}/test/customers/${ws.tool}/ada%40example.com`);
      await sql`alter table people_away rename to people`.execute(env.services.db);
      assert.equal(failed.statusCode, 500);
      assert.ok(hasNavigation(failed.body), "the navigation stays");
      assert.ok(failed.body.includes(`href="/dashboard/w/${ws.slug}/test/customers" aria-current="page"`), "its section marked");
      assert.deepEqual(breadcrumbTrail(failed.body), ["Test workspace", "Test", "Customers", "Something went wrong"]);
      assert.match(failed.body, /give your operator the request id req_\w+/);
      assert.doesNotMatch(failed.body, /people_away|no such table|SQLITE_|relation "/i, "no SQL or driver text");

      // A day's example events spent: the second test event is refused by the limit, inside the frame.
      const endpoint = await app.inject({
        method: "POST",
        url: "/api/v1/webhooks/endpoints",
        headers: { authorization: `Bearer ${ws.testKey}`, "content-type": "application/json" },
        payload: { url: "https://receiver.example.com/hooks" },
      });
      assert.equal(endpoint.statusCode, 201, endpoint.body);
      const test = `/dashboard/w/${ws.slug}/test/webhooks/${endpoint.json().endpoint.id}/test`;
      assert.equal((await browser.post(test, { type: "purchase.completed" })).statusCode, 303);
      const limited = await browser.post(test, { type: "purchase.completed" });
      assert.equal(limited.statusCode, 429);
      assert.ok(hasNavigation(limited.body), "the navigation stays");
      assert.deepEqual(breadcrumbTrail(limited.body), ["Test workspace", "Test", "Webhooks", "Limit reached"]);
      assert.match(limited.body, /<h1>Limit reached<\/h1>/);
      assert.match(
        limited.body,
        /<strong>Limit reached:<\/strong> example events per day for this workspace \(1\)\. It resets <time datetime="\d{4}-\d\d-\d\dT00:00:00\.000Z">/,
        "which limit, and until when",
      );
      assert.ok(Number(limited.headers["retry-after"]) > 0);
      assert.doesNotMatch(limited.body, /Slow down/);
    });

    test("another owner's workspace reads as one that does not exist; signed out, the card links home", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const mine = await seedWorkspace(env.services);
      const theirs = await seedWorkspace(env.services);
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, mine.ownerEmail);
      const foreign = await browser.get(`/dashboard/w/${theirs.slug}/test/customers`);
      const nonexistent = await browser.get("/dashboard/w/no-such-workspace/test/customers");
      assert.equal(foreign.statusCode, 404);
      assert.ok(!foreign.body.includes(theirs.slug), "their workspace is not named");
      assert.ok(!foreign.body.includes(theirs.ownerEmail));
      // The same page as for a workspace that does not exist, apart from the address.
      assert.equal(foreign.body, nonexistent.body);
      // Their workspace's pages under an unknown path likewise: no frame of theirs.
      const unknown = await browser.get(`/dashboard/w/${theirs.slug}/live/no-such-section`);
      assert.equal(unknown.statusCode, 404);
      assert.ok(!unknown.body.includes(theirs.slug));

      const stranger = new TestBrowser(app);
      for (const path of ["/dashboard/no-such-page", `/dashboard/w/${mine.slug}/test/no-such-section`]) {
        const page = await stranger.get(path);
        assert.equal(page.statusCode, 404, path);
        assert.ok(!hasNavigation(page.body), `${path}: no session, no navigation`);
        assert.match(page.body, /<body class="signed-out">/);
        assert.ok(page.body.includes('<a class="button primary" href="/dashboard">Back to the dashboard</a>'));
        assert.ok(!page.body.includes(mine.slug));
      }
      // An ended session's cookie gets the signed-out page too.
      const ended = new TestBrowser(app);
      assert.equal((await ended.get("/dashboard/no-such-page", { cookie: "warden_session=not-a-session" })).statusCode, 404);
    });
  });
}
