import assert from "node:assert/strict";
import { test } from "node:test";
import { derivedId, isId, newId, randomBase62 } from "./ids.js";

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
