import type { Executor } from "../db/database.js";
import type { InsightsQuery, PeopleInsights, RevenueInsights, Series, SubscriptionInsights, UseInsights } from "./insights.types.js";

// The four use cases behind the Insights pages, the API and (later) the CLI. This first
// version only lays out the dates of the range and the period before it; the figures come
// from the roll-ups (migration 031) behind these same signatures.

const DAY = 86_400_000;

function dayMs(day: string): number {
  return Date.parse(`${day}T00:00:00.000Z`);
}

function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The points' dates of a range: each day, or each month the range touches. */
export function pointDates(from: string, to: string, grain: InsightsQuery["grain"]): string[] {
  const out: string[] = [];
  for (let t = dayMs(from); t <= dayMs(to); t += DAY) {
    const d = grain === "day" ? dayOf(t) : dayOf(t).slice(0, 7);
    if (out[out.length - 1] !== d) out.push(d);
  }
  return out;
}

/** The period of equal length just before the range. */
export function previousRange(from: string, to: string): { from: string; to: string } {
  const days = (dayMs(to) - dayMs(from)) / DAY + 1;
  return { from: dayOf(dayMs(from) - days * DAY), to: dayOf(dayMs(from) - DAY) };
}

function emptySeries(q: InsightsQuery): Series {
  const prev = previousRange(q.from, q.to);
  return {
    points: pointDates(q.from, q.to, q.grain).map((date) => ({ date, value: 0 })),
    previous: pointDates(prev.from, prev.to, q.grain).map((date) => ({ date, value: 0 })),
    total: 0,
    previousTotal: 0,
  };
}

export async function revenueInsights(_db: Executor, _q: InsightsQuery): Promise<RevenueInsights> {
  return { currencies: [] };
}

export async function subscriptionInsights(_db: Executor, q: InsightsQuery): Promise<SubscriptionInsights> {
  return { active: emptySeries(q), currencies: [] };
}

export async function peopleInsights(_db: Executor, q: InsightsQuery): Promise<PeopleInsights> {
  return {
    newCustomers: emptySeries(q),
    trialsStarted: emptySeries(q),
    grants: emptySeries(q),
    trials: { started: 0, paidWithinTrial: 0, paidWithin30DaysAfter: 0 },
  };
}

export async function useInsights(_db: Executor, q: InsightsQuery, _now: Date): Promise<UseInsights> {
  const s = () => emptySeries(q);
  return { activePeople: { daily: s(), weekly: s(), monthly: s() }, activeDevices: s(), atRisk: [], topUnpaid: [] };
}
