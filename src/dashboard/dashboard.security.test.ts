import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { dashboardApp, dashboardServices, TestBrowser } from "../test-support/dashboard.js";
import { DIALECTS, seedWorkspace, unique } from "../test-support/harness.js";
import { createWorkspace } from "../workspaces/workspace.service.js";

const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'";

function assertPageHeaders(response: LightMyRequestResponse, what: string): void {
  assert.equal(response.headers["content-security-policy"], CSP, what);
  assert.equal(response.headers["cache-control"], "no-store", what);
  assert.equal(response.headers["x-content-type-options"], "nosniff", what);
  assert.equal(response.headers["content-type"], "text/html; charset=utf-8", what);
  assert.match(response.body, /^<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">/, what);
  // No inline script or style anywhere: the policy would block it, and it must not be needed.
  // No inline script or style: a script element is only ever copy.js, by its src.
  assert.doesNotMatch(response.body, /<script(?![^>]* src="\/dashboard\/assets\/copy\.js")|<style| style=/i, what);
}

for (const dialect of DIALECTS) {
  describe(`dashboard security (${dialect})`, () => {
    test("every page, error pages included, is UTF-8 HTML with the strict policy, no-store and nosniff", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const browser = new TestBrowser(app);
      assertPageHeaders(await browser.get("/dashboard/sign-in"), "sign-in");
      await browser.post("/dashboard/sign-in", { email: ws.ownerEmail });
      assertPageHeaders(await browser.get("/dashboard/sign-in/code"), "code");
      await browser.signIn(env.dataDir, ws.ownerEmail);
      for (const path of [`/dashboard/w/${ws.slug}/test`, `/dashboard/w/${ws.slug}/test/keys`, `/dashboard/w/${ws.slug}/live/keys`, "/dashboard/audit"]) {
        const page = await browser.get(path);
        assert.equal(page.statusCode, 200, path);
        assertPageHeaders(page, path);
      }
      const created = await browser.post(`/dashboard/w/${ws.slug}/test/keys`, { name: "k" });
      assert.equal(created.statusCode, 303);
      assertPageHeaders(await browser.get(created.headers.location as string), "key created");
      assertPageHeaders(await browser.get("/dashboard/no-such-page"), "404");
      assertPageHeaders(await browser.get("/dashboard/w/nope/test"), "not my workspace");
      const css = await browser.get("/dashboard/assets/dashboard.css");
      assert.equal(css.headers["content-type"], "text/css; charset=utf-8");
    });

    test("a form without the session's token, or from another site, is refused with an HTML 403", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      await browser.get(`/dashboard/w/${ws.slug}/test/keys`);
      const keys = `/dashboard/w/${ws.slug}/test/keys`;
      const refusals: [string, Promise<LightMyRequestResponse>][] = [
        ["no token", browser.post(keys, { name: "x", _csrf: "" })],
        ["another session's token", browser.post(keys, { name: "x", _csrf: "0".repeat(64) })],
        ["cross-site fetch metadata", browser.post(keys, { name: "x" }, { "sec-fetch-site": "cross-site" })],
        ["same-site but not same-origin", browser.post(keys, { name: "x" }, { "sec-fetch-site": "same-site" })],
        ["another origin", browser.post(keys, { name: "x" }, { "sec-fetch-site": "", origin: "https://evil.example" })],
        ["sign-in from another origin", browser.post("/dashboard/sign-in", { email: ws.ownerEmail }, { "sec-fetch-site": "", origin: "https://evil.example" })],
        ["Origin: null", browser.post(keys, { name: "x" }, { "sec-fetch-site": "", origin: "null" })],
      ];
      for (const [what, pending] of refusals) {
        const response = await pending;
        assert.equal(response.statusCode, 403, what);
        assertPageHeaders(response, what);
        assert.doesNotMatch(response.body, /wk_test_[0-9A-Za-z]{32}/, what);
      }
      // The same form from this origin with its token goes through.
      const ok = await browser.post(keys, { name: "x" }, { "sec-fetch-site": "", origin: "http://localhost:80" });
      assert.equal(ok.statusCode, 303);
      // Only forms are accepted: JSON is not a way around the form token.
      const json = await app.inject({
        method: "POST",
        url: keys,
        payload: { name: "x" },
        headers: { cookie: `warden_session=${browser.cookies.get("warden_session")}` },
      });
      assert.equal(json.statusCode, 415);
    });

    test("Strict-Transport-Security only when the request came over TLS through a trusted proxy", async () => {
      const proxied = await dashboardApp(await dashboardServices(dialect, { WARDEN_TRUST_PROXY: "true" }));
      const direct = await dashboardApp(await dashboardServices(dialect));
      const tls = { "x-forwarded-proto": "https" };
      const hsts = async (app: typeof proxied, headers: Record<string, string>) =>
        (await app.inject({ url: "/dashboard/sign-in", headers }))?.headers["strict-transport-security"];
      assert.equal(await hsts(proxied, tls), "max-age=31536000");
      assert.equal((await proxied.inject({ url: "/healthz", headers: tls })).headers["strict-transport-security"], "max-age=31536000", "every answer");
      assert.equal(await hsts(proxied, {}), undefined, "plain http through the proxy");
      assert.equal(await hsts(direct, tls), undefined, "a header from no trusted proxy");
    });

    test("names are escaped: a workspace or key called <script> renders as text", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const slug = unique("ws");
      await createWorkspace(env.services.db, env.clock, { slug, name: '<script>alert("ws")</script>', ownerEmail: ws.ownerEmail });
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const keys = `/dashboard/w/${slug}/test/keys`;
      await browser.get(keys);
      const posted = await browser.post(keys, { name: `<script>alert('key')</script>"><img src=x>` });
      assert.equal(posted.statusCode, 303);
      const created = await browser.get(posted.headers.location as string);
      assert.equal(created.statusCode, 200);
      for (const page of [created, await browser.get(keys), await browser.get(`/dashboard/w/${slug}/test`)]) {
        assert.doesNotMatch(page.body, /<script>|<img/);
        assert.ok(page.body.includes("&lt;script&gt;alert(&quot;ws&quot;)&lt;/script&gt;"));
      }
      assert.ok((await browser.get(keys)).body.includes("&lt;script&gt;alert(&#39;key&#39;)&lt;/script&gt;&quot;&gt;&lt;img src=x&gt;"));
    });
  });
}
