import { type Static, Type } from "@sinclair/typebox";
import { IsoDate, Nullable } from "../http/common.schema.js";

const Via = Type.Union([Type.Literal("licence"), Type.Literal("subscription"), Type.Literal("trial"), Type.Literal("grant")]);

export const CustomerListItem = Type.Object(
  {
    email: Type.String({ description: "The address" }),
    account: Type.Boolean({ description: "The address has signed in to the workspace" }),
    entitled: Type.Boolean({ description: "Holds the tool now" }),
    via: Nullable(Via),
    since: IsoDate,
    last_active_at: Nullable(IsoDate),
    devices: Type.Integer({ minimum: 0, description: "Number of devices signed in or activated" }),
  },
  { $id: "CustomerListItem", additionalProperties: false },
);

export const CustomerPage = Type.Object(
  {
    data: Type.Array(Type.Ref("CustomerListItem")),
    has_more: Type.Boolean(),
    next_cursor: Nullable(Type.String({ description: "Pass as cursor for the next page; null on the last page" })),
  },
  { $id: "CustomerPage", additionalProperties: false },
);

const Plan = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    billing: Type.Union([Type.Literal("one_time"), Type.Literal("subscription")]),
    amountCents: Nullable(Type.Integer()),
    currency: Type.String({ description: "Currency code, lower case" }),
    interval: Nullable(Type.Union([Type.Literal("month"), Type.Literal("year")])),
  },
  { additionalProperties: false },
);

const Subscription = Type.Object(
  {
    status: Type.String({ description: "The payment processor's subscription status" }),
    periodEnd: IsoDate,
    cancelAtPeriodEnd: Type.Boolean(),
    cancelAt: Nullable(IsoDate),
  },
  { additionalProperties: false },
);

/** The features the address holds of the tool's, sorted: what its sources' plans unlock (a source naming no plan: every feature). */
export const Features = Type.Array(Type.String(), {
  description:
    "The tool's features the address holds now, sorted; [] when none. A trial or grant naming no plan, or a purchase of no known plan, gives every feature the tool declares",
  examples: [["export", "sync"]],
});

const Trial = Type.Object({ endsAt: IsoDate, active: Type.Boolean() }, { additionalProperties: false });

export const Customer = Type.Object(
  {
    email: Type.String(),
    account: Type.Boolean(),
    entitled: Type.Boolean(),
    via: Nullable(Via),
    paid_at: Nullable(IsoDate),
    plan: Nullable(Plan),
    subscription: Nullable(Subscription),
    trial: Nullable(Trial),
    features: Features,
  },
  { $id: "Customer", additionalProperties: false },
);

export const FeatureCheck = Type.Object(
  {
    email: Type.String({ description: "The address (as Warden holds it; as given when Warden does not know it)" }),
    tool: Type.String(),
    feature: Type.String(),
    enabled: Type.Boolean({ description: "The address holds this feature now" }),
    entitled: Type.Boolean({ description: "The address holds the tool now (as Retrieve a customer answers)" }),
    via: Nullable(Via),
  },
  { $id: "FeatureCheck", additionalProperties: false },
);

export const FeatureParams = Type.Object(
  {
    tool: Type.String({ minLength: 1, maxLength: 64 }),
    email: Type.String({ minLength: 1, maxLength: 254, description: "The address, URL-encoded" }),
    feature: Type.String({ minLength: 1, maxLength: 64, description: "A feature the tool declares" }),
  },
  { additionalProperties: false },
);

export const ListCustomersQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
    cursor: Type.Optional(Type.String({ maxLength: 512 })),
    entitled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const CustomerParams = Type.Object(
  {
    tool: Type.String({ minLength: 1, maxLength: 64 }),
    email: Type.String({ minLength: 1, maxLength: 254, description: "The address, URL-encoded" }),
  },
  { additionalProperties: false },
);

export type CustomerListItem = Static<typeof CustomerListItem>;
export type Customer = Static<typeof Customer>;
export type FeatureCheck = Static<typeof FeatureCheck>;
export type ListCustomersQuery = Static<typeof ListCustomersQuery>;
