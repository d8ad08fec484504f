// Retrieves that arrive together share their key lookup and their read on PostgreSQL
// (db/batched-read.ts). Each must still be answered as if it had come alone: its own
// key, workspace, environment, tool and address, whatever else is in its batch.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DAY_MS, toIso } from "../clock.js";
import { randomBase62 } from "../ids.js";
import { importNdjson } from "../import/import.service.js";
import { DIALECTS, seedCatalogue, seedWorkspace, testApi, testServices } from "../test-support/harness.js";
import { createKey, revokeKey } from "../workspaces/workspace.service.js";

for (const dialect of DIALECTS) {
  describe(`concurrent retrieves (${dialect})`, () => {
    test("retrieves sent together, with mixed keys, workspaces, tools and addresses, answer as each does alone", async () => {
      const { services, clock } = await testServices(dialect);
      const a = await seedCatalogue(services);
      const b = await seedWorkspace(services);
      const api = await testApi(services);
      const now = clock.now();
      const lines = (env: "test" | "live", rows: object[]) =>
        importNdjson(services.db, services.clock, { workspace: a.slug, env, text: rows.map((r) => JSON.stringify(r)).join("\n") });
      await lines("test", [
        { type: "licence", email: "lic@example.com", tool: "tabmaster", plan: "lifetime", purchased_at: toIso(now - 5 * DAY_MS) },
        { type: "licence", email: "suite@example.com", bundle: "suite", plan: "suite-lifetime", purchased_at: toIso(now - 4 * DAY_MS) },
        { type: "grant", email: "Grant.Ed@gmail.com", tool: "tabmaster", starts_at: toIso(now - DAY_MS), ends_at: toIso(now + DAY_MS) },
        { type: "trial", email: "trial@example.com", tool: "linkkeeper", starts_at: toIso(now - 3 * DAY_MS), ends_at: toIso(now - DAY_MS) },
      ]);
      await lines("live", [{ type: "grant", email: "lic@example.com", tool: "tabmaster", starts_at: toIso(now - DAY_MS) }]);
      await importNdjson(services.db, services.clock, {
        workspace: b.slug,
        env: "test",
        text: JSON.stringify({ type: "grant", email: "lic@example.com", tool: "tabmaster", starts_at: toIso(now - 2 * DAY_MS) }),
      });
      const revoked = await createKey(services.db, clock, { workspace: a.slug, env: "test" });
      await revokeKey(services.db, clock, { id: revoked.id });

      const asks: { key: string; tool: string; email: string }[] = [];
      for (const key of [a.testKey, a.liveKey, b.testKey, revoked.key, `wk_test_${randomBase62(32)}`]) {
        for (const tool of ["tabmaster", "linkkeeper", "missing"]) {
          for (const email of ["lic@example.com", "suite@example.com", "g.ranted@googlemail.com", "trial@example.com", "nobody@example.com"]) {
            asks.push({ key, tool, email });
          }
        }
      }
      // Each from its own address: the wrong keys among them must not reach the source's 30 a minute.
      const ask = async ({ key, tool, email }: (typeof asks)[number], i: number) => {
        const remoteAddress = `10.7.${Math.floor(i / 200)}.${i % 200}`;
        const response = await api.request({ url: `/api/v1/tools/${tool}/customers/${encodeURIComponent(email)}`, key, remoteAddress });
        return { status: response.statusCode, body: response.json() };
      };
      const together = await Promise.all(asks.map(ask));
      const alone = [];
      for (const [i, one] of asks.entries()) alone.push(await ask(one, i));
      assert.deepEqual(together, alone);

      // The answers are the right ones, not merely the same twice.
      const statuses = (key: string) => together.filter((_, i) => asks[i]?.key === key).map((r) => r.status);
      assert.ok(statuses(revoked.key).every((s) => s === 401));
      assert.equal(statuses(a.testKey).filter((s) => s === 200).length, 5);
      assert.equal(statuses(a.liveKey).filter((s) => s === 200).length, 1);
      assert.equal(statuses(b.testKey).filter((s) => s === 200).length, 1);
      const grant = together[asks.findIndex((q) => q.key === a.testKey && q.tool === "tabmaster" && q.email === "g.ranted@googlemail.com")];
      assert.deepEqual(grant?.body, {
        email: "Grant.Ed@gmail.com",
        account: false,
        entitled: true,
        via: "grant",
        paid_at: null,
        plan: null,
        subscription: null,
        trial: null,
        features: [],
      });
    });
  });
}
