import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { Services } from "../services.js";
import { SLUG } from "../workspaces/workspace.service.js";
import { ingestPaddleEvent } from "./paddle-ingest.service.js";

// Paddle's notifications are a few kilobytes (a transaction with its items and totals);
// the same limit as Stripe's, for the same reason: the signature can only be checked once
// the body is read, and the endpoint is open to anyone.
const PADDLE_BODY_LIMIT_BYTES = 256 * 1024;

/**
 * `POST /processor/paddle/{workspace slug}`: Paddle's notification destination for a
 * workspace. Outside the API-key scope: the body's signature authenticates it. Its own
 * plugin, so the raw-bytes parser stays inside this scope.
 */
export const paddleRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "buffer", bodyLimit: PADDLE_BODY_LIMIT_BYTES }, (_request, body, done) => done(null, body));

  app.post(
    "/processor/paddle/:slug",
    {
      bodyLimit: PADDLE_BODY_LIMIT_BYTES,
      schema: { hide: true, params: Type.Object({ slug: Type.String({ maxLength: 63, pattern: SLUG.source }) }) },
    },
    async (request, reply) => {
      const signature = request.headers["paddle-signature"];
      const result = await ingestPaddleEvent(services, {
        slug: request.params.slug,
        rawBody: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
        signature: typeof signature === "string" ? signature : undefined,
      });
      if (result.outcome === "ignored") request.log.warn({ paddleEvent: result.event, type: result.type, reason: result.reason }, "paddle event not applied");
      return reply.status(200).send({ received: true, outcome: result.outcome });
    },
  );
};
