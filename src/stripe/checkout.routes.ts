import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { Services } from "../services.js";
import { CheckoutBody, CheckoutParams, CreatedCheckout } from "./checkout.schema.js";
import { createCheckout } from "./checkout.service.js";

/**
 * `POST /api/client/v1/tools/{tool}/checkout`: the extension's buy button, on the
 * workspace's address. No key: a signed-out buyer asks. It moves to the client API's
 * folder, behind its device sign-in, when that exists.
 */
export const checkoutRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.post(
    "/tools/:tool/checkout",
    { schema: { hide: true, params: CheckoutParams, body: CheckoutBody, response: { 200: CreatedCheckout } } },
    async (request) => createCheckout(services, { hostname: request.hostname, toolId: request.params.tool, body: request.body }),
  );
};
