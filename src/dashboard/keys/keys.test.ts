import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { dashboardApp, dashboardServices, readCode, TestBrowser } from "../../test-support/dashboard.js";
import { DIALECTS, seedWorkspace, unique } from "../../test-support/harness.js";
import { createKey, createOwner, createWorkspace } from "../../workspaces/workspace.service.js";

const KEY = /wk_(test|live)_[0-9A-Za-z]{32}/g;

for (const dialect of DIALECTS) {
  describe(`dashboard API keys (${dialect})`, () => {
    test("a key is shown once, on the page its creation redirects to, works on the API, and is refused once revoked", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const keysPage = `/dashboard/w/${ws.slug}/test/keys`;
      const before = await browser.get(keysPage);
      assert.equal(before.statusCode, 200);
      assert.equal(before.body.match(KEY), null, "a list never shows a key");

      const posted = await browser.post(keysPage, { name: "Production server" });
      assert.equal(posted.statusCode, 303);
      const shownAt = posted.headers.location as string;
      assert.match(shownAt, new RegExp(`^${keysPage}/new/once_[0-9A-Za-z]{32}$`));
      assert.equal(posted.body.match(KEY), null);
      const created = await browser.get(shownAt);
      assert.equal(created.statusCode, 200);
      const [key] = created.body.match(KEY) ?? [];
      assert.ok(key);
      assert.ok(!shownAt.includes(key.slice(8)), "the key is never in an address");
      assert.match(created.body, /only time Warden shows this key/);
      assert.match(created.body, /data-copy="new-key"/);
      assert.match(created.body, /<script src="[^"]*copy\.js"/);
      // Reloading the page shows it no more and makes no other key.
      const reloaded = await browser.get(shownAt);
      assert.equal(reloaded.statusCode, 404);
      assert.equal(reloaded.body.match(KEY), null);
      assert.match(reloaded.body, /shown once and is gone/);
      const row = await env.services.db.selectFrom("shown_once").select("content_sealed").where("id", "=", shownAt.slice(-37)).executeTakeFirstOrThrow();
      assert.equal(row.content_sealed, null, "erased once shown");

      const after = await browser.get(keysPage);
      assert.equal(after.body.match(KEY), null, "gone after a reload");
      assert.ok(after.body.includes(`wk_test_…${key.slice(-4)}`));
      assert.match(after.body, /Production server/);

      const api = (k: string) => app.inject({ url: `/api/v1/tools/${ws.tool}/customers`, headers: { authorization: `Bearer ${k}` } });
      assert.equal((await api(key)).statusCode, 200);
      const used = await browser.get(keysPage);
      assert.match(used.body, /21 Nov 2026, 12:0\d UTC<\/time><\/td>\s*<td class="actions"[^>]*>/, "last used, to the minute");

      const revokeLinks = (body: string) => [...body.matchAll(/\/keys\/(key_\w{24})\/revoke"/g)].map((m) => m[1]);
      const made = revokeLinks(used.body).filter((k) => !revokeLinks(before.body).includes(k));
      assert.equal(made.length, 1, "one key made, however often its page was loaded");
      const id = made[0];
      assert.ok(id);
      const confirm = await browser.get(`${keysPage}/${id}/revoke`);
      assert.match(confirm.body, /Revoke this key\?/);
      const revoked = await browser.post(`${keysPage}/${id}/revoke`);
      assert.equal(revoked.statusCode, 303);
      assert.equal(revoked.headers.location, `${keysPage}?revoked=${id}`);
      // Named by what the owner called it, not by its id.
      assert.match(
        (await browser.get(revoked.headers.location as string)).body,
        /Key <strong>Production server<\/strong> <code class="key">[^<]+<\/code> is revoked\. The API refuses it/,
      );
      assert.equal((await api(key)).statusCode, 401);

      const audit = await browser.get("/dashboard/audit");
      assert.match(audit.body, /Created an API key/);
      assert.match(audit.body, /Revoked an API key/);
      assert.ok(audit.body.includes(`<code>${id}</code>`));
    });

    test("a live key needs a fresh mailed code; a wrong one creates nothing", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const signInCode = await readCode(env.dataDir, ws.ownerEmail);
      const keysPage = `/dashboard/w/${ws.slug}/live/keys`;
      await browser.get(keysPage);
      const asked = await browser.post(keysPage, { name: "Live server" });
      assert.equal(asked.statusCode, 200);
      assert.equal(asked.body.match(KEY), null);
      assert.match(asked.body, /Confirm it is you/);
      const code = await readCode(env.dataDir, ws.ownerEmail);
      assert.notEqual(code, signInCode);

      // Skipping the code, or a wrong one, creates no key.
      assert.equal((await browser.post(keysPage, { name: "Live server", confirm: "1" })).statusCode, 400);
      const wrong = await browser.post(keysPage, { name: "Live server", confirm: "1", code: code === "000000" ? "111111" : "000000" });
      assert.equal(wrong.statusCode, 400);
      assert.match(wrong.body, /not right/);
      assert.equal(wrong.body.match(KEY), null);

      const confirmed = await browser.post(keysPage, { name: "Live server", confirm: "1", code });
      assert.equal(confirmed.statusCode, 303);
      const created = await browser.get(confirmed.headers.location as string);
      const [key] = created.body.match(KEY) ?? [];
      assert.match(key ?? "", /^wk_live_/);
      // The code is spent.
      assert.equal((await browser.post(keysPage, { name: "Again", confirm: "1", code })).statusCode, 400);
    });

    test("a key's one-time page is the session's and the workspace environment's that made it: any other sees nothing and leaves it", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const maker = new TestBrowser(app);
      await maker.signIn(env.dataDir, ws.ownerEmail);
      const keysPage = `/dashboard/w/${ws.slug}/test/keys`;
      await maker.get(keysPage);
      const shownAt = (await maker.post(keysPage, { name: "CI" })).headers.location as string;
      const once = shownAt.slice(shownAt.lastIndexOf("/") + 1);
      // The same owner in another browser (another session), and the live environment's address.
      const other = new TestBrowser(app);
      await other.signIn(env.dataDir, ws.ownerEmail);
      for (const [browser, url] of [
        [other, shownAt],
        [maker, `/dashboard/w/${ws.slug}/live/keys/new/${once}`],
      ] as const) {
        const refused = await browser.get(url);
        assert.equal(refused.statusCode, 404, url);
        assert.equal(refused.body.match(KEY), null);
      }
      // Nor as another kind of secret: an endpoint's one-time page with the key's id shows nothing and erases nothing.
      const added = await app.inject({
        method: "POST",
        url: "/api/v1/webhooks/endpoints",
        headers: { authorization: `Bearer ${ws.testKey}`, "content-type": "application/json" },
        payload: JSON.stringify({ url: "https://example.com/hook" }),
      });
      const endpoint = (added.json() as { endpoint: { id: string } }).endpoint.id;
      assert.equal((await maker.get(`/dashboard/w/${ws.slug}/test/webhooks/${endpoint}/new-secret/${once}`)).statusCode, 404);
      // Still there for the session that made it.
      assert.match((await maker.get(shownAt)).body.match(KEY)?.[0] ?? "", /^wk_test_/);
      // Past its 10 minutes nothing is shown.
      const late = (await maker.post(keysPage, { name: "Late" })).headers.location as string;
      env.clock.advance(10 * 60_000);
      assert.equal((await maker.get(late)).statusCode, 404);
    });

    test("an owner sees, and touches, only the keys of workspaces they own", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const mine = await seedWorkspace(env.services);
      const theirs = await seedWorkspace(env.services);
      const theirKey = await createKey(env.services.db, env.clock, { workspace: theirs.slug, env: "test", name: "theirs" });
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, mine.ownerEmail);
      const page = await browser.get(`/dashboard/w/${mine.slug}/test`);
      assert.ok(!page.body.includes(theirs.slug), "the switcher lists only my workspaces");
      assert.equal((await browser.get(`/dashboard/w/${theirs.slug}/test/keys`)).statusCode, 404);
      assert.equal((await browser.post(`/dashboard/w/${theirs.slug}/test/keys/${theirKey.id}/revoke`)).statusCode, 404);
      // Their key through my workspace's address: no such key here.
      assert.equal((await browser.post(`/dashboard/w/${mine.slug}/test/keys/${theirKey.id}/revoke`)).statusCode, 404);
      const api = await app.inject({ url: `/api/v1/tools/${theirs.tool}/customers`, headers: { authorization: `Bearer ${theirKey.key}` } });
      assert.equal(api.statusCode, 200);

      // A second workspace of mine appears in the switcher, and a live key is not listed among test keys.
      const slug = unique("ws");
      await createWorkspace(env.services.db, env.clock, { slug, name: "Second shop", ownerEmail: mine.ownerEmail });
      const switched = await browser.get(`/dashboard/w/${mine.slug}/live/keys`);
      assert.ok(switched.body.includes(`/dashboard/w/${slug}/live/keys`));
      assert.ok(switched.body.includes(`/dashboard/w/${mine.slug}/test/keys`));
    });

    test("the overview shows passes held against a Hobby plan's limit and today's counters", async () => {
      const env = await dashboardServices(dialect, { WARDEN_LIMIT_HOBBY_PASSES: "3" });
      const app = await dashboardApp(env);
      const ownerEmail = `${unique("o")}@example.com`;
      await createOwner(env.services.db, env.clock, { email: ownerEmail });
      const ws = await seedWorkspace(env.services, { plan: "hobby" });
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const grant = await app.inject({
        method: "POST",
        url: `/api/v1/tools/${ws.tool}/grants`,
        headers: { authorization: `Bearer ${ws.testKey}`, "content-type": "application/json" },
        payload: { email: "ada@example.com", days: 30 },
      });
      assert.equal(grant.statusCode, 201);
      const overview = await browser.get(`/dashboard/w/${ws.slug}/test`);
      assert.match(overview.body, /<p class="stat-value">1<span class="stat-of"> of 3<\/span><\/p>/);
      // In words, not Warden's internal "passes" (issue 35's jargon).
      assert.match(overview.body, /<p class="stat-label">Access held now<\/p>/);
      assert.doesNotMatch(overview.body, /[Pp]asses/);
      assert.match(overview.body, /<td[^>]*>Additions \(grants and trials\)<\/td>\s*<td class="num"[^>]*>1<\/td>/);
      const live = await browser.get(`/dashboard/w/${ws.slug}/live`);
      assert.match(live.body, /<p class="stat-value">0<span class="stat-of"> of 3<\/span><\/p>/);
      assert.ok(!live.body.includes("test-banner"), "no test banner on live");
      assert.ok(overview.body.includes('class="test-banner"'), "the test banner on test");
    });
  });
}
