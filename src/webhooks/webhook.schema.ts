import { type Static, Type } from "@sinclair/typebox";
import { IsoDate, Nullable } from "../http/common.schema.js";

const isoDate = (description: string) => Type.String({ format: "date-time", examples: IsoDate.examples, description });

export const WebhookEndpoint = Type.Object(
  {
    id: Type.String({ description: "ep_ followed by 24 letters and digits" }),
    url: Type.String(),
    events: Nullable(Type.Array(Type.String(), { description: "Event types sent; null for all" })),
    description: Nullable(Type.String({ description: "The vendor's note of what the endpoint is for" })),
    enabled: Type.Boolean(),
    disabled_reason: Nullable(Type.String({ description: "gone (the endpoint answered 410), failing (5 days without success), or manual" })),
    disabled_at: Nullable(IsoDate),
    last_success_at: Nullable(IsoDate),
    failing_since: Nullable(IsoDate),
    previous_secret_expires_at: Nullable(
      isoDate("After a rotation: until when the replaced secret still signs every delivery beside the new one; null when none does"),
    ),
    created_at: IsoDate,
  },
  { $id: "WebhookEndpoint", additionalProperties: false },
);

export const CreatedWebhookEndpoint = Type.Object(
  {
    endpoint: Type.Ref("WebhookEndpoint"),
    secret: Type.String({ description: "Signing secret, whsec_…; shown here and revealable later" }),
  },
  { $id: "CreatedWebhookEndpoint", additionalProperties: false },
);

export const RotatedWebhookSecret = Type.Object(
  {
    secret: Type.String({ description: "The new signing secret, whsec_…; shown here and revealable later" }),
    previous_secret_expires_at: isoDate("Until when the replaced secret still signs every delivery beside the new one (24 hours from now)"),
  },
  { additionalProperties: false },
);

export const WebhookEndpointList = Type.Object({ data: Type.Array(Type.Ref("WebhookEndpoint")) }, { $id: "WebhookEndpointList", additionalProperties: false });

export const CreateEndpointBody = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, description: "http:// or https:// URL" }),
    events: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { minItems: 1, maxItems: 16, description: "Event types to send; all when absent" })),
    description: Type.Optional(Type.String({ maxLength: 500, description: "What the endpoint is for, for the vendor's own reading" })),
  },
  { additionalProperties: false },
);

export const UpdateEndpointBody = Type.Object(
  {
    url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: "http:// or https:// URL, checked as when the endpoint is added" })),
    events: Type.Optional(
      Nullable(Type.Array(Type.String({ maxLength: 64 }), { minItems: 1, maxItems: 16, description: "Event types to send; null for every type" })),
    ),
    description: Type.Optional(Nullable(Type.String({ maxLength: 500, description: "What the endpoint is for; null or empty for none" }))),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const EndpointParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false });

export const RecoverBody = Type.Object(
  {
    since: Type.Union([Type.Literal("hour"), Type.Literal("day"), Type.Literal("week"), Type.Literal("month")]),
    include_retrying: Type.Optional(
      Type.Boolean({ description: "Also attempt now the deliveries still being retried (their schedule stays as it is); false when absent" }),
    ),
  },
  { additionalProperties: false },
);

const count = (description: string) => Type.Integer({ minimum: 0, description });
/** Inline in its one route, so not among the shared schemas. */
export const RecoverableDeliveries = Type.Object(
  {
    hour: count("Failed deliveries created in the last hour"),
    day: count("… in the last day"),
    week: count("… in the last week"),
    month: count("… in the last 30 days: the most `recover` reaches"),
    retrying: Type.Object(
      {
        hour: count("Deliveries still being retried (tried, due again), created in the last hour"),
        day: count("… in the last day"),
        week: count("… in the last week"),
        month: count("… in the last 30 days"),
      },
      { additionalProperties: false, description: "What `recover` also attempts with include_retrying" },
    ),
  },
  { additionalProperties: false },
);

export const Queued = Type.Object({ queued: Type.Integer({ minimum: 0 }) }, { $id: "Queued", additionalProperties: false });

export const WebhookEvent = Type.Object(
  {
    id: Type.String(),
    type: Type.String(),
    created: Type.Integer({ description: "Epoch seconds" }),
    livemode: Type.Boolean(),
    data: Type.Record(Type.String(), Type.Unknown()),
  },
  { $id: "WebhookEvent", additionalProperties: false },
);

export const WebhookEventPage = Type.Object(
  { data: Type.Array(Type.Ref("WebhookEvent")), has_more: Type.Boolean(), next_cursor: Nullable(Type.String()) },
  { $id: "WebhookEventPage", additionalProperties: false },
);

const Attempt = Type.Object(
  {
    attempted_at: IsoDate,
    duration_ms: Type.Integer(),
    status_code: Nullable(Type.Integer()),
    response_body: Nullable(Type.String({ description: "The first 4 KiB of the answer" })),
    error: Nullable(Type.String({ description: "The network error, when there was no answer" })),
    manual: Type.Boolean({ description: "A resend asked for by the vendor" }),
  },
  { additionalProperties: false },
);

export const Delivery = Type.Object(
  {
    id: Type.String(),
    endpoint: Type.String(),
    event: Type.String(),
    status: Type.Union([Type.Literal("pending"), Type.Literal("succeeded"), Type.Literal("failed")]),
    attempts: Type.Array(Attempt),
    next_attempt_at: Nullable(IsoDate),
    created_at: IsoDate,
  },
  { $id: "Delivery", additionalProperties: false },
);

export const DeliveryPage = Type.Object(
  { data: Type.Array(Type.Ref("Delivery")), has_more: Type.Boolean(), next_cursor: Nullable(Type.String()) },
  { $id: "DeliveryPage", additionalProperties: false },
);

export const PageQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    cursor: Type.Optional(Type.String({ maxLength: 512 })),
  },
  { additionalProperties: false },
);

/** Checked by the use case, so a bad value's error says what is expected. */
const TimeBound = (description: string) =>
  Type.Optional(Type.String({ maxLength: 40, description: `${description}: epoch seconds (1764126000) or ISO 8601 with a time zone (2026-11-26T03:00:00Z)` }));
const CreatedRange = Type.Object({
  created_after: TimeBound("Only what was created at or after this time"),
  created_before: TimeBound("Only what was created before this time"),
});

/** A customer's address: only what is about that person. */
const CustomerFilter = Type.Optional(
  Type.String({
    maxLength: 254,
    description:
      "Only what is about the customer with this address (matched as addresses are: case aside). Events emitted before this filter existed (migration 046) are not found by it.",
    examples: ["ada@example.com"],
  }),
);

export const EventsQuery = Type.Composite(
  [PageQuery, CreatedRange, Type.Object({ type: Type.Optional(Type.String({ maxLength: 64 })), customer: CustomerFilter })],
  {
    additionalProperties: false,
  },
);

export const DeliveriesQuery = Type.Composite(
  [
    PageQuery,
    CreatedRange,
    Type.Object({
      endpoint: Type.Optional(Type.String({ maxLength: 64 })),
      event: Type.Optional(Type.String({ maxLength: 64 })),
      status: Type.Optional(Type.Union([Type.Literal("pending"), Type.Literal("succeeded"), Type.Literal("failed")])),
      customer: CustomerFilter,
    }),
  ],
  { additionalProperties: false },
);

export const ExampleBody = Type.Object(
  {
    type: Type.String({ maxLength: 64, description: "One of the six event types" }),
    deliver: Type.Optional(
      Type.Boolean({
        description: "false: count it and answer the example without storing or delivering it, for `warden events send --url` to sign and send locally",
      }),
    ),
    endpoint: Type.Optional(
      Type.String({
        maxLength: 64,
        description: "Send it to this endpoint only (enabled, listening for the type); to every enabled endpoint when absent",
      }),
    ),
  },
  { additionalProperties: false },
);

export const SentExample = Type.Object(
  { event: Type.Ref("WebhookEvent"), deliveries: Type.Integer({ minimum: 0, description: "Endpoints it was queued for" }) },
  { $id: "SentExample", additionalProperties: false },
);

export type WebhookEndpoint = Static<typeof WebhookEndpoint>;
export type Delivery = Static<typeof Delivery>;
export type WebhookEvent = Static<typeof WebhookEvent>;
export type DeliveriesQuery = Static<typeof DeliveriesQuery>;
export type EventsQuery = Static<typeof EventsQuery>;
