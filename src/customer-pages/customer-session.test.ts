// What a page family behind sign-in relies on (customer-session.ts): loadPage finds the
// page and its person, requireCustomer sends a stranger to sign in and back, and
// signedInCustomer answers the person as a PersonScope. Checked on a bare app with one
// such page, since the real pages (manage, plans) are their families' own.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import Fastify from "fastify";
import { pagesOf, signInOnPages } from "../test-support/customer-pages.js";
import { dashboardApp, dashboardServices, TestBrowser } from "../test-support/dashboard.js";
import { DIALECTS, seedWorkspace } from "../test-support/harness.js";
import { loadPage, PAGE_PATH, PAGES, requireCustomer, signedInCustomer } from "./customer-session.js";

for (const dialect of DIALECTS) {
  describe(`hosted pages: a page behind sign-in (${dialect})`, () => {
    test("a stranger is sent to sign in and back to the page (a form to its page); the signed-in person is the page's", async () => {
      const env = await dashboardServices(dialect);
      const ws = await seedWorkspace(env.services);
      const page = Fastify();
      page.addHook("onRequest", (request, reply) => loadPage(env.services, request, reply));
      page.get(`${PAGES}${PAGE_PATH}/private`, { preHandler: requireCustomer }, async (request) => {
        const { personId, email, toolId, workspaceSlug, env: pageEnv, licenceId } = signedInCustomer(request);
        return { personId, email, toolId, workspaceSlug, env: pageEnv, licenceId };
      });
      page.post(`${PAGES}${PAGE_PATH}/private/act`, { preHandler: requireCustomer }, async () => "done");
      await page.ready();
      const base = pagesOf(ws);

      const stranger = await page.inject({ url: `${base}/private?plan=monthly` });
      assert.equal(stranger.statusCode, 303);
      assert.equal(stranger.headers.location, `${base}/sign-in?return=${encodeURIComponent(`${base}/private?plan=monthly`)}`);
      const posted = await page.inject({ method: "POST", url: `${base}/private/act` });
      assert.equal(posted.headers.location, `${base}/sign-in?return=${encodeURIComponent(`${base}/private`)}`);

      const browser = new TestBrowser(await dashboardApp(env));
      const email = `page-${ws.slug}@example.com`;
      await signInOnPages(browser, env.dataDir, base, email);
      const cookie = `warden_customer_${ws.slug}_test=${browser.cookies.get(`warden_customer_${ws.slug}_test`)}`;
      const signedIn = await page.inject({ url: `${base}/private`, headers: { cookie } });
      assert.equal(signedIn.statusCode, 200, signedIn.body);
      const { personId, ...rest } = signedIn.json() as Record<string, unknown>;
      assert.deepEqual(rest, { email, toolId: ws.tool, workspaceSlug: ws.slug, env: "test", licenceId: null });
      assert.match(String(personId), /^psn_/);
      assert.equal((await page.inject({ url: `${pagesOf(ws, "live")}/private`, headers: { cookie } })).statusCode, 303, "not on the live pages");
      await page.close();
    });
  });
}
