import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "kysely";
import { readCounter } from "../limits/counter.store.js";
import { DIALECTS, testServices, unique } from "../test-support/harness.js";
import { type DirectSqlite, directSqlite } from "./database.js";

const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);

for (const dialect of DIALECTS) {
  describe(`prepared queries (${dialect})`, () => {
    test("outside a transaction they read what is committed; inside one, what it wrote", async () => {
      const { services } = await testServices(dialect);
      const scope = unique("prepared");
      await services.db
        .insertInto("counters")
        .values({ scope, window_end: NOW + 60_000, count: 7 })
        .execute();
      assert.deepEqual(await readCounter(services.db, scope, NOW), { count: 7, windowEnd: NOW + 60_000 });
      await services.db.transaction().execute(async (trx) => {
        await trx.updateTable("counters").set({ count: 8 }).where("scope", "=", scope).execute();
        assert.equal((await readCounter(trx, scope, NOW)).count, 8);
      });
      assert.equal((await readCounter(services.db, scope, NOW)).count, 8);
    });
  });
}

// SQLite has one connection: a prepared query outside any transaction runs on it at once,
// synchronously, unless a transaction is open on it; then it must wait for the
// transaction to end rather than run inside it (and see, or be undone with, its writes).
test("SQLite: a prepared query waits for a transaction open on the connection, and never sees its writes", async () => {
  const { services } = await testServices("sqlite");
  const scope = unique("prepared");
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let inserted = () => {};
  const written = new Promise<void>((resolve) => {
    inserted = resolve;
  });
  const transaction = services.db
    .transaction()
    .execute(async (trx) => {
      await trx
        .insertInto("counters")
        .values({ scope, window_end: NOW + 60_000, count: 5 })
        .execute();
      inserted();
      await held;
      throw new Error("rolled back");
    })
    .catch((error: unknown) => error);

  await written;
  let answered = false;
  const read = readCounter(services.db, scope, NOW).then((state) => {
    answered = true;
    return state;
  });
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(answered, false, "the read ran while the transaction was open");
  release();
  assert.match(String(await transaction), /rolled back/);
  assert.deepEqual(await read, { count: 0, windowEnd: NOW });
});

// Inside a transaction the caller holds the one connection: its prepared statements run at
// once, as part of that transaction, and only while it is open.
test("SQLite: inside a transaction a prepared query runs at once on its connection, and is undone with it", async () => {
  const { services } = await testServices("sqlite");
  const scope = unique("prepared");
  const insert = "insert into counters (scope, window_end, count) values (?, ?, ?)";
  let inside: DirectSqlite | undefined;
  const outcome = await services.db
    .transaction()
    .execute(async (trx) => {
      inside = directSqlite(trx);
      assert.ok(inside, "no synchronous path inside the transaction");
      assert.deepEqual(inside(insert, [scope, NOW + 60_000, 3]), []);
      assert.equal((await readCounter(trx, scope, NOW)).count, 3);
      throw new Error("rolled back");
    })
    .catch((error: unknown) => error);
  assert.match(String(outcome), /rolled back/);
  assert.deepEqual(await readCounter(services.db, scope, NOW), { count: 0, windowEnd: NOW });
  assert.equal(inside?.(insert, [scope, NOW + 60_000, 4]), null, "ran with no transaction open");
  assert.deepEqual(await readCounter(services.db, scope, NOW), { count: 0, windowEnd: NOW });
});

// db/database.ts: every connection of the pool turns PostgreSQL's JIT off before its first
// statement (a LIMIT walk whose estimate passed jit_above_cost was compiled for 100-200 ms).
test("PostgreSQL: JIT is off on every connection of the pool, the first statement included", async () => {
  const { services } = await testServices("postgres");
  const settings = await Promise.all(Array.from({ length: 4 }, () => sql<{ jit: string }>`show jit`.execute(services.db)));
  assert.deepEqual(
    settings.map((s) => s.rows[0]?.jit),
    ["off", "off", "off", "off"],
  );
});
