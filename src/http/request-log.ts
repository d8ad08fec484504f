// One log line per request, written when it is answered, instead of Fastify's two (one on
// arrival, one on answer, each serialising the request or reply anew). The two hot routes'
// answered requests go at `debug`: at the default level an access check or a retrieve that
// succeeds writes nothing (a disabled level's method is pino's no-op), while
// their refusals and failures, and every other route, are still logged at `info`.
import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import { redactUrl } from "./log-redaction.js";

const HOT_ROUTES = new Set(["/api/v1/tools/:tool/customers/:email", "/api/client/v1/tools/:tool/access"]);

// pino's own check; Fastify's logger type does not declare it (its no-logger stand-in lacks it).
const levelEnabled = (log: FastifyBaseLogger, level: "debug" | "info") =>
  (log as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled?.(level) ?? true;

export function logRequests(app: FastifyInstance): void {
  app.addHook("onResponse", async (request, reply) => {
    const quiet = reply.statusCode < 400 && HOT_ROUTES.has(request.routeOptions.url ?? "");
    const log = request.log;
    // The hot routes' quiet lines cost nothing at the default level, their URL's redaction included.
    if (!levelEnabled(log, quiet ? "debug" : "info")) return;
    const line = { method: request.method, url: redactUrl(request.url), statusCode: reply.statusCode, responseTime: reply.elapsedTime };
    if (quiet) log.debug(line, "request completed");
    else log.info(line, "request completed");
  }); // A client that leaves before the answer gets no onResponse: one line says so, not as a failure.
  app.addHook("onRequestAbort", async (request) => {
    request.log.info({ method: request.method, url: redactUrl(request.url) }, "request aborted");
  });
}
