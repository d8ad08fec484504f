// Which plan a Stripe purchase gets once plans are retired: the plan it names, retired
// or not (it was offered when the checkout began), but never a retired default for a
// purchase that names none. On both engines.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DIALECTS } from "../test-support/harness.js";
import { ofType, paymentSession, paymentsTestbed } from "../test-support/stripe.js";
import { createPlan, retirePlan } from "../workspaces/workspace.service.js";

for (const dialect of DIALECTS) {
  describe(`plans of a purchase once retired (${dialect})`, () => {
    test("a purchase naming no plan falls back to the default only while it is offered; one naming a retired plan keeps it", async () => {
      const t = await paymentsTestbed(dialect);
      const { db } = t.services;
      const { clock } = t;
      const forever = { workspace: t.ws.slug, tool: "linkkeeper", id: "forever", name: "Forever", billing: "one_time", amountCents: 900, isDefault: true };
      await createPlan(db, clock, forever);
      const buy = async (email: string, plan?: string) => {
        clock.advance(1000);
        const session = paymentSession({
          email,
          metadata: { warden_tool: "linkkeeper", ...(plan ? { warden_plan: plan } : {}) },
          amount: 900,
          now: clock.now(),
        });
        assert.equal(await t.send("checkout.session.completed", session), "applied");
        return ofType(await t.events(), "purchase.completed").find((e) => e.data.checkout_session === session.id)?.data.plan;
      };

      assert.equal(await buy("ada@example.com"), "forever", "the default, by its bare id");
      await retirePlan(db, clock, { workspace: t.ws.slug, tool: "linkkeeper", id: "forever" });
      assert.equal(await buy("grace@example.com"), "linkkeeper", "no plan: the retired default is not given");
      assert.equal(await buy("alan@example.com", "forever"), "forever", "named: kept, and still named by its bare id");
      const licences = await t.licences();
      assert.deepEqual(
        licences.map((l) => l.plan_id),
        ["forever", null, "forever"],
      );
      assert.equal((await t.customer("grace@example.com", "linkkeeper")).body.entitled, true, "bought all the same");
    });
  });
}
