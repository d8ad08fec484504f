import { type Static, Type } from "@sinclair/typebox";
import { IsoDate, Nullable } from "../http/common.schema.js";

export const Grant = Type.Object(
  {
    id: Type.String({ description: "Grant id: gr_ followed by 24 letters and digits", examples: ["gr_4Zb1cS0aUq2kPj7yVw9XeR3n"] }),
    tool: Type.String(),
    email: Type.String(),
    kind: Type.Union([Type.Literal("grant"), Type.Literal("trial")]),
    starts_at: IsoDate,
    ends_at: Nullable(IsoDate),
    revoked_at: Nullable(IsoDate),
    note: Nullable(Type.String()),
    plan: Nullable(Type.String({ description: "The tool's plan whose features it gives; null: every feature the tool declares" })),
    created_at: IsoDate,
    live: Type.Boolean({ description: "Entitles the address now" }),
  },
  { $id: "Grant", additionalProperties: false },
);

export const GrantList = Type.Object({ data: Type.Array(Type.Ref("Grant")) }, { $id: "GrantList", additionalProperties: false });

export const CreateGrantBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 254, description: "The address; at most 254 characters" }),
    days: Type.Optional(Type.Integer({ minimum: 0, maximum: 3650, description: "1 to 3650; absent or 0 means until revoked" })),
    // No NUL anywhere in the note: it is shown in the dashboard and stored as text.
    note: Type.Optional(Type.String({ maxLength: 200, pattern: "^[^\\u0000]*$", description: "Up to 200 characters, no NUL" })),
    plan: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: "A plan of the tool (retired ones too) whose features the grant gives; absent: every feature the tool declares",
      }),
    ),
  },
  { additionalProperties: false },
);

export const ListGrantsQuery = Type.Object(
  { email: Type.String({ minLength: 1, maxLength: 254, description: "The address" }) },
  { additionalProperties: false },
);

export const GrantParams = Type.Object(
  { tool: Type.String({ minLength: 1, maxLength: 64 }), id: Type.String({ minLength: 1, maxLength: 64 }) },
  { additionalProperties: false },
);

export const RevokedGrant = Type.Object(
  {
    id: Type.String(),
    tool: Type.String(),
    revoked_at: IsoDate,
    live: Type.Literal(false),
  },
  { $id: "RevokedGrant", additionalProperties: false },
);

export const IdempotencyHeaders = Type.Object({
  "idempotency-key": Type.Optional(
    Type.String({ minLength: 1, maxLength: 255, description: "Repeat a creation safely for 24 hours: the same key and body answer the same grant" }),
  ),
});

export type Grant = Static<typeof Grant>;
export type CreateGrantBody = Static<typeof CreateGrantBody>;
export type RevokedGrant = Static<typeof RevokedGrant>;
