// The credits ledger's contract in the vendor API: a hand adjustment (add or remove, with
// a note) and a person's ledger rows.
import { type Static, Type } from "@sinclair/typebox";
import { IsoDate, Nullable } from "../http/common.schema.js";

export const CreditsParams = Type.Object(
  {
    tool: Type.String({ minLength: 1, maxLength: 64, description: "Tool id" }),
    email: Type.String({ minLength: 1, maxLength: 254, description: "The address, URL-encoded" }),
  },
  { additionalProperties: false },
);

export const AdjustCreditsBody = Type.Object(
  {
    meter: Type.String({ minLength: 1, maxLength: 64, description: "One of the tool's meters" }),
    amount: Type.Integer({
      minimum: -1_000_000_000,
      maximum: 1_000_000_000,
      description: "Credits to add (above 0) or remove (below 0; never more than are available); not 0",
    }),
    // No NUL anywhere in the note: it is shown in the dashboard and stored as text.
    note: Type.String({ minLength: 1, maxLength: 200, pattern: "^[^\\u0000]*$", description: "Why: 1 to 200 characters, no NUL" }),
    expires_in_days: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 3650, description: "Only when adding: the credits last this many days; absent: until spent" }),
    ),
  },
  { additionalProperties: false },
);

export const AdjustedCredits = Type.Object(
  {
    id: Type.String({ description: "Ledger row id: cr_ followed by 24 letters and digits", examples: ["cr_4Zb1cS0aUq2kPj7yVw9XeR3n"] }),
    meter: Type.String(),
    amount: Type.Integer(),
    note: Type.String(),
    expires_at: Nullable(IsoDate),
    created_at: IsoDate,
    balance: Type.Integer({ description: "Credits of the meter the person can spend now, after the change" }),
  },
  { $id: "AdjustedCredits", additionalProperties: false },
);

export const CreditLedgerEntry = Type.Object(
  {
    id: Type.String(),
    meter: Type.String(),
    amount: Type.Integer({ description: "Added (above 0), or removed by hand (below 0)" }),
    remaining: Type.Integer({ description: "What is left of it to spend (0 once spent, taken back, or for a removal)" }),
    expires_at: Nullable(IsoDate),
    source: Type.Union([Type.Literal("pack"), Type.Literal("adjustment")]),
    licence: Nullable(Type.String({ description: "The pack's licence; null for an adjustment" })),
    note: Nullable(Type.String()),
    created_at: IsoDate,
  },
  { $id: "CreditLedgerEntry", additionalProperties: false },
);

export const CreditLedger = Type.Object({ data: Type.Array(Type.Ref("CreditLedgerEntry")) }, { $id: "CreditLedger", additionalProperties: false });

export type AdjustCreditsBody = Static<typeof AdjustCreditsBody>;
