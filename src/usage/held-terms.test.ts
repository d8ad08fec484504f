// What a person's sources give of a tool's terms, branch by branch, without a database.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { GrantSource, LicenceSource, Sources, SubscriptionSource } from "../customers/entitlement.js";
import { heldTerms, utcMonthOf } from "./held-terms.js";
import type { ToolTerms } from "./usage.types.js";

const NOW = Date.parse("2026-11-21T12:00:00.000Z");
const NOV = Date.parse("2026-11-01T00:00:00.000Z");
const DEC = Date.parse("2026-12-01T00:00:00.000Z");

const tool: ToolTerms = {
  features: ["export", "sync"],
  meters: [
    { id: "summaries", name: "Summaries", unit: "summaries", freeAllowance: 10 },
    { id: "pages", name: "Pages", unit: "pages", freeAllowance: null },
  ],
  top: { features: ["export", "sync"], allowances: { summaries: 500, pages: 50 } },
};

const licence = (o: Partial<LicenceSource> = {}): LicenceSource => ({
  id: "lic_1",
  status: "active",
  purchasedAt: NOW - 1000,
  seats: null,
  teamLicenceStatus: null,
  teamSubscriptionRunning: null,
  plan: null,
  givesAccess: true,
  terms: { features: ["export"], allowances: { summaries: 100 } },
  createdAt: NOW - 1000,
  ...o,
});
const subscription = (o: Partial<SubscriptionSource> = {}): SubscriptionSource => ({
  id: "sub_1",
  status: "active",
  periodStart: Date.parse("2026-11-10T08:00:00.000Z"),
  periodEnd: Date.parse("2026-12-10T08:00:00.000Z"),
  cancelAtPeriodEnd: false,
  cancelAt: null,
  endedAt: null,
  seats: null,
  plan: null,
  terms: { features: ["export", "sync"], allowances: { summaries: 500 } },
  createdAt: NOW - 5000,
  ...o,
});
const grant = (o: Partial<GrantSource> = {}): GrantSource => ({
  id: "gr_1",
  kind: "grant",
  startsAt: NOW - 100,
  endsAt: null,
  revokedAt: null,
  planId: null,
  terms: null,
  createdAt: NOW - 100,
  ...o,
});
const sources = (s: Partial<Sources>): Sources => ({ licences: [], subscriptions: [], grants: [], ...s });

describe("held terms", () => {
  test("a calendar month in UTC runs from its first instant to the next month's", () => {
    assert.deepEqual(utcMonthOf(NOW), { start: NOV, end: DEC });
    assert.deepEqual(utcMonthOf(Date.parse("2026-12-31T23:59:59.999Z")), { start: DEC, end: Date.parse("2027-01-01T00:00:00.000Z") });
  });

  test("someone who holds nothing gets each meter's free allowance for the calendar month, and no feature", () => {
    assert.deepEqual(heldTerms(sources({}), tool, NOW), {
      features: [],
      buckets: [{ meter: "summaries", bucket: "free", via: "free", allowance: 10, periodStart: NOV, periodEnd: DEC }],
    });
  });

  test("sources add up, each with its own period; the soonest reset comes first", () => {
    const held = heldTerms(sources({ licences: [licence()], subscriptions: [subscription()] }), tool, NOW);
    assert.deepEqual(held.features, ["export", "sync"]);
    assert.deepEqual(
      held.buckets.map((b) => [b.bucket, b.allowance, new Date(b.periodEnd).toISOString()]),
      [
        ["lic_1", 100, "2026-12-01T00:00:00.000Z"],
        ["sub_1", 500, "2026-12-10T08:00:00.000Z"],
      ],
    );
  });

  test("a grant without a plan, and a trial, give the top terms; a grant naming a plan gives that plan's", () => {
    const top = heldTerms(sources({ grants: [grant({ kind: "trial" })] }), tool, NOW);
    assert.deepEqual(top.features, ["export", "sync"]);
    assert.deepEqual(
      top.buckets.map((b) => [b.meter, b.allowance, b.via]),
      [
        ["summaries", 500, "trial"],
        ["pages", 50, "trial"],
      ],
    );
    const named = heldTerms(sources({ grants: [grant({ planId: "basic", terms: { features: ["export"], allowances: {} } })] }), tool, NOW);
    assert.deepEqual(named, { features: ["export"], buckets: [] });
  });

  test("what does not entitle gives nothing: a pack alone, a suspended licence, an ended grant; a feature the tool no longer declares is dropped", () => {
    const none = heldTerms(
      sources({
        licences: [licence({ givesAccess: false }), licence({ id: "lic_2", status: "suspended" })],
        grants: [grant({ endsAt: NOW - 1 })],
      }),
      tool,
      NOW,
    );
    assert.deepEqual(none.features, []);
    assert.deepEqual(
      none.buckets.map((b) => b.bucket),
      ["free"],
    );
    const dropped = heldTerms(sources({ licences: [licence({ terms: { features: ["export", "print"], allowances: {} } })] }), tool, NOW);
    assert.deepEqual(dropped.features, ["export"]);
  });
});
