import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { MINUTE_MS } from "../clock.js";
import { ApiError } from "../errors/errors.js";
import { fillDiskFor } from "../test-support/full-disk.js";
import { DIALECTS, testServices, unique } from "../test-support/harness.js";
import { CounterBatcher } from "./counter.batcher.js";
import { readCounter } from "./counter.store.js";
import { HeldCounts } from "./held-counts.js";

const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);
const counter = (scope: string, limit: number) => ({ scope, nextWindowEnd: NOW + MINUTE_MS, limit });

for (const dialect of DIALECTS) {
  describe(`counts held while the storage is full (${dialect})`, () => {
    test("a count the disk refuses is held, the limit stays exact meanwhile, and it is written once there is room", async () => {
      const { services } = await testServices(dialect);
      const held = new HeldCounts();
      const batcher = new CounterBatcher(dialect, held);
      const scope = unique("full-limited");
      await batcher.count(services.db, [counter(scope, 5)], 1, NOW);
      await batcher.count(services.db, [counter(scope, 5)], 1, NOW);
      const giveRoomBack = await fillDiskFor(services.db, dialect, "counters", "full-%");

      // Eight requests in one turn with room for three more: exactly three get through.
      const outcomes = await Promise.all(Array.from({ length: 8 }, () => batcher.count(services.db, [counter(scope, 5)], 1, NOW)));
      assert.deepEqual(
        outcomes.map((o) => o.refused),
        [false, false, false, true, true, true, true, true],
      );
      assert.deepEqual(
        outcomes.map((o) => o.states?.[0]?.count),
        [3, 4, 5, 6, 6, 6, 6, 6],
      );
      // Refused one at a time, later, as well.
      assert.equal((await batcher.count(services.db, [counter(scope, 5)], 1, NOW + 1_000)).refused, true);
      assert.equal((await readCounter(services.db, scope, NOW)).count, 2, "nothing reached the database");
      assert.equal(held.size, 1);

      await giveRoomBack();
      // The next count that reaches the database writes what was held first.
      const other = unique("roomy");
      assert.equal((await batcher.count(services.db, [counter(other, 1000)], 1, NOW + 2_000)).refused, false);
      assert.equal((await readCounter(services.db, scope, NOW + 2_000)).count, 5);
      assert.equal(held.size, 0);
      assert.equal((await batcher.count(services.db, [counter(scope, 5)], 1, NOW + 3_000)).refused, true);
    });

    test("a held count is dropped when its window closes, and the next window starts from zero", async () => {
      const { services } = await testServices(dialect);
      const held = new HeldCounts();
      const batcher = new CounterBatcher(dialect, held);
      const scope = unique("full-window");
      const giveRoomBack = await fillDiskFor(services.db, dialect, "counters", "full-%");
      try {
        for (let i = 0; i < 3; i++) assert.equal((await batcher.count(services.db, [counter(scope, 3)], 1, NOW)).refused, false);
        assert.equal((await batcher.count(services.db, [counter(scope, 3)], 1, NOW)).refused, true);
        const next = { scope, nextWindowEnd: NOW + 2 * MINUTE_MS, limit: 3 };
        const outcome = await batcher.count(services.db, [next], 1, NOW + MINUTE_MS);
        assert.equal(outcome.refused, false);
        assert.deepEqual(outcome.states?.[0], { count: 1, windowEnd: NOW + 2 * MINUTE_MS });
      } finally {
        await giveRoomBack();
      }
      await batcher.count(services.db, [counter(unique("roomy"), 1000)], 1, NOW + MINUTE_MS + 1);
      assert.deepEqual(await readCounter(services.db, scope, NOW + MINUTE_MS + 1), { count: 1, windowEnd: NOW + 2 * MINUTE_MS });
    });

    test("wrong keys counted while the disk is full still block their address, and reach the database later", async () => {
      const { services, clock } = await testServices(dialect, { WARDEN_LIMIT_WRONG_KEYS_PER_MIN: "3" });
      const { limits, db } = services;
      const source = unique("full-source");
      const giveRoomBack = await fillDiskFor(db, dialect, "counters", "wrong-keys:full-%");
      const now = clock.now();
      try {
        for (let i = 0; i < 3; i++) assert.equal(await limits.countWrongKey(db, source, now), null);
        assert.ok((await limits.countWrongKey(db, source, now)) instanceof ApiError);
        await assert.rejects(limits.assertSourceNotBlocked(db, source, now), (e: ApiError) => e.code === "rate_limited");
        assert.equal((await readCounter(db, limits.wrongKeyScope(source), now)).count, 0);
        assert.equal(limits.heldCounters, 1);
        assert.match(await services.metrics.render(), /^warden_limit_counts_held 1$/m);
      } finally {
        await giveRoomBack();
      }
      assert.equal(await limits.writeHeldCounts(db, now), true);
      assert.equal((await readCounter(db, limits.wrongKeyScope(source), now)).count, 4);
      assert.equal(limits.heldCounters, 0);
      assert.match(await services.metrics.render(), /^warden_limit_counts_held 0$/m);
    });

    test("any other failure of a counter's write is not held: the request fails", { skip: dialect === "sqlite" && "SQLite stores a NUL in text" }, async () => {
      const { services } = await testServices(dialect);
      const held = new HeldCounts();
      const batcher = new CounterBatcher(dialect, held);
      await assert.rejects(batcher.count(services.db, [counter(`${unique("bad")}\u0000x`, 10)], 1, NOW), /0x00/);
      assert.equal(held.size, 0);
    });
  });
}
