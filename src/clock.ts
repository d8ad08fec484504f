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

export function toIso(ms: number): string {
  return new Date(ms).toISOString();
}
