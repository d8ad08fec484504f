import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { principalOf } from "../auth/auth.hook.js";
import { commonErrors, ToolParams } from "../http/common.schema.js";
import type { Services } from "../services.js";
import { CustomerParams, FeatureParams, ListCustomersQuery } from "./customer.schema.js";
import { checkFeature, listCustomers, retrieveCustomerJson } from "./customer.service.js";

export const customerRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.get(
    "/tools/:tool/customers",
    {
      schema: {
        operationId: "listCustomers",
        summary: "List customers",
        description:
          "Everyone who holds the tool or has signed in to it, newest first: the newest 2,000 of each kind. A customer beyond them can still be found with Retrieve a customer.",
        tags: ["Customers"],
        params: ToolParams,
        querystring: ListCustomersQuery,
        response: { 200: { $ref: "CustomerPage" }, ...commonErrors },
      },
    },
    async (request) => listCustomers({ services, principal: principalOf(request) }, request.params.tool, request.query),
  );

  app.get(
    "/tools/:tool/customers/:email",
    {
      // The key's request is counted with the lookup, in one statement (auth.hook.ts).
      config: { countsKeyRequest: true },
      schema: {
        operationId: "retrieveCustomer",
        summary: "Retrieve a customer",
        description:
          "Whether the address holds the tool now, and how. Gmail spellings with or without dots find the same person; an address with no account still answers for a licence bought under it.",
        tags: ["Customers"],
        params: CustomerParams,
        response: { 200: { $ref: "Customer" }, ...commonErrors },
      },
    },
    // Sent as the JSON text the route's serialiser wrote, kept while its answer holds (customer.service.ts).
    async (request, reply) => {
      const json = await retrieveCustomerJson({ services, principal: principalOf(request) }, request.params.tool, request.params.email, (customer) =>
        // fast-json-stringify's answer is text; Fastify types a custom serialiser's widely.
        String(reply.serialize(customer)),
      );
      return reply.type("application/json; charset=utf-8").send(json);
    },
  );

  app.get(
    "/tools/:tool/customers/:email/features/:feature",
    {
      // Counted as a lookup, as retrieve is, with the key's request in the same statement.
      config: { countsKeyRequest: true },
      schema: {
        operationId: "checkFeature",
        summary: "Check a feature",
        description:
          "Whether the address holds one feature of the tool now (a feature the tool declares: 400 otherwise). An address Warden does not know answers enabled false, not 404. Counted as a lookup, as Retrieve a customer.",
        tags: ["Customers"],
        params: FeatureParams,
        response: { 200: { $ref: "FeatureCheck" }, ...commonErrors },
      },
    },
    async (request) => checkFeature({ services, principal: principalOf(request) }, request.params.tool, request.params.email, request.params.feature),
  );
};
