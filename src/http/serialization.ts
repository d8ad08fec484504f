// Response serialisers: fast-json-stringify, as Fastify compiles them by default, but each
// compiled once in a process. Compiling every route's answers is most of what building
// the app costs; a process that builds the app again (each test builds its own) reuses
// them. A serialiser depends on its schema, on the shared schemas its `$ref`s reach and
// on the serialiser options: all three make the key.

import fastJsonStringify from "fast-json-stringify";
import type { FastifyServerOptions } from "fastify";

type BuildSerializer = NonNullable<NonNullable<NonNullable<FastifyServerOptions["schemaController"]>["compilersFactory"]>["buildSerializer"]>;
type Serialize = (data: unknown) => string;
type Schema = Parameters<typeof fastJsonStringify>[0];

// By the route's schema (a module's constant, the same object in every app), then by the
// shared schemas and options as text: Fastify copies each shared schema it is given, so
// every app holds copies of its own, equal in content.
const compiled = new WeakMap<object, Map<string, Serialize>>();

export const buildSerializer: BuildSerializer = (externalSchemas, serializerOpts) => {
  const shared = (externalSchemas ?? {}) as Record<string, Schema>;
  const sharedKey = JSON.stringify([shared, serializerOpts ?? {}]);
  return ({ schema }) => {
    const routeSchema = schema as object & { $id?: string };
    let bySharedSchemas = compiled.get(routeSchema);
    if (!bySharedSchemas) {
      bySharedSchemas = new Map();
      compiled.set(routeSchema, bySharedSchemas);
    }
    let serialize = bySharedSchemas.get(sharedKey);
    if (!serialize) {
      // As Fastify's own compiler: a shared schema that is the route's own is not given twice.
      const others = routeSchema.$id && shared[routeSchema.$id] ? Object.fromEntries(Object.entries(shared).filter(([id]) => id !== routeSchema.$id)) : shared;
      serialize = fastJsonStringify(routeSchema as Schema, { ...(serializerOpts as object), schema: others }) as Serialize;
      bySharedSchemas.set(sharedKey, serialize);
    }
    return serialize;
  };
};
