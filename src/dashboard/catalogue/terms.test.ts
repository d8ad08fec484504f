// Configure › a tool's features and meters, and what each plan gives of them, set from the
// dashboard through the use cases `warden admin feature|meter|plan terms` call; refused
// input shows on the form and changes nothing; each change is audited. Both engines.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { dashboardApp, dashboardServices, TestBrowser } from "../../test-support/dashboard.js";
import { DIALECTS, unique } from "../../test-support/harness.js";
import { readPlanTerms, readToolTerms } from "../../usage/terms.service.js";
import { createBundle, createOwner, createPlan, createTool, createWorkspace } from "../../workspaces/workspace.service.js";

async function workspaceWithPlans(dialect: (typeof DIALECTS)[number]) {
  const env = await dashboardServices(dialect);
  const { db, clock } = env.services;
  const app = await dashboardApp(env);
  const email = `${unique("owner")}@example.com`;
  const slug = unique("ws");
  await createOwner(db, clock, { email });
  await createWorkspace(db, clock, { slug, name: "Acme", ownerEmail: email });
  await createTool(db, clock, { workspace: slug, id: "tabmaster", name: "Tab Master" });
  await createTool(db, clock, { workspace: slug, id: "notepad", name: "Notepad" });
  await createPlan(db, clock, { workspace: slug, tool: "tabmaster", id: "pro", name: "Pro", billing: "subscription", interval: "month", amountCents: 500 });
  await createPlan(db, clock, { workspace: slug, tool: "tabmaster", id: "pack", name: "Pack", billing: "one_time", amountCents: 900, givesAccess: false });
  await createBundle(db, clock, { workspace: slug, id: "suite", name: "Suite", toolIds: ["tabmaster", "notepad"] });
  await createPlan(db, clock, { workspace: slug, bundle: "suite", id: "suite-life", name: "Suite for life", billing: "one_time", amountCents: 9900 });
  const browser = new TestBrowser(app);
  await browser.signIn(env.dataDir, email);
  await browser.get(`/dashboard/w/${slug}/test`);
  return { env, browser, slug, base: `/dashboard/w/${slug}/test` };
}

for (const dialect of DIALECTS) {
  describe(`dashboard: features, meters and plans' terms (${dialect})`, () => {
    test("a tool declares a feature and a meter on its page; a plan's page sets what it gives; a pack's page sets its credits", async () => {
      const { env, browser, slug, base } = await workspaceWithPlans(dialect);
      const db = env.services.db;
      const toolPage = await browser.get(`${base}/tools/tabmaster`);
      assert.match(toolPage.body, /No features/);

      const feature = await browser.post(`${base}/tools/tabmaster/features`, { id: "export", name: "Export" });
      assert.equal(feature.statusCode, 303);
      assert.match((await browser.get(feature.headers.location as string)).body, /Added <code>export<\/code>/);
      const meter = await browser.post(`${base}/tools/tabmaster/meters`, { id: "summaries", name: "Summaries", unit: "summaries", free: "10" });
      assert.equal(meter.statusCode, 303);
      const declared = await readToolTerms(db, { workspace: slug, tool: "tabmaster" });
      assert.deepEqual([declared.features.map((f) => f.id), declared.meters.map((m) => [m.id, m.freeAllowance])], [["export"], [["summaries", 10]]]);

      // The same refusal as the CLI's, on the form, and nothing added.
      const refused = await browser.post(`${base}/tools/tabmaster/meters`, { id: "Pages", name: "Pages", unit: "pages", free: "" });
      assert.equal(refused.statusCode, 400);
      assert.match(refused.body, /id must be 1 to 64 lower-case letters/);
      assert.match(refused.body, /value="Pages"/, "what was typed stays");
      assert.equal((await readToolTerms(db, { workspace: slug, tool: "tabmaster" })).meters.length, 1);

      const planPage = await browser.get(`${base}/tools/tabmaster/plans/pro`);
      assert.match(planPage.body, /What this plan gives/);
      assert.match(planPage.body, /Summaries: each billing period/);
      assert.doesNotMatch(planPage.body, /credits each purchase/, "a subscription sells no credits");
      const saved = await browser.post(`${base}/tools/tabmaster/plans/pro/terms`, { tool: "tabmaster", feature_export: "1", allowance_summaries: "500" });
      assert.equal(saved.statusCode, 303);
      assert.match((await browser.get(saved.headers.location as string)).body, /Saved\. Every access answer says it from now on\./);
      assert.deepEqual((await readPlanTerms(db, { workspace: slug, tool: "tabmaster", id: "pro" })).terms, {
        features: ["export"],
        allowances: { summaries: 500 },
        credits: {},
        creditsExpireDays: null,
      });

      const pack = await browser.post(`${base}/tools/tabmaster/plans/pack/terms`, { tool: "tabmaster", credits_summaries: "1000", credits_expire_days: "365" });
      assert.equal(pack.statusCode, 303);
      assert.deepEqual((await readPlanTerms(db, { workspace: slug, tool: "tabmaster", id: "pack" })).terms, {
        features: [],
        allowances: {},
        credits: { summaries: 1000 },
        creditsExpireDays: 365,
      });
      const badDays = await browser.post(`${base}/tools/tabmaster/plans/pack/terms`, { tool: "tabmaster", credits_summaries: "5", credits_expire_days: "0" });
      assert.equal(badDays.statusCode, 400);
      assert.match(badDays.body, /credits-expire-days must be a whole number from 1/);
      assert.equal((await readPlanTerms(db, { workspace: slug, tool: "tabmaster", id: "pack" })).terms.credits.summaries, 1000, "nothing written");

      const audit = (await browser.get("/dashboard/audit")).body;
      assert.match(audit, /Added a feature/);
      assert.match(audit, /Added a meter/);
      assert.equal(audit.match(/Changed a plan&#39;s features, allowances or credits|Changed a plan's features, allowances or credits/g)?.length, 2);
    });

    test("a bundle's plan has a panel per tool; one that declares nothing points to its page", async () => {
      const { env, browser, slug, base } = await workspaceWithPlans(dialect);
      await browser.post(`${base}/tools/tabmaster/features`, { id: "export", name: "Export" });
      const page = await browser.get(`${base}/bundles/suite/plans/suite-life`);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /What this plan gives in Tab Master/);
      assert.match(page.body, /Notepad declares no features or meters yet/);
      const saved = await browser.post(`${base}/bundles/suite/plans/suite-life/terms`, { tool: "tabmaster", feature_export: "1" });
      assert.equal(saved.statusCode, 303);
      assert.deepEqual((await readPlanTerms(env.services.db, { workspace: slug, bundle: "suite", id: "suite-life", forTool: "tabmaster" })).terms.features, [
        "export",
      ]);
      const otherTool = await browser.post(`${base}/bundles/suite/plans/suite-life/terms`, { tool: "linkkeeper", feature_export: "1" });
      assert.equal(otherTool.statusCode, 400);
    });
  });
}
