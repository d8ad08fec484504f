import { type Static, Type } from "@sinclair/typebox";
import { Customer } from "../customers/customer.schema.js";
import { IsoDate, Nullable } from "../http/common.schema.js";

// The client API's contract: what a browser extension sends and reads.

const Address = {
  workspace: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 63,
      pattern: "^[a-z0-9-]+$",
      description: "The workspace's slug; may be left out on the workspace's own address (https://<workspace>.<domain>)",
    }),
  ),
  tool: Type.String({ minLength: 1, maxLength: 64, description: "Tool id" }),
  email: Type.String({ minLength: 3, maxLength: 254 }),
  env: Type.Optional(
    Type.Union([Type.Literal("test"), Type.Literal("live")], {
      description: "Which environment to sign in to: live (the default) for a published extension, test for a development build",
    }),
  ),
};

export const SignInBody = Type.Object(
  {
    ...Address,
    lang: Type.Optional(
      Type.String({
        minLength: 2,
        maxLength: 35,
        pattern: "^[A-Za-z]{2,8}([_-][A-Za-z0-9]{1,8})*$",
        description:
          "The language the code's mail is written in: a BCP 47 tag, such as the extension's chrome.i18n.getUILanguage() (de, pt-BR, zh-CN). Matched as the hosted pages match it (de-AT reads German); a language Warden does not speak reads the workspace's default language, else English",
      }),
    ),
  },
  { additionalProperties: false },
);
export type SignInBody = Static<typeof SignInBody>;

export const SignInSent = Type.Object(
  { sent: Type.Literal(true), expires_at: IsoDate },
  { additionalProperties: false, description: "A code was mailed to the address; it expires at expires_at" },
);

export const VerifyBody = Type.Object(
  {
    ...Address,
    code: Type.String({ pattern: "^[0-9]{6}$", description: "The 6-digit code from the mail" }),
    device: Type.Object(
      {
        name: Type.String({ minLength: 1, maxLength: 100, description: "A name the person recognises, e.g. Work laptop" }),
        platform: Type.String({ minLength: 1, maxLength: 50, description: "e.g. chrome-mac, firefox-windows" }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type VerifyBody = Static<typeof VerifyBody>;

export const Device = Type.Object(
  {
    id: Type.String(),
    tool: Type.String(),
    name: Type.String(),
    platform: Nullable(Type.String()),
    created_at: IsoDate,
    last_active_at: Nullable(IsoDate),
    current: Type.Boolean({ description: "Whether this is the device making the request" }),
  },
  { additionalProperties: false },
);

export const DeviceList = Type.Object({ data: Type.Array(Device) }, { additionalProperties: false });

export const Session = Type.Object(
  {
    token: Type.String({ description: "The device session token: send it as Authorization: Bearer <token>. Shown once." }),
    email: Type.String(),
    device: Device,
  },
  { additionalProperties: false },
);

export const Access = Type.Object(
  {
    entitled: Type.Boolean(),
    via: Customer.properties.via,
    plan: Customer.properties.plan,
    trial: Customer.properties.trial,
    subscription: Customer.properties.subscription,
    features: Customer.properties.features,
    state: Type.String({
      description:
        "What this answer says (entitled, via, plan, trial, subscription, features), and the person's credits of the tool (added or taken back, not spent), as a short fingerprint: the same while nothing of it changes. Hand it to GET /tools/{tool}/access/changes to wait until it differs",
    }),
    recheck_after: Type.Integer({
      minimum: 1,
      maximum: 900,
      description: "Seconds this answer may be kept; ask again after them (never more than 900, so a revocation locks within 15 minutes)",
    }),
    token: Type.String({
      description:
        "This answer signed: a JWT (compact JWS, EdDSA with Ed25519) that expires recheck_after seconds from now. Verify it offline against /.well-known/jwks.json with audience <workspace>:<env>; its claims are iss, aud, sub, email, workspace, env, tool, entitled, via, plan (the plan's id), features, trial_ends_at, iat and exp (see docs/api.md, Access tokens)",
    }),
  },
  { additionalProperties: false },
);
export type Access = Static<typeof Access>;

export const AccessChangesQuery = Type.Object(
  {
    state: Type.String({ minLength: 1, maxLength: 64, description: "The state of the access answer the device holds" }),
    wait: Type.Optional(Type.Integer({ minimum: 1, maximum: 25, default: 25, description: "Seconds to wait for a change at most (25, the most, by default)" })),
  },
  { additionalProperties: false },
);
export type AccessChangesQuery = Static<typeof AccessChangesQuery>;

export const ActivatedSession = Type.Object(
  {
    ...Session.properties,
    access: Type.Object(Access.properties, {
      additionalProperties: false,
      description: "The new device's access check, as GET /tools/{tool}/access answers it, token included: no second call is needed",
    }),
  },
  { additionalProperties: false },
);

export const DeviceParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false });

export const SignedOut = Type.Object({ id: Type.String(), signed_out_at: IsoDate }, { additionalProperties: false });

export const ActivateBody = Type.Object(
  {
    workspace: Address.workspace,
    key: Type.String({ minLength: 1, maxLength: 100, description: "The licence key its buyer sees in GET /purchases: wlk_ followed by 32 letters and digits" }),
    device: VerifyBody.properties.device,
  },
  { additionalProperties: false },
);
export type ActivateBody = Static<typeof ActivateBody>;

export const Purchase = Type.Object(
  {
    id: Type.String({ description: "A licence (lic_…) or the payment processor's subscription id" }),
    kind: Type.Union([Type.Literal("licence"), Type.Literal("subscription")]),
    product: Type.String({ description: "The tool or bundle bought" }),
    product_kind: Type.Union([Type.Literal("tool"), Type.Literal("bundle")]),
    plan: Nullable(Type.String()),
    status: Type.String({ description: "A licence's active, suspended or revoked; a subscription's processor status" }),
    purchased_at: IsoDate,
    period_end: Nullable(IsoDate),
    seats: Nullable(Type.Integer({ description: "A team purchase: seats bought, handed out with /purchases/{id}/seats" })),
    seats_in_use: Nullable(Type.Integer()),
    team: Nullable(Type.String({ description: "For a seat: the team purchase it belongs to" })),
    key: Nullable(
      Type.String({
        description: "The licence key, to activate a device without signing in (POST /tools/{tool}/activate); null for subscriptions and team purchases",
      }),
    ),
    cancel_at_period_end: Nullable(
      Type.Boolean({
        description: "A subscription set to end at period_end by its buyer (POST /subscriptions/{id}/cancel; /resume takes it back); null for licences",
      }),
    ),
    ends_at: Nullable(
      Type.String({ format: "date-time", description: "When a subscription set to end ends, or when it ended; null while it renews, and for licences" }),
    ),
  },
  { additionalProperties: false },
);
export type Purchase = Static<typeof Purchase>;

export const PurchaseList = Type.Object({ data: Type.Array(Purchase) }, { additionalProperties: false });

export const PurchaseParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false });
export const SeatParams = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 255 }), seat: Type.String({ minLength: 1, maxLength: 64 }) },
  { additionalProperties: false },
);
export const AssignSeatBody = Type.Object({ email: Type.String({ minLength: 3, maxLength: 254 }) }, { additionalProperties: false });

export const Seat = Type.Object(
  {
    id: Type.String({ description: "The seat's licence id" }),
    email: Type.String(),
    assigned_at: IsoDate,
  },
  { additionalProperties: false },
);

export const SeatList = Type.Object(
  { purchase: Type.String(), seats: Type.Integer(), seats_in_use: Type.Integer(), data: Type.Array(Seat) },
  { additionalProperties: false },
);

export const SeatChange = Type.Object(
  {
    seat: Type.String({ description: "The seat's licence id" }),
    purchase: Type.String(),
    email: Type.String(),
    status: Type.Union([Type.Literal("active"), Type.Literal("revoked")]),
    seats: Type.Integer(),
    seats_in_use: Type.Integer(),
  },
  { additionalProperties: false },
);

export const SubscriptionParams = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 255, description: "The payment processor's subscription id, as GET /purchases lists it" }) },
  { additionalProperties: false },
);

export const ExchangeBody = Type.Object(
  {
    workspace: Address.workspace,
    env: Address.env,
    code: Type.String({
      minLength: 1,
      maxLength: 100,
      description:
        "The one-time code the hosted sign-in page put in the redirect's fragment (#code=…): wac_ followed by 43 letters and digits; works once, for 60 seconds",
    }),
    code_verifier: Type.String({
      minLength: 43,
      maxLength: 128,
      pattern: "^[A-Za-z0-9._~-]+$",
      description: "The PKCE verifier (RFC 7636) whose S256 challenge opened the sign-in page",
    }),
    device: VerifyBody.properties.device,
  },
  { additionalProperties: false },
);
export type ExchangeBody = Static<typeof ExchangeBody>;

export const PageTicket = Type.Object(
  {
    ticket: Type.String({
      description: "Add to a hosted page's address as ?ticket=…: the page opens signed in as this device's person. Works once, for 60 seconds",
    }),
    expires_at: IsoDate,
  },
  { additionalProperties: false },
);
