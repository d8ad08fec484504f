import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { Services } from "../services.js";
import { ReadinessCheck } from "./readiness.js";

/**
 * `GET /healthz` (the process serves) and `GET /readyz` (it can serve: the database
 * answers on the schema this code knows). For load balancers and orchestrators that poll
 * every second or so: no API key, nothing counted against a limit, not logged at info,
 * and not in the vendor's API document.
 *
 * A 503 from /readyz carries its reason in the error shape. It is written here rather
 * than thrown to the error renderer, which hides a 5xx's message (rightly, for a failed
 * request) and logs it as an error: here the reason is the answer, and an outage polled
 * every second would fill the log.
 */
export const healthRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const readiness = new ReadinessCheck(services.db, services.clock, app.log);
  const options = { logLevel: "warn" as const, schema: { hide: true } };

  app.get("/healthz", options, async (_request, reply) => reply.header("cache-control", "no-store").send({ status: "ok" }));

  app.get("/readyz", options, async (_request, reply) => {
    const answer = await readiness.check();
    reply.header("cache-control", "no-store");
    if (answer.ready) return reply.send({ status: "ready" });
    return reply.status(503).send({ error: { type: "api_error", message: `Not ready: ${answer.reason}.` } });
  });
};
