// Dates are UTC: a day 'YYYY-MM-DD', a month 'YYYY-MM'; amounts in the currency's minor unit.
export type Grain = "day" | "month";
export interface InsightsQuery {
  workspaceId: string;
  env: "test" | "live";
  toolId: string | null; // null: every tool of the workspace
  from: string; // first day, inclusive
  to: string; // last day, inclusive
  grain: Grain;
}
export interface Point {
  date: string;
  value: number;
}
/** One line of a chart; `previous` is the same measure over the period of equal length just before, point for point. */
export interface Series {
  points: Point[];
  previous: Point[];
  total: number;
  previousTotal: number;
}
export interface CurrencyRevenue {
  currency: string; // ISO code, lower case as Stripe gives it
  gross: Series;
  refunds: Series;
  net: Series;
  oneTime: Series;
  subscription: Series;
  /** Gross from credit packs (plans whose terms add credits): part of `oneTime`, shown apart. */
  packs: Series;
  byPlan: { planId: string; planName: string; bundleId: string | null; pack: boolean; gross: number; refunds: number }[];
  /**
   * What the vendor earned after the processor's fee and tax, less what refunds and
   * chargebacks took back, as the processor reports it (Paddle); null when no payment in
   * this currency reported it, in the range or the period before (Stripe reports no fee with a sale).
   */
  earnings: Series | null;
}
export interface RevenueInsights {
  currencies: CurrencyRevenue[];
}
export interface CurrencyMrr {
  currency: string;
  mrr: Series; // value at the end of each day/month
  movements: { new: Series; expansion: Series; contraction: Series; churn: Series; reactivation: Series };
  /** People paying a subscription in this currency at the end of each point (a level). */
  payingCustomers: Series;
  /** MRR ÷ paying customers at the end of each point, rounded to the minor unit; 0 where nobody pays. */
  revenuePerPayingCustomer: Series;
  rates: RecurringRates;
}
/** A currency's recurring-revenue figures over a range (docs/decisions.md, Insights pages, "ARR, churn rate and revenue per paying customer"). */
export interface RecurringRates {
  /** 12 × MRR at the end of the range, and at the end of the previous period. */
  arr: { value: number; previous: number };
  /** Churned MRR in the range ÷ MRR at its start, brought to 30 days; null with no MRR at the start. */
  monthlyChurnRate: number | null;
  /** MRR ÷ paying customers at the end of the range and of the previous period; null where nobody pays. */
  revenuePerPayingCustomer: { value: number | null; previous: number | null };
}
export interface SubscriptionInsights {
  active: Series;
  currencies: CurrencyMrr[];
}
export interface PeopleInsights {
  newCustomers: Series;
  trialsStarted: Series;
  grants: Series;
  /** Trials started in the range and what became of them. */
  trials: { started: number; paidWithinTrial: number; paidWithin30DaysAfter: number };
}
export interface UseInsights {
  /** Distinct people with an access check in the day, the 7 days and the 30 days ending on each point's date. */
  activePeople: { daily: Series; weekly: Series; monthly: Series };
  activeDevices: Series; // distinct devices per day
  /** Paying people with no access check for 14 days and a purchase 14 days old or more (newest lapse first, then never active; at most 100). */
  atRisk: { personId: string; email: string; lastActiveAt: string | null; holding: string }[];
  /** Free, trial or granted people with the most active days in the range (at most 20). */
  topUnpaid: { personId: string; email: string; activeDays: number; source: "trial" | "grant" | "free" }[];
  /** Units spent per meter the tools declare (by tool, then meter), summed per point. */
  meters: { toolId: string; meterId: string; name: string; unit: string; used: Series }[];
  /** People whose allowance of a meter ran out in the range: newest first, at most 100. */
  allowanceRanOut: { personId: string; email: string; toolId: string; meterId: string; ranOutAt: string; resetsAt: string }[];
}
/** A figure of the overview and the same figure for the period before (a flow's total, a level's value at the period's end). */
export interface Change {
  value: number;
  previous: number;
}
/** The dashboard overview: every tool, the 30 days ending today against the 30 before (each as its Insights page reads it). */
export interface OverviewInsights {
  from: string;
  to: string;
  /** MRR per currency at the end of today, and at the end of the day 30 days before. */
  mrr: ({ currency: string } & Change)[];
  /** Net revenue (gross less refunds) per currency over the 30 days. */
  netRevenue: ({ currency: string } & Change)[];
  newCustomers: Change;
  /** Trials started in the 30 days, and those of them paid for within the trial or the 30 days after it. */
  trials: { started: number; converted: number };
  /** Distinct people with an access check today, and in the 7 days ending today. */
  activeToday: number;
  activeThisWeek: number;
}
