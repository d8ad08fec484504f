import cors from "@fastify/cors";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply } from "fastify";
import { principalOf } from "../auth/auth.hook.js";
import { authenticateDevice } from "../client/client.service.js";
import { isAllowedClientOrigin } from "../client/cors.js";
import { CustomerParams } from "../customers/customer.schema.js";
import { commonErrors, ToolParams } from "../http/common.schema.js";
import type { Services } from "../services.js";
import { SpendBody, SpendHeaders } from "./usage.schema.js";
import { listDeviceUsage, listUsage, type SpendResult, spendDeviceUsage, spendUsage } from "./usage.service.js";

const SPEND_DESCRIPTION =
  "Spends whole units of a meter: from the allowances first, the one that resets soonest first, then from credits, those that expire soonest first (then those that never expire, oldest first). All or nothing: a use over what is left is refused with 402 usage_limit_error, whose error.usage is the meter's usage, and spends nothing. Spends of one person's meter apply one at a time, across every Warden process. Send an Idempotency-Key to make a retry safe: the same key and body within 24 hours answer the first spend again (Idempotent-Replayed: true) and spend nothing more.";
const spendResponses = { 200: { $ref: "Spent" }, 402: { $ref: "Error" }, ...commonErrors };
const usageList = { 200: { $ref: "MeterUsageList" }, ...commonErrors };

function answerSpend(reply: FastifyReply, result: SpendResult) {
  // A replay answers exactly what the first request answered.
  if (!result.spent) reply.header("Idempotent-Replayed", "true");
  // Already JSON (a Spent, as the Idempotency-Key stores it): sent as it is, not serialised again.
  return reply.status(200).type("application/json; charset=utf-8").send(result.body);
}

/** The vendor's usage routes, under /api/v1 behind the API key. */
export const usageRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.get(
    "/tools/:tool/customers/:email/usage",
    {
      schema: {
        operationId: "listCustomerUsage",
        summary: "Read a customer's meters",
        description:
          "Each meter the tool declares, as the address holds it now: its allowances this period (one per source of access, or the free allowance for someone who holds nothing), what was used of them, the credits available and what a spend may take. An unknown address reads as someone who holds nothing.",
        tags: ["Usage"],
        params: CustomerParams,
        response: usageList,
      },
    },
    async (request) => listUsage({ services, principal: principalOf(request) }, request.params.tool, request.params.email),
  );

  app.post(
    "/tools/:tool/customers/:email/usage",
    {
      schema: {
        operationId: "spendCustomerUsage",
        summary: "Spend a customer's units",
        description: `${SPEND_DESCRIPTION} An unknown address is created (without an account, as a grant's) only when the tool's free allowance pays for the spend.`,
        tags: ["Usage"],
        params: CustomerParams,
        headers: SpendHeaders,
        body: SpendBody,
        response: spendResponses,
      },
    },
    async (request, reply) =>
      answerSpend(
        reply,
        await spendUsage(
          { services, principal: principalOf(request) },
          request.params.tool,
          request.params.email,
          request.body,
          request.headers["idempotency-key"],
        ),
      ),
  );
};

const DEVICE_AUTH = "Authenticated by the device token: Authorization: Bearer wdt_…";

/**
 * The client API's usage routes, at /api/client/v1/tools/{tool}/usage: the device's
 * person's meters. Their own prefix, so that their CORS plugin (the client API's rules)
 * answers only their path and leaves the client routes' own untouched.
 */
export const clientUsageRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  await app.register(cors, {
    origin: (origin, callback) => callback(null, isAllowedClientOrigin(origin, services.config.clientOrigins)),
    methods: ["GET", "POST"],
    allowedHeaders: ["Authorization", "Content-Type", "Idempotency-Key"],
    exposedHeaders: ["Request-Id", "Retry-After", "Idempotent-Replayed"],
    credentials: false,
    maxAge: 600,
    strictPreflight: false,
  });
  const session = (request: { hostname: string; ip: string; headers: { authorization?: string } }) =>
    authenticateDevice(services, { hostname: request.hostname, source: request.ip, authorization: request.headers.authorization });

  app.get(
    "/",
    {
      schema: {
        operationId: "clientListUsage",
        summary: "Read my meters",
        description: `Each meter the tool declares, as the device's person holds it now (as the vendor API's GET /api/v1/tools/{tool}/customers/{email}/usage answers it). ${DEVICE_AUTH}`,
        tags: ["Client"],
        security: [],
        params: ToolParams,
        response: usageList,
      },
    },
    async (request) => listDeviceUsage(services, await session(request), request.params.tool),
  );

  app.post(
    "/",
    {
      schema: {
        operationId: "clientSpendUsage",
        summary: "Spend my units",
        description: `${SPEND_DESCRIPTION} ${DEVICE_AUTH}`,
        tags: ["Client"],
        security: [],
        params: ToolParams,
        headers: SpendHeaders,
        body: SpendBody,
        response: spendResponses,
      },
    },
    async (request, reply) =>
      answerSpend(reply, await spendDeviceUsage(services, await session(request), request.params.tool, request.body, request.headers["idempotency-key"])),
  );
};
