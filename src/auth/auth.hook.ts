import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { renderError } from "../http/error.handler.js";
import type { Services } from "../services.js";
import { authenticate, slugFromHost } from "./key.service.js";
import type { Principal } from "./principal.js";

declare module "fastify" {
  interface FastifyRequest {
    principal: Principal | null;
  }
  interface FastifyContextConfig {
    /** The route counts the key's request itself, with its lookups (see Principal.keyRequestCounted). */
    countsKeyRequest?: boolean;
  }
}

const writes = (request: FastifyRequest) => request.method !== "GET" && request.method !== "HEAD";

/** Requires a valid bearer key on every route of the instance it is added to. */
export function requireApiKey(app: FastifyInstance, services: Services): void {
  app.decorateRequest("principal", null);
  app.addHook("onRequest", async (request: FastifyRequest) => {
    request.principal = await authenticate(services.db, services.clock, services.limits, {
      authorization: request.headers.authorization,
      hostSlug: slugFromHost(request.hostname, services.config.domain),
      source: request.ip,
      deferKeyRequest: request.routeOptions.config.countsKeyRequest === true,
      writes: writes(request),
    });
  });
  // A route that was to count the key's request with its lookups may fail before it does
  // (a missing tool, an invalid parameter): the request is counted here, before the answer,
  // and a key over its limit answers 429 instead.
  const render = renderError(services.clock);
  app.setErrorHandler(async (error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const principal = request.principal;
    if (principal && !principal.keyRequestCounted) {
      try {
        await services.limits.countKeyRequest(services.db, principal.keyId, services.clock.now(), { writes: writes(request) });
        principal.keyRequestCounted = true;
      } catch (countError) {
        return render(countError, request, reply);
      }
    }
    return render(error, request, reply);
  });
}

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error("route reached without authentication");
  return request.principal;
}
