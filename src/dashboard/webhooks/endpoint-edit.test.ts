import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { breadcrumbTrail, dashboardApp, dashboardServices, TestBrowser } from "../../test-support/dashboard.js";
import { DIALECTS, seedWorkspace } from "../../test-support/harness.js";
import { answer, startReceiver, testWorker } from "../../test-support/webhooks.js";

// An endpoint's page as the issue asked: edit and delete it, a test event for it alone,
// deliveries still being retried shown as such with Retry now, and recovery of both.

async function addEndpoint(browser: TestBrowser, list: string, fields: Record<string, string>): Promise<string> {
  const posted = await browser.post(list, fields);
  assert.equal(posted.statusCode, 303, posted.body);
  const id = /\/webhooks\/(ep_\w{24})\//.exec(String(posted.headers.location))?.[1];
  assert.ok(id);
  return id;
}

for (const dialect of DIALECTS) {
  describe(`dashboard: editing and deleting an endpoint (${dialect})`, () => {
    test("edit the URL, event types and description; a private URL is refused on its field with the form kept", async () => {
      const env = await dashboardServices(dialect, { WARDEN_ALLOW_PRIVATE_WEBHOOKS: "0" });
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const list = `/dashboard/w/${ws.slug}/test/webhooks`;
      await browser.get(list);
      const id = await addEndpoint(browser, list, { url: "https://a.example.com/hook", "event:purchase.completed": "1", description: "Fulfilment" });
      const page = `${list}/${id}`;
      const shown = (await browser.get(page)).body;
      assert.match(shown, /<dt>Description<\/dt><dd>Fulfilment<\/dd>/);
      // The breadcrumbs name the endpoint as its owner called it, not "Endpoint".
      assert.deepEqual(breadcrumbTrail(shown), ["Test workspace", "Test", "Webhooks", "Fulfilment"]);

      const form = await browser.get(`${page}/edit`);
      assert.equal(form.statusCode, 200);
      assert.deepEqual(breadcrumbTrail(form.body), ["Test workspace", "Test", "Webhooks", "Fulfilment", "Edit endpoint"]);
      assert.ok(form.body.includes(`<li><a href="${page}">Fulfilment</a></li>`), "back to the endpoint's page");
      assert.match(form.body, /id="url" name="url"[^>]* value="https:\/\/a\.example\.com\/hook"/);
      assert.match(form.body, /name="event:purchase\.completed" value="1" checked>/);
      assert.match(form.body, /id="description" name="description"[^>]* value="Fulfilment"/);

      const refused = await browser.post(`${page}/edit`, { url: "http://169.254.169.254/latest", "event:payment.refunded": "1", description: "<b>x</b>" });
      assert.equal(refused.statusCode, 400);
      assert.match(refused.body, /id="url-error"[^>]*>[^<]*url points at a private or local host/);
      assert.match(refused.body, /id="url" name="url"[^>]* aria-invalid="true" aria-describedby="url-error"/);
      assert.match(refused.body, /name="event:payment\.refunded" value="1" checked>/, "the form as typed");
      assert.ok(refused.body.includes('value="&lt;b&gt;x&lt;/b&gt;"'));

      const saved = await browser.post(`${page}/edit`, {
        url: "https://b.example.com/hook",
        "event:payment.refunded": "1",
        "event:dispute.closed": "1",
        description: "Refunds desk",
      });
      assert.equal(saved.statusCode, 303);
      assert.equal(saved.headers.location, `${page}?edited=1`);
      const after = await browser.get(`${page}?edited=1`);
      assert.match(after.body, /The endpoint is saved/);
      assert.match(after.body, /https:\/\/b\.example\.com\/hook/);
      assert.match(
        after.body,
        /<dd><code>dispute\.closed<\/code> <code>payment\.refunded<\/code><\/dd>|<dd><code>payment\.refunded<\/code> <code>dispute\.closed<\/code><\/dd>/,
      );
      assert.match(after.body, /<dt>Description<\/dt><dd>Refunds desk<\/dd>/);
      // No box ticked: every type, as when adding.
      await browser.post(`${page}/edit`, { url: "https://b.example.com/hook", description: "" });
      const every = await browser.get(page);
      assert.match(every.body, /<dt>Events<\/dt><dd><span class="muted">All events<\/span><\/dd>/);
      assert.doesNotMatch(every.body, /<dt>Description<\/dt>/);
      assert.deepEqual(breadcrumbTrail(every.body).at(-1), "https://b.example.com/hook", "without a description, its URL");
      assert.match((await browser.get("/dashboard/audit")).body, /Edited a webhook endpoint/);
    });

    test("delete says how many waiting deliveries fail, then removes the endpoint and keeps its deliveries in the log", async () => {
      const env = await dashboardServices(dialect);
      env.clock.set(Date.now());
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const receiver = await startReceiver(answer(500));
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const list = `/dashboard/w/${ws.slug}/test/webhooks`;
      await browser.get(list);
      const id = await addEndpoint(browser, list, { url: receiver.url });
      const page = `${list}/${id}`;
      await browser.post(`${page}/test`, { type: "payment.refunded" });
      await browser.post(`${page}/test`, { type: "dispute.closed" });

      const asked = await browser.get(`${page}/delete`);
      assert.match(asked.body, /Delete this endpoint\?/);
      assert.match(asked.body, /2 deliveries waiting to be sent to it \(first attempts and retries\) will be marked failed, and stay in the log/);
      assert.equal((await browser.get(page)).statusCode, 200, "asking deletes nothing");

      const deleted = await browser.post(`${page}/delete`);
      assert.equal(deleted.statusCode, 303);
      assert.equal(deleted.headers.location, `${list}?removed=1`);
      const listed = await browser.get(`${list}?removed=1`);
      assert.match(listed.body, /The endpoint is deleted/);
      assert.match(listed.body, /No test endpoints yet/);
      assert.equal((await browser.get(page)).statusCode, 404);
      await testWorker(env.services).drain();
      assert.equal(receiver.received.length, 0, "nothing is sent to a deleted endpoint");

      const deliveries = await browser.get(`/dashboard/w/${ws.slug}/test/events/deliveries`);
      const deliveryIds = [...deliveries.body.matchAll(/\/webhooks\/deliveries\/(dlv_\w+)"/g)].map((m) => m[1]);
      assert.equal(new Set(deliveryIds).size, 2, "its deliveries are still listed");
      const one = await browser.get(`${list}/deliveries/${deliveryIds[0]}`);
      assert.match(one.body, /badge-failing">Failed/);
      // The deleted endpoint is said to be deleted, its id kept under the words for support.
      assert.match(one.body, /<dt>Endpoint<\/dt><dd><span class="muted">Deleted endpoint<\/span> <code class="id-secondary">ep_\w+<\/code><\/dd>/);
      assert.match(deliveries.body, /<td[^>]*><span class="muted">Deleted endpoint<\/span> <code class="id-secondary">ep_\w+<\/code><\/td>/);
      assert.match((await browser.get("/dashboard/audit")).body, /Deleted a webhook endpoint/);
    });

    test("forged forms and another workspace's endpoint change nothing", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const theirs = await seedWorkspace(env.services);
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const theirBrowser = new TestBrowser(app);
      await theirBrowser.signIn(env.dataDir, theirs.ownerEmail);
      const theirList = `/dashboard/w/${theirs.slug}/test/webhooks`;
      await theirBrowser.get(theirList);
      const theirId = await addEndpoint(theirBrowser, theirList, { url: "https://theirs.example.com/hook" });
      const list = `/dashboard/w/${ws.slug}/test/webhooks`;
      await browser.get(list);
      const id = await addEndpoint(browser, list, { url: "https://mine.example.com/hook" });

      // My own endpoint, without the form's token or from another site.
      for (const [action, fields] of [
        ["edit", { url: "https://evil.example.com/" }],
        ["delete", {}],
        ["disable", {}],
      ] as const) {
        assert.equal((await browser.post(`${list}/${id}/${action}`, { ...fields, _csrf: "0".repeat(64) })).statusCode, 403, action);
        assert.equal((await browser.post(`${list}/${id}/${action}`, fields, { "sec-fetch-site": "cross-site" })).statusCode, 403, action);
      }
      // Theirs, through my workspace's address and through theirs.
      for (const base of [list, theirList]) {
        for (const path of ["edit", "delete", "disable"]) assert.equal((await browser.get(`${base}/${theirId}/${path}`)).statusCode, 404, `${base} ${path}`);
        assert.equal((await browser.post(`${base}/${theirId}/edit`, { url: "https://evil.example.com/" })).statusCode, 404);
        assert.equal((await browser.post(`${base}/${theirId}/delete`)).statusCode, 404);
        assert.equal((await browser.post(`${base}/${theirId}/test`, { type: "payment.refunded" })).statusCode, 404);
      }
      const mine = await browser.get(`${list}/${id}`);
      assert.match(mine.body, /https:\/\/mine\.example\.com\/hook/);
      assert.match(mine.body, /badge-ok">Enabled/);
      const their = await theirBrowser.get(`${theirList}/${theirId}`);
      assert.match(their.body, /https:\/\/theirs\.example\.com\/hook/);
      assert.match(their.body, /badge-ok">Enabled/);
    });
  });

  describe(`dashboard: test events, retries and recovery of an endpoint (${dialect})`, () => {
    test("the test event goes to this endpoint only, of a type it listens for", async () => {
      const env = await dashboardServices(dialect);
      env.clock.set(Date.now());
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const purchases = await startReceiver();
      const everything = await startReceiver();
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const list = `/dashboard/w/${ws.slug}/test/webhooks`;
      await browser.get(list);
      const id = await addEndpoint(browser, list, { url: purchases.url, "event:purchase.completed": "1" });
      await addEndpoint(browser, list, { url: everything.url });
      const page = `${list}/${id}`;
      const shown = await browser.get(page);
      assert.deepEqual(
        [...(/<select id="type" name="type">(.*?)<\/select>/s.exec(shown.body)?.[1]?.matchAll(/<option value="([^"]+)">/g) ?? [])].map((m) => m[1]),
        ["purchase.completed"],
        "only the types it listens for",
      );
      const wrong = await browser.post(`${page}/test`, { type: "subscription.started" });
      assert.equal(wrong.statusCode, 400);
      assert.match(wrong.body, /does not listen for subscription\.started/);
      assert.equal((await browser.post(`${page}/test`, { type: "purchase.completed" })).statusCode, 303);
      await testWorker(env.services).drain();
      assert.deepEqual([purchases.received.length, everything.received.length], [1, 0]);
    });

    test("a delivery being retried says so with its next attempt and Retry now; recovery counts failed and retrying and can include both", async () => {
      const env = await dashboardServices(dialect);
      env.clock.set(Date.now());
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const receiver = await startReceiver(answer(500, "oops"));
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const list = `/dashboard/w/${ws.slug}/test/webhooks`;
      await browser.get(list);
      const id = await addEndpoint(browser, list, { url: receiver.url });
      const page = `${list}/${id}`;
      await browser.post(`${page}/test`, { type: "payment.refunded" });
      await testWorker(env.services).drain();

      const failing = await browser.get(page);
      assert.match(failing.body, /badge-failing">Retrying<\/span> <span class="state-note">next at <time/);
      assert.doesNotMatch(failing.body, />Pending</);
      const deliveryId = /\/webhooks\/deliveries\/(dlv_\w+)\/resend"/.exec(failing.body)?.[1];
      assert.ok(deliveryId, "Retry now in the row");
      assert.match(failing.body, />Retry now<\/button>/);
      assert.match((await browser.get(`${list}/deliveries/${deliveryId}`)).body, />Retry now<\/button>/);

      const counted = await browser.get(`${page}/recover?since=day`);
      assert.match(counted.body, /<dt>Failed<\/dt><dd>0 deliveries /);
      assert.match(counted.body, /<dt>Still being retried<\/dt><dd>1 delivery /);
      assert.match(counted.body, /name="include_retrying" value="1" checked>/, "with nothing failed, the retrying ones are ticked");

      receiver.handle = answer(200, "ok");
      const recovered = await browser.post(`${page}/recover`, { since: "day", include_retrying: "1" });
      assert.equal(recovered.headers.location, `${page}?recovered=1`);
      await testWorker(env.services).drain();
      assert.equal(receiver.received.length, 2);
      const done = await browser.get(page);
      assert.match(done.body, /badge-ok">Succeeded/);
      assert.doesNotMatch(done.body, /Retry now/);
    });
  });
}
