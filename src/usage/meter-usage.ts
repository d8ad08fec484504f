// A person's meter as they read it, and how a spend draws from it: pure, over what the
// stores read (the buckets heldTerms gives, what each used this period, the credits
// available), so that the read and the spend answer alike by construction.
import { toIso } from "../clock.js";
import type { AllowanceBucket } from "./held-terms.js";
import type { MeterUsage } from "./usage.schema.js";
import type { AvailableCredit, UsedRow } from "./usage.store.js";

export interface MeterState {
  meter: { id: string; name: string; unit: string };
  /** This meter's buckets, in heldTerms' order (soonest reset first). */
  buckets: AllowanceBucket[];
  /** Units used per bucket in its current period. */
  used: Map<string, number>;
  /** This meter's credits available, in the order they are spent. */
  credits: AvailableCredit[];
}

const usedKey = (bucket: string, periodStart: number) => `${bucket}\u0000${periodStart}`;

/** What each bucket used in its current period, from the rows read. */
export function usedByBucket(buckets: readonly AllowanceBucket[], rows: readonly UsedRow[]): Map<string, number> {
  const byKey = new Map(rows.map((r) => [`${r.meter}\u0000${usedKey(r.bucket, r.periodStart)}`, r.used]));
  return new Map(buckets.map((b) => [usedKey(b.bucket, b.periodStart), byKey.get(`${b.meter}\u0000${usedKey(b.bucket, b.periodStart)}`) ?? 0]));
}

export function meterState(
  meter: { id: string; name: string; unit: string },
  allBuckets: readonly AllowanceBucket[],
  rows: readonly UsedRow[],
  credits: readonly AvailableCredit[],
): MeterState {
  const buckets = allBuckets.filter((b) => b.meter === meter.id);
  return { meter, buckets, used: usedByBucket(buckets, rows), credits: credits.filter((c) => c.meter === meter.id) };
}

const usedOf = (state: MeterState, b: AllowanceBucket) => state.used.get(usedKey(b.bucket, b.periodStart)) ?? 0;

/**
 * The meter as a person reads it. A bucket used beyond its allowance (the plan changed
 * mid-period to a smaller one) has nothing left, never less than nothing.
 */
export function presentMeterUsage(state: MeterState): MeterUsage {
  const buckets = state.buckets.map((b) => ({
    via: b.via,
    source: b.via === "free" ? null : b.bucket,
    allowance: b.allowance,
    used: usedOf(state, b),
    period_start: toIso(b.periodStart),
    resets_at: toIso(b.periodEnd),
  }));
  const allowance = buckets.reduce((sum, b) => sum + b.allowance, 0);
  const used = buckets.reduce((sum, b) => sum + b.used, 0);
  const allowanceRemaining = buckets.reduce((sum, b) => sum + Math.max(0, b.allowance - b.used), 0);
  const credits = state.credits.reduce((sum, c) => sum + c.remaining, 0);
  const first = state.buckets[0];
  return {
    meter: state.meter.id,
    unit: state.meter.unit,
    used,
    allowance,
    allowance_remaining: allowanceRemaining,
    credits,
    remaining: allowanceRemaining + credits,
    resets_at: first ? toIso(first.periodEnd) : null,
    period_start: first ? toIso(first.periodStart) : null,
    buckets,
  };
}

export interface Draw {
  buckets: { bucket: AllowanceBucket; units: number }[];
  credits: { credit: AvailableCredit; units: number }[];
}

/**
 * Where `quantity` units come from: the buckets in order (soonest reset first), then the
 * credits in order (soonest expiring, then those that never expire, oldest first).
 * Null when all of it is not there: a spend takes all or nothing.
 */
export function drawFrom(state: MeterState, quantity: number): Draw | null {
  let left = quantity;
  const draw: Draw = { buckets: [], credits: [] };
  for (const bucket of state.buckets) {
    if (left === 0) break;
    const units = Math.min(left, Math.max(0, bucket.allowance - usedOf(state, bucket)));
    if (units > 0) {
      draw.buckets.push({ bucket, units });
      left -= units;
    }
  }
  for (const credit of state.credits) {
    if (left === 0) break;
    const units = Math.min(left, credit.remaining);
    if (units > 0) {
      draw.credits.push({ credit, units });
      left -= units;
    }
  }
  return left === 0 ? draw : null;
}

/** The state after a draw is applied. */
export function afterDraw(state: MeterState, draw: Draw): MeterState {
  const used = new Map(state.used);
  for (const { bucket, units } of draw.buckets) used.set(usedKey(bucket.bucket, bucket.periodStart), usedOf(state, bucket) + units);
  const taken = new Map(draw.credits.map((c) => [c.credit.id, c.units]));
  const credits = state.credits.map((c) => ({ ...c, remaining: c.remaining - (taken.get(c.id) ?? 0) })).filter((c) => c.remaining > 0);
  return { ...state, used, credits };
}

/** The refusal's sentence: what is left, and when the allowance resets. */
export function refusalMessage(usage: MeterUsage, quantity: number): string {
  const left = usage.remaining === 0 ? `No ${usage.unit} are left` : `Only ${usage.remaining} ${usage.unit} ${usage.remaining === 1 ? "is" : "are"} left`;
  const reset = usage.resets_at === null ? "no allowance resets; credits would add more" : `the allowance resets at ${usage.resets_at}`;
  return `${left} of meter "${usage.meter}" and this use needs ${quantity}; ${reset}. Nothing was spent.`;
}
