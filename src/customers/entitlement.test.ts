import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DAY_MS } from "../clock.js";
import { computeEntitlement, type GrantSource, type LicenceSource, type PlanInfo, type Sources, type SubscriptionSource } from "./entitlement.js";

const NOW = Date.parse("2026-11-21T12:00:00.000Z");
const ago = (days: number) => NOW - days * DAY_MS;
const ahead = (days: number) => NOW + days * DAY_MS;

const lifetime: PlanInfo = { id: "lifetime", name: "Lifetime", billing: "one_time", amountCents: 4900, currency: "eur", interval: null };
const monthly: PlanInfo = { id: "monthly", name: "Monthly", billing: "subscription", amountCents: 500, currency: "eur", interval: "month" };

function licence(overrides: Partial<LicenceSource> = {}): LicenceSource {
  return {
    id: "lic_1",
    status: "active",
    purchasedAt: ago(30),
    seats: null,
    teamLicenceStatus: null,
    teamSubscriptionRunning: null,
    plan: lifetime,
    givesAccess: true,
    terms: null,
    createdAt: ago(30),
    ...overrides,
  };
}

function subscription(overrides: Partial<SubscriptionSource> = {}): SubscriptionSource {
  return {
    id: "sub_1",
    status: "active",
    periodStart: ago(10),
    periodEnd: ahead(20),
    cancelAtPeriodEnd: false,
    cancelAt: null,
    endedAt: null,
    seats: null,
    plan: monthly,
    terms: null,
    createdAt: ago(40),
    ...overrides,
  };
}

function grant(overrides: Partial<GrantSource> = {}): GrantSource {
  return { id: "gr_1", kind: "grant", startsAt: ago(5), endsAt: ahead(5), revokedAt: null, planId: null, terms: null, createdAt: ago(5), ...overrides };
}

const trial = (overrides: Partial<GrantSource> = {}) => grant({ id: "gr_trial", kind: "trial", ...overrides });

function sources(parts: Partial<Sources>): Sources {
  return { licences: [], subscriptions: [], grants: [], ...parts };
}

const at = (parts: Partial<Sources>, now = NOW) => computeEntitlement(sources(parts), now);

describe("what a person's sources entitle them to", () => {
  test("no sources: nothing held and nothing to explain", () => {
    assert.deepEqual(at({}), {
      entitled: false,
      via: null,
      paidAt: null,
      plan: null,
      subscription: null,
      trial: null,
      heldUntil: null,
      firstHeldAt: null,
    });
  });

  describe("licences", () => {
    test("an active licence entitles, with its purchase date and plan, until an event changes it", () => {
      assert.deepEqual(at({ licences: [licence()] }), {
        entitled: true,
        via: "licence",
        paidAt: ago(30),
        plan: lifetime,
        subscription: null,
        trial: null,
        heldUntil: null,
        firstHeldAt: ago(30),
      });
    });

    for (const status of ["suspended", "revoked"] as const) {
      test(`a ${status} licence does not entitle but still explains the purchase`, () => {
        const e = at({ licences: [licence({ status })] });
        assert.equal(e.entitled, false);
        assert.equal(e.via, null);
        assert.equal(e.paidAt, ago(30));
        assert.deepEqual(e.plan, lifetime);
        assert.equal(e.firstHeldAt, ago(30));
      });
    }

    test("a team licence entitles its buyer to nothing; seats 0 is not a team", () => {
      assert.equal(at({ licences: [licence({ seats: 5 })] }).entitled, false);
      assert.equal(at({ licences: [licence({ seats: 1 })] }).via, null);
      assert.equal(at({ licences: [licence({ seats: 0 })] }).via, "licence");
    });

    test("a seat of a team licence follows the team licence's status", () => {
      assert.equal(at({ licences: [licence({ teamLicenceStatus: "active" })] }).via, "licence");
      assert.equal(at({ licences: [licence({ teamLicenceStatus: "suspended" })] }).entitled, false);
      assert.equal(at({ licences: [licence({ teamLicenceStatus: "revoked" })] }).entitled, false);
    });

    test("a seat's own status counts too: a revoked seat of an active team does not entitle", () => {
      assert.equal(at({ licences: [licence({ status: "revoked", teamLicenceStatus: "active" })] }).entitled, false);
    });

    test("a seat of a team subscription entitles while the subscription runs, and not after", () => {
      assert.equal(at({ licences: [licence({ teamSubscriptionRunning: true })] }).via, "licence");
      const ended = at({ licences: [licence({ teamSubscriptionRunning: false })] });
      assert.equal(ended.entitled, false);
      assert.equal(ended.via, null);
    });

    test("the newest entitling licence explains paid_at and plan", () => {
      const older = licence({ id: "lic_old", purchasedAt: ago(300), createdAt: ago(300), plan: null });
      const newer = licence({ id: "lic_new", purchasedAt: ago(3), createdAt: ago(3) });
      for (const licences of [
        [older, newer],
        [newer, older],
      ]) {
        const e = at({ licences });
        assert.equal(e.paidAt, ago(3));
        assert.deepEqual(e.plan, lifetime);
        assert.equal(e.firstHeldAt, ago(300));
      }
    });

    test("an older active licence entitles over a newer revoked one and explains the purchase", () => {
      const active = licence({ id: "lic_a", purchasedAt: ago(100), createdAt: ago(100), plan: null });
      const revoked = licence({ id: "lic_r", status: "revoked", purchasedAt: ago(2), createdAt: ago(2) });
      const e = at({ licences: [revoked, active] });
      assert.equal(e.via, "licence");
      assert.equal(e.paidAt, ago(100));
      assert.equal(e.plan, null);
    });
  });

  describe("subscriptions", () => {
    for (const status of ["trialing", "active", "past_due"]) {
      test(`a subscription in status ${status} entitles`, () => {
        const s = subscription({ status });
        assert.deepEqual(at({ subscriptions: [s] }), {
          entitled: true,
          via: "subscription",
          paidAt: ago(10),
          plan: monthly,
          subscription: s,
          trial: null,
          heldUntil: null,
          firstHeldAt: ago(40),
        });
      });
    }

    for (const status of ["incomplete", "incomplete_expired", "canceled", "unpaid", "paused", "something_new"]) {
      test(`a subscription in status ${status} does not entitle, and is still shown`, () => {
        const s = subscription({ status });
        const e = at({ subscriptions: [s] });
        assert.equal(e.entitled, false);
        assert.equal(e.via, null);
        assert.equal(e.subscription, s);
        assert.equal(e.paidAt, ago(10));
        assert.deepEqual(e.plan, monthly);
        assert.equal(e.heldUntil, null);
      });
    }

    for (const status of ["trialing", "active", "past_due"]) {
      test(`an ended subscription never entitles, even with status ${status}`, () => {
        const s = subscription({ status, endedAt: ago(1) });
        const e = at({ subscriptions: [s] });
        assert.equal(e.entitled, false);
        assert.equal(e.subscription, s);
      });
    }

    test("a subscription set to cancel still entitles until it has ended", () => {
      const s = subscription({ cancelAtPeriodEnd: true, cancelAt: ahead(20) });
      assert.equal(at({ subscriptions: [s] }).via, "subscription");
    });

    test("a team subscription entitles its buyer to nothing but is shown to them", () => {
      const s = subscription({ seats: 3 });
      const e = at({ subscriptions: [s] });
      assert.equal(e.entitled, false);
      assert.equal(e.via, null);
      assert.equal(e.subscription, s);
    });

    test("the running subscription is the one shown, even when a lapsed one is newer", () => {
      const running = subscription({ id: "sub_run", createdAt: ago(90), periodStart: ago(9) });
      const lapsed = subscription({ id: "sub_old", status: "canceled", endedAt: ago(2), createdAt: ago(5), periodStart: ago(5), plan: null });
      const e = at({ subscriptions: [lapsed, running] });
      assert.equal(e.subscription, running);
      assert.equal(e.paidAt, ago(9));
      assert.deepEqual(e.plan, monthly);
    });

    test("with none running, the newest subscription is shown", () => {
      const older = subscription({ id: "sub_a", status: "canceled", createdAt: ago(90) });
      const newer = subscription({ id: "sub_b", status: "unpaid", createdAt: ago(9) });
      assert.equal(at({ subscriptions: [older, newer] }).subscription, newer);
    });
  });

  describe("trials and grants", () => {
    test("a running trial entitles until its end, and is shown as active", () => {
      const e = at({ grants: [trial({ startsAt: ago(2), endsAt: ahead(12) })] });
      assert.deepEqual(e, {
        entitled: true,
        via: "trial",
        paidAt: null,
        plan: null,
        subscription: null,
        trial: { endsAt: ahead(12), active: true },
        heldUntil: ahead(12),
        firstHeldAt: ago(2),
      });
    });

    test("a trial that has ended is still shown, with active false", () => {
      const e = at({ grants: [trial({ startsAt: ago(20), endsAt: ago(6) })] });
      assert.equal(e.entitled, false);
      assert.equal(e.via, null);
      assert.deepEqual(e.trial, { endsAt: ago(6), active: false });
      assert.equal(e.heldUntil, null);
    });

    test("a trial ends at ends_at exactly, not a millisecond later", () => {
      const t = trial({ startsAt: ago(14), endsAt: NOW });
      assert.equal(at({ grants: [t] }, NOW - 1).via, "trial");
      assert.equal(at({ grants: [t] }, NOW).entitled, false);
    });

    test("a revoked trial is not active", () => {
      const e = at({ grants: [trial({ revokedAt: ago(1) })] });
      assert.equal(e.entitled, false);
      assert.deepEqual(e.trial, { endsAt: ahead(5), active: false });
    });

    test("the newest trial is the one shown", () => {
      const old = trial({ id: "t_old", startsAt: ago(100), endsAt: ago(86), createdAt: ago(100) });
      const current = trial({ id: "t_new", startsAt: ago(1), endsAt: ahead(13), createdAt: ago(1) });
      assert.deepEqual(at({ grants: [old, current] }).trial, { endsAt: ahead(13), active: true });
    });

    test("a timed grant entitles until its end", () => {
      const e = at({ grants: [grant({ endsAt: ahead(3) })] });
      assert.equal(e.via, "grant");
      assert.equal(e.heldUntil, ahead(3));
      assert.equal(e.trial, null);
      assert.equal(e.paidAt, null);
    });

    test("an untimed grant entitles with no end", () => {
      const e = at({ grants: [grant({ endsAt: null })] });
      assert.equal(e.via, "grant");
      assert.equal(e.heldUntil, null);
      assert.equal(e.entitled, true);
    });

    test("an expired grant does not entitle", () => {
      const e = at({ grants: [grant({ startsAt: ago(30), endsAt: ago(1) })] });
      assert.equal(e.entitled, false);
      assert.equal(e.firstHeldAt, ago(30));
    });

    test("a revoked grant does not entitle, timed or not", () => {
      assert.equal(at({ grants: [grant({ revokedAt: ago(1) })] }).entitled, false);
      assert.equal(at({ grants: [grant({ endsAt: null, revokedAt: ago(1) })] }).entitled, false);
    });

    test("a grant that has not started yet does not entitle", () => {
      assert.equal(at({ grants: [grant({ startsAt: ahead(1), endsAt: null })] }).entitled, false);
    });

    test("held until the latest end of the live grants and trials, or no end when one has none", () => {
      const short = grant({ id: "g1", endsAt: ahead(2) });
      const long = grant({ id: "g2", endsAt: ahead(9) });
      assert.equal(at({ grants: [short, long] }).heldUntil, ahead(9));
      const running = trial({ endsAt: ahead(4) });
      assert.equal(at({ grants: [running, long] }).heldUntil, ahead(9));
      assert.equal(at({ grants: [running, grant({ endsAt: null })] }).heldUntil, null);
      const expired = grant({ id: "g3", startsAt: ago(9), endsAt: ago(1) });
      assert.equal(at({ grants: [short, expired] }).heldUntil, ahead(2));
    });
  });

  describe("via precedence: licence, subscription, trial, grant", () => {
    const all = { licences: [licence()], subscriptions: [subscription()], grants: [trial(), grant({ endsAt: null })] };

    test("an entitling licence comes first, with the subscription and the trial still shown beside it", () => {
      const e = at(all);
      assert.equal(e.via, "licence");
      assert.equal(e.paidAt, ago(30));
      assert.deepEqual(e.plan, lifetime);
      // The subscription and trial are still reported beside the licence.
      assert.equal(e.subscription, all.subscriptions[0]);
      assert.deepEqual(e.trial, { endsAt: ahead(5), active: true });
      assert.equal(e.heldUntil, null);
      assert.equal(e.firstHeldAt, ago(40));
    });

    test("a subscription entitles when no licence does", () => {
      const e = at({ ...all, licences: [licence({ status: "revoked", createdAt: ago(1) })] });
      assert.equal(e.via, "subscription");
      assert.equal(e.paidAt, ago(10));
      assert.deepEqual(e.plan, monthly);
      assert.equal(e.heldUntil, null);
    });

    test("a trial comes before a grant, and access is held until the later of their ends", () => {
      const e = at({ grants: all.grants });
      assert.equal(e.via, "trial");
      assert.equal(e.heldUntil, null);
      assert.equal(at({ grants: [trial({ endsAt: ahead(5) }), grant({ endsAt: ahead(7) })] }).heldUntil, ahead(7));
    });

    test("a grant comes last, with a lapsed purchase still explained", () => {
      const e = at({ licences: [licence({ status: "suspended" })], grants: [grant()] });
      assert.equal(e.via, "grant");
      assert.equal(e.paidAt, ago(30));
      assert.deepEqual(e.plan, lifetime);
      assert.equal(e.heldUntil, ahead(5));
    });

    test("a timed grant does not limit a licence holder's access", () => {
      assert.equal(at({ licences: [licence()], grants: [grant({ endsAt: ahead(1) })] }).heldUntil, null);
    });
  });

  describe("paid_at and plan when nothing paid entitles", () => {
    test("the newest of the licences and subscriptions explains it", () => {
      const l = licence({ status: "revoked", purchasedAt: ago(50), createdAt: ago(50) });
      const s = subscription({ status: "canceled", periodStart: ago(20), createdAt: ago(20) });
      const newerSubscription = at({ licences: [l], subscriptions: [s] });
      assert.equal(newerSubscription.paidAt, ago(20));
      assert.deepEqual(newerSubscription.plan, monthly);

      const newerLicence = at({ licences: [licence({ status: "revoked", purchasedAt: ago(5), createdAt: ago(5) })], subscriptions: [s] });
      assert.equal(newerLicence.paidAt, ago(5));
      assert.deepEqual(newerLicence.plan, lifetime);
    });

    test("a licence and a subscription made at the same moment: the licence explains it", () => {
      const l = licence({ status: "revoked", purchasedAt: ago(7), createdAt: ago(7) });
      const s = subscription({ status: "canceled", periodStart: ago(6), createdAt: ago(7) });
      assert.equal(at({ licences: [l], subscriptions: [s] }).paidAt, ago(7));
    });

    test("an entitling subscription explains it over a newer lapsed licence", () => {
      const l = licence({ status: "revoked", purchasedAt: ago(1), createdAt: ago(1) });
      const e = at({ licences: [l], subscriptions: [subscription()] });
      assert.equal(e.via, "subscription");
      assert.equal(e.paidAt, ago(10));
      assert.deepEqual(e.plan, monthly);
    });
  });
});
