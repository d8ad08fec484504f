import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DIALECTS, storageFor } from "../test-support/harness.js";
import { batchedRead } from "./batched-read.js";
import type { Executor } from "./database.js";

/** A batched read of squares that records how it was asked. */
function squares() {
  const calls: string[] = [];
  const read = batchedRead<number, number>(
    async (_ex, n) => {
      calls.push(`one ${n}`);
      return n * n;
    },
    async (_ex, ns) => {
      calls.push(`many ${ns.join(",")}`);
      return ns.map((n) => n * n);
    },
  );
  return { read, calls };
}

for (const dialect of DIALECTS) {
  describe(`batched reads (${dialect})`, () => {
    test("reads asked in one turn of the event loop share one statement on PostgreSQL, and each gets its own answer", async () => {
      const { db } = await storageFor(dialect);
      const { read, calls } = squares();
      assert.deepEqual(await Promise.all([2, 3, 4].map((n) => read(db, n))), [4, 9, 16]);
      // SQLite runs a statement as a function call: nothing to share.
      assert.deepEqual(calls, dialect === "postgres" ? ["many 2,3,4"] : ["one 2", "one 3", "one 4"]);

      calls.length = 0;
      assert.equal(await read(db, 5), 25);
      assert.deepEqual(calls, ["one 5"], "a read alone runs the single statement");
    });

    test("a read that fails the shared statement fails alone: the others of its batch are answered", async () => {
      const { db } = await storageFor(dialect);
      const calls: string[] = [];
      // Like PostgreSQL with a NUL in one request's text: any statement that holds it fails.
      const read = batchedRead<number, number>(
        async (_ex, n) => {
          calls.push(`one ${n}`);
          if (n < 0) throw new Error("refused");
          return n * n;
        },
        async (_ex, ns) => {
          calls.push(`many ${ns.join(",")}`);
          if (ns.some((n) => n < 0)) throw new Error("refused");
          return ns.map((n) => n * n);
        },
      );
      const outcomes = await Promise.allSettled([2, -1, 3].map((n) => read(db, n)));
      assert.deepEqual(
        outcomes.map((o) => (o.status === "fulfilled" ? o.value : "failed")),
        [4, "failed", 9],
      );
      assert.deepEqual(calls, dialect === "postgres" ? ["many 2,-1,3", "one 2", "one -1", "one 3"] : ["one 2", "one -1", "one 3"]);
    });

    test("reads asked while a batch runs make the next batch", async () => {
      const { db } = await storageFor(dialect);
      const { read, calls } = squares();
      const first = Promise.all([1, 2].map((n) => read(db, n)));
      await new Promise((resolve) => setImmediate(resolve));
      const second = Promise.all([3, 4].map((n) => read(db, n)));
      assert.deepEqual(
        [await first, await second],
        [
          [1, 4],
          [9, 16],
        ],
      );
      assert.deepEqual(calls, dialect === "postgres" ? ["many 1,2", "many 3,4"] : ["one 1", "one 2", "one 3", "one 4"]);
    });

    test("a read inside a transaction is never batched: it must see the transaction's own writes", async () => {
      const { db } = await storageFor(dialect);
      const { read, calls } = squares();
      await db.transaction().execute(async (trx: Executor) => {
        assert.deepEqual(await Promise.all([6, 7].map((n) => read(trx, n))), [36, 49]);
      });
      assert.deepEqual(calls, ["one 6", "one 7"]);
    });

    test("a failing batch fails each of its reads, and the next batch runs", async () => {
      const { db } = await storageFor(dialect);
      let fail = true;
      const read = batchedRead<number, number>(
        async (_ex, n) => {
          if (fail) throw new Error("database down");
          return n;
        },
        async (_ex, ns) => {
          if (fail) throw new Error("database down");
          return [...ns];
        },
      );
      const results = await Promise.allSettled([1, 2].map((n) => read(db, n)));
      assert.deepEqual(
        results.map((r) => r.status),
        ["rejected", "rejected"],
      );
      fail = false;
      assert.deepEqual(await Promise.all([3, 4].map((n) => read(db, n))), [3, 4]);
    });
  });
}
