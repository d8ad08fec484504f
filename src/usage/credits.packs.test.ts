// Credit packs bought through Stripe, on both engines: each purchase adds its own ledger
// rows in the licence's transaction (a replayed checkout adds nothing); a full refund takes
// back what is left, a partial one changes nothing; a dispute holds them (its licence
// suspended), a won dispute makes them spendable again, a lost one takes them back.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DAY_MS } from "../clock.js";
import { DIALECTS, testApi, testServices } from "../test-support/harness.js";
import {
  chargeObject,
  connectTestStripe,
  deliver,
  disputeObject,
  emittedEvents,
  ofType,
  paymentSession,
  stripeEvent,
  stripeId,
} from "../test-support/stripe.js";
import { seedUsageCatalogue } from "../test-support/usage.js";
import { listAvailableCredits } from "./credits.store.js";

async function packTestbed(dialect: (typeof DIALECTS)[number]) {
  const { services, clock } = await testServices(dialect);
  const ws = await seedUsageCatalogue(services);
  const api = await testApi(services);
  const secret = await connectTestStripe(services, ws);
  const send = (type: string, object: Record<string, unknown>) => deliver(api, ws, secret, stripeEvent(type, object, { now: clock.now() }), clock.now());
  /** Ada buys the 1,000-summaries pack; answers the checkout's ids and the licence. */
  async function buyPack(email = "ada@example.com") {
    const paymentIntent = stripeId("pi");
    const session = paymentSession({ email, metadata: { warden_tool: "tabmaster", warden_plan: "pack-1000" }, amount: 900, paymentIntent, now: clock.now() });
    assert.equal(await send("checkout.session.completed", session), "applied");
    const licence = await services.db.selectFrom("licences").selectAll().where("checkout_session", "=", session.id).executeTakeFirstOrThrow();
    return { session, paymentIntent, licence };
  }
  const credits = () =>
    services.db.selectFrom("meter_credits").selectAll().where("workspace_id", "=", ws.workspaceId).orderBy("created_at").orderBy("id").execute();
  const person = async (email = "ada@example.com") =>
    (await services.db.selectFrom("people").select("id").where("workspace_id", "=", ws.workspaceId).where("email", "=", email).executeTakeFirstOrThrow()).id;
  /** What a spend could draw from now: the rows' sum. */
  const available = async (email = "ada@example.com") =>
    (
      await listAvailableCredits(
        services.db,
        { workspaceId: ws.workspaceId, env: "test", personId: await person(email), toolId: "tabmaster", meterId: "summaries" },
        clock.now(),
      )
    ).reduce((sum, r) => sum + r.remaining, 0);
  const licenceStatus = async (id: string) => (await services.db.selectFrom("licences").select("status").where("id", "=", id).executeTakeFirstOrThrow()).status;
  return { services, clock, ws, send, buyPack, credits, available, licenceStatus };
}

for (const dialect of DIALECTS) {
  describe(`credit packs (${dialect})`, () => {
    test("each purchase of a pack adds its own row: 1,000 summaries to the buyer, lasting 365 days from the purchase; purchase.completed names the pack's plan", async () => {
      const t = await packTestbed(dialect);
      const first = await t.buyPack();
      t.clock.advance(DAY_MS);
      const second = await t.buyPack();
      const rows = await t.credits();
      assert.equal(rows.length, 2);
      assert.deepEqual(
        rows.map((r) => [r.licence_id, Number(r.amount), Number(r.remaining), r.meter_id, r.tool_id, r.note]),
        [
          [first.licence.id, 1000, 1000, "summaries", "tabmaster", null],
          [second.licence.id, 1000, 1000, "summaries", "tabmaster", null],
        ],
      );
      // Bought on 21 and 22 Nov 2026 at noon: 365 days on.
      assert.deepEqual(
        rows.map((r) => new Date(Number(r.expires_at)).toISOString()),
        ["2027-11-21T12:00:00.000Z", "2027-11-22T12:00:00.000Z"],
      );
      for (const row of rows) assert.match(String(row.id), /^cr_[0-9A-Za-z]{24}$/);
      assert.equal(await t.available(), 2000);
      const purchases = ofType(await emittedEvents(t.services, t.ws), "purchase.completed");
      assert.deepEqual(
        purchases.map((e) => e.data.plan),
        ["tabmaster:pack-1000", "tabmaster:pack-1000"],
      );
    });

    test("a replayed checkout (another Stripe event id, the same session) adds no credits", async () => {
      const t = await packTestbed(dialect);
      const bought = await t.buyPack();
      assert.equal(await t.send("checkout.session.completed", bought.session), "applied");
      assert.equal((await t.credits()).length, 1);
      assert.equal(await t.available(), 1000);
    });

    test("a plan without credits adds no rows", async () => {
      const t = await packTestbed(dialect);
      const session = paymentSession({ email: "ada@example.com", metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" }, now: t.clock.now() });
      assert.equal(await t.send("checkout.session.completed", session), "applied");
      assert.deepEqual(await t.credits(), []);
    });

    test("a partial refund changes nothing; a full refund takes back what is left (amount kept) and sends payment.refunded", async () => {
      const t = await packTestbed(dialect);
      const kept = await t.buyPack();
      t.clock.advance(1000);
      const refunded = await t.buyPack();
      assert.equal(await t.send("charge.refunded", chargeObject({ paymentIntent: refunded.paymentIntent, amount: 900, amountRefunded: 300 })), "applied");
      assert.equal(await t.licenceStatus(refunded.licence.id), "active");
      assert.equal(await t.available(), 2000);

      assert.equal(await t.send("charge.refunded", chargeObject({ paymentIntent: refunded.paymentIntent, amount: 900, amountRefunded: 900 })), "applied");
      assert.equal(await t.licenceStatus(refunded.licence.id), "revoked");
      const rows = await t.credits();
      assert.deepEqual(
        rows.map((r) => [r.licence_id, Number(r.amount), Number(r.remaining)]),
        [
          [kept.licence.id, 1000, 1000],
          [refunded.licence.id, 1000, 0],
        ],
      );
      assert.equal(await t.available(), 1000);
      const [event] = ofType(await emittedEvents(t.services, t.ws), "payment.refunded");
      assert.equal(event?.data.licence, refunded.licence.id);
    });

    for (const [status, after, left] of [
      ["won", "active", 1000],
      ["warning_closed", "active", 1000],
      ["lost", "revoked", 0],
    ] as const) {
      test(`a dispute holds the pack's credits (rows stay, not spendable); closed ${status}: licence ${after}, ${left} spendable`, async () => {
        const t = await packTestbed(dialect);
        const bought = await t.buyPack();
        const dispute = (s: string) => disputeObject({ id: disputeId, paymentIntent: bought.paymentIntent, amount: 900, status: s });
        const disputeId = stripeId("du");
        assert.equal(await t.send("charge.dispute.created", dispute("needs_response")), "applied");
        assert.equal(await t.licenceStatus(bought.licence.id), "suspended");
        assert.deepEqual(
          (await t.credits()).map((r) => Number(r.remaining)),
          [1000],
        );
        assert.equal(await t.available(), 0);

        assert.equal(await t.send("charge.dispute.closed", dispute(status)), "applied");
        assert.equal(await t.licenceStatus(bought.licence.id), after);
        assert.deepEqual(
          (await t.credits()).map((r) => [Number(r.amount), Number(r.remaining)]),
          [[1000, left]],
        );
        assert.equal(await t.available(), left);
      });
    }

    test("a team purchase of a pack gives its credits once, to the buyer", async () => {
      const t = await packTestbed(dialect);
      const session = paymentSession({
        email: "ada@example.com",
        metadata: { warden_tool: "tabmaster", warden_plan: "pack-1000", warden_seats: "3" },
        amount: 2700,
        now: t.clock.now(),
      });
      assert.equal(await t.send("checkout.session.completed", session), "applied");
      assert.deepEqual(
        (await t.credits()).map((r) => Number(r.amount)),
        [1000],
      );
      assert.equal(await t.available(), 1000);
    });
  });
}
