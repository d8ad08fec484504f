import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { breadcrumbTrail, dashboardApp, dashboardServices, TestBrowser } from "../../test-support/dashboard.js";
import { DIALECTS, seedCatalogue, testApi } from "../../test-support/harness.js";
import { connectTestStripe, deliver, paymentSession, stripeEvent } from "../../test-support/stripe.js";
import { listBundles, listPlans } from "../../workspaces/workspace.service.js";

for (const dialect of DIALECTS) {
  describe(`dashboard bundles (${dialect})`, () => {
    test("a bundle is added with its tools and sold by a plan of its own; a bundle of no tool is refused as the CLI refuses it", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedCatalogue(env.services);
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const base = `/dashboard/w/${ws.slug}/test/bundles`;
      const list = await browser.get(base);
      assert.match(list.body, /<td[^>]*>Link Keeper, Tab Master<\/td>/);

      const none = await browser.post(base, { id: "writers", name: "Writers" });
      assert.equal(none.statusCode, 400);
      assert.match(none.body, /A bundle names at least one tool\./);
      const ghost = await browser.post(base, { id: "writers", name: "Writers", "tool:ghost": "1" });
      assert.match(ghost.body, /No tool &quot;ghost&quot; in this workspace\./);
      const taken = await browser.post(base, { id: "suite", name: "Again", "tool:notepad": "1" });
      assert.match(taken.body, /Bundle &quot;suite&quot; exists already in this workspace\./);
      assert.ok(taken.body.includes('name="tool:notepad" value="1" checked'), "the ticks are kept");

      const added = await browser.post(base, { id: "writers", name: "Writers", "tool:notepad": "1", "tool:linkkeeper": "1" });
      assert.equal(added.statusCode, 303);
      assert.equal(added.headers.location, `${base}/writers?created=1`);
      assert.deepEqual((await listBundles(env.services.db, { workspace: ws.slug })).find((b) => b.id === "writers")?.toolIds, ["linkkeeper", "notepad"]);
      const plan = await browser.post(`${base}/writers/plans`, {
        id: "writers-year",
        name: "Writers, yearly",
        billing: "subscription",
        amount: "29.00",
        interval: "year",
      });
      assert.equal(plan.statusCode, 303);
      assert.deepEqual(
        (await listPlans(env.services.db, { workspace: ws.slug, bundle: "writers" })).map((p) => [p.id, p.interval]),
        [["writers-year", "year"]],
      );
      assert.match((await browser.get(`${base}/writers`)).body, /€29\.00<\/span> <span class="muted">a year/);
      assert.match((await browser.get("/dashboard/audit")).body, /Added a bundle/);
    });

    test("changing the tools shows who gains and loses access first; confirming applies it and is audited", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedCatalogue(env.services);
      const api = await testApi(env.services);
      const secret = await connectTestStripe(env.services, ws);
      for (const email of ["ada@example.com", "grace@example.com"]) {
        const session = paymentSession({ email, metadata: { warden_bundle: "suite", warden_plan: "suite-lifetime" }, amount: 9900, now: env.clock.now() });
        assert.equal(await deliver(api, ws, secret, stripeEvent("checkout.session.completed", session, { now: env.clock.now() }), env.clock.now()), "applied");
      }
      const holds = async (tool: string) =>
        (await api.request({ url: `/api/v1/tools/${tool}/customers/ada@example.com`, key: ws.testKey })).json().entitled === true;
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const suite = `/dashboard/w/${ws.slug}/live/bundles/suite`;
      // The bundle's page and the pages below it are named by the bundle's name.
      assert.deepEqual(breadcrumbTrail((await browser.get(suite)).body), ["Test workspace", "Live", "Bundles", "Suite"]);

      const unchanged = await browser.get(`${suite}/change?tool:tabmaster=1&tool:linkkeeper=1`);
      assert.equal(unchanged.statusCode, 400);
      assert.match(unchanged.body, /names these tools already: nothing to change/);

      const preview = await browser.get(`${suite}/change?tool:tabmaster=1&tool:notepad=1`);
      assert.equal(preview.statusCode, 200);
      assert.match(preview.body, /Nobody has bought this bundle here yet/, "live");
      assert.match(preview.body, /<strong>2 people<\/strong> gain Notepad/);
      assert.match(preview.body, /<strong>2 people<\/strong> lose Link Keeper/);
      assert.ok(preview.body.includes('<input type="hidden" name="tool:notepad" value="1">'));
      assert.deepEqual(breadcrumbTrail(preview.body), ["Test workspace", "Live", "Bundles", "Suite", "Change its tools"]);
      assert.ok(preview.body.includes(`<li><a href="${suite}">Suite</a></li>`));
      assert.equal(await holds("linkkeeper"), true, "a preview changes nothing");

      const applied = await browser.post(`${suite}/change`, { "tool:tabmaster": "1", "tool:notepad": "1" });
      assert.equal(applied.statusCode, 303);
      assert.match((await browser.get(applied.headers.location as string)).body, /The bundle&#39;s tools are changed/);
      assert.deepEqual([await holds("linkkeeper"), await holds("notepad")], [false, true]);
      assert.match((await browser.get("/dashboard/audit")).body, /Changed a bundle&#39;s tools/);
      assert.equal((await browser.get(`/dashboard/w/${ws.slug}/live/bundles/nothing`)).statusCode, 404);
    });
  });
}
