// Response serialisers compiled once per schema, shared schemas and options in a process.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Type } from "@sinclair/typebox";
import Fastify from "fastify";
import { buildSerializer } from "./serialization.js";

const Item = Type.Object({ id: Type.String(), n: Type.Integer() }, { $id: "Item" });
const Items = Type.Object({ data: Type.Array(Type.Ref("Item")) });

/** A Fastify app as buildApp makes one, with `shared` as its shared schema; answers the serialiser its route got, and its answer. */
async function app(shared: object) {
  const got: unknown[] = [];
  const spy: typeof buildSerializer = (externalSchemas, options) => {
    const build = buildSerializer(externalSchemas, options);
    return (route) => {
      const serialize = build(route);
      if (route.url === "/items" && route.method === "GET") got.push(serialize);
      return serialize;
    };
  };
  const fastify = Fastify({ schemaController: { compilersFactory: { buildSerializer: spy } } });
  fastify.addSchema(shared);
  fastify.get("/items", { schema: { response: { 200: Items } } }, async () => ({ data: [{ id: "a", n: 1, note: "kept?", secret: "x" }], extra: true }));
  await fastify.ready();
  const answer = (await fastify.inject({ url: "/items" })).body;
  await fastify.close();
  return { serializer: got[0], answer };
}

test("a second app (Fastify copies the shared schemas it is given) gets the first one's serialiser, which writes only what the schema says", async () => {
  const first = await app(Item);
  const second = await app(Item);
  assert.ok(first.serializer, "the route's serialiser was built");
  assert.equal(second.serializer, first.serializer, "compiled once in the process");
  assert.equal(first.answer, '{"data":[{"id":"a","n":1}]}');
  assert.equal(second.answer, first.answer);
});

test("other shared schemas under the same $id compile a serialiser of their own", async () => {
  const first = await app(Item);
  const wider = await app(Type.Object({ id: Type.String(), n: Type.Integer(), note: Type.String() }, { $id: "Item" }));
  assert.notEqual(wider.serializer, first.serializer);
  assert.equal(wider.answer, '{"data":[{"id":"a","n":1,"note":"kept?"}]}');
});
