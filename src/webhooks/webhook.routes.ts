import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { principalOf } from "../auth/auth.hook.js";
import { commonErrors } from "../http/common.schema.js";
import { originOf } from "../http/request-origin.js";
import type { Services } from "../services.js";
import {
  CreateEndpointBody,
  DeliveriesQuery,
  EndpointParams,
  EventsQuery,
  ExampleBody,
  RecoverableDeliveries,
  RecoverBody,
  RotatedWebhookSecret,
  UpdateEndpointBody,
} from "./webhook.schema.js";
import {
  addEndpoint,
  countRecoverable,
  getDelivery,
  getEndpoint,
  listDeliveries,
  listEndpoints,
  listEvents,
  recoverEndpoint,
  removeEndpoint,
  resendDelivery,
  revealSecret,
  rotateSecret,
  sendExample,
  setEnabled,
  updateEndpoint,
} from "./webhook.service.js";

const errors = commonErrors;
const tags = ["Webhooks"];

/** Webhook endpoints, the event log, deliveries, resend, recover and example events: what `warden` and the dashboard use. */
export const webhookRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  // Where the request came from: owners are mailed when a key adds an endpoint or reveals or rotates a secret.
  const ctx = (request: Parameters<typeof principalOf>[0]) => ({ services, principal: principalOf(request), from: originOf(request) });

  app.get(
    "/webhooks/endpoints",
    { schema: { operationId: "listWebhookEndpoints", summary: "List webhook endpoints", tags, response: { 200: Type.Ref("WebhookEndpointList"), ...errors } } },
    async (request) => listEndpoints(ctx(request)),
  );
  app.post(
    "/webhooks/endpoints",
    {
      schema: {
        operationId: "addWebhookEndpoint",
        summary: "Add a webhook endpoint",
        description: "Answers the endpoint and its signing secret.",
        tags,
        body: CreateEndpointBody,
        response: { 201: Type.Ref("CreatedWebhookEndpoint"), ...errors },
      },
    },
    async (request, reply) => reply.status(201).send(await addEndpoint(ctx(request), request.body)),
  );
  app.get(
    "/webhooks/endpoints/:id",
    {
      schema: {
        operationId: "getWebhookEndpoint",
        summary: "Retrieve a webhook endpoint",
        tags,
        params: EndpointParams,
        response: { 200: Type.Ref("WebhookEndpoint"), ...errors },
      },
    },
    async (request) => getEndpoint(ctx(request), request.params.id),
  );
  app.patch(
    "/webhooks/endpoints/:id",
    {
      schema: {
        operationId: "updateWebhookEndpoint",
        summary: "Edit a webhook endpoint",
        description:
          "Changes its URL (checked as when it is added), the event types it receives (null: every type) or its description; what is absent stays. Deliveries already queued go to the new URL.",
        tags,
        params: EndpointParams,
        body: UpdateEndpointBody,
        response: { 200: Type.Ref("WebhookEndpoint"), ...errors },
      },
    },
    async (request) => updateEndpoint(ctx(request), request.params.id, request.body),
  );
  app.delete(
    "/webhooks/endpoints/:id",
    {
      schema: {
        operationId: "removeWebhookEndpoint",
        summary: "Remove a webhook endpoint",
        description: "It receives nothing more and its waiting deliveries fail; its deliveries stay in the log.",
        tags,
        params: EndpointParams,
        response: { 200: Type.Ref("WebhookEndpoint"), ...errors },
      },
    },
    async (request) => removeEndpoint(ctx(request), request.params.id),
  );
  app.get(
    "/webhooks/endpoints/:id/secret",
    {
      schema: {
        operationId: "revealWebhookSecret",
        summary: "Reveal an endpoint's signing secret",
        tags,
        params: EndpointParams,
        response: { 200: Type.Object({ secret: Type.String() }, { additionalProperties: false }), ...errors },
      },
    },
    async (request) => revealSecret(ctx(request), request.params.id),
  );
  app.post(
    "/webhooks/endpoints/:id/secret/rotate",
    {
      schema: {
        operationId: "rotateWebhookSecret",
        summary: "Rotate an endpoint's signing secret",
        description:
          "Answers a new secret. The one it replaces keeps signing for 24 hours: every delivery meanwhile carries both signatures in webhook-signature, then only the new one. Rotating again within the 24 hours drops the oldest secret.",
        tags,
        params: EndpointParams,
        response: { 200: RotatedWebhookSecret, ...errors },
      },
    },
    async (request) => rotateSecret(ctx(request), request.params.id),
  );
  app.post(
    "/webhooks/endpoints/:id/enable",
    {
      schema: {
        operationId: "enableWebhookEndpoint",
        summary: "Enable an endpoint again",
        description: "Deliveries that failed while it was disabled can then be recovered.",
        tags,
        params: EndpointParams,
        response: { 200: Type.Ref("WebhookEndpoint"), ...errors },
      },
    },
    async (request) => setEnabled(ctx(request), request.params.id, true),
  );
  app.post(
    "/webhooks/endpoints/:id/disable",
    {
      schema: {
        operationId: "disableWebhookEndpoint",
        summary: "Disable an endpoint",
        tags,
        params: EndpointParams,
        response: { 200: Type.Ref("WebhookEndpoint"), ...errors },
      },
    },
    async (request) => setEnabled(ctx(request), request.params.id, false),
  );
  app.get(
    "/webhooks/endpoints/:id/recoverable",
    {
      schema: {
        operationId: "countRecoverableDeliveries",
        summary: "Count the failed deliveries that recover would resend",
        description: "For each window recover takes: the endpoint's failed deliveries created since an hour, a day, a week or 30 days ago.",
        tags,
        params: EndpointParams,
        response: { 200: RecoverableDeliveries, ...errors },
      },
    },
    async (request) => countRecoverable(ctx(request), request.params.id),
  );
  app.post(
    "/webhooks/endpoints/:id/recover",
    {
      schema: {
        operationId: "recoverWebhookDeliveries",
        summary: "Resend every failed delivery since an hour, a day, a week or a month ago",
        tags,
        params: EndpointParams,
        body: RecoverBody,
        response: { 202: Type.Ref("Queued"), ...errors },
      },
    },
    async (request, reply) =>
      reply
        .status(202)
        .send(await recoverEndpoint(ctx(request), request.params.id, request.body.since, { includeRetrying: request.body.include_retrying ?? false })),
  );
  app.get(
    "/webhooks/events",
    {
      schema: {
        operationId: "listWebhookEvents",
        summary: "List emitted events",
        description: "Every event, whether or not an endpoint was listening, newest first.",
        tags,
        querystring: EventsQuery,
        response: { 200: Type.Ref("WebhookEventPage"), ...errors },
      },
    },
    async (request) => listEvents(ctx(request), request.query),
  );
  app.get(
    "/webhooks/deliveries",
    {
      schema: {
        operationId: "listWebhookDeliveries",
        summary: "List deliveries with their attempts",
        tags,
        querystring: DeliveriesQuery,
        response: { 200: Type.Ref("DeliveryPage"), ...errors },
      },
    },
    async (request) => listDeliveries(ctx(request), request.query),
  );
  app.get(
    "/webhooks/deliveries/:id",
    {
      schema: {
        operationId: "getWebhookDelivery",
        summary: "Retrieve a delivery",
        tags,
        params: EndpointParams,
        response: { 200: Type.Ref("Delivery"), ...errors },
      },
    },
    async (request) => getDelivery(ctx(request), request.params.id),
  );
  app.post(
    "/webhooks/deliveries/:id/resend",
    {
      schema: {
        operationId: "resendWebhookDelivery",
        summary: "Resend a delivery now",
        description: "One new attempt with the same webhook-id, not a new schedule.",
        tags,
        params: EndpointParams,
        response: { 202: Type.Ref("Delivery"), ...errors },
      },
    },
    async (request, reply) => reply.status(202).send(await resendDelivery(ctx(request), request.params.id)),
  );
  app.post(
    "/webhooks/examples",
    {
      schema: {
        operationId: "sendExampleEvent",
        summary: "Send an example event to every endpoint, or to one",
        description:
          "Signed with each endpoint's secret, logged and retried; with `endpoint`, sent to that endpoint only. 100 example events a day per workspace.",
        tags,
        body: ExampleBody,
        response: { 202: Type.Ref("SentExample"), ...errors },
      },
    },
    async (request, reply) =>
      reply.status(202).send(await sendExample(ctx(request), request.body.type, { deliver: request.body.deliver, endpoint: request.body.endpoint })),
  );
};
