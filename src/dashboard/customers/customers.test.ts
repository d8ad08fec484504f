import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { dashboardApp, dashboardServices, TestBrowser } from "../../test-support/dashboard.js";
import { DIALECTS, seedWorkspace } from "../../test-support/harness.js";

const NOTE = "<script>alert('note')</script> & co";

for (const dialect of DIALECTS) {
  describe(`dashboard customers (${dialect})`, () => {
    test("grant with a note (escaped), see it on the customer's page and in the list, revoke it; both audited", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const list = `/dashboard/w/${ws.slug}/test/customers`;
      assert.match((await browser.get(list)).body, /No customers match/);

      const found = await browser.get(`${list}/search?tool=${ws.tool}&email=${encodeURIComponent("ada@example.com")}`);
      assert.equal(found.statusCode, 303);
      const page = String(found.headers.location);
      assert.equal(page, `${list}/${ws.tool}/ada%40example.com`);
      const unknown = await browser.get(page);
      assert.equal(unknown.statusCode, 200);
      assert.match(unknown.body, /No customer with this address/);

      // Without the form's token nothing is granted.
      assert.equal((await browser.post(`${page}/grants`, { days: "30", note: "x", _csrf: "0".repeat(64) })).statusCode, 403);
      assert.equal((await browser.post(`${page}/grants`, { days: "forever", note: "x" })).statusCode, 400);

      const granted = await browser.post(`${page}/grants`, { days: "30", note: NOTE });
      assert.equal(granted.statusCode, 303);
      const shown = await browser.get(String(granted.headers.location));
      assert.ok(shown.body.includes("&lt;script&gt;alert(&#39;note&#39;)&lt;/script&gt; &amp; co"), "the note, escaped");
      assert.ok(!shown.body.includes("<script>"));
      assert.match(shown.body, /badge-ok">Entitled<\/span> <span class="state-note">via a grant/);
      const api = await app.inject({ url: `/api/v1/tools/${ws.tool}/customers/ada%40example.com`, headers: { authorization: `Bearer ${ws.testKey}` } });
      assert.equal((api.json() as { entitled: boolean }).entitled, true, "the API sees the grant");

      const listed = await browser.get(`${list}?tool=${ws.tool}&entitled=yes`);
      assert.ok(listed.body.includes(`href="${page}">ada@example.com</a>`));
      assert.match((await browser.get(`${list}?tool=${ws.tool}&entitled=no`)).body, /No customers match/);

      const revokeAction = /href="([^"]+\/grants\/gr_\w+\/revoke)"/.exec(shown.body)?.[1];
      assert.ok(revokeAction);
      // Revoking asks first and says what the customer loses; asking revokes nothing.
      const asked = await browser.get(revokeAction);
      assert.equal(asked.statusCode, 200);
      assert.match(asked.body, /Revoke this grant\?/);
      assert.match(asked.body, /loses [^<]* at their next check/);
      assert.ok(asked.body.includes(`action="${revokeAction}"`), "its form posts the revoke");
      assert.equal((await browser.post(revokeAction, { _csrf: "0".repeat(64) })).statusCode, 403, "no form token, no revoke");
      assert.match((await browser.get(page)).body, /badge-ok">Live/);
      const revoked = await browser.post(revokeAction);
      assert.equal(revoked.statusCode, 303);
      const after = await browser.get(String(revoked.headers.location));
      assert.match(after.body, /Grant revoked/);
      assert.match(after.body, /badge-off">Revoked/);
      assert.match(after.body, /badge-off">Not entitled/);

      const audit = await browser.get("/dashboard/audit");
      assert.match(audit.body, /Granted access/);
      assert.match(audit.body, /Revoked a grant/);
    });

    test("a page of the list counts its rows read and a customer's page its lookups, against the API's limits", async () => {
      const env = await dashboardServices(dialect, { WARDEN_LIMIT_LOOKUPS_PER_DAY: "3" });
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      for (const email of ["a@example.com", "b@example.com", "c@example.com"]) {
        const r = await app.inject({
          method: "POST",
          url: `/api/v1/tools/${ws.tool}/grants`,
          headers: { authorization: `Bearer ${ws.testKey}`, "content-type": "application/json" },
          payload: { email, days: 30 },
        });
        assert.equal(r.statusCode, 201);
      }
      const usage = async (what: string) =>
        (await env.services.limits.readDailyUsage(env.services.db, { workspaceId: ws.workspaceId, env: "test" }, env.clock.now())).find((u) => u.what === what)
          ?.used;
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const list = `/dashboard/w/${ws.slug}/test/customers`;
      assert.equal(await usage("Rows read by lists"), 0);
      const page = await browser.get(`${list}?tool=${ws.tool}`);
      assert.equal([...page.body.matchAll(/>[abc]@example\.com<\/a>/g)].length, 3);
      assert.equal(await usage("Rows read by lists"), 3, "three rows read");
      // A customer's page is the API's retrieve plus its list of grants: two lookups.
      assert.equal((await browser.get(`${list}/${ws.tool}/a%40example.com`)).statusCode, 200);
      assert.equal(await usage("Customer lookups"), 2);
      const limited = await browser.get(`${list}/${ws.tool}/b%40example.com`);
      assert.equal(limited.statusCode, 429, "past the day's lookups");
      assert.match(limited.body, /Limit reached:<\/strong> customer lookups per day for this workspace \(3\)\. It resets <time/);
      assert.match(limited.body, /<nav/, "with the navigation");
      // Another workspace's tool is not found here.
      const theirs = await seedWorkspace(env.services);
      assert.equal((await browser.get(`/dashboard/w/${theirs.slug}/test/customers`)).statusCode, 404);
    });
  });
}
