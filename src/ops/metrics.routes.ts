import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyInstance, onResponseHookHandler } from "fastify";
import { ApiError } from "../errors/errors.js";
import type { Services } from "../services.js";
import type { MetricsRecorder } from "./metrics.js";

const digest = (text: string) => createHash("sha256").update(text).digest();

/**
 * `GET /metrics`, Prometheus' text format, behind the bearer token WARDEN_METRICS_TOKEN on
 * the main port. Without the token configured the route answers 404 as if it did not
 * exist; a missing or wrong token, 401. The figures name no workspace, but they do tell
 * an outsider the service's traffic and backlog, so they are not public.
 */
export const metricsRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const token = services.config.metricsToken;
  const expected = token === null ? null : digest(`Bearer ${token}`);
  app.get("/metrics", { logLevel: "warn", schema: { hide: true } }, async (request, reply) => {
    if (expected === null) return reply.callNotFound();
    // Compared as digests: equal lengths for timingSafeEqual, and no timing on the token's length.
    if (!timingSafeEqual(digest(request.headers.authorization ?? ""), expected)) {
      throw new ApiError("authentication_failed", "GET /metrics needs Authorization: Bearer <WARDEN_METRICS_TOKEN>.");
    }
    const text = await services.metrics.render();
    return reply.header("content-type", services.metrics.contentType).header("cache-control", "no-store").send(text);
  });
};

/**
 * Counts every answer by route pattern (never the raw URL: one series per route, not
 * per address looked up) and status, and every refusal by a limit. Added at the root,
 * before any route, so that it sees them all.
 */
export function instrumentRequests(app: FastifyInstance, metrics: MetricsRecorder): void {
  // Each route gets a hook that knows its pattern: reading request.routeOptions builds
  // and freezes an object on every request, which cost the retrieve benchmark some 3%.
  // Callback hooks: an async one would cost every request a promise.
  app.addHook("onRoute", (route) => {
    const url = route.url;
    const count: onResponseHookHandler = (request, reply, done) => {
      metrics.countRequest(request.method, url, reply.statusCode, reply.elapsedTime / 1000);
      done();
    };
    route.onResponse = [...[route.onResponse ?? []].flat(), count];
  });
  // A request no route took never reaches a route's hooks.
  app.addHook("onResponse", (request, reply, done) => {
    if (request.is404) metrics.countRequest(request.method, "unmatched", reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  app.addHook("onError", async (_request, _reply, error) => {
    if (error instanceof ApiError && error.limit !== undefined) metrics.countRefusal(error.limit);
  });
}
