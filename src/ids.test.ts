import assert from "node:assert/strict";
import { test } from "node:test";
import { derivedId, isId, newId, newOrderedId, randomBase62 } from "./ids.js";

test("ids have their prefix and 24 base62 characters, and do not repeat", () => {
  const ids = Array.from({ length: 20_000 }, () => newId("gr"));
  for (const id of ids) assert.ok(isId("gr", id), id);
  assert.equal(new Set(ids).size, ids.length);
});

test("every base62 character is about equally likely, across many blocks of random bytes", () => {
  // 124,000 characters use some thirty 4 KiB blocks of the pool.
  const text = randomBase62(124_000);
  const counts = new Map<string, number>();
  for (const c of text) counts.set(c, (counts.get(c) ?? 0) + 1);
  assert.equal(counts.size, 62);
  // 2,000 expected each; ±20% is over eight standard deviations.
  for (const [c, n] of counts) assert.ok(n > 1_600 && n < 2_400, `${c}: ${n}`);
});

test("a derived id is the same for the same fact and differs for another", () => {
  assert.equal(derivedId("evt", "refund:re_1"), derivedId("evt", "refund:re_1"));
  assert.notEqual(derivedId("evt", "refund:re_1"), derivedId("evt", "refund:re_2"));
  assert.ok(isId("evt", derivedId("evt", "refund:re_1")));
});

test("ordered ids have the same shape, sort by the time they were made, and do not repeat within a millisecond", () => {
  const at = Date.UTC(2026, 10, 24, 3, 0, 0);
  const ids = Array.from({ length: 20_000 }, (_, i) => newOrderedId("att", at + Math.floor(i / 100)));
  for (const id of ids) assert.ok(isId("att", id), id);
  assert.equal(new Set(ids).size, ids.length);
  // Across milliseconds, in the order made (byte order, as SQLite and a C collation compare).
  const firsts = ids.filter((_, i) => i % 100 === 0);
  assert.deepEqual([...firsts].sort(), firsts);
  // Fixed width from 1970 to past the year 8000: a later time never sorts first.
  const times = [0, 1, 61, 62, at, Date.UTC(8000, 0, 1)];
  const made = times.map((t) => newOrderedId("dlv", t));
  assert.deepEqual([...made].sort(), made);
  assert.ok(made.every((id) => isId("dlv", id)));
});
