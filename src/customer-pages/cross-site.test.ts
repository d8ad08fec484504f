// A form posted to a hosted page from another site (both engines): refused 403 before
// anything runs, in the buyer's language (the workspace's default language counts, as on
// every page) and in the vendor's frame, with the way back to the page the form belongs
// to; never the dashboard's words, which send an owner to the dashboard. The dashboard's
// own refusal keeps them.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { escapeHtml } from "../dashboard/shared/html.js";
import { LANGUAGES } from "../i18n/locales.js";
import { messagesFor } from "../i18n/messages.js";
import { pagesOf } from "../test-support/customer-pages.js";
import { dashboardApp, dashboardServices, TestBrowser } from "../test-support/dashboard.js";
import { DIALECTS } from "../test-support/harness.js";
import { seedUsageCatalogue } from "../test-support/usage.js";
import { updateBranding } from "./branding.service.js";

const FROM_ANOTHER_SITE: Record<string, string>[] = [{ "sec-fetch-site": "cross-site" }, { "sec-fetch-site": "", origin: "https://attacker.example" }];

for (const dialect of DIALECTS) {
  describe(`hosted pages: a form from another site (${dialect})`, () => {
    test("refused 403 in the buyer's language, in the vendor's frame, with a link back to the page; nothing runs", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const ws = await seedUsageCatalogue(env.services);
      const base = pagesOf(ws);
      await updateBranding(env.services, { workspace: ws.slug, language: "ja" });
      const ja = messagesFor("ja");
      // Each form, and the page it belongs to.
      const forms: [string, Record<string, string>, string][] = [
        ["sign-in", { email: "ada@example.com" }, "sign-in"],
        ["sign-in/code", { code: "123456" }, "sign-in/code"],
        ["sign-in/continue", {}, "sign-in"],
        ["plans", { plan: "monthly" }, "plans"],
        ["trial", {}, "trial"],
        ["manage/subscriptions/sub_x/resume", {}, "manage"],
        ["sign-out", {}, "plans"],
      ];
      for (const [path, fields, back] of forms) {
        for (const headers of FROM_ANOTHER_SITE) {
          // No language asked: the workspace's default speaks.
          const refused = await new TestBrowser(app).post(`${base}/${path}`, fields, headers);
          assert.equal(refused.statusCode, 403, `${path}: ${refused.body}`);
          assert.match(refused.body, /<html lang="ja"/, path);
          assert.ok(refused.body.includes(`<h1>${escapeHtml(ja.text("error.403"))}</h1>`), path);
          assert.ok(refused.body.includes(escapeHtml(ja.text("error.crossSite"))), path);
          assert.ok(refused.body.includes(`href="${base}/${back}">${escapeHtml(ja.text("error.openPageAgain"))}</a>`), `${path}: back to ${back}`);
          assert.ok(refused.body.includes(">T</span> Test workspace</span>"), `${path}: the vendor's frame`);
          assert.doesNotMatch(refused.body, /dashboard and try/i, path);
        }
      }
      // Every language Warden speaks, asked by the browser.
      for (const language of LANGUAGES) {
        const refused = await new TestBrowser(app).post(
          `${base}/sign-in`,
          { email: "ada@example.com" },
          { "sec-fetch-site": "cross-site", "accept-language": language },
        );
        const words = messagesFor(language);
        assert.equal(refused.statusCode, 403);
        assert.match(refused.body, new RegExp(`<html lang="${language}"`), language);
        assert.ok(refused.body.includes(escapeHtml(words.text("error.crossSite"))), language);
        assert.ok(refused.body.includes(escapeHtml(words.text("error.openPageAgain"))), language);
      }
      // Nothing ran: no code was asked for, nobody was written.
      const people = await env.services.db.selectFrom("people").select("id").where("workspace_id", "=", ws.workspaceId).execute();
      assert.deepEqual(people, []);
    });

    test("a page that does not exist refuses a form from another site the same way, in the buyer's language, with no link", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const refused = await new TestBrowser(app).post(
        "/c/nobody-here/test/tabmaster/sign-in",
        { email: "a@example.com" },
        { "sec-fetch-site": "cross-site", "accept-language": "de" },
      );
      assert.equal(refused.statusCode, 403);
      assert.match(refused.body, /<html lang="de"/);
      assert.ok(refused.body.includes(escapeHtml(messagesFor("de").text("error.crossSite"))));
      assert.ok(!refused.body.includes(escapeHtml(messagesFor("de").text("error.openPageAgain"))));
    });

    test("the dashboard's refusal keeps the dashboard's words", async () => {
      const env = await dashboardServices(dialect);
      const app = await dashboardApp(env);
      const refused = await new TestBrowser(app).post("/dashboard/sign-in", { email: "owner@example.com" }, { "sec-fetch-site": "cross-site" });
      assert.equal(refused.statusCode, 403);
      assert.match(refused.body, /This form was sent from another site\. Open the dashboard and try again there\./);
    });
  });
}
