// What a tool declares and what its plans give, set through the operator's use cases and
// read back through the same sources the access answers use; both engines.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { toolScope } from "../customers/customer.service.js";
import { findPersonWithSources, loadSources } from "../customers/customer-sources.store.js";
import { findPersonByEmail } from "../customers/person.store.js";
import { DIALECTS, testApi, testServices } from "../test-support/harness.js";
import { connectTestStripe, deliver, paymentSession, stripeEvent } from "../test-support/stripe.js";
import { seedUsageCatalogue } from "../test-support/usage.js";
import { changeBundleTools } from "../workspaces/bundle.service.js";
import { createPlan, retirePlan } from "../workspaces/workspace.service.js";
import { heldTerms } from "./held-terms.js";
import { addFeature, addMeter, readPlanTerms, setPlanTerms, updateMeter } from "./terms.service.js";
import { loadToolTerms } from "./terms.store.js";
import { cachedToolTerms } from "./terms-cache.js";

const DECEMBER = Date.parse("2026-12-01T00:00:00.000Z");

for (const dialect of DIALECTS) {
  describe(`a tool's features, meters and plans' terms (${dialect})`, () => {
    test("the top terms are every feature and each meter's largest allowance of a live plan that gives access", async () => {
      const { services } = await testServices(dialect);
      const ws = await seedUsageCatalogue(services);
      const top = await loadToolTerms(services.db, ws.workspaceId, "tabmaster");
      assert.deepEqual(top, {
        features: ["export", "sync"],
        meters: [{ id: "summaries", name: "Summaries", unit: "summaries", freeAllowance: 10 }],
        top: { features: ["export", "sync"], allowances: { summaries: 500 } },
      });
      // Retiring monthly leaves the bundle's 200 as the largest; the pack never counts (it gives no access).
      await retirePlan(services.db, services.clock, { workspace: ws.slug, tool: "tabmaster", id: "monthly" });
      assert.deepEqual((await loadToolTerms(services.db, ws.workspaceId, "tabmaster")).top.allowances, { summaries: 200 });
      // The bundle no longer naming Tab Master, its plan's terms for it give nothing (they stay, for its return).
      await changeBundleTools(services, { workspace: ws.slug, id: "suite", toolIds: ["linkkeeper"], apply: true });
      assert.deepEqual((await loadToolTerms(services.db, ws.workspaceId, "tabmaster")).top.allowances, { summaries: 100 });
      await changeBundleTools(services, { workspace: ws.slug, id: "suite", toolIds: ["tabmaster", "linkkeeper"], apply: true });
      assert.deepEqual((await loadToolTerms(services.db, ws.workspaceId, "tabmaster")).top.allowances, { summaries: 200 });
    });

    test("a change of a bundle's tools drops every process's kept terms of the workspace", async () => {
      const { services } = await testServices(dialect);
      const ws = await seedUsageCatalogue(services);
      await retirePlan(services.db, services.clock, { workspace: ws.slug, tool: "tabmaster", id: "monthly" });
      const read = () => cachedToolTerms(services.answers, services.db, ws.workspaceId, "tabmaster");
      await services.accessWatch.poll();
      assert.deepEqual((await read()).top.allowances, { summaries: 200 });
      // Kept in memory: a row changed behind its back (no feed written) is not seen.
      await services.db
        .updateTable("plan_terms")
        .set({ allowances: JSON.stringify({ summaries: 150 }) })
        .where("workspace_id", "=", ws.workspaceId)
        .where("plan_id", "=", "lifetime")
        .execute();
      assert.deepEqual((await read()).top.allowances, { summaries: 200 });
      await changeBundleTools(services, { workspace: ws.slug, id: "suite", toolIds: ["linkkeeper"], apply: true });
      assert.deepEqual((await read()).top.allowances, { summaries: 150 });
    });

    test("bad terms are refused naming the parameter, and nothing is written", async () => {
      const { services } = await testServices(dialect);
      const { db, clock } = services;
      const ws = await seedUsageCatalogue(services);
      const plan = { workspace: ws.slug, tool: "tabmaster", id: "lifetime" };
      const refused = async (change: Parameters<typeof setPlanTerms>[2], param: string, message: RegExp) => {
        await assert.rejects(setPlanTerms(db, clock, change), (e: { param?: string; message: string }) => e.param === param && message.test(e.message));
      };
      await refused({ ...plan, features: ["print"] }, "features", /declares no feature "print": it declares export, sync/);
      await refused({ ...plan, allowances: { pages: 5 } }, "allowances", /declares no meter "pages"/);
      await refused({ ...plan, allowances: { summaries: -1 } }, "allowances", /whole number from 0/);
      await refused({ ...plan, allowances: { summaries: 1.5 } }, "allowances", /whole number/);
      await refused({ ...plan, id: "monthly", credits: { summaries: 10 } }, "credits", /one-time plan/);
      await refused({ ...plan, creditsExpireDays: 0 }, "credits-expire-days", /whole number from 1/);
      await refused({ ...plan }, "features", /Nothing to change/);
      await refused({ workspace: ws.slug, bundle: "suite", id: "suite-lifetime", features: [] }, "for-tool", /name which of its tools/);
      await refused(
        { workspace: ws.slug, bundle: "suite", id: "suite-lifetime", forTool: "notepad", features: [] },
        "for-tool",
        /does not name tool "notepad"/,
      );
      assert.deepEqual(await readPlanTerms(db, plan), {
        tool: "tabmaster",
        terms: { features: ["export"], allowances: { summaries: 100 }, credits: {}, creditsExpireDays: null },
      });

      await assert.rejects(addFeature(db, clock, { workspace: ws.slug, tool: "tabmaster", id: "Export", name: "x" }), { param: "id" });
      await assert.rejects(
        addMeter(db, clock, { workspace: ws.slug, tool: "tabmaster", id: "constructor", name: "x", unit: "x" }),
        /"constructor" is a reserved word/,
      );
      await assert.rejects(addFeature(db, clock, { workspace: ws.slug, tool: "tabmaster", id: "export", name: "again" }), /declares feature "export" already/);
      await assert.rejects(addMeter(db, clock, { workspace: ws.slug, tool: "tabmaster", id: "pages", name: "Pages", unit: "pages", freeAllowance: "-3" }), {
        param: "free",
      });
      await assert.rejects(
        createPlan(db, clock, {
          workspace: ws.slug,
          tool: "tabmaster",
          id: "pack-sub",
          name: "x",
          billing: "subscription",
          interval: "month",
          givesAccess: false,
        }),
        { param: "billing" },
      );
      const meter = await updateMeter(db, clock, { workspace: ws.slug, tool: "tabmaster", id: "summaries", freeAllowance: "" });
      assert.equal(meter.freeAllowance, null);
    });

    test("a purchase carries its plan's terms into the sources; a pack bought alone gives no access", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedUsageCatalogue(services);
      const api = await testApi(services);
      const secret = await connectTestStripe(services, ws, "test");
      clock.set(Date.parse("2026-11-20T10:00:00.000Z"));
      const buy = async (email: string, plan: string) => {
        const session = paymentSession({ email, metadata: { warden_tool: "tabmaster", warden_plan: plan }, now: clock.now() });
        assert.equal(await deliver(api, ws, secret, stripeEvent("checkout.session.completed", session, { now: clock.now() }), clock.now()), "applied");
      };
      await buy("ada@example.com", "lifetime");
      await buy("bob@example.com", "pack-1000");

      const scope = toolScope(ws.workspaceId, "test", "tabmaster");
      const tool = await loadToolTerms(services.db, ws.workspaceId, "tabmaster");
      const ada = await findPersonWithSources(services.db, { scope, email: "ada@example.com" });
      assert.ok(ada);
      assert.deepEqual(heldTerms(ada.sources, tool, clock.now()), {
        features: ["export"],
        buckets: [
          {
            meter: "summaries",
            bucket: ada.sources.licences[0]?.id,
            via: "licence",
            allowance: 100,
            periodStart: Date.parse("2026-11-01T00:00:00.000Z"),
            periodEnd: DECEMBER,
          },
        ],
      });

      // Bob's pack is a licence that entitles nothing: he is answered as someone who holds nothing, with the free allowance.
      const bob = await findPersonByEmail(services.db, ws.workspaceId, "test", "bob@example.com");
      assert.ok(bob);
      const bobSources = (await loadSources(services.db, scope, [bob.id])).get(bob.id);
      assert.ok(bobSources);
      assert.equal(bobSources.licences.length, 1);
      assert.deepEqual(
        heldTerms(bobSources, tool, clock.now()).buckets.map((b) => [b.bucket, b.allowance]),
        [["free", 10]],
      );
      const retrieved = await api.request({ url: "/api/v1/tools/tabmaster/customers/bob%40example.com", key: ws.testKey });
      assert.equal(retrieved.statusCode, 200, retrieved.body);
      assert.equal(retrieved.json().entitled, false);
      assert.equal(retrieved.json().plan, null);
    });
  });
}
