// Response serialisers: fast-json-stringify, as Fastify compiles them by default, but each
// compiled once in a process. Compiling every route's answers is most of what building
// the app costs (0.5 s of its 0.8 s); a process that builds the app again (each test
// builds its own) reuses them. A serialiser depends on its schema and on the shared
// schemas its `$ref`s reach; both are the modules' constants, so both make the key.

import fastJsonStringify from "fast-json-stringify";
import type { FastifyServerOptions } from "fastify";

type BuildSerializer = NonNullable<NonNullable<NonNullable<FastifyServerOptions["schemaController"]>["compilersFactory"]>["buildSerializer"]>;
type Serialize = (data: unknown) => string;
type Schema = Parameters<typeof fastJsonStringify>[0];

const compiled = new WeakMap<object, Map<string, Serialize>>();
const objectIds = new WeakMap<object, number>();
let nextObjectId = 0;

function idOf(schema: object): number {
  let id = objectIds.get(schema);
  if (id === undefined) {
    id = nextObjectId++;
    objectIds.set(schema, id);
  }
  return id;
}

export const buildSerializer: BuildSerializer = (externalSchemas, serializerOpts) => {
  const shared = (externalSchemas ?? {}) as Record<string, Schema>;
  const sharedKey = Object.entries(shared)
    .map(([id, schema]) => `${id}=${idOf(schema)}`)
    .join(",");
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
