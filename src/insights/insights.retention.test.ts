import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { pruneExpired } from "../retention/retention.service.js";
import { DIALECTS } from "../test-support/harness.js";
import { paymentSession, paymentsTestbed } from "../test-support/stripe.js";
import { revenueInsights, useInsights } from "./insights.service.js";

const DAY = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

for (const dialect of DIALECTS) {
  describe(`Insights and retention (${dialect})`, () => {
    test("pruning the events of a year ago leaves that year's figures whole", async () => {
      const bed = await paymentsTestbed(dialect);
      const { db } = bed.services;
      const then = bed.clock.now();
      await bed.send(
        "checkout.session.completed",
        paymentSession({ email: "old@example.com", metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" }, amount: 4900, now: then }),
      );
      const person = await db.selectFrom("people").select("id").where("workspace_id", "=", bed.ws.workspaceId).executeTakeFirstOrThrow();
      bed.services.activity.note({ workspaceId: bed.ws.workspaceId, env: "test", toolId: "tabmaster", personId: person.id, deviceId: "dev-old", at: then });

      bed.clock.advance(400 * DAY);
      const pruned = await pruneExpired(bed.services, { batchSize: 500, pauseMs: 0, pauseFactor: 0 });
      assert.ok(pruned.events >= 1, "the purchase's event was pruned");

      const q = { workspaceId: bed.ws.workspaceId, env: "test" as const, toolId: null, from: dayOf(then), to: dayOf(then), grain: "day" as const };
      const revenue = await revenueInsights(db, q);
      assert.equal(revenue.currencies[0]?.gross.total, 4900);
      const use = await useInsights(bed.services, q, new Date(bed.clock.now()));
      // The day of the purchase and the check, 400 days before the pruning.
      assert.deepEqual(use.activePeople.daily.points, [{ date: "2026-11-21", value: 1 }]);
      assert.deepEqual(use.activeDevices.points, [{ date: "2026-11-21", value: 1 }]);
    });
  });
}
