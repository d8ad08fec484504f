import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { dashboardApp, dashboardServices, TestBrowser } from "../test-support/dashboard.js";
import { DIALECTS, seedWorkspace } from "../test-support/harness.js";

/** The first element a keyboard reaches in a page's body (hidden inputs are not reached). */
function firstFocusable(page: string): string {
  const body = page.slice(page.indexOf("<body"));
  const found = /<(?:a|button|select|textarea|summary)\b[^>]*>|<input\b(?![^>]*type="hidden")[^>]*>|<[a-z]+\b[^>]*\stabindex="\d+"[^>]*>/.exec(body);
  assert.ok(found, "a focusable element");
  return found[0];
}

function duplicateIds(page: string): string[] {
  const ids = [...page.matchAll(/\sid="([^"]*)"/g)].map((m) => m[1] as string);
  return ids.filter((id, i) => ids.indexOf(id) !== i);
}

for (const dialect of DIALECTS) {
  describe(`dashboard accessibility (${dialect})`, () => {
    test("a skip link is the first stop of every page, signed in or out, and leads to the main landmark", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const browser = new TestBrowser(app);
      const pages = [await browser.get("/dashboard/sign-in")];
      await browser.signIn(env.dataDir, ws.ownerEmail);
      for (const path of [`/dashboard/w/${ws.slug}/test`, `/dashboard/w/${ws.slug}/live/keys`, `/dashboard/w/${ws.slug}/test/webhooks`, "/dashboard/audit"]) {
        pages.push(await browser.get(path));
      }
      for (const page of pages) {
        assert.equal(page.statusCode, 200);
        assert.equal(firstFocusable(page.body), '<a class="skip-link" href="#content">');
        const mains = [...page.body.matchAll(/<main\b[^>]*>/g)].map((m) => m[0]);
        assert.equal(mains.length, 1, "one main landmark");
        assert.match(mains[0] ?? "", /\sid="content"/, "the link's target is the main landmark");
        assert.equal(page.body.match(/\sid="content"/g)?.length, 1, "and nothing else has its id");
        assert.deepEqual(duplicateIds(page.body), []);
      }
    });

    test("an endpoint's page just enabled shows the recovery form twice, each field with its own id and label", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedWorkspace(env.services);
      const added = await app.inject({
        method: "POST",
        url: "/api/v1/webhooks/endpoints",
        headers: { authorization: `Bearer ${ws.testKey}`, "content-type": "application/json" },
        payload: JSON.stringify({ url: "https://example.com/hooks" }),
      });
      assert.equal(added.statusCode, 201, added.body);
      const { endpoint } = added.json() as { endpoint: { id: string } };
      const browser = new TestBrowser(app);
      await browser.signIn(env.dataDir, ws.ownerEmail);
      const page = await browser.get(`/dashboard/w/${ws.slug}/test/webhooks/${endpoint.id}?enabled=1`);
      assert.equal(page.statusCode, 200);
      assert.equal(page.body.match(/name="since"/g)?.length, 2, "the form in the notice and in its panel");
      assert.deepEqual(duplicateIds(page.body), []);
      for (const [, id] of page.body.matchAll(/<select id="([^"]+)" name="since"/g)) {
        assert.match(page.body, new RegExp(`<label for="${id}">Failed deliveries from</label>`));
      }
    });
  });
}
