// Whether a person holds a tool now, and how, from every source the specification names.
// Pure functions over the sources loaded by customer.store.ts, so that each branch is
// tested without a database and the list and retrieve endpoints agree by construction.
import type { HeldPlanTerms } from "../usage/usage.types.js";

export type Via = "licence" | "subscription" | "trial" | "grant";

export interface PlanInfo {
  id: string;
  name: string;
  billing: "one_time" | "subscription";
  amountCents: number | null;
  currency: string;
  interval: "month" | "year" | null;
}

export interface SubscriptionSource {
  id: string;
  status: string;
  periodStart: number;
  periodEnd: number;
  cancelAtPeriodEnd: boolean;
  cancelAt: number | null;
  endedAt: number | null;
  seats: number | null;
  plan: PlanInfo | null;
  /** The plan's terms for the tool; null when it names no plan (the tool's top terms apply). */
  terms: HeldPlanTerms | null;
  createdAt: number;
}

export interface LicenceSource {
  id: string;
  status: "active" | "suspended" | "revoked";
  purchasedAt: number;
  seats: number | null;
  /** For a seat handed out from a team licence: that licence's status. */
  teamLicenceStatus: "active" | "suspended" | "revoked" | null;
  /** For a seat of a team subscription: whether the subscription still runs. */
  teamSubscriptionRunning: boolean | null;
  plan: PlanInfo | null;
  /** False for a credit pack bought alone: it adds credits and gives no access. */
  givesAccess: boolean;
  terms: HeldPlanTerms | null;
  createdAt: number;
}

export interface GrantSource {
  id: string;
  kind: "grant" | "trial";
  startsAt: number;
  endsAt: number | null;
  revokedAt: number | null;
  /** The tool's plan whose terms it gives; null: the tool's top terms. */
  planId: string | null;
  terms: HeldPlanTerms | null;
  createdAt: number;
}

export interface Sources {
  licences: LicenceSource[];
  subscriptions: SubscriptionSource[];
  grants: GrantSource[];
}

export interface Entitlement {
  entitled: boolean;
  via: Via | null;
  paidAt: number | null;
  plan: PlanInfo | null;
  subscription: SubscriptionSource | null;
  trial: { endsAt: number; active: boolean } | null;
  /** When access ends by itself; null while entitled means until something changes it. */
  heldUntil: number | null;
  /** Earliest start of any source: when the person first held the tool. */
  firstHeldAt: number | null;
}

// Stripe's statuses that still give access (decisions.md).
const ENTITLING_STATUSES = new Set(["trialing", "active", "past_due"]);
const NEVER_STARTED = new Set(["incomplete", "incomplete_expired"]);

export function subscriptionRuns(s: Pick<SubscriptionSource, "status" | "endedAt">): boolean {
  return s.endedAt === null && ENTITLING_STATUSES.has(s.status);
}

const isTeam = (seats: number | null) => seats !== null && seats > 0;

/** A team purchase entitles its buyer to nothing; each seat is a licence of its own. */
export function licenceEntitles(l: LicenceSource): boolean {
  if (l.status !== "active" || isTeam(l.seats) || !l.givesAccess) return false;
  if (l.teamLicenceStatus !== null && l.teamLicenceStatus !== "active") return false;
  return l.teamSubscriptionRunning !== false;
}

export function subscriptionEntitles(s: SubscriptionSource): boolean {
  return subscriptionRuns(s) && !isTeam(s.seats);
}

export function grantLive(g: Pick<GrantSource, "revokedAt" | "startsAt" | "endsAt">, now: number): boolean {
  return g.revokedAt === null && g.startsAt <= now && (g.endsAt === null || g.endsAt > now);
}

const newestFirst = <T extends { createdAt: number }>(items: T[]) => [...items].sort((a, b) => b.createdAt - a.createdAt);

export function computeEntitlement(sources: Sources, now: number): Entitlement {
  const licences = newestFirst(sources.licences);
  const subscriptions = newestFirst(sources.subscriptions);
  const grants = newestFirst(sources.grants);

  const licence = licences.find(licenceEntitles);
  const subscription = subscriptions.find(subscriptionEntitles);
  const liveTrials = grants.filter((g) => g.kind === "trial" && grantLive(g, now));
  const liveGrants = grants.filter((g) => g.kind === "grant" && grantLive(g, now));

  // Precedence as the specification lists the sources: licence, subscription, trial, grant.
  let via: Via | null = null;
  if (licence) via = "licence";
  else if (subscription) via = "subscription";
  else if (liveTrials.length > 0) via = "trial";
  else if (liveGrants.length > 0) via = "grant";

  // Plan and paid_at explain the paid source: the one that entitles, else the newest
  // licence or subscription so that a lapsed purchase can still be explained.
  const paid: { plan: PlanInfo | null; paidAt: number } | null = licence
    ? { plan: licence.plan, paidAt: licence.purchasedAt }
    : subscription
      ? { plan: subscription.plan, paidAt: subscription.periodStart }
      : newestPaid(licences, subscriptions);

  const trial = grants.find((g) => g.kind === "trial");

  // Licences and subscriptions hold until an event changes them; grants and trials may
  // end by themselves, and the latest of their ends is when access runs out.
  let heldUntil: number | null = null;
  if (via === "trial" || via === "grant") {
    const ends = [...liveTrials, ...liveGrants].map((g) => g.endsAt);
    heldUntil = ends.includes(null) ? null : Math.max(...(ends as number[]));
  }

  // Only sources that gave access count for "first held": a team purchase entitles its
  // buyer to nothing, and an incomplete subscription never started.
  const starts = [
    ...sources.licences.filter((l) => !isTeam(l.seats) && l.givesAccess).map((l) => l.purchasedAt),
    ...sources.subscriptions.filter((s) => !isTeam(s.seats) && !NEVER_STARTED.has(s.status)).map((s) => s.createdAt),
    ...sources.grants.map((g) => g.startsAt),
  ];

  return {
    entitled: via !== null,
    via,
    paidAt: paid?.paidAt ?? null,
    plan: paid?.plan ?? null,
    subscription: subscription ?? subscriptions[0] ?? null,
    trial: trial ? { endsAt: trial.endsAt ?? trial.startsAt, active: grantLive(trial, now) } : null,
    heldUntil,
    firstHeldAt: starts.length > 0 ? Math.min(...starts) : null,
  };
}

function newestPaid(licences: LicenceSource[], subscriptions: SubscriptionSource[]): { plan: PlanInfo | null; paidAt: number } | null {
  // A credit pack bought alone explains no access, lapsed or not.
  const l = licences.find((licence) => licence.givesAccess);
  const s = subscriptions[0];
  if (l && (!s || l.createdAt >= s.createdAt)) return { plan: l.plan, paidAt: l.purchasedAt };
  if (s) return { plan: s.plan, paidAt: s.periodStart };
  return null;
}
