import { type Static, Type } from "@sinclair/typebox";

const HttpUrl = Type.String({ maxLength: 2048, pattern: "^https?://", description: "Where Stripe sends the buyer afterwards" });

/** What the extension's buy button sends. */
export const CheckoutBody = Type.Object(
  {
    plan: Type.String({ minLength: 1, maxLength: 64, description: "Plan id of the tool" }),
    seats: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, description: "Team purchase: seats to hand out" })),
    email: Type.Optional(Type.String({ maxLength: 254, description: "Pre-fills the checkout's address" })),
    livemode: Type.Boolean({ description: "false for the workspace's test environment" }),
    success_url: HttpUrl,
    cancel_url: Type.Optional(HttpUrl),
  },
  { additionalProperties: false },
);
export type CheckoutBody = Static<typeof CheckoutBody>;

export const CheckoutParams = Type.Object({ tool: Type.String({ maxLength: 64 }) });

export const CreatedCheckout = Type.Object({ url: Type.String(), checkout_session: Type.String() }, { additionalProperties: false });
