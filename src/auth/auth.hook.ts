import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Services } from "../services.js";
import { authenticate, type Principal, slugFromHost } from "./key.service.js";

declare module "fastify" {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

/** Requires a valid bearer key on every route of the instance it is added to. */
export function requireApiKey(app: FastifyInstance, services: Services): void {
  app.decorateRequest("principal", null);
  app.addHook("onRequest", async (request: FastifyRequest) => {
    request.principal = await authenticate(services.db, services.clock, services.limits, {
      authorization: request.headers.authorization,
      hostSlug: slugFromHost(request.hostname, services.config.domain),
      source: request.ip,
    });
  });
}

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error("route reached without authentication");
  return request.principal;
}
