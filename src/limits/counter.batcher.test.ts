import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { MINUTE_MS } from "../clock.js";
import { DIALECTS, testServices, unique } from "../test-support/harness.js";
import { CounterBatcher } from "./counter.batcher.js";
import { readCounter } from "./counter.store.js";

const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);
const counter = (scope: string, limit: number) => ({ scope, nextWindowEnd: NOW + MINUTE_MS, limit });

for (const dialect of DIALECTS) {
  describe(`counter batches (${dialect})`, () => {
    test("requests counted in one turn of the event loop are written together, and every count lands", async () => {
      const { services } = await testServices(dialect);
      const batcher = new CounterBatcher(dialect);
      const shared = unique("shared");
      const own = Array.from({ length: 20 }, () => unique("own"));
      const outcomes = await Promise.all(own.map((scope) => batcher.count(services.db, [counter(shared, 1000), counter(scope, 1000)], 1, NOW)));

      assert.ok(outcomes.every((o) => !o.refused));
      // One statement: each request is answered with the counts after the whole batch.
      // Counted one by one, the shared counter would have answered 1, 2, … 20.
      assert.deepEqual(new Set(outcomes.map((o) => o.states?.[0]?.count)), new Set([20]));
      assert.deepEqual(
        outcomes.map((o) => o.states?.[1]?.count),
        own.map(() => 1),
      );
      assert.equal((await readCounter(services.db, shared, NOW)).count, 20);
      for (const scope of own) assert.equal((await readCounter(services.db, scope, NOW)).count, 1);
    });

    test("a batch that would pass a limit is counted one request at a time: exactly the first that fit get through", async () => {
      const { services } = await testServices(dialect);
      const batcher = new CounterBatcher(dialect);
      const limited = unique("limited");
      const roomy = unique("roomy");
      const own = Array.from({ length: 8 }, () => unique("own"));
      // Requests alternate between a counter with room for 3 and one with room for all.
      const outcomes = await Promise.all(
        own.map((scope, i) => batcher.count(services.db, [counter(i % 2 === 0 ? limited : roomy, i % 2 === 0 ? 3 : 1000), counter(scope, 1000)], 1, NOW)),
      );

      assert.deepEqual(
        outcomes.map((o) => o.refused),
        [false, false, false, false, false, false, true, false],
      );
      assert.equal((await readCounter(services.db, limited, NOW)).count, 3);
      assert.equal((await readCounter(services.db, roomy, NOW)).count, 4);
      // The refused request counted nothing at all: all or nothing, as alone.
      assert.equal((await readCounter(services.db, own[6] ?? "", NOW)).count, 0);
    });

    test("50 concurrent requests on one counter with room for 25: exactly 25 are counted", async () => {
      const { services } = await testServices(dialect);
      const batcher = new CounterBatcher(dialect);
      const scope = unique("one");
      const outcomes = await Promise.all(Array.from({ length: 50 }, () => batcher.count(services.db, [counter(scope, 25)], 1, NOW)));
      // Refused increments may still be written on SQLite, past the limit; what counts is who got through.
      assert.equal(outcomes.filter((o) => !o.refused).length, 25);
    });

    test("a request whose counter the database refuses fails alone, not the batch it came in", async () => {
      const { services } = await testServices(dialect);
      const batcher = new CounterBatcher(dialect);
      const shared = unique("shared");
      // PostgreSQL refuses a NUL in text; the statement counting the batch fails with it.
      const scopes = Array.from({ length: 10 }, (_, i) => (i === 4 ? `${unique("bad")}\u0000x` : unique("own")));
      const outcomes = await Promise.allSettled(scopes.map((scope) => batcher.count(services.db, [counter(shared, 1000), counter(scope, 1000)], 1, NOW)));
      for (const [i, outcome] of outcomes.entries()) {
        if (i === 4 && dialect === "postgres") assert.equal(outcome.status, "rejected");
        else assert.equal(outcome.status, "fulfilled", String(i));
      }
      assert.equal((await readCounter(services.db, shared, NOW)).count, dialect === "postgres" ? 9 : 10);
    });

    test("requests that come while a batch is written make the next batch", async () => {
      const { services } = await testServices(dialect);
      const batcher = new CounterBatcher(dialect);
      const shared = unique("shared");
      const first = Promise.all([1, 2, 3].map(() => batcher.count(services.db, [counter(shared, 1000), counter(unique("own"), 1000)], 1, NOW)));
      // Asked for after the first batch was taken (its flush runs at the check phase first): a batch of their own.
      await new Promise((resolve) => setImmediate(resolve));
      const second = Promise.all([1, 2].map(() => batcher.count(services.db, [counter(shared, 1000), counter(unique("own"), 1000)], 1, NOW)));
      const [a, b] = await Promise.all([first, second]);
      assert.deepEqual(
        a.map((o) => o.states?.[0]?.count),
        [3, 3, 3],
      );
      assert.deepEqual(
        b.map((o) => o.states?.[0]?.count),
        [5, 5],
      );
    });

    test("counts inside a caller's transaction are not batched: they roll back with it", async () => {
      const { services } = await testServices(dialect);
      const batcher = new CounterBatcher(dialect);
      const scope = unique("in-trx");
      await assert.rejects(
        services.db.transaction().execute(async (trx) => {
          const outcome = await batcher.count(trx, [counter(scope, 1000), counter(unique("other"), 1000)], 2, NOW);
          assert.equal(outcome.states?.[0]?.count, 2);
          throw new Error("the caller changes its mind");
        }),
        /changes its mind/,
      );
      assert.equal((await readCounter(services.db, scope, NOW)).count, 0);
    });
  });
}
