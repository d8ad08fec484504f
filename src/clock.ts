// Time is injected so that tests move it instead of sleeping.
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to; used by tests and by imports with fixed times. */
export class ManualClock implements Clock {
  constructor(private current: number = Date.parse("2026-11-21T12:00:00.000Z")) {}
  now(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
  set(ms: number): void {
    this.current = ms;
  }
}

export const MINUTE_MS = 60_000;
export const DAY_MS = 86_400_000;

// The last day asked for, kept: every access check asks for its day (activity.ts), and
// making a Date and its ISO string each time was 2.5% of the check's CPU.
let lastDay = { from: 0, to: 0, day: "" };

/** The UTC day (YYYY-MM-DD) of a time in epoch milliseconds. */
export function utcDayOf(ms: number): string {
  if (ms >= lastDay.from && ms < lastDay.to) return lastDay.day;
  const from = ms - (((ms % DAY_MS) + DAY_MS) % DAY_MS);
  lastDay = { from, to: from + DAY_MS, day: new Date(from).toISOString().slice(0, 10) };
  return lastDay.day;
}
// Times written again and again are kept with their text: a meter's answer writes its
// period's start, end and reset on every spend (2% of a spend's CPU making Dates).
const isoTexts = new Map<number, string>();
const ISO_TEXTS = 256;

/** A time in epoch milliseconds as ISO 8601 in UTC (`2026-11-29T22:01:38.000Z`). */
export function toIso(ms: number): string {
  let text = isoTexts.get(ms);
  if (text === undefined) {
    text = new Date(ms).toISOString();
    if (isoTexts.size >= ISO_TEXTS) isoTexts.clear();
    isoTexts.set(ms, text);
  }
  return text;
}
