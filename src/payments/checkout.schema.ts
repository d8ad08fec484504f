import { type Static, Type } from "@sinclair/typebox";

const HttpUrl = Type.String({ maxLength: 2048, pattern: "^https?://", description: "Where the processor sends the buyer afterwards" });

/** What the extension's buy button sends. */
export const CheckoutBody = Type.Object(
  {
    workspace: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 63,
        pattern: "^[a-z0-9-]+$",
        description: "The workspace's slug; may be left out on the workspace's own address",
      }),
    ),
    plan: Type.String({ minLength: 1, maxLength: 64, description: "Plan id of the tool" }),
    seats: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, description: "Team purchase: seats to hand out" })),
    email: Type.Optional(Type.String({ maxLength: 254, description: "Pre-fills the checkout's address (a signed-in buyer's own address by default)" })),
    livemode: Type.Boolean({ description: "false for the workspace's test environment" }),
    success_url: HttpUrl,
    cancel_url: Type.Optional(HttpUrl),
  },
  { additionalProperties: false },
);
export type CheckoutBody = Static<typeof CheckoutBody>;

export const CreatedCheckout = Type.Object({ url: Type.String(), checkout_session: Type.String() }, { additionalProperties: false });
