import cors from "@fastify/cors";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyRequest } from "fastify";
import { commonErrors, ToolParams } from "../http/common.schema.js";
import type { Services } from "../services.js";
import { Access, DeviceList, DeviceParams, Session, SignedOut, SignInBody, SignInSent, VerifyBody } from "./client.schema.js";
import { authenticateDevice, checkAccess, listDevices, requestSignIn, signOut, verifySignIn } from "./client.service.js";
import { isAllowedClientOrigin } from "./cors.js";
import { createMailer } from "./mailer.js";

const DEVICE_AUTH = "Authenticated by the device token: Authorization: Bearer wdt_…";

/**
 * The client API under /api/client/v1: what a browser extension calls. Sign-in takes no
 * credential; every other route takes the device token from a verified sign-in.
 */
export const clientRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  // Extension origins, and the web origins the operator lists; for these routes only.
  await app.register(cors, {
    origin: (origin, callback) => callback(null, isAllowedClientOrigin(origin, services.config.clientOrigins)),
    methods: ["GET", "POST", "DELETE"],
    allowedHeaders: ["Authorization", "Content-Type"],
    exposedHeaders: ["Request-Id", "Retry-After", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"],
    credentials: false,
    maxAge: 600,
  });
  const mailer = createMailer(services.config, app.log);
  app.addHook("onClose", async () => mailer.close());
  const session = (request: FastifyRequest) =>
    authenticateDevice(services, { hostname: request.hostname, source: request.ip, authorization: request.headers.authorization });

  app.post(
    "/sign-in",
    {
      schema: {
        operationId: "clientSignIn",
        summary: "Ask for a sign-in code",
        description:
          "Mails a 6-digit code to the address, valid once for 10 minutes; a newer code replaces an older one. Rate limited per address and per source address.",
        tags: ["Client"],
        security: [],
        body: SignInBody,
        response: { 200: SignInSent, ...commonErrors },
      },
    },
    async (request) => requestSignIn(services, mailer, { hostname: request.hostname, source: request.ip, body: request.body }),
  );

  app.post(
    "/sign-in/verify",
    {
      schema: {
        operationId: "clientVerifySignIn",
        summary: "Verify a sign-in code",
        description:
          "Signs the address in on a new device and answers the device's session token. 5 wrong codes void the code. Licences bought and grants made under the address apply at once.",
        tags: ["Client"],
        security: [],
        body: VerifyBody,
        response: { 200: Session, ...commonErrors },
      },
    },
    async (request) => verifySignIn(services, { hostname: request.hostname, body: request.body }),
  );

  app.get(
    "/tools/:tool/access",
    {
      schema: {
        operationId: "clientCheckAccess",
        summary: "Check access",
        description: `Whether the signed-in person holds the tool now, and how. Keep the answer at most recheck_after seconds (never more than 900). ${DEVICE_AUTH}`,
        tags: ["Client"],
        security: [],
        params: ToolParams,
        response: { 200: Access, ...commonErrors },
      },
    },
    async (request, reply) => {
      const answer = await checkAccess(services, await session(request), request.params.tool);
      reply.header("Cache-Control", `private, max-age=${answer.recheck_after}`);
      return answer;
    },
  );

  app.get(
    "/devices",
    {
      schema: {
        operationId: "clientListDevices",
        summary: "List my devices",
        description: `The devices signed in to the workspace under this person. ${DEVICE_AUTH}`,
        tags: ["Client"],
        security: [],
        response: { 200: DeviceList, ...commonErrors },
      },
    },
    async (request) => listDevices(services, await session(request)),
  );

  app.delete(
    "/devices/:id",
    {
      schema: {
        operationId: "clientSignOutDevice",
        summary: "Sign a device out",
        description: `Signs out one of this person's devices (this one included); its token stops working at once. ${DEVICE_AUTH}`,
        tags: ["Client"],
        security: [],
        params: DeviceParams,
        response: { 200: SignedOut, ...commonErrors },
      },
    },
    async (request) => signOut(services, await session(request), request.params.id),
  );
};
