import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { main } from "../../cli.js";
import { dashboardApp, dashboardServices, readCode, readMail, TestBrowser } from "../../test-support/dashboard.js";
import { DIALECTS, privateDatabaseEnv, seedWorkspace } from "../../test-support/harness.js";
import { setOwnerSuspension } from "../../workspaces/workspace.service.js";

const HOUR = 3_600_000;

for (const dialect of DIALECTS) {
  describe(`dashboard sign-in (${dialect})`, () => {
    test("an owner signs in with the mailed code and lands on their workspace's test overview", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const browser = new TestBrowser(app);
      assert.equal((await browser.get("/dashboard")).headers.location, "/dashboard/sign-in");
      const landed = await browser.signIn(env.dataDir, ws.ownerEmail);
      const cookie = [landed.headers["set-cookie"] ?? []].flat().find((c) => c.startsWith("warden_session="));
      assert.match(cookie ?? "", /^warden_session=wds_[0-9A-Za-z]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=604800$/);
      assert.equal((await browser.get("/dashboard/sign-in")).headers.location, "/dashboard", "signed in already");
      const home = await browser.get("/dashboard");
      assert.equal(home.headers.location, `/dashboard/w/${ws.slug}/test`);
      const overview = await browser.get(home.headers.location as string);
      assert.equal(overview.statusCode, 200);
      assert.match(overview.body, /Test workspace/);
      assert.match(overview.body, new RegExp(ws.ownerEmail));
      const mail = await readMail(env.dataDir, ws.ownerEmail);
      assert.match(mail ?? "", /works once, for 10 minutes, in the browser where you asked for it/);
    });

    test("the page asked for before sign-in opens once signed in; a planted address outside the dashboard does not", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const deep = `/dashboard/w/${ws.slug}/test/webhooks?status=failing`;
      const browser = new TestBrowser(app);
      assert.equal((await browser.get(deep)).headers.location, "/dashboard/sign-in");
      assert.equal((await browser.signIn(env.dataDir, ws.ownerEmail)).headers.location, deep);
      assert.equal(browser.cookies.has("warden_next"), false, "used once");

      for (const planted of [
        "//evil.example/dashboard/",
        "https://evil.example/",
        "/dashboard/../..//evil.example",
        "/dashboard/sign-in/code",
        "/dashboard/\\evil.example",
      ]) {
        const other = new TestBrowser(app);
        other.cookies.set("warden_next", encodeURIComponent(planted));
        assert.equal((await other.signIn(env.dataDir, ws.ownerEmail)).headers.location, "/dashboard", planted);
      }
      // A form's POST is not replayed after sign-in: only a page read is remembered.
      const poster = new TestBrowser(app);
      await poster.post(`/dashboard/w/${ws.slug}/test/keys`, { name: "x" });
      assert.equal(poster.cookies.has("warden_next"), false);
    });

    test("a code works only in the browser that asked for it, for 10 minutes, with 5 tries", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const asker = new TestBrowser(app);
      await asker.get("/dashboard/sign-in");
      await asker.post("/dashboard/sign-in", { email: ws.ownerEmail });
      const code = await readCode(env.dataDir, ws.ownerEmail);

      // Another browser with the right code (and its own valid form) gets nothing.
      const other = new TestBrowser(app);
      await other.get("/dashboard/sign-in");
      const stolen = await other.post("/dashboard/sign-in/code", { code });
      assert.equal(stolen.statusCode, 400);
      assert.equal(other.cookies.has("warden_session"), false);

      for (let i = 0; i < 4; i++)
        assert.equal((await asker.post("/dashboard/sign-in/code", { code: code === "000000" ? "111111" : "000000" })).statusCode, 400);
      const fifthWrong = await asker.post("/dashboard/sign-in/code", { code: code === "000000" ? "111111" : "000000" });
      assert.equal(fifthWrong.statusCode, 400);
      const spent = await asker.post("/dashboard/sign-in/code", { code });
      assert.equal(spent.statusCode, 400);
      assert.match(spent.body, /No code is waiting/);
      assert.equal(asker.cookies.has("warden_session"), false);

      await asker.post("/dashboard/sign-in", { email: ws.ownerEmail });
      const fresh = await readCode(env.dataDir, ws.ownerEmail);
      env.clock.advance(10 * 60_000);
      assert.equal((await asker.post("/dashboard/sign-in/code", { code: fresh })).statusCode, 400);
    });

    test("an unknown or suspended address is answered like an owner's, and gets no mail", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      await setOwnerSuspension(env.services.db, env.clock, { email: ws.ownerEmail, suspended: true });
      for (const email of ["nobody@example.com", ws.ownerEmail]) {
        const browser = new TestBrowser(app);
        await browser.get("/dashboard/sign-in");
        const asked = await browser.post("/dashboard/sign-in", { email });
        assert.equal(asked.statusCode, 303);
        assert.equal((await browser.get("/dashboard/sign-in/code")).statusCode, 200);
        assert.equal(await readMail(env.dataDir, email), null);
        assert.equal((await browser.post("/dashboard/sign-in/code", { code: "123456" })).statusCode, 400);
      }
    });

    test("codes are limited per address and source with growing waits, and per source address each hour", async () => {
      const env = await dashboardServices(dialect, { WARDEN_LIMIT_SIGN_INS_PER_SOURCE_PER_HOUR: "7" });
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const browser = new TestBrowser(app, "10.99.0.1");
      await browser.get("/dashboard/sign-in");
      for (let i = 0; i < 5; i++) assert.equal((await browser.post("/dashboard/sign-in", { email: ws.ownerEmail })).statusCode, 303);
      const refused = await browser.post("/dashboard/sign-in", { email: ws.ownerEmail });
      assert.equal(refused.statusCode, 429);
      assert.equal(refused.headers["retry-after"], "60");
      assert.match(refused.headers["content-type"] as string, /^text\/html; charset=utf-8/);
      assert.match(refused.body, /from your network: wait a minute/);
      env.clock.advance(60_000);
      assert.equal((await browser.post("/dashboard/sign-in", { email: ws.ownerEmail })).statusCode, 303, "the wait is over");
      assert.equal((await browser.post("/dashboard/sign-in", { email: ws.ownerEmail })).headers["retry-after"], "120", "each wait twice the last");
      // One more address from the same source reaches its 7.
      assert.equal((await browser.post("/dashboard/sign-in", { email: "a@example.com" })).statusCode, 303);
      const sourceUsed = await browser.post("/dashboard/sign-in", { email: "b@example.com" });
      assert.equal(sourceUsed.statusCode, 429);
      assert.match(sourceUsed.body, /sign-in codes per hour from this network address/);
      env.clock.advance(HOUR);
      assert.equal((await browser.post("/dashboard/sign-in", { email: ws.ownerEmail })).statusCode, 303);
    });

    test("sign-out ends the session in the database: the old cookie no longer works", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const stolen = browser.cookies.get("warden_session") as string;
      await browser.get(`/dashboard/w/${ws.slug}/test`);
      const out = await browser.post("/dashboard/sign-out");
      assert.equal(out.headers.location, "/dashboard/sign-in?signed_out=1");
      assert.equal(browser.cookies.has("warden_session"), false);
      const replay = await app.inject({ url: `/dashboard/w/${ws.slug}/test`, headers: { cookie: `warden_session=${stolen}` } });
      assert.equal(replay.statusCode, 303);
      assert.equal(replay.headers.location, "/dashboard/sign-in?expired=1");
    });

    test("a session ends after 12 idle hours, after 7 days whatever, and at once when its owner is suspended", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const page = `/dashboard/w/${ws.slug}/test`;

      const idle = new TestBrowser(app);
      await idle.signIn(env.dataDir, ws.ownerEmail);
      env.clock.advance(11 * HOUR);
      assert.equal((await idle.get(page)).statusCode, 200);
      env.clock.advance(12 * HOUR - 1);
      assert.equal((await idle.get(page)).statusCode, 200);
      env.clock.advance(12 * HOUR);
      assert.equal((await idle.get(page)).headers.location, "/dashboard/sign-in?expired=1");

      const busy = new TestBrowser(app);
      await busy.signIn(env.dataDir, ws.ownerEmail);
      for (let i = 0; i < 6; i++) {
        env.clock.advance(11 * HOUR);
        assert.equal((await busy.get(page)).statusCode, 200);
      }
      env.clock.advance(7 * 24 * HOUR - 66 * HOUR);
      assert.equal((await busy.get(page)).statusCode, 303);

      const suspended = new TestBrowser(app);
      await suspended.signIn(env.dataDir, ws.ownerEmail);
      assert.equal((await suspended.get(page)).statusCode, 200);
      await setOwnerSuspension(env.services.db, env.clock, { email: ws.ownerEmail, suspended: true });
      assert.equal((await suspended.get(page)).statusCode, 303);
      await setOwnerSuspension(env.services.db, env.clock, { email: ws.ownerEmail, suspended: false });
      assert.equal((await suspended.get(page)).statusCode, 303, "the suspension ended the session; lifting it does not revive it");
    });

    test("over HTTPS the cookies are Secure and named __Host-", async () => {
      const env = await dashboardServices(dialect, { WARDEN_TRUST_PROXY: "true" });
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const https = { "x-forwarded-proto": "https" };
      const browser = new TestBrowser(app);
      const first = await browser.get("/dashboard/sign-in", https);
      assert.match(String(first.headers["set-cookie"]), /^__Host-warden_browser=wdb_\w+; Path=\/; HttpOnly; SameSite=Lax; Secure; Max-Age=86400$/);
      await browser.post("/dashboard/sign-in", { email: ws.ownerEmail }, https);
      const signedIn = await browser.post("/dashboard/sign-in/code", { code: await readCode(env.dataDir, ws.ownerEmail) }, https);
      assert.equal(signedIn.statusCode, 303);
      assert.match([signedIn.headers["set-cookie"]].flat().join("\n"), /__Host-warden_session=wds_\w+; Path=\/; HttpOnly; SameSite=Lax; Secure/);
      // The plain-http name is not read over HTTPS, and the reverse.
      assert.equal((await browser.get("/dashboard", https)).headers.location, `/dashboard/w/${ws.slug}/test`);
      assert.equal((await browser.get("/dashboard")).headers.location, "/dashboard/sign-in");
    });

    test("warden admin login-link prints a one-time link that signs the owner in once", async () => {
      const dbEnv = await privateDatabaseEnv(dialect);
      let out = "";
      const run = (...argv: string[]) => main(argv, { stdout: (t) => (out += t), stderr: (t) => (out += t), env: dbEnv });
      assert.equal(await run("admin", "owner", "create", "--email", "ops@example.com"), 0);
      out = "";
      assert.equal(await run("admin", "login-link", "--email", "nobody@example.com"), 1);
      out = "";
      assert.equal(await run("admin", "login-link", "--email", "ops@example.com", "--base-url", "https://warden.example.com"), 0);
      const url = /^https:\/\/warden\.example\.com(\/dashboard\/sign-in\/link\/wdl_\w{43})$/m.exec(out);
      assert.ok(url, out);
      out = "";
      assert.equal(await run("admin", "login-link", "--email", "ops@example.com", "--json"), 0);
      assert.match(JSON.parse(out).url, /^http:\/\/127\.0\.0\.1:8080\/dashboard\/sign-in\/link\/wdl_/);
    });

    test("a login link asks before it signs in, works once, and not after 15 minutes", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const { createOwnerLoginLink } = await import("../../owners/owner-sign-in.service.js");
      const { token } = await createOwnerLoginLink(env.services, { email: ws.ownerEmail });
      const browser = new TestBrowser(app);
      const page = await browser.get(`/dashboard/sign-in/link/${token}`);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, new RegExp(`Sign in as ${ws.ownerEmail}`));
      assert.equal(browser.cookies.has("warden_session"), false, "opening the link (a mail scanner would) does not sign in");
      assert.equal((await browser.post(`/dashboard/sign-in/link/${token}`)).headers.location, "/dashboard");
      assert.ok(browser.cookies.has("warden_session"));
      const again = new TestBrowser(app);
      assert.equal((await again.get(`/dashboard/sign-in/link/${token}`)).statusCode, 404);

      // A newer link closes the older ones still open.
      const older = await createOwnerLoginLink(env.services, { email: ws.ownerEmail });
      const newer = await createOwnerLoginLink(env.services, { email: ws.ownerEmail });
      assert.equal((await new TestBrowser(app).get(`/dashboard/sign-in/link/${older.token}`)).statusCode, 404);
      assert.equal((await new TestBrowser(app).get(`/dashboard/sign-in/link/${newer.token}`)).statusCode, 200);

      const late = await createOwnerLoginLink(env.services, { email: ws.ownerEmail });
      env.clock.advance(15 * 60_000);
      assert.equal((await new TestBrowser(app).get(`/dashboard/sign-in/link/${late.token}`)).statusCode, 404);
    });
  });
}
