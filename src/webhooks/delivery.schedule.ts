// The retry schedule of decisions.md (the Standard Webhooks example): the first attempt
// at once, then after each failure 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and
// 24 h: ten attempts, the last about 75.6 hours after the first.
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

export const RETRY_DELAYS_MS: readonly number[] = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 14 * HOUR, 20 * HOUR, 24 * HOUR];
const JITTER = 0.2;

/**
 * When to try again after the `attempts`-th attempt failed, or null when the schedule is
 * spent. Each delay gets up to 20% random jitter so that a recovering receiver is not
 * hit by every delivery at once. A Retry-After may lengthen the delay to at most twice
 * it, never shorten it.
 */
export function nextAttemptAfter(attempts: number, failedAt: number, retryAfterMs: number | null, random: () => number = Math.random): number | null {
  const base = RETRY_DELAYS_MS[attempts - 1];
  if (base === undefined) return null;
  let delay = base * (1 + JITTER * random());
  if (retryAfterMs !== null && retryAfterMs > delay) delay = Math.min(retryAfterMs, 2 * base);
  return failedAt + Math.round(delay);
}
