import { type TSchema, Type } from "@sinclair/typebox";
import { Nullable } from "../http/common.schema.js";

// The Insights API's contract: the shapes of insights.types.ts, field for field.

const Day = Type.String({ pattern: "^\\d{4}-\\d{2}-\\d{2}$", description: "A UTC day", examples: ["2026-11-01"] });

export const InsightsQuerystring = Type.Object(
  {
    from: Type.Optional({ ...Day, description: "First day, inclusive (UTC); 29 days before `to` when left out" }),
    to: Type.Optional({ ...Day, description: "Last day, inclusive (UTC); today when left out" }),
    grain: Type.Optional(Type.Union([Type.Literal("day"), Type.Literal("month")], { description: "One point a day (the default) or a month" })),
    tool: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: "One tool's figures (its bundles' sales included); every tool when left out" }),
    ),
  },
  { additionalProperties: false },
);

const Point = Type.Object({ date: Type.String({ description: "YYYY-MM-DD, or YYYY-MM by month" }), value: Type.Number() }, { additionalProperties: false });
const Series = Type.Object(
  {
    points: Type.Array(Point),
    previous: Type.Array(Point, { description: "The same measure over the period of equal length just before, point for point" }),
    total: Type.Number(),
    previousTotal: Type.Number(),
  },
  { additionalProperties: false },
);
const obj = <T extends Record<string, TSchema>>(props: T, description?: string) =>
  Type.Object(props, { additionalProperties: false, ...(description ? { description } : {}) });
const Currency = Type.String({ description: "ISO 4217 code in lower case; amounts are in its minor unit", examples: ["eur"] });

export const RevenueInsightsBody = obj({
  currencies: Type.Array(
    obj({
      currency: Currency,
      gross: Series,
      refunds: Series,
      net: Series,
      oneTime: Series,
      subscription: Series,
      packs: { ...Series, description: "Gross from credit packs (plans whose terms add credits): part of oneTime, shown apart" },
      byPlan: Type.Array(
        obj({
          planId: Type.String(),
          planName: Type.String(),
          bundleId: Nullable(Type.String()),
          pack: Type.Boolean({ description: "A credit pack: its terms add credits" }),
          gross: Type.Integer(),
          refunds: Type.Integer(),
        }),
      ),
      earnings: Nullable({
        ...Series,
        description:
          "What the vendor earned after the processor's fee and tax, less what refunds and chargebacks took back, as the processor reports it (Paddle's earnings); null when no payment in this currency reported it (Stripe reports no fee with a sale)",
      }),
    }),
    { description: "One entry per currency: amounts are never added across currencies" },
  ),
});

export const SubscriptionInsightsBody = obj({
  active: Series,
  currencies: Type.Array(
    obj({
      currency: Currency,
      mrr: Series,
      movements: obj({ new: Series, expansion: Series, contraction: Series, churn: Series, reactivation: Series }),
      payingCustomers: {
        ...Series,
        description:
          "People paying a subscription (active or past due, never a trial or a grant) in this currency at the end of each point; a person counts once",
      },
      revenuePerPayingCustomer: { ...Series, description: "MRR ÷ paying customers at the end of each point, in the minor unit; 0 where nobody pays" },
      rates: obj(
        {
          arr: obj({ value: Type.Integer(), previous: Type.Integer() }, "12 × MRR at the end of the range, and at the end of the period before"),
          monthlyChurnRate: Nullable(
            Type.Number({
              description: "MRR churned in the range ÷ MRR at its start, brought to 30 days (0.05 is 5%); null with no MRR at the start",
            }),
          ),
          revenuePerPayingCustomer: obj(
            { value: Nullable(Type.Integer()), previous: Nullable(Type.Integer()) },
            "MRR ÷ paying customers at the end of the range and of the period before; null where nobody pays",
          ),
        },
        "ARR, the monthly MRR churn rate and revenue per paying customer (ARPPU)",
      ),
    }),
  ),
});

export const PeopleInsightsBody = obj({
  newCustomers: Series,
  trialsStarted: Series,
  grants: Series,
  trials: obj(
    { started: Type.Integer(), paidWithinTrial: Type.Integer(), paidWithin30DaysAfter: Type.Integer() },
    "Trials started in the range and what became of them",
  ),
});

export const UseInsightsBody = obj({
  activePeople: obj(
    { daily: Series, weekly: Series, monthly: Series },
    "Distinct people per day, 7 days and 30 days; a series' `total` is the mean of its days, to two decimals (0.33)",
  ),
  activeDevices: { ...Series, description: "Distinct devices a day; `total` is the mean of the days, to two decimals" },
  atRisk: Type.Array(obj({ personId: Type.String(), email: Type.String(), lastActiveAt: Nullable(Type.String()), holding: Type.String() }), {
    description:
      "Paying people with no access check for 14 days (and a purchase 14 days old or more), newest lapse first, then those never active, at most 100",
  }),
  topUnpaid: Type.Array(
    obj({
      personId: Type.String(),
      email: Type.String(),
      activeDays: Type.Integer(),
      source: Type.Union([Type.Literal("trial"), Type.Literal("grant"), Type.Literal("free")]),
    }),
    { description: "Free, trial or granted people with the most active days in the range, at most 20" },
  ),
  meters: Type.Array(obj({ toolId: Type.String(), meterId: Type.String(), name: Type.String(), unit: Type.String(), used: Series }), {
    description: "Units spent per meter the tools declare, by tool then meter",
  }),
  allowanceRanOut: Type.Array(
    obj({
      personId: Type.String(),
      email: Type.String(),
      toolId: Type.String(),
      meterId: Type.String(),
      ranOutAt: Type.String({ description: "When a spend used the allowance's last unit" }),
      resetsAt: Type.String({ description: "When the soonest of the person's allowances of the meter resets" }),
    }),
    { description: "People whose allowance of a meter ran out in the range (once per period), newest first, at most 100" },
  ),
});
