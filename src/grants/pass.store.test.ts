import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { importNdjson } from "../import/import.service.js";
import { DIALECTS, seedWorkspace, testServices } from "../test-support/harness.js";
import { countPassesHeld } from "./pass.store.js";

const lines = (...objects: object[]) => objects.map((o) => JSON.stringify(o)).join("\n");

for (const dialect of DIALECTS) {
  describe(`passes held (${dialect})`, () => {
    test("a seat is a pass only while its team purchase stands; the team purchase itself is none", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const at = new Date(clock.now() - 86_400_000).toISOString();
      const later = new Date(clock.now() + 86_400_000).toISOString();
      await importNdjson(services.db, clock, {
        workspace: ws.slug,
        env: "test",
        text: lines(
          { type: "licence", id: "lic_TeamActive00000000000001", email: "buyer1@example.com", tool: ws.tool, seats: 5, purchased_at: at },
          { type: "licence", email: "seat1@example.com", team_licence: "lic_TeamActive00000000000001", purchased_at: at },
          { type: "licence", id: "lic_TeamRevoked0000000000001", email: "buyer2@example.com", tool: ws.tool, seats: 5, status: "revoked", purchased_at: at },
          { type: "licence", email: "seat2@example.com", team_licence: "lic_TeamRevoked0000000000001", purchased_at: at },
          {
            type: "subscription",
            id: "sub_TeamEnded",
            email: "buyer3@example.com",
            tool: ws.tool,
            status: "canceled",
            seats: 2,
            current_period_start: at,
            current_period_end: later,
            ended_at: at,
          },
          { type: "licence", email: "seat3@example.com", team_subscription: "sub_TeamEnded", purchased_at: at },
          {
            type: "subscription",
            id: "sub_Own",
            email: "own@example.com",
            tool: ws.tool,
            status: "past_due",
            current_period_start: at,
            current_period_end: later,
          },
          { type: "grant", email: "granted@example.com", tool: ws.tool, starts_at: at },
        ),
      });
      // seat1, the running subscription, the grant.
      const count = (env: "test" | "live", cap: number) =>
        services.db.transaction().execute((trx) => countPassesHeld(trx, ws.workspaceId, env, clock.now(), cap));
      assert.equal(await count("test", 100), 3);
      assert.equal(await count("test", 2), 2);
      assert.equal(await count("live", 100), 0);
    });
  });
}
