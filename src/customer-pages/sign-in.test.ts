// Signing in on the hosted pages, in process with a browser's cookies and form tokens:
// the mailed code, the web session and its cookie, its scope, its limits and its end.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, test } from "node:test";
import { continueWithTicket, pagesOf, signedInDevice, signInOnPages, ticketFor } from "../test-support/customer-pages.js";
import { dashboardApp, dashboardServices, readCode, TestBrowser } from "../test-support/dashboard.js";
import { DIALECTS, seedWorkspace, unique } from "../test-support/harness.js";
import { createTool, createWorkspace } from "../workspaces/workspace.service.js";

const HOUR = 3_600_000;
const sessionCookie = (slug: string, env = "test") => `warden_customer_${slug}_${env}`;

for (const dialect of DIALECTS) {
  describe(`hosted pages: sign-in (${dialect})`, () => {
    test("an address, the mailed code, then signed in: the session cookie is HttpOnly and Lax, stored hashed, and Sign out ends it", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const base = pagesOf(ws);
      const browser = new TestBrowser(app);
      const email = `ada-${ws.slug}@example.com`;

      const page = await browser.get(`${base}/sign-in`);
      assert.equal(page.statusCode, 200);
      assert.match(page.headers["content-security-policy"] as string, /script-src 'self'; style-src 'self'/);
      assert.equal(page.headers["x-frame-options"], "DENY");
      assert.match(page.body, /<title>Sign in · Test workspace<\/title>/);
      assert.match(page.body, /Sign in to Tab Master/);

      const landed = await signInOnPages(browser, env.dataDir, base, email);
      assert.equal(landed.headers.location, `${base}/manage`);
      const cookie = [landed.headers["set-cookie"] ?? []].flat().find((c) => c.startsWith(`${sessionCookie(ws.slug)}=`));
      assert.match(cookie ?? "", new RegExp(`^${sessionCookie(ws.slug)}=wcs_[0-9A-Za-z]{43}; Path=/; HttpOnly; SameSite=Lax; Max-Age=604800$`));
      const token = browser.cookies.get(sessionCookie(ws.slug)) as string;
      const row = await env.services.db
        .selectFrom("customer_sessions")
        .select(["token_hash", "ended_at"])
        .where("token_hash", "=", createHash("sha256").update(token).digest("hex"))
        .executeTakeFirst();
      assert.equal(row?.ended_at, null, "stored as its SHA-256 only");

      // Signed in: the sign-in page goes on, and the shell names the person.
      assert.equal((await browser.get(`${base}/sign-in`)).headers.location, `${base}/manage`);
      const notFoundPage = await browser.get(`${base}/nothing-here`);
      assert.equal(notFoundPage.statusCode, 404);

      const signIn = await browser.get(`${base}/sign-in?other=1`);
      assert.match(signIn.body, new RegExp(`<span class="who">${email}</span>`));
      const csrf = /action="[^"]+\/sign-out"><input type="hidden" name="_csrf" value="([0-9a-f]+)"/.exec(signIn.body)?.[1] as string;
      const out = await browser.post(`${base}/sign-out`, { _csrf: csrf });
      assert.equal(out.statusCode, 303);
      assert.equal(out.headers.location, `${base}/sign-in?signed_out=1`);
      assert.equal(browser.cookies.has(sessionCookie(ws.slug)), false);
      const ended = await env.services.db
        .selectFrom("customer_sessions")
        .select("ended_at")
        .where("token_hash", "=", createHash("sha256").update(token).digest("hex"))
        .executeTakeFirstOrThrow();
      assert.equal(Number(ended.ended_at), env.clock.now());
      // The old token, sent again, is nobody.
      const replay = await app.inject({ url: `${base}/sign-in`, headers: { cookie: `${sessionCookie(ws.slug)}=${token}` } });
      assert.equal(replay.statusCode, 200, "the sign-in form, not a redirect onwards");
    });

    test("a code works only in the browser that asked for it; wrong and expired codes are errors on the field", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const base = pagesOf(ws);
      const email = `grace-${ws.slug}@example.com`;
      const asker = new TestBrowser(app);
      await asker.get(`${base}/sign-in`);
      await asker.post(`${base}/sign-in`, { email });
      const codePage = await asker.get(`${base}/sign-in/code`);
      assert.match(codePage.body, new RegExp(`sent a 6-digit code to <strong>${email}</strong>`));
      const code = await readCode(env.dataDir, email);

      const other = new TestBrowser(app);
      await other.get(`${base}/sign-in`);
      const stolen = await other.post(`${base}/sign-in/code`, { code });
      assert.equal(stolen.statusCode, 400);
      assert.equal(other.cookies.has(sessionCookie(ws.slug)), false);

      // Nor through the client API's verify: a page's code is its browser's.
      const api = await app.inject({
        method: "POST",
        url: "/api/client/v1/sign-in/verify",
        payload: { workspace: ws.slug, tool: ws.tool, env: "test", email, code, device: { name: "x", platform: "y" } },
      });
      assert.equal(api.statusCode, 400);
      assert.equal(api.json().error.param, "code");

      const wrong = await asker.post(`${base}/sign-in/code`, { code: code === "000000" ? "111111" : "000000" });
      assert.equal(wrong.statusCode, 400);
      assert.match(wrong.body, /<div class="notice notice-error" id="code-error" role="alert">That code is not right.<\/div>/);
      assert.match(wrong.body, /id="code" [^>]*aria-invalid="true" aria-describedby="code-error"/);

      env.clock.advance(10 * 60_000);
      const expired = await asker.post(`${base}/sign-in/code`, { code });
      assert.equal(expired.statusCode, 400);
      assert.match(expired.body, /No code is waiting for this address/);
      assert.match(expired.body, /id="email-error"/, "back to the address, the error on it");
      assert.equal(asker.cookies.has(sessionCookie(ws.slug)), false);
    });

    test("a malformed address and a rate limit are errors on the field, the limit (a 429 with Retry-After) saying until when", async () => {
      const env = await dashboardServices(dialect, { WARDEN_LIMIT_SIGN_INS_PER_ADDRESS_PER_HOUR: "2" });
      // Twenty minutes into the hour: the limit's window is the clock hour, so it ends at 13:00, 40 minutes on.
      env.clock.set(Date.parse("2026-11-21T12:20:00.000Z"));
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const base = pagesOf(ws);
      const browser = new TestBrowser(app);
      await browser.get(`${base}/sign-in`);
      const bad = await browser.post(`${base}/sign-in`, { email: "not-an-address" });
      assert.equal(bad.statusCode, 400);
      assert.match(bad.body, /id="email-error" role="alert">Enter an email address such as person@example.com\./);
      assert.match(bad.body, /value="not-an-address"/);

      const email = `limit-${ws.slug}@example.com`;
      for (let i = 0; i < 2; i++) assert.equal((await browser.post(`${base}/sign-in`, { email })).statusCode, 303);
      const limited = await browser.post(`${base}/sign-in`, { email });
      assert.equal(limited.statusCode, 429);
      assert.equal(limited.headers["retry-after"], "2400");
      assert.match(limited.body, /id="email-error" role="alert">Too many codes were asked for: you can ask for a new one after [^<]*13:00 UTC/);
    });

    test("at most 100 wrong codes in a row for an address, counted with the client API's: then the right code is a 429 on the field saying until when; the person's own ticket reopens codes", async () => {
      // Enough codes an hour to reach the ceiling at once: the hourly quotas are not what is tested here.
      const env = await dashboardServices(dialect, { WARDEN_LIMIT_SIGN_INS_PER_ADDRESS_PER_HOUR: "1000", WARDEN_LIMIT_SIGN_INS_PER_SOURCE_PER_HOUR: "1000" });
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const base = pagesOf(ws);
      const email = `guessed-${ws.slug}@example.com`;
      const wrong = (code: string) => (code === "000000" ? "000001" : "000000");
      // The person's extension, signed in before anyone guessed.
      const device = await signedInDevice(app, env.dataDir, ws, email);
      // Half the 100 guesses on the pages, 5 to each of 10 codes, each code in a browser of its own…
      for (let b = 0; b < 10; b++) {
        const guesser = new TestBrowser(app);
        await guesser.get(`${base}/sign-in`);
        assert.equal((await guesser.post(`${base}/sign-in`, { email })).statusCode, 303);
        const code = await readCode(env.dataDir, email);
        for (let i = 0; i < 5; i++) assert.equal((await guesser.post(`${base}/sign-in/code`, { code: wrong(code) })).statusCode, 400);
      }
      // …and half through the client API: one count per address and environment.
      const target = { workspace: ws.slug, tool: ws.tool, email, env: "test" };
      const guessing = { name: "Guess", platform: "chrome-mac" };
      for (let c = 0; c < 10; c++) {
        assert.equal((await app.inject({ method: "POST", url: "/api/client/v1/sign-in", payload: target })).statusCode, 200);
        const code = await readCode(env.dataDir, email);
        for (let i = 0; i < 5; i++) {
          const answer = await app.inject({
            method: "POST",
            url: "/api/client/v1/sign-in/verify",
            payload: { ...target, code: wrong(code), device: guessing },
          });
          assert.equal(answer.statusCode, 400);
        }
      }

      const person = new TestBrowser(app);
      await person.get(`${base}/sign-in`);
      await person.post(`${base}/sign-in`, { email });
      const refused = await person.post(`${base}/sign-in/code`, { code: await readCode(env.dataDir, email) });
      assert.equal(refused.statusCode, 429);
      assert.equal(refused.headers["retry-after"], String(24 * 3600));
      assert.match(
        refused.body,
        /id="code-error" role="alert">Too many wrong sign-in codes for this address in a day \(100\): codes for it work again after [^<]*22 Nov 2026, 12:00 UTC/,
      );
      assert.equal(person.cookies.has(sessionCookie(ws.slug)), false);

      // The person's own extension opens a page and they continue there: a sign-in, so their codes work again.
      await continueWithTicket(new TestBrowser(app), `${base}/plans?ticket=${(await ticketFor(app, ws.tool, device)).json().ticket}`);
      await signInOnPages(new TestBrowser(app), env.dataDir, base, email);
    });

    test("a session is its workspace environment's: not valid on another workspace's pages, nor on the other environment's", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const other = await seedWorkspace(env.services);
      const browser = new TestBrowser(app);
      await signInOnPages(browser, env.dataDir, pagesOf(ws), `ada-${ws.slug}@example.com`);
      const token = browser.cookies.get(sessionCookie(ws.slug)) as string;

      // The same token under the other workspace's (or environment's) cookie name is no session there.
      for (const [base, name] of [
        [pagesOf(other), sessionCookie(other.slug)],
        [pagesOf(ws, "live"), sessionCookie(ws.slug, "live")],
      ] as const) {
        const answer = await app.inject({ url: `${base}/sign-in`, headers: { cookie: `${name}=${token}` } });
        assert.equal(answer.statusCode, 200, "the sign-in form: nobody is signed in here");
        assert.match(String(answer.headers["set-cookie"]), new RegExp(`${name}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0`));
      }
      // Any tool of the same workspace environment shares it.
      await createTool(env.services.db, env.clock, { workspace: ws.slug, id: "notepad", name: "Notepad" });
      assert.equal((await browser.get(`${pagesOf(ws, "test", "notepad")}/sign-in`)).headers.location, `${pagesOf(ws, "test", "notepad")}/manage`);
    });

    test("a session ends after 12 idle hours and after 7 days whatever its use", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const base = pagesOf(ws);
      const idle = new TestBrowser(app);
      await signInOnPages(idle, env.dataDir, base, `idle-${ws.slug}@example.com`);
      const busy = new TestBrowser(app);
      await signInOnPages(busy, env.dataDir, base, `busy-${ws.slug}@example.com`);
      for (let day = 0; day < 6; day++) {
        env.clock.advance(11 * HOUR);
        assert.equal((await busy.get(`${base}/sign-in`)).statusCode, 303, `still signed in, day ${day}`);
        env.clock.advance(11 * HOUR);
        assert.equal((await busy.get(`${base}/sign-in`)).statusCode, 303);
      }
      assert.equal((await idle.get(`${base}/sign-in`)).statusCode, 200, "idle for more than 12 hours: signed out");
      env.clock.advance(36 * HOUR);
      assert.equal((await busy.get(`${base}/sign-in`)).statusCode, 200, "7 days after sign-in: signed out");
    });

    test("after sign-in the browser returns to a page of the same workspace environment, never elsewhere", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const base = pagesOf(ws);
      const good = new TestBrowser(app);
      const back = await signInOnPages(good, env.dataDir, base, `r1-${ws.slug}@example.com`, `?return=${encodeURIComponent(`${base}/plans?plan=monthly`)}`);
      assert.equal(back.headers.location, `${base}/plans?plan=monthly`);
      for (const wanted of [
        "https://evil.example/",
        "//evil.example/x",
        `/c/${ws.slug}/test/../../../dashboard`,
        "/dashboard",
        `/c/other/test/${ws.tool}/manage`,
      ]) {
        const browser = new TestBrowser(app);
        const landed = await signInOnPages(browser, env.dataDir, base, `r-${ws.slug}@example.com`, `?return=${encodeURIComponent(wanted)}`);
        assert.equal(landed.headers.location, `${base}/manage`, wanted);
      }
    });
  });

  describe(`hosted pages: security (${dialect})`, () => {
    test("forms from another site, or without the page's form token, are refused with a page", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const base = pagesOf(ws);
      const browser = new TestBrowser(app);
      await browser.get(`${base}/sign-in`);
      const email = `csrf-${ws.slug}@example.com`;
      const crossSite = await browser.post(`${base}/sign-in`, { email }, { "sec-fetch-site": "cross-site" });
      assert.equal(crossSite.statusCode, 403);
      assert.match(crossSite.body, /<h1>Request refused<\/h1>/);
      const otherOrigin = await browser.post(`${base}/sign-in`, { email }, { "sec-fetch-site": "", origin: "https://evil.example" });
      assert.equal(otherOrigin.statusCode, 403);
      const noToken = await browser.post(`${base}/sign-in`, { email, _csrf: "" });
      assert.equal(noToken.statusCode, 403);
      assert.match(noToken.body, /Form expired/);
      const json = await app.inject({ method: "POST", url: `${base}/sign-in`, payload: { email }, headers: { "sec-fetch-site": "same-origin" } });
      assert.equal(json.statusCode, 415);

      // A signed-in page's form token is the session's: another browser's token does not sign this one out.
      await signInOnPages(browser, env.dataDir, base, `csrf-${ws.slug}@example.com`);
      const stranger = new TestBrowser(app);
      await stranger.get(`${base}/sign-in`);
      const forged = await browser.post(`${base}/sign-out`, { _csrf: stranger.csrf });
      assert.equal(forged.statusCode, 403);
      assert.equal((await browser.get(`${base}/sign-in`)).statusCode, 303, "still signed in");
    });

    test("an unknown workspace, environment or tool is an HTML 404 page, never JSON or a 500", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      for (const url of [
        `/c/no-such-ws/test/${ws.tool}/sign-in`,
        `/c/${ws.slug}/staging/${ws.tool}/sign-in`,
        `/c/${ws.slug}/test/no-such-tool/sign-in`,
        "/c/x",
        `/c/${ws.slug}/test/${ws.tool}/nope`,
      ]) {
        const answer = await app.inject({ url });
        assert.equal(answer.statusCode, 404, url);
        assert.equal(answer.headers["content-type"], "text/html; charset=utf-8", url);
        assert.match(answer.body, /<h1>Page not found<\/h1>/, url);
        assert.match(answer.headers["content-security-policy"] as string, /default-src 'self'/, url);
      }
      const namesTheWorkspace = await app.inject({ url: `/c/${ws.slug}/test/no-such-tool/sign-in` });
      assert.match(namesTheWorkspace.body, /<title>Page not found · Test workspace<\/title>/);
    });

    test("names and what the query carries are escaped: a workspace or tool called <script> renders as text", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const slug = unique("ws");
      await createWorkspace(env.services.db, env.clock, { slug, name: '<script>alert("ws")</script>', ownerEmail: ws.ownerEmail });
      await createTool(env.services.db, env.clock, { workspace: slug, id: "evil", name: "<img src=x onerror=alert(1)>" });
      const state = '"><script>alert(1)</script>';
      const query = `?${new URLSearchParams({ redirect_uri: "https://abcdefghijklmnopabcdefghijklmnop.chromiumapp.org/cb", state, code_challenge: "a".repeat(43), code_challenge_method: "S256" })}`;
      const page = await app.inject({ url: `/c/${slug}/test/evil/sign-in${query}` });
      assert.equal(page.statusCode, 200);
      assert.doesNotMatch(page.body, /<script>alert|<img src=x/);
      assert.match(page.body, /&lt;script&gt;alert\(&quot;ws&quot;\)&lt;\/script&gt;/);
      assert.match(page.body, /&lt;img src=x onerror=alert\(1\)&gt;/);
      assert.match(page.body, /name="state" value="&quot;&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;"/);
    });

    test("over HTTPS the cookies are Secure and named __Host-", async () => {
      const env = await dashboardServices(dialect, { WARDEN_TRUST_PROXY: "true" });
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const base = pagesOf(ws);
      const https = { "x-forwarded-proto": "https" };
      const browser = new TestBrowser(app);
      const first = await browser.get(`${base}/sign-in`, https);
      assert.match(String(first.headers["set-cookie"]), /^__Host-warden_customer_browser=wcb_\w+; Path=\/; HttpOnly; SameSite=Lax; Secure; Max-Age=86400$/);
      const email = `tls-${ws.slug}@example.com`;
      await browser.post(`${base}/sign-in`, { email }, https);
      const signedIn = await browser.post(`${base}/sign-in/code`, { code: await readCode(env.dataDir, email) }, https);
      assert.equal(signedIn.statusCode, 303);
      assert.match(
        String(signedIn.headers["set-cookie"]),
        new RegExp(`__Host-${sessionCookie(ws.slug)}=wcs_\\w+; Path=/; HttpOnly; SameSite=Lax; Secure; Max-Age=604800`),
      );
      assert.equal((await browser.get(`${base}/sign-in`, https)).statusCode, 303, "signed in over HTTPS");
      assert.equal((await browser.get(`${base}/sign-in`)).statusCode, 200, "the __Host- cookie is not read over plain http");
    });
  });
}
