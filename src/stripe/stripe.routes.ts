import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { Services } from "../services.js";
import { SLUG } from "../workspaces/workspace.service.js";
import { ingestStripeEvent } from "./stripe-ingest.service.js";

// Stripe's events are a few kilobytes, a Checkout Session with many line items some tens;
// Stripe keeps them well under this. A larger body is refused (413) before it is read:
// the endpoint is open to anyone, and the signature can only be checked once it is.
const STRIPE_BODY_LIMIT_BYTES = 256 * 1024;

/**
 * `POST /processor/stripe/{workspace slug}`: Stripe's webhook endpoint for a workspace.
 * Outside the API-key scope: the body's signature authenticates it. Registered as its
 * own plugin so that the raw-bytes parser it needs stays inside this scope.
 */
export const stripeRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  // The signature is over the exact bytes Stripe sent, so the body is kept as they came
  // and parsed only once it has verified.
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "buffer", bodyLimit: STRIPE_BODY_LIMIT_BYTES }, (_request, body, done) => done(null, body));

  app.post(
    "/processor/stripe/:slug",
    {
      bodyLimit: STRIPE_BODY_LIMIT_BYTES,
      // A slug no workspace can have (NUL, which PostgreSQL refuses in text, or any
      // control character) is refused here, before it reaches a query.
      schema: { hide: true, params: Type.Object({ slug: Type.String({ maxLength: 63, pattern: SLUG.source }) }) },
    },
    async (request, reply) => {
      const result = await ingestStripeEvent(services, {
        slug: request.params.slug,
        rawBody: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
        signature: typeof request.headers["stripe-signature"] === "string" ? request.headers["stripe-signature"] : undefined,
      });
      if (result.outcome === "ignored" || result.outcome === "deferred") {
        request.log.warn({ stripeEvent: result.event, type: result.type, outcome: result.outcome, reason: result.reason }, "stripe event not applied");
      }
      return reply.status(200).send({ received: true, outcome: result.outcome });
    },
  );
};
