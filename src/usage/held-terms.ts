// What a person's sources give them of a tool's terms: the features unlocked, and one
// allowance bucket per meter per source. Pure, like entitlement.ts beside the sources it
// reads, so that the access answers, the meters' reads and spending agree by construction.
import { grantLive, licenceEntitles, type Sources, subscriptionEntitles, type Via } from "../customers/entitlement.js";
import type { HeldPlanTerms, ToolTerms } from "./usage.types.js";

/** One source's allowance of one meter in its current period. */
export interface AllowanceBucket {
  meter: string;
  /** The source's id (`sub_…`, `lic_…`, `gr_…`), or `free` for a person who holds nothing. */
  bucket: string;
  via: Via | "free";
  allowance: number;
  periodStart: number;
  /** When the allowance resets: the subscription's period end, else the next calendar month (UTC). */
  periodEnd: number;
}

export interface HeldTerms {
  /** Feature ids the tool still declares, sorted. */
  features: string[];
  /** Soonest reset first, then in the order of `via`'s precedence: the order spending draws from them. */
  buckets: AllowanceBucket[];
}

/** The calendar month (UTC) holding an instant: its first instant and the next month's. */
export function utcMonthOf(at: number): { start: number; end: number } {
  const d = new Date(at);
  return { start: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1), end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) };
}

const VIA_ORDER: Record<AllowanceBucket["via"], number> = { licence: 0, subscription: 1, trial: 2, grant: 3, free: 4 };

export function heldTerms(sources: Sources, tool: ToolTerms, now: number): HeldTerms {
  const declared = new Set(tool.features);
  const features = new Set<string>();
  const buckets: AllowanceBucket[] = [];
  const month = utcMonthOf(now);

  // A source naming no plan (a trial, a grant without one, a purchase of no known plan) gives the top terms.
  const give = (via: Via, id: string, terms: HeldPlanTerms | null, period: { start: number; end: number }) => {
    const given = terms ?? tool.top;
    for (const feature of given.features) if (declared.has(feature)) features.add(feature);
    for (const meter of tool.meters) {
      const allowance = given.allowances[meter.id];
      if (allowance !== undefined && allowance > 0) {
        buckets.push({ meter: meter.id, bucket: id, via, allowance, periodStart: period.start, periodEnd: period.end });
      }
    }
  };

  let holds = false;
  for (const l of sources.licences) {
    if (!licenceEntitles(l)) continue;
    holds = true;
    give("licence", l.id, l.terms, month);
  }
  for (const s of sources.subscriptions) {
    if (!subscriptionEntitles(s)) continue;
    holds = true;
    give("subscription", s.id, s.terms, { start: s.periodStart, end: s.periodEnd });
  }
  for (const g of sources.grants) {
    if (!grantLive(g, now)) continue;
    holds = true;
    give(g.kind, g.id, g.terms, month);
  }
  if (!holds) {
    for (const meter of tool.meters) {
      if (meter.freeAllowance !== null && meter.freeAllowance > 0) {
        buckets.push({ meter: meter.id, bucket: "free", via: "free", allowance: meter.freeAllowance, periodStart: month.start, periodEnd: month.end });
      }
    }
  }
  buckets.sort((a, b) => a.periodEnd - b.periodEnd || VIA_ORDER[a.via] - VIA_ORDER[b.via] || (a.bucket < b.bucket ? -1 : a.bucket > b.bucket ? 1 : 0));
  return { features: [...features].sort(), buckets };
}
