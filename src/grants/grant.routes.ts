import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { principalOf } from "../auth/auth.hook.js";
import { commonErrors, ToolParams } from "../http/common.schema.js";
import type { Services } from "../services.js";
import { CreateGrantBody, GrantParams, IdempotencyHeaders, ListGrantsQuery } from "./grant.schema.js";
import { createGrant, listGrants, revokeGrant } from "./grant.service.js";

export const grantRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.get(
    "/tools/:tool/grants",
    {
      // The key's request is counted with the lookup, in one statement (auth.hook.ts).
      config: { countsKeyRequest: true },
      schema: {
        operationId: "listGrants",
        summary: "List grants",
        description: "The address's grants and trials for the tool, newest first. Counted as a lookup by address.",
        tags: ["Grants"],
        params: ToolParams,
        querystring: ListGrantsQuery,
        response: { 200: { $ref: "GrantList" }, ...commonErrors },
      },
    },
    async (request) => listGrants({ services, principal: principalOf(request) }, request.params.tool, request.query.email),
  );

  app.post(
    "/tools/:tool/grants",
    {
      schema: {
        operationId: "createGrant",
        summary: "Create a grant",
        description:
          "Grants access without payment. An unknown address gets an account, and the grant applies when the person signs in. Send an Idempotency-Key to make a retry safe.",
        tags: ["Grants"],
        params: ToolParams,
        headers: IdempotencyHeaders,
        body: CreateGrantBody,
        response: { 201: { $ref: "Grant" }, 403: { $ref: "Error" }, ...commonErrors },
      },
    },
    async (request, reply) => {
      const result = await createGrant({ services, principal: principalOf(request) }, request.params.tool, request.body, request.headers["idempotency-key"]);
      // A replay answers exactly what the first request answered.
      if (!result.created) reply.header("Idempotent-Replayed", "true");
      return reply.status(201).send(result.grant);
    },
  );

  app.delete(
    "/tools/:tool/grants/:id",
    {
      schema: {
        operationId: "revokeGrant",
        summary: "Revoke a grant",
        description: "Ends the grant. Revoking an already revoked grant succeeds and keeps the first revocation time.",
        tags: ["Grants"],
        params: GrantParams,
        response: { 200: { $ref: "RevokedGrant" }, ...commonErrors },
      },
    },
    async (request) => revokeGrant({ services, principal: principalOf(request) }, request.params.tool, request.params.id),
  );
};
