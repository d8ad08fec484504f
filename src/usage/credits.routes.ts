import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { principalOf } from "../auth/auth.hook.js";
import { commonErrors } from "../http/common.schema.js";
import type { Services } from "../services.js";
import { AdjustCreditsBody, CreditsParams } from "./credits.schema.js";
import { adjustCredits, listCredits } from "./credits.service.js";

export const creditRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.get(
    "/tools/:tool/customers/:email/credits",
    {
      // The key's request is counted with the lookup, in one statement (auth.hook.ts).
      config: { countsKeyRequest: true },
      schema: {
        operationId: "listCredits",
        summary: "List a customer's credits",
        description:
          "The address's credits ledger for the tool, every meter, newest first (the newest 1,000 rows): packs bought and hand adjustments. An address Warden does not know has none. Counted as a lookup by address.",
        tags: ["Credits"],
        params: CreditsParams,
        response: { 200: { $ref: "CreditLedger" }, ...commonErrors },
      },
    },
    async (request) => listCredits({ services, principal: principalOf(request) }, request.params.tool, request.params.email),
  );

  app.post(
    "/tools/:tool/customers/:email/credits",
    {
      schema: {
        operationId: "adjustCredits",
        summary: "Add or remove credits",
        description:
          "A hand adjustment of one meter's credits, with a note. Adding makes a ledger row (an unknown address gets a person record); removing draws from the credits available, soonest-expiring first, and is refused with nothing changed when fewer are available.",
        tags: ["Credits"],
        params: CreditsParams,
        body: AdjustCreditsBody,
        response: { 201: { $ref: "AdjustedCredits" }, ...commonErrors },
      },
    },
    async (request, reply) =>
      reply.status(201).send(await adjustCredits({ services, principal: principalOf(request) }, request.params.tool, request.params.email, request.body)),
  );
};
