// The batches spends of one meter are gathered into: what arrives in one turn shares a
// batch, one batch of a key runs at a time, an Idempotency-Key never appears twice in one
// batch, and a batch that throws fails each of its spends, not the next batch.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { KeyedBatches, type Outcome } from "./meter-queue.js";

interface Unit {
  n: number;
  key: string | null;
}

function recorder(answer: (unit: Unit) => Outcome<number> = (unit) => ({ ok: true, value: unit.n * 10 })) {
  const batches: number[][] = [];
  let running = 0;
  let overlapped = false;
  const queue = new KeyedBatches<Unit, number>(
    async (batch) => {
      running++;
      if (running > 1) overlapped = true;
      batches.push(batch.map((u) => u.n));
      await new Promise((resolve) => setImmediate(resolve));
      running--;
      return batch.map(answer);
    },
    4,
    (unit) => unit.key,
  );
  return { queue, batches, overlapped: () => overlapped };
}

describe("spends gathered into batches per meter", () => {
  test("what arrives in one turn shares a batch, up to the largest; the rest make the next, in order", async () => {
    const { queue, batches, overlapped } = recorder();
    const answers = await Promise.all([1, 2, 3, 4, 5, 6].map((n) => queue.add("meter-a", { n, key: null })));
    assert.deepEqual(answers, [10, 20, 30, 40, 50, 60]);
    assert.deepEqual(batches, [
      [1, 2, 3, 4],
      [5, 6],
    ]);
    assert.equal(overlapped(), false, "one batch of a key at a time");
  });

  test("another key is another queue, written beside it", async () => {
    const { queue, batches } = recorder();
    await Promise.all([queue.add("meter-a", { n: 1, key: null }), queue.add("meter-b", { n: 2, key: null }), queue.add("meter-a", { n: 3, key: null })]);
    assert.deepEqual(batches, [[1, 3], [2]]);
  });

  test("a second spend with an Idempotency-Key already in the batch starts the next batch, and what came after it waits with it", async () => {
    const { queue, batches } = recorder();
    await Promise.all([
      queue.add("m", { n: 1, key: "k1" }),
      queue.add("m", { n: 2, key: "k1" }),
      queue.add("m", { n: 3, key: "k2" }),
      queue.add("m", { n: 4, key: null }),
      queue.add("m", { n: 5, key: null }),
    ]);
    assert.deepEqual(batches, [[1], [2, 3, 4, 5]]);
  });

  test("each spend gets its own outcome; a batch that throws fails its spends only", async () => {
    let fail = true;
    const queue = new KeyedBatches<Unit, number>(
      async (batch) => {
        if (fail) {
          fail = false;
          throw new Error("database away");
        }
        return batch.map((u): Outcome<number> => (u.n % 2 === 0 ? { ok: false, error: new Error(`refused ${u.n}`) } : { ok: true, value: u.n }));
      },
      2,
      () => null,
    );
    const settled = await Promise.allSettled([1, 2, 3, 4].map((n) => queue.add("m", { n, key: null })));
    assert.deepEqual(
      settled.map((s) => (s.status === "fulfilled" ? s.value : (s.reason as Error).message)),
      ["database away", "database away", 3, "refused 4"],
    );
  });
});
