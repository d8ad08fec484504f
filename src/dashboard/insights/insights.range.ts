// The range an Insights page shows, from its address: one of the fixed ranges, ending
// today (UTC), or a custom one; days for up to 92 days, months beyond.
import type { InsightsQuery } from "../../insights/insights.types.js";

export const RANGES = ["7d", "30d", "90d", "12m", "custom"] as const;
export type RangeChoice = (typeof RANGES)[number];
export const RANGE_LABELS: Record<RangeChoice, string> = {
  "7d": "Last 7 days",
  "30d": "Last 30 days",
  "90d": "Last 90 days",
  "12m": "Last 12 months",
  custom: "Custom",
};

/** Beyond this many days a custom range is drawn by month: 93 daily points already fill a laptop's chart. */
const DAILY_UP_TO = 92;
/** The longest custom range: three years, 36 monthly points. */
const LONGEST_DAYS = 3 * 366;
const DAY_MS = 86_400_000;

export interface Range {
  choice: RangeChoice;
  from: string;
  to: string;
  grain: InsightsQuery["grain"];
}
/** A custom range refused, with the field it is about and the range shown instead. */
export interface RangeRefusal {
  error: string;
  field: "from" | "to";
}

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const msOf = (day: string) => Date.parse(`${day}T00:00:00Z`);
/** A calendar day that exists (Date.parse takes 2026-02-31 as 3 March). */
const isDay = (text: string) => /^\d{4}-\d{2}-\d{2}$/.test(text) && !Number.isNaN(msOf(text)) && dayOf(msOf(text)) === text;

function fixedRange(choice: Exclude<RangeChoice, "custom">, today: string): Range {
  const end = msOf(today);
  if (choice === "12m") {
    const d = new Date(end);
    const first = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 11, 1);
    return { choice, from: dayOf(first), to: today, grain: "month" };
  }
  const days = choice === "7d" ? 7 : choice === "30d" ? 30 : 90;
  return { choice, from: dayOf(end - (days - 1) * DAY_MS), to: today, grain: "day" };
}

/**
 * The range the address asks for; an unknown choice is the last 30 days. A custom range
 * must be two real days, in order, not after today and at most three years long; when it
 * is not, the page says why by the field and shows the last 30 days.
 */
export function parseRange(query: { range?: string; from?: string; to?: string }, now: number): { range: Range; refusal: RangeRefusal | null } {
  const today = dayOf(now);
  const choice = (RANGES as readonly string[]).includes(query.range ?? "") ? (query.range as RangeChoice) : "30d";
  if (choice !== "custom") return { range: fixedRange(choice, today), refusal: null };
  const refuse = (field: "from" | "to", error: string) => ({ range: { ...fixedRange("30d", today), choice }, refusal: { field, error } });
  const from = (query.from ?? "").trim();
  const to = (query.to ?? "").trim();
  if (!isDay(from)) return refuse("from", "Enter the first day as a date, for example 2026-11-01.");
  if (!isDay(to)) return refuse("to", "Enter the last day as a date, for example 2026-11-30.");
  if (to > today) return refuse("to", "The last day cannot be after today (UTC).");
  if (from > to) return refuse("from", "The first day must be on or before the last day.");
  const days = (msOf(to) - msOf(from)) / DAY_MS + 1;
  if (days > LONGEST_DAYS) return refuse("from", "Choose at most three years.");
  return { range: { choice, from, to, grain: days <= DAILY_UP_TO ? "day" : "month" }, refusal: null };
}
