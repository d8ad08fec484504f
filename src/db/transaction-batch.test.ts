import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "kysely";
import { DIALECTS, testServices, unique } from "../test-support/harness.js";
import type { Executor } from "./database.js";
import { TransactionBatcher } from "./transaction-batch.js";

const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);

async function storedScopes(ex: Executor, scopes: readonly string[]): Promise<string[]> {
  const rows = await ex.selectFrom("counters").select("scope").where("scope", "in", scopes).orderBy("scope").execute();
  return rows.map((r) => r.scope);
}

for (const dialect of DIALECTS) {
  describe(`transaction batches (${dialect})`, () => {
    test("units handed over in one turn of the event loop are written together, each answered with its own result", async () => {
      const { services } = await testServices(dialect);
      const batches: string[][] = [];
      const transactions: string[] = [];
      const batcher = new TransactionBatcher<string, string>(services.db, async (trx, scopes) => {
        batches.push([...scopes]);
        await trx
          .insertInto("counters")
          .values(scopes.map((scope) => ({ scope, window_end: NOW, count: 1 })))
          .execute();
        if (dialect === "postgres") transactions.push((await sql<{ id: string }>`select txid_current()::text as id`.execute(trx)).rows[0]?.id ?? "");
        return scopes.map((scope) => `written ${scope}`);
      });
      const scopes = Array.from({ length: 5 }, () => unique("unit"));
      const results = await Promise.all(scopes.map((scope) => batcher.run(scope)));
      assert.deepEqual(
        results,
        scopes.map((scope) => `written ${scope}`),
      );
      assert.deepEqual(batches, [scopes]);
      assert.deepEqual(await storedScopes(services.db, scopes), [...scopes].sort());
      // The next turn's units make the next batch.
      const later = unique("unit");
      assert.equal(await batcher.run(later), `written ${later}`);
      assert.deepEqual(batches.at(-1), [later]);
      if (dialect === "postgres") assert.equal(transactions.length, 2);
    });

    test("with a linger, units handed over within it make one batch; a full batch goes at once", { timeout: 20_000 }, async (t) => {
      const { services } = await testServices(dialect);
      t.mock.timers.enable({ apis: ["setTimeout"] });
      const batches: string[][] = [];
      const batcher = new TransactionBatcher<string, string>(
        services.db,
        async (trx, scopes) => {
          batches.push([...scopes]);
          await trx
            .insertInto("counters")
            .values(scopes.map((scope) => ({ scope, window_end: NOW, count: 1 })))
            .execute();
          return [...scopes];
        },
        { maxBatch: 3, lingerMs: 10 },
      );
      const [a, b, c, d, e] = Array.from({ length: 5 }, () => unique("unit")) as [string, string, string, string, string];
      const first = batcher.run(a);
      await new Promise((resolve) => setImmediate(resolve));
      const second = batcher.run(b);
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(batches, [], "nothing is written while the batch lingers");
      t.mock.timers.tick(10);
      assert.deepEqual(await Promise.all([first, second]), [a, b]);
      assert.deepEqual(batches, [[a, b]]);
      // Full before its linger is up: written at once (the clock does not move again).
      assert.deepEqual(await Promise.all([c, d, e].map((scope) => batcher.run(scope))), [c, d, e]);
      assert.deepEqual(batches, [
        [a, b],
        [c, d, e],
      ]);
      assert.deepEqual(await storedScopes(services.db, [a, b, c, d, e]), [a, b, c, d, e].sort());
    });

    test("a failing unit fails alone: the others of its batch are written once, its own writes are not", async () => {
      const { services } = await testServices(dialect);
      const good = [unique("good"), unique("good")];
      const bad = unique("bad");
      let badWrites = 0;
      const batcher = new TransactionBatcher<string, string>(services.db, async (trx, scopes) => {
        for (const scope of scopes) {
          await trx.insertInto("counters").values({ scope, window_end: NOW, count: 1 }).execute();
          if (scope === bad) {
            badWrites++;
            throw new Error("this unit fails");
          }
        }
        return [...scopes];
      });
      const outcomes = await Promise.allSettled([batcher.run(good[0] ?? ""), batcher.run(bad), batcher.run(good[1] ?? "")]);
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ["fulfilled", "rejected", "fulfilled"],
      );
      assert.match(String((outcomes[1] as PromiseRejectedResult).reason), /this unit fails/);
      // Once in the batch that rolled back, once alone.
      assert.equal(badWrites, 2);
      assert.deepEqual(await storedScopes(services.db, [...good, bad]), [...good].sort());
    });
  });
}
