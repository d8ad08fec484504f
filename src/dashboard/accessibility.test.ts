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
      }
    });
  });
}
