// Response serialisers compiled once per schema and shared schemas in a process.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Type } from "@sinclair/typebox";
import { buildSerializer } from "./serialization.js";

const Item = Type.Object({ id: Type.String(), n: Type.Integer() }, { $id: "Item" });
const route = { schema: Type.Object({ data: Type.Array(Type.Ref("Item")) }), method: "GET", url: "/x", httpStatus: "200" };

test("a second app's serialiser of the same schema over the same shared schemas is the first one, and writes what the schema says", () => {
  const first = buildSerializer({ Item }, {})(route);
  const again = buildSerializer({ Item }, {})(route);
  assert.equal(again, first, "compiled once");
  // Only the schema's fields are written, through the shared schema's $ref.
  assert.equal(first({ data: [{ id: "a", n: 1, secret: "x" }], extra: true }), '{"data":[{"id":"a","n":1}]}');
});

test("other shared schemas under the same $id compile a serialiser of their own", () => {
  const first = buildSerializer({ Item }, {})(route);
  const Wider = Type.Object({ id: Type.String(), n: Type.Integer(), note: Type.String() }, { $id: "Item" });
  const other = buildSerializer({ Item: Wider }, {})(route);
  assert.notEqual(other, first);
  assert.equal(other({ data: [{ id: "a", n: 1, note: "kept" }] }), '{"data":[{"id":"a","n":1,"note":"kept"}]}');
  assert.equal(first({ data: [{ id: "a", n: 1, note: "kept" }] }), '{"data":[{"id":"a","n":1}]}');
});
