import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { dashboardApp, dashboardServices, TestBrowser } from "../../test-support/dashboard.js";
import { DIALECTS, seedWorkspace } from "../../test-support/harness.js";
import { answer, startReceiver, testWorker } from "../../test-support/webhooks.js";
import type { WebhookEndpoint } from "../../webhooks/webhook.schema.js";

for (const dialect of DIALECTS) {
  describe(`dashboard overview (${dialect})`, () => {
    test("lists the failing and the disabled endpoints, with since when and why, above the usage; healthy ones are not listed", async () => {
      const env = await dashboardServices(dialect);
      env.clock.set(Date.now());
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const theirs = await seedWorkspace(env.services);
      const healthyReceiver = await startReceiver(answer(200, "ok"));
      const failingReceiver = await startReceiver(answer(500, "down"));
      const api = async (key: string, method: "POST" | "GET", url: string, payload?: unknown) => {
        const response = await app.inject({
          method,
          url,
          headers: { authorization: `Bearer ${key}`, ...(payload ? { "content-type": "application/json" } : {}) },
          ...(payload ? { payload: JSON.stringify(payload) } : {}),
        });
        assert.ok(response.statusCode < 300, response.body);
        return response.json() as { endpoint: WebhookEndpoint };
      };
      const add = async (key: string, url: string) => (await api(key, "POST", "/api/v1/webhooks/endpoints", { url })).endpoint;
      const healthy = await add(ws.testKey, `${healthyReceiver.url}?which=healthy`);
      // `&` stays as it is in a URL: the page must escape it.
      const failing = await add(ws.testKey, `${failingReceiver.url}?a=1&b=<2>`);
      const disabled = await add(ws.testKey, `${healthyReceiver.url}?which=off`);
      const theirFailing = await add(theirs.testKey, `${failingReceiver.url}?which=theirs`);
      await api(ws.testKey, "POST", `/api/v1/webhooks/endpoints/${disabled.id}/disable`);

      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const overview = `/dashboard/w/${ws.slug}/test`;
      const before = await browser.get(overview);
      assert.equal(before.statusCode, 200);
      assert.match(before.body, /need attention/);
      assert.ok(!before.body.includes(failing.id), "not failing before a delivery failed");

      await api(ws.testKey, "POST", "/api/v1/webhooks/examples", { type: "purchase.completed" });
      await api(theirs.testKey, "POST", "/api/v1/webhooks/examples", { type: "purchase.completed" });
      const failedAt = env.clock.now();
      await testWorker(env.services).drain();
      const failingNow = (await api(ws.testKey, "GET", `/api/v1/webhooks/endpoints/${failing.id}`)) as unknown as WebhookEndpoint;
      assert.equal(failingNow.failing_since, new Date(failedAt).toISOString());

      const page = await browser.get(overview);
      assert.equal(page.statusCode, 200);
      const body = page.body;
      const row = (id: string) =>
        new RegExp(`<tr>\\s*<td[^>]*><a class="url" href="/dashboard/w/${ws.slug}/test/webhooks/${id}">([^<]*)</a></td>\\s*<td[^>]*>(.*?)</td>`, "s").exec(
          body,
        );
      const failingRow = row(failing.id);
      assert.ok(failingRow, "the failing endpoint, linked to its page");
      assert.equal(failingRow[1], `${failingReceiver.url}?a=1&amp;b=%3C2%3E`, "its URL escaped");
      assert.match(failingRow[2] ?? "", new RegExp(`Failing</span> <span class="state-note">since <time datetime="${new Date(failedAt).toISOString()}"`));
      const disabledRow = row(disabled.id);
      assert.ok(disabledRow, "the disabled endpoint, linked to its page");
      assert.match(disabledRow[2] ?? "", /Disabled<\/span> <span class="state-note">turned off by an owner · <time /);
      assert.ok(!body.includes(healthy.id), "a healthy endpoint is not listed");
      assert.ok(!body.includes(theirFailing.id), "another workspace's endpoint is not listed");
      assert.ok(body.indexOf("need attention") < body.indexOf("Today's usage"), "above the usage figures");
      assert.ok(!/\?a=1&b/.test(body));

      // Nothing to list in live, and nothing once the endpoints are well again.
      assert.ok(!(await browser.get(`/dashboard/w/${ws.slug}/live`)).body.includes("need attention"));
      await api(ws.testKey, "POST", `/api/v1/webhooks/endpoints/${disabled.id}/enable`);
      await api(ws.testKey, "POST", `/api/v1/webhooks/endpoints/${failing.id}/disable`);
      await api(ws.testKey, "POST", `/api/v1/webhooks/endpoints/${failing.id}/enable`);
      assert.ok(!(await browser.get(overview)).body.includes("need attention"));
    });
  });
}
