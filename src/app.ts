import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import Fastify, { type FastifyInstance, type HTTPMethods, LogController } from "fastify";
import { requireApiKey } from "./auth/auth.hook.js";
import { clientRoutes } from "./client/client.routes.js";
import { customerPageRoutes } from "./customer-pages/customer-pages.routes.js";
import { PAGES } from "./customer-pages/customer-session.js";
import { customerRoutes } from "./customers/customer.routes.js";
import { Customer, CustomerListItem, CustomerPage, FeatureCheck } from "./customers/customer.schema.js";
import { dashboardRoutes } from "./dashboard/dashboard.routes.js";
import { ApiError } from "./errors/errors.js";
import { grantRoutes } from "./grants/grant.routes.js";
import { Grant, GrantList, RevokedGrant } from "./grants/grant.schema.js";
import { ErrorBody } from "./http/common.schema.js";
import { refuseControlCharacters } from "./http/control-characters.js";
import { docsPageOptions } from "./http/docs-page.js";
import { renderError } from "./http/error.handler.js";
import { redactingStream } from "./http/log-redaction.js";
import { answerClientError, refuseExpectation, requireHost } from "./http/raw-errors.js";
import { logRequests } from "./http/request-log.js";
import { buildSerializer } from "./http/serialization.js";
import { validatorCompiler } from "./http/validation.js";
import { newId } from "./ids.js";
import { insightsRoutes } from "./insights/insights.routes.js";
import { healthRoutes } from "./ops/health.routes.js";
import { instrumentRequests, metricsRoutes } from "./ops/metrics.routes.js";
import { closeConnectionsWhenClosing } from "./ops/shutdown.js";
import { paddleRoutes } from "./paddle/paddle.routes.js";
import type { Services } from "./services.js";
import { stripeRoutes } from "./stripe/stripe.routes.js";
import { jwksRoutes } from "./tokens/jwks.routes.js";
import { creditRoutes } from "./usage/credits.routes.js";
import { AdjustedCredits, CreditLedger, CreditLedgerEntry } from "./usage/credits.schema.js";
import { clientUsageRoutes, usageRoutes } from "./usage/usage.routes.js";
import { MeterUsage, MeterUsageList, Spent, UsageBucket } from "./usage/usage.schema.js";
import { WARDEN_VERSION } from "./version.js";
import { webhookRoutes } from "./webhooks/webhook.routes.js";
import {
  CreatedWebhookEndpoint,
  Delivery,
  DeliveryPage,
  Queued,
  SentExample,
  WebhookEndpoint,
  WebhookEndpointList,
  WebhookEvent,
  WebhookEventPage,
} from "./webhooks/webhook.schema.js";

export const API_PREFIX = "/api/v1";
// Grant bodies are a few hundred bytes; anything near this is not a real request.
const BODY_LIMIT_BYTES = 16 * 1024;
const ALL_METHODS: HTTPMethods[] = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

export interface AppOptions {
  /** pino options, or false for no logs (tests). */
  logger?: boolean | { level: string; stream?: { write(line: string): unknown } };
}

/** Builds the HTTP application over the services. It never listens: server.ts does. */
export async function buildApp(services: Services, options: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    // Whatever the destination, lines are redacted on their way to it (http/log-redaction.ts).
    logger:
      options.logger === false
        ? false
        : {
            level: typeof options.logger === "object" ? options.logger.level : services.config.logLevel,
            stream: redactingStream(typeof options.logger === "object" && options.logger.stream ? options.logger.stream : process.stdout),
          },
    genReqId: () => newId("req"),
    // One line per answered request instead (http/request-log.ts).
    logController: new LogController({ disableRequestLogging: true }),
    // Request ids are ours: one sent by a client is not trusted.
    requestIdHeader: false,
    trustProxy: services.config.trustProxy,
    bodyLimit: BODY_LIMIT_BYTES,
    // An address may be 254 characters, and it is a path parameter of retrieve-a-customer.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 512 },
    // Errors Fastify raises before routing (a malformed URL) take the same shape as ours,
    // and so do Node's answers to what does not parse as HTTP at all (raw-errors.ts).
    frameworkErrors: renderError(services.clock),
    clientErrorHandler: answerClientError,
    // A missing Host is refused below, in the contract's shape; Node's own answer has no body.
    http: { requireHostHeader: false },
    schemaController: { compilersFactory: { buildSerializer } },
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.server.on("checkExpectation", refuseExpectation);

  app.setValidatorCompiler(validatorCompiler);
  app.setErrorHandler(renderError(services.clock));
  app.setNotFoundHandler(() => {
    throw new ApiError("route_not_found", "No such route. The API lives under /api/v1; see /api/v1/docs.");
  });
  // Only JSON is accepted; text/plain would otherwise reach validation as a string.
  app.removeContentTypeParser("text/plain");
  app.addHook("onRequest", async (request, reply) => {
    reply.header("Request-Id", request.id);
    // Over TLS (Node's own, or a trusted proxy's X-Forwarded-Proto under WARDEN_TRUST_PROXY),
    // browsers keep to https for a year: a later plain-http link cannot expose a session
    // cookie or a login link. Not includeSubDomains: the vendor's other hosts are not ours.
    if (request.protocol === "https") reply.header("Strict-Transport-Security", "max-age=31536000");
    requireHost(request.headers.host, request.raw.httpVersion);
  });
  app.addHook("preValidation", refuseControlCharacters);
  instrumentRequests(app, services.metrics);
  logRequests(app);
  closeConnectionsWhenClosing(app);

  for (const schema of [
    ErrorBody,
    CustomerListItem,
    CustomerPage,
    Customer,
    FeatureCheck,
    Grant,
    GrantList,
    RevokedGrant,
    AdjustedCredits,
    CreditLedgerEntry,
    CreditLedger,
    WebhookEndpoint,
    CreatedWebhookEndpoint,
    WebhookEndpointList,
    Queued,
    WebhookEvent,
    WebhookEventPage,
    Delivery,
    DeliveryPage,
    SentExample,
    UsageBucket,
    MeterUsage,
    MeterUsageList,
    Spent,
  ]) {
    app.addSchema(schema);
  }

  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Warden API",
        version: WARDEN_VERSION,
        description:
          "Check whether an email address holds a tool and why, list customers, and grant or revoke free access. Every request carries Authorization: Bearer <API_KEY>. The client API (tag Client) is what an extension calls; its access answers are signed, and a vendor's server verifies them against /.well-known/jwks.json (tag Access tokens).",
      },
      servers: [{ url: "/" }],
      components: { securitySchemes: { apiKey: { type: "http", scheme: "bearer", description: "wk_test_… or wk_live_…" } } },
      security: [{ apiKey: [] }],
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => (typeof json.$id === "string" ? json.$id : `def-${i}`) },
  });
  await app.register(swaggerUi, docsPageOptions(API_PREFIX));
  app.get(`${API_PREFIX}/openapi.json`, { schema: { hide: true } }, async () => app.swagger());

  // Every path the API serves answers 405 (with Allow) to the methods it does not serve.
  const methodsByPath = new Map<string, Set<string>>();
  app.addHook("onRoute", (route) => {
    if (!route.url.startsWith(`${API_PREFIX}/tools`) && !route.url.startsWith(`${API_PREFIX}/webhooks`)) return;
    const methods = methodsByPath.get(route.url) ?? new Set<string>();
    for (const m of [route.method].flat()) methods.add(m);
    methodsByPath.set(route.url, methods);
  });

  await app.register(
    async (api) => {
      requireApiKey(api, services);
      await api.register(customerRoutes, { services });
      await api.register(grantRoutes, { services });
      await api.register(creditRoutes, { services });
      await api.register(webhookRoutes, { services });
      await api.register(insightsRoutes, { services });
      await api.register(usageRoutes, { services });
    },
    { prefix: API_PREFIX },
  );

  // The processors' webhooks authenticate by signature, not by API key.
  await app.register(stripeRoutes, { services });
  await app.register(paddleRoutes, { services });
  // The client API: sign-in by emailed code, device sessions, the access check, the buy button.
  await app.register(clientRoutes, { services, prefix: "/api/client/v1" });
  await app.register(clientUsageRoutes, { services, prefix: "/api/client/v1/tools/:tool/usage" });
  // The public keys that verify the client API's access tokens, for vendors' servers and extensions.
  await app.register(jwksRoutes, { services });
  // The vendor dashboard: server-rendered pages for owners, signed in with a mailed code.
  await app.register(dashboardRoutes, { services, prefix: "/dashboard" });
  // The hosted pages a vendor's customers see: sign in, plans, trial, manage.
  await app.register(customerPageRoutes, { services, prefix: PAGES });
  // For operators' machines, off the API: health checks, and the metrics behind their own token.
  await app.register(healthRoutes, { services });
  await app.register(metricsRoutes, { services });
  // A browser asks every host for /favicon.ico unless the page names an icon (a hosted page
  // of a workspace without a logo names none): nothing to show, and no 404 in its console.
  app.get("/favicon.ico", { schema: { hide: true } }, async (_request, reply) => reply.header("Cache-Control", "public, max-age=86400").code(204).send());

  await app.register(async (fallback) => {
    for (const [url, served] of methodsByPath) {
      const allow = [...served].join(", ");
      fallback.route({
        method: ALL_METHODS.filter((m) => !served.has(m)),
        url,
        schema: { hide: true },
        handler: async (_request, reply) => {
          reply.header("Allow", allow);
          throw new ApiError("method_not_allowed", `This path does not answer that method. Allowed: ${allow}.`);
        },
      });
    }
  });

  return app;
}
