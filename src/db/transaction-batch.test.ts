import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "kysely";
import { DIALECTS, testServices, unique } from "../test-support/harness.js";
import type { Executor } from "./database.js";
import { TransactionBatcher } from "./transaction-batch.js";

const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);

async function addCounter(trx: Executor, scope: string): Promise<string> {
  await trx.insertInto("counters").values({ scope, window_end: NOW, count: 1 }).execute();
  return scope;
}

async function storedScopes(ex: Executor, scopes: string[]): Promise<string[]> {
  const rows = await ex.selectFrom("counters").select("scope").where("scope", "in", scopes).orderBy("scope").execute();
  return rows.map((r) => r.scope);
}

for (const dialect of DIALECTS) {
  describe(`transaction batches (${dialect})`, () => {
    test("units handed over in one turn of the event loop commit together, each answered with its own result", async () => {
      const { services } = await testServices(dialect);
      const batcher = new TransactionBatcher(services.db);
      const scopes = Array.from({ length: 5 }, () => unique("unit"));
      // Each unit sees the writes of the units before it, uncommitted: one transaction.
      const seen: number[] = [];
      const results = await Promise.all(
        scopes.map((scope) =>
          batcher.run(async (trx) => {
            seen.push((await storedScopes(trx, scopes)).length);
            return addCounter(trx, scope);
          }),
        ),
      );
      assert.deepEqual(results, scopes);
      assert.deepEqual(seen, [0, 1, 2, 3, 4]);
      assert.deepEqual(await storedScopes(services.db, scopes), [...scopes].sort());
      if (dialect === "postgres") {
        const ids = await Promise.all(
          [1, 2, 3].map(() => batcher.run(async (trx) => (await sql<{ id: string }>`select txid_current()::text as id`.execute(trx)).rows[0]?.id)),
        );
        assert.equal(new Set(ids).size, 1, `transactions ${ids.join(", ")}`);
      }
    });

    test("a failing unit fails alone: the others of its batch are written once, its own writes are not", async () => {
      const { services } = await testServices(dialect);
      const batcher = new TransactionBatcher(services.db);
      const good = [unique("good"), unique("good")];
      const bad = unique("bad");
      let runs = 0;
      const outcomes = await Promise.allSettled([
        batcher.run((trx) => addCounter(trx, good[0] ?? "")),
        batcher.run(async (trx) => {
          runs++;
          await addCounter(trx, bad);
          throw new Error("this unit fails");
        }),
        batcher.run((trx) => addCounter(trx, good[1] ?? "")),
      ]);
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ["fulfilled", "rejected", "fulfilled"],
      );
      assert.match(String((outcomes[1] as PromiseRejectedResult).reason), /this unit fails/);
      // Once in the batch that rolled back, once alone.
      assert.equal(runs, 2);
      assert.deepEqual(await storedScopes(services.db, [...good, bad]), [...good].sort());
    });
  });
}
