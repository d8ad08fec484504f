// Point 5 of the payments issue: team purchases and their seats, on both engines.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DAY_MS } from "../clock.js";
import { DIALECTS, seedWorkspace, testApi, testServices } from "../test-support/harness.js";
import { connectTestStripe, deliver, disputeObject, ofType, paymentSession, paymentsTestbed, stripeEvent, stripeId } from "../test-support/stripe.js";
import { createPlan } from "../workspaces/workspace.service.js";
import { refundLicence } from "./licence.service.js";
import { assignSeat, unassignSeat } from "./seat.service.js";

const LIFETIME = { id: "lifetime", name: "Lifetime", billing: "one_time", amountCents: 4900, currency: "eur", interval: null };

type Testbed = Awaited<ReturnType<typeof paymentsTestbed>>;

async function buyTeam(t: Testbed, seats: number) {
  const paymentIntent = stripeId("pi");
  const session = paymentSession({
    email: "it@example.org",
    metadata: { warden_tool: "tabmaster", warden_plan: "lifetime", warden_seats: String(seats) },
    amount: 4900 * seats,
    paymentIntent,
    now: t.clock.now(),
  });
  assert.equal(await t.send("checkout.session.completed", session), "applied");
  const team = (await t.licences()).find((l) => l.checkout_session === session.id);
  assert.ok(team);
  return { id: team.id, paymentIntent };
}

for (const dialect of DIALECTS) {
  describe(`team seats (${dialect})`, () => {
    test("a team licence entitles its buyer to nothing; each seat handed out is a licence of its own, never more than bought", async () => {
      const t = await paymentsTestbed(dialect);
      const team = await buyTeam(t, 2);
      assert.equal(ofType(await t.events(), "purchase.completed")[0]?.data.seats, 2);
      assert.equal((await t.customer("it@example.org")).body.entitled, false);
      assert.deepEqual(await t.list(), []);

      t.clock.advance(DAY_MS);
      const alan = await assignSeat(t.services, { team: team.id, email: "alan@example.org" });
      assert.match(alan.seat, /^lic_[0-9A-Za-z]{24}$/);
      assert.deepEqual({ ...alan, seat: "" }, { seat: "", team: team.id, email: "alan@example.org", status: "active", seats_in_use: 1, seats: 2 });
      // Handing a seat to the same address again answers the seat it holds.
      assert.equal((await assignSeat(t.services, { team: team.id, email: "ALAN@example.org" })).seat, alan.seat);
      await assignSeat(t.services, { team: team.id, email: "barbara@example.org" });
      await assert.rejects(assignSeat(t.services, { team: team.id, email: "carol@example.org" }), /2 seats, all in use/);

      assert.deepEqual(await t.customer("alan@example.org"), {
        status: 200,
        body: {
          email: "alan@example.org",
          account: false,
          entitled: true,
          via: "licence",
          paid_at: "2026-11-22T12:00:00.000Z", // the seat's day, a day after the team was bought
          plan: LIFETIME,
          subscription: null,
          trial: null,
          features: [],
        },
      });
      assert.deepEqual((await t.list()).map((r) => r.email).sort(), ["alan@example.org", "barbara@example.org"]);

      // Taking a seat back frees it for someone else.
      const back = await unassignSeat(t.services, { team: team.id, email: "alan@example.org" });
      assert.deepEqual([back.status, back.seats_in_use], ["revoked", 1]);
      assert.equal((await t.customer("alan@example.org")).body.entitled, false);
      await assignSeat(t.services, { team: team.id, email: "carol@example.org" });
      await assert.rejects(unassignSeat(t.services, { team: team.id, email: "alan@example.org" }), /holds no seat/);

      // A seat carries no payment of its own.
      const seat = (await t.licences()).find((l) => l.team_licence_id === team.id && l.status === "active");
      await assert.rejects(refundLicence(t.services, { id: seat?.id ?? "" }), /seat of a team purchase/);
      await assert.rejects(assignSeat(t.services, { team: seat?.id ?? "", email: "dan@example.org" }), /not a team licence/);
    });

    test("refunding or disputing the team licence moves every seat holder with it", async () => {
      const t = await paymentsTestbed(dialect);
      const team = await buyTeam(t, 3);
      for (const email of ["alan@example.org", "barbara@example.org"]) await assignSeat(t.services, { team: team.id, email });

      const disputeId = stripeId("du");
      await t.send("charge.dispute.created", disputeObject({ id: disputeId, paymentIntent: team.paymentIntent, amount: 14700, status: "needs_response" }));
      assert.deepEqual(await t.list("tabmaster", "?entitled=true"), []);
      await t.send("charge.dispute.closed", disputeObject({ id: disputeId, paymentIntent: team.paymentIntent, amount: 14700, status: "won" }));
      assert.equal((await t.list("tabmaster", "?entitled=true")).length, 2);

      await refundLicence(t.services, { id: team.id });
      for (const email of ["alan@example.org", "barbara@example.org"]) assert.equal((await t.customer(email)).body.entitled, false, email);
      assert.deepEqual(await t.list("tabmaster", "?entitled=true"), []);
      await assert.rejects(assignSeat(t.services, { team: team.id, email: "carol@example.org" }), /is revoked/);
    });

    test("a seat is a pass: a Hobby workspace at its limit cannot hand one out", async () => {
      const { services, clock } = await testServices(dialect, { WARDEN_LIMIT_HOBBY_PASSES: "1" });
      const ws = await seedWorkspace(services, { plan: "hobby" });
      await createPlan(services.db, clock, { workspace: ws.slug, tool: "tabmaster", id: "lifetime", name: "Lifetime", billing: "one_time", amountCents: 4900 });
      const api = await testApi(services);
      const secret = await connectTestStripe(services, ws);
      const session = paymentSession({ email: "it@example.org", metadata: { warden_tool: "tabmaster", warden_seats: "5" }, now: clock.now() });
      await deliver(api, ws, secret, stripeEvent("checkout.session.completed", session, { now: clock.now() }), clock.now());
      const team = await services.db.selectFrom("licences").select("id").where("workspace_id", "=", ws.workspaceId).executeTakeFirstOrThrow();
      await assignSeat(services, { team: team.id, email: "alan@example.org" });
      await assert.rejects(assignSeat(services, { team: team.id, email: "barbara@example.org" }), /Hobby plan holds at most 1 pass/);
    });
  });
}
