import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { Services } from "../services.js";
import { ingestStripeEvent } from "./stripe-ingest.service.js";

// Stripe's events are a few kilobytes; a Checkout Session with many line items more.
const STRIPE_BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * `POST /processor/stripe/{workspace slug}`: Stripe's webhook endpoint for a workspace.
 * Outside the API-key scope: the body's signature authenticates it. Registered as its
 * own plugin so that the raw-string JSON parser it needs stays inside this scope.
 */
export const stripeRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  // The signature is over the exact bytes Stripe sent, so the body is kept as text.
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string", bodyLimit: STRIPE_BODY_LIMIT_BYTES }, (_request, body, done) => done(null, body));

  app.post(
    "/processor/stripe/:slug",
    {
      bodyLimit: STRIPE_BODY_LIMIT_BYTES,
      schema: { hide: true, params: Type.Object({ slug: Type.String({ maxLength: 63 }) }) },
    },
    async (request, reply) => {
      const result = await ingestStripeEvent(services, {
        slug: request.params.slug,
        rawBody: typeof request.body === "string" ? request.body : "",
        signature: typeof request.headers["stripe-signature"] === "string" ? request.headers["stripe-signature"] : undefined,
      });
      if (result.outcome === "ignored" || result.outcome === "deferred") {
        request.log.warn({ stripeEvent: result.event, type: result.type, outcome: result.outcome, reason: result.reason }, "stripe event not applied");
      }
      return reply.status(200).send({ received: true, outcome: result.outcome });
    },
  );
};
