// The benchmark's customers, as a pure function of their index: the seeder writes
// customer i, and the load generator asks for customer i, without sharing a list of a
// million addresses. The mix is decided by a hash of i, not by i itself, so that any
// range of indexes (10k, then 100k, then 1M, seeded in turn) has the same mix.

const DAY_MS = 86_400_000;

/** The benchmark workspace's products. */
export const BENCH = {
  ownerEmail: "bench-owner@example.com",
  workspace: "bench",
  /** The tool every scenario asks about. */
  tool: "tabmaster",
  /** A second tool, so that the bundle covers more than one. */
  otherTool: "linkkeeper",
  bundle: "suite",
  plans: {
    lifetime: { tool: "tabmaster", id: "lifetime", name: "Lifetime", billing: "one_time", amountCents: 4900, interval: null },
    monthly: { tool: "tabmaster", id: "monthly", name: "Monthly", billing: "subscription", amountCents: 500, interval: "month" },
    suiteLifetime: { bundle: "suite", id: "suite-lifetime", name: "Suite lifetime", billing: "one_time", amountCents: 9900, interval: null },
    suiteYearly: { bundle: "suite", id: "suite-yearly", name: "Suite yearly", billing: "subscription", amountCents: 4900, interval: "year" },
  },
} as const;

/** 32-bit integer hash (Murmur3's finaliser): cheap, deterministic, well spread. */
export function hash32(i: number, salt = 0): number {
  let h = (i ^ Math.imul(salt + 1, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

/** A uniform fraction in [0, 1) for customer i and a salt. */
export function fraction(i: number, salt: number): number {
  return hash32(i, salt) / 2 ** 32;
}

const DOMAINS = ["example.com", "mail.example.org", "example.net", "corp.example.io", "gmail.com", "googlemail.com"];
const NAMES = ["ada", "grace", "alan", "linus", "margaret", "barbara", "edsger", "donald", "frances", "ken"];

/** The address customer i was seeded under; Gmail ones carry dots, as people type them. */
export function emailOf(i: number): string {
  const name = NAMES[hash32(i, 1) % NAMES.length] ?? "user";
  const domain = DOMAINS[hash32(i, 2) % DOMAINS.length] ?? "example.com";
  return `${name}.c${i}@${domain}`;
}

/** How customer i came to the benchmark tool. */
export type Origin =
  | "licence"
  | "licence-refunded"
  | "subscription-active"
  | "subscription-past-due"
  | "subscription-canceled"
  | "bundle-licence"
  | "bundle-subscription"
  | "trial-active"
  | "trial-expired"
  | "grant-open"
  | "grant-timed"
  | "grant-revoked"
  | "account-only";

// Per mille of customers; the shares a vendor of a paid extension with a free trial
// and a beta programme might see.
const ORIGINS: [Origin, number][] = [
  ["licence", 200],
  ["licence-refunded", 20],
  ["subscription-active", 140],
  ["subscription-past-due", 10],
  ["subscription-canceled", 30],
  ["bundle-licence", 80],
  ["bundle-subscription", 40],
  ["trial-active", 70],
  ["trial-expired", 70],
  ["grant-open", 40],
  ["grant-timed", 30],
  ["grant-revoked", 30],
  ["account-only", 240],
];

export interface CustomerPlan {
  index: number;
  email: string;
  origin: Origin;
  /** When the first source (or the sign-in) happened. */
  firstAt: number;
  /** Sign-in to the workspace and the benchmark tool, or null for an address without an account. */
  signedInAt: number | null;
  /** An expired trial before the purchase: a second source, as most buyers have. */
  earlierTrial: boolean;
  /** Devices on the benchmark tool (only for signed-in customers). */
  devices: number;
}

function originOf(i: number): Origin {
  let pick = hash32(i, 3) % 1000;
  for (const [origin, share] of ORIGINS) {
    if (pick < share) return origin;
    pick -= share;
  }
  return "account-only";
}

/** Customer i, relative to `now`: everything happened in the last two years. */
export function planCustomer(i: number, now: number): CustomerPlan {
  const origin = originOf(i);
  // Whole minutes, so that the list's (since, person) order has ties to break. Running
  // trials began in the last week; everything else 30 to 700 days ago, so that expired
  // trials and revocations lie in the past and timed access ends well after the run.
  const minutesAgo = origin === "trial-active" ? 1440 + Math.floor(fraction(i, 4) * 6 * 1440) : 30 * 1440 + Math.floor(fraction(i, 4) * 670 * 1440);
  const firstAt = now - minutesAgo * 60_000;
  // The sign-in follows the first source within a day, and never lies in the future.
  const signedIn = origin === "account-only" || fraction(i, 5) < 0.6;
  // devicesOf decides the sign-in the same way.
  const signedInAt = signedIn ? Math.min(now - 60_000, firstAt + Math.floor(fraction(i, 6) * DAY_MS)) : null;
  const paid = origin.startsWith("licence") || origin.startsWith("subscription") || origin.startsWith("bundle");
  return {
    index: i,
    email: emailOf(i),
    origin,
    firstAt,
    signedInAt,
    earlierTrial: paid && fraction(i, 7) < 0.3,
    devices: devicesOf(i, origin),
  };
}

/** Devices of customer i on the benchmark tool: 0 to 2 for a signed-in customer (the load generator picks one without planning the customer). */
export function devicesOf(i: number, origin: Origin = originOf(i)): number {
  const signedIn = origin === "account-only" || fraction(i, 5) < 0.6;
  return signedIn ? hash32(i, 8) % 3 : 0;
}

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/**
 * The session token of customer i's device d, in the shape Warden makes (`wdt_` and 43
 * base62 characters): the seeder stores its hash, the load generator sends it.
 */
export function deviceTokenOf(i: number, d: number): string {
  let token = "wdt_";
  for (let k = 0; k < 43; k++) token += BASE62[hash32(i * 3 + d, 100 + k) % 62];
  return token;
}

export const DAY = DAY_MS;
