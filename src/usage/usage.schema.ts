// The HTTP contract of a person's meters: what the usage reads answer, what a spend takes
// and answers, and the usage a refusal (402 usage_limit_error) carries.
import { type Static, Type } from "@sinclair/typebox";
import { IsoDate, Nullable } from "../http/common.schema.js";

export const UsageBucket = Type.Object(
  {
    via: Type.Union(
      ["licence", "subscription", "trial", "grant", "free"].map((v) => Type.Literal(v)),
      {
        description: "Whose allowance: a source of access, or the tool's free allowance for a person who holds nothing",
      },
    ),
    source: Nullable(Type.String({ description: "The source's id (lic_…, sub_…, gr_…); null for the free allowance" })),
    allowance: Type.Integer({ minimum: 0, description: "Units this period" }),
    used: Type.Integer({ minimum: 0, description: "Units spent of it this period" }),
    period_start: IsoDate,
    resets_at: IsoDate,
  },
  { $id: "UsageBucket", additionalProperties: false },
);

const meterUsageFields = {
  meter: Type.String({ description: "The meter's id" }),
  unit: Type.String({ description: "What one unit is called, plural: summaries" }),
  used: Type.Integer({ minimum: 0, description: "Units spent of the allowances this period (credits spent are not counted here)" }),
  allowance: Type.Integer({ minimum: 0, description: "Units the allowances give this period, summed over the buckets" }),
  allowance_remaining: Type.Integer({ minimum: 0, description: "Units left of the allowances this period" }),
  credits: Type.Integer({ minimum: 0, description: "Credits available: not expired, and of a pack still held" }),
  remaining: Type.Integer({ minimum: 0, description: "What a spend may take now: allowance_remaining + credits" }),
  resets_at: Type.Union([IsoDate, Type.Null()], { description: "The soonest reset of an allowance; null when there is none" }),
  period_start: Type.Union([IsoDate, Type.Null()], { description: "The start of the period that resets first; null when there is no allowance" }),
  buckets: Type.Array(Type.Ref("UsageBucket"), { description: "The allowances in the order a spend draws from them (soonest reset first)" }),
};

export const MeterUsage = Type.Object(meterUsageFields, {
  $id: "MeterUsage",
  additionalProperties: false,
  description: "One meter of one person: allowances this period, credits, and what a spend may take",
});

export const MeterUsageList = Type.Object({ data: Type.Array(Type.Ref("MeterUsage")) }, { $id: "MeterUsageList", additionalProperties: false });

export const SpendBody = Type.Object(
  {
    meter: Type.String({ minLength: 1, maxLength: 64, description: "The meter's id" }),
    quantity: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: "Whole units to spend, 1 to 1,000,000; 1 when absent" })),
  },
  { additionalProperties: false },
);

export const Spent = Type.Object(
  {
    quantity: Type.Integer({ minimum: 1, description: "Units spent" }),
    allowed: Type.Literal(true),
    ...meterUsageFields,
  },
  { $id: "Spent", additionalProperties: false, description: "A spend applied: the quantity, and the meter's usage after it" },
);

export const SpendHeaders = Type.Object({
  "idempotency-key": Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      description: "Repeat a spend safely for 24 hours: the same key and body answer the same and spend nothing more",
    }),
  ),
});

export type UsageBucket = Static<typeof UsageBucket>;
export type MeterUsage = Static<typeof MeterUsage>;
export type SpendBody = Static<typeof SpendBody>;
export type Spent = Static<typeof Spent>;
