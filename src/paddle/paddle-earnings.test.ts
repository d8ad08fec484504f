// What the vendor earns of a Paddle sale after Paddle's fee and tax (issue 47, point 3), on
// both engines: a purchase, a renewal, a partial and a full refund, a chargeback and its
// reversal, each with the earnings Paddle's totals say, stored exactly beside the amount
// and counted in Insights' revenue per currency; Stripe's stay unknown (insights.api.test.ts,
// insights.recount.test.ts).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DAY_MS } from "../clock.js";
import { ensurePerson } from "../customers/person.store.js";
import { DIALECTS } from "../test-support/harness.js";
import { adjustmentObject, paddleId, paddleTestbed, subscriptionObject, transactionObject } from "../test-support/paddle.js";

type Testbed = Awaited<ReturnType<typeof paddleTestbed>>;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The revenue insight of the testbed's environment through the API, from `from` to today. */
async function revenue(t: Testbed, from: number) {
  const response = await t.api.request({ url: `/api/v1/insights/revenue?from=${dayOf(from)}&to=${dayOf(t.clock.now())}`, key: t.ws.testKey });
  assert.equal(response.statusCode, 200, response.body);
  const body = response.json() as {
    currencies: {
      currency: string;
      gross: { total: number };
      refunds: { total: number };
      earnings: { total: number; points: { date: string; value: number }[] } | null;
    }[];
  };
  return new Map(body.currencies.map((c) => [c.currency, c]));
}

const nonZero = (points: { date: string; value: number }[]) => points.filter((p) => p.value !== 0).map((p) => [p.date, p.value]);

for (const dialect of DIALECTS) {
  describe(`Paddle earnings (${dialect})`, () => {
    test("a purchase keeps Paddle's earnings, fee and tax; a partial then a full refund take back what each adjustment says, once", async () => {
      const t = await paddleTestbed(dialect);
      const start = t.clock.now();
      const person = await ensurePerson(t.services.db, t.ws.workspaceId, "test", "ada@example.com", start);
      // 49.00 € paid, 20% VAT in it (8.17 €), Paddle's fee 2.95 €: the vendor earns 37.88 €.
      const transaction = transactionObject({
        customData: { warden_tool: "tabmaster", warden_plan: "lifetime", warden_account: person.id },
        total: 4900,
        currency: "EUR",
        billedAt: start,
      });
      assert.deepEqual(
        [transaction.details.totals.tax, transaction.details.totals.fee, transaction.details.totals.earnings],
        ["817", "295", "3788"],
        "the stand-in's totals: earnings = total − tax − fee",
      );
      assert.equal(await t.send("transaction.completed", transaction), "applied");
      const [licence] = await t.licences();
      assert.deepEqual(
        [licence?.amount_cents, licence?.earnings_cents, licence?.fee_cents, licence?.tax_cents].map(Number),
        [4900, 3788, 295, 817],
        "stored in minor units of the buyer's currency, beside what the buyer paid",
      );
      const bought = (await revenue(t, start)).get("eur");
      assert.deepEqual([bought?.gross.total, bought?.earnings?.total], [4900, 3788]);

      t.clock.advance(DAY_MS);
      const partial = {
        id: paddleId("adj"),
        action: "refund" as const,
        transactionId: transaction.id,
        total: 1000,
        currency: "EUR",
        at: t.clock.now(),
        earnings: 780,
      };
      assert.equal(await t.send("adjustment.updated", adjustmentObject(partial)), "applied");
      // Paddle's repeat of the same approval (another event id) takes nothing more back.
      assert.equal(await t.send("adjustment.updated", adjustmentObject(partial)), "ignored");
      t.clock.advance(DAY_MS);
      const rest = { action: "refund" as const, transactionId: transaction.id, total: 3900, currency: "EUR", at: t.clock.now(), earnings: 3008 };
      assert.equal(await t.send("adjustment.created", adjustmentObject(rest)), "applied");
      assert.equal((await t.licences())[0]?.status, "revoked");

      const eur = (await revenue(t, start)).get("eur");
      assert.deepEqual([eur?.gross.total, eur?.refunds.total, eur?.earnings?.total], [4900, 4900, 0]);
      assert.deepEqual(
        nonZero(eur?.earnings?.points ?? []),
        [
          [dayOf(start), 3788],
          [dayOf(start + DAY_MS), -780],
          [dayOf(start + 2 * DAY_MS), -3008],
        ],
        "each on the day Paddle made it",
      );
      const adjustments = await t.services.db
        .selectFrom("paddle_refunds")
        .select(["action", "amount_cents", "earnings_cents"])
        .orderBy("amount_cents")
        .execute();
      assert.deepEqual(
        adjustments.map((a) => [a.action, Number(a.amount_cents), Number(a.earnings_cents)]),
        [
          ["refund", 1000, 780],
          ["refund", 3900, 3008],
        ],
      );
    });

    test("a subscription's first payment and renewal earn what each transaction says, an invoice told before its subscription included", async () => {
      const t = await paddleTestbed(dialect);
      const start = t.clock.now();
      const person = await ensurePerson(t.services.db, t.ws.workspaceId, "test", "ada@example.com", start);
      const customData = { warden_tool: "tabmaster", warden_plan: "monthly", warden_account: person.id };
      const sub = paddleId("sub");
      const state = subscriptionObject({ id: sub, status: "active", customData, startedAt: start, periodEnd: start + 30 * DAY_MS });
      // The first payment's notification before the subscription's: counted once the subscription is stored.
      const first = transactionObject({ customData, subscriptionId: sub, total: 1500, currency: "EUR", billedAt: start, origin: "web" });
      assert.equal(await t.send("transaction.completed", first), "applied");
      assert.equal(await t.send("subscription.created", state), "applied");
      t.clock.advance(30 * DAY_MS);
      // A renewal where no tax is due (a business buyer reverse-charged): the vendor earns the total less the fee.
      const renewal = transactionObject({ customData, subscriptionId: sub, total: 1500, currency: "EUR", billedAt: t.clock.now(), taxRate: 0 });
      assert.equal(await t.send("transaction.completed", renewal), "applied");
      const invoices = await t.services.db
        .selectFrom("subscription_invoices")
        .select(["invoice_id", "amount_cents", "earnings_cents", "fee_cents", "tax_cents"])
        .where("workspace_id", "=", t.ws.workspaceId)
        .orderBy("paid_at")
        .execute();
      assert.deepEqual(
        invoices.map((i) => [i.invoice_id, Number(i.amount_cents), Number(i.earnings_cents), Number(i.fee_cents), Number(i.tax_cents)]),
        [
          [first.id, 1500, 1125, 125, 250],
          [renewal.id, 1500, 1375, 125, 0],
        ],
      );
      const eur = (await revenue(t, start)).get("eur");
      assert.deepEqual([eur?.gross.total, eur?.earnings?.total], [3000, 2500]);
      assert.deepEqual(nonZero(eur?.earnings?.points ?? []), [
        [dayOf(start), 1125],
        [dayOf(t.clock.now()), 1375],
      ]);
    });

    test("a chargeback takes back the earnings Paddle says and its reversal gives them back; a payment Warden does not hold takes nothing", async () => {
      const t = await paddleTestbed(dialect);
      const start = t.clock.now();
      const person = await ensurePerson(t.services.db, t.ws.workspaceId, "test", "ada@example.com", start);
      const transaction = transactionObject({
        customData: { warden_tool: "tabmaster", warden_plan: "lifetime", warden_account: person.id },
        total: 4900,
        billedAt: start,
      });
      await t.send("transaction.completed", transaction);
      t.clock.advance(DAY_MS);
      const chargeback = { action: "chargeback" as const, transactionId: transaction.id, total: 4900, at: t.clock.now(), earnings: 3788 };
      assert.equal(await t.send("adjustment.created", adjustmentObject(chargeback)), "applied");
      assert.equal((await t.licences())[0]?.status, "suspended");
      assert.equal((await revenue(t, start)).get("usd")?.earnings?.total, 0);
      // A refund or chargeback of a transaction Warden never applied: recorded, nothing counted.
      const stranger = { action: "refund" as const, transactionId: paddleId("txn"), total: 500, at: t.clock.now(), earnings: 400 };
      assert.equal(await t.send("adjustment.created", adjustmentObject(stranger)), "ignored");
      t.clock.advance(10 * DAY_MS);
      const reverse = { action: "chargeback_reverse" as const, transactionId: transaction.id, total: 4900, at: t.clock.now(), earnings: 3788 };
      assert.equal(await t.send("adjustment.created", adjustmentObject(reverse)), "applied");
      assert.equal((await t.licences())[0]?.status, "active");
      const usd = (await revenue(t, start)).get("usd");
      assert.equal(usd?.earnings?.total, 3788);
      assert.deepEqual(nonZero(usd?.earnings?.points ?? []), [
        [dayOf(start), 3788],
        [dayOf(start + DAY_MS), -3788],
        [dayOf(t.clock.now()), 3788],
      ]);
    });

    test("an adjustment's earnings are read leniently: a negative amount is taken as signed, one no whole amount leaves them unknown, and the refund or chargeback still counts", async () => {
      const t = await paddleTestbed(dialect);
      const start = t.clock.now();
      const person = await ensurePerson(t.services.db, t.ws.workspaceId, "test", "ada@example.com", start);
      const sale = () =>
        transactionObject({ customData: { warden_tool: "tabmaster", warden_plan: "lifetime", warden_account: person.id }, total: 4900, billedAt: start });
      const refunded = sale();
      const disputed = sale();
      await t.send("transaction.completed", refunded);
      await t.send("transaction.completed", disputed);
      t.clock.advance(DAY_MS);
      // Paddle documents negative earnings on an adjustment (a tax adjustment).
      const refund = { action: "refund" as const, transactionId: refunded.id, total: 4900, type: "full" as const, at: t.clock.now(), earnings: -120 };
      assert.equal(await t.send("adjustment.created", adjustmentObject(refund)), "applied");
      const chargeback = adjustmentObject({ action: "chargeback", transactionId: disputed.id, total: 4900, at: t.clock.now() });
      const fractional = { ...chargeback, totals: { ...chargeback.totals, earnings: "12.5" } };
      assert.equal(await t.send("adjustment.created", fractional), "applied");
      const status = new Map((await t.licences()).map((l) => [l.payment_intent, l.status]));
      assert.deepEqual([status.get(refunded.id), status.get(disputed.id)], ["revoked", "suspended"]);
      const stored = await t.services.db
        .selectFrom("paddle_refunds")
        .select(["action", "earnings_cents"])
        .where("workspace_id", "=", t.ws.workspaceId)
        .orderBy("action")
        .execute();
      assert.deepEqual(
        stored.map((a) => [a.action, a.earnings_cents === null ? null : Number(a.earnings_cents)]),
        [
          ["chargeback", null],
          ["refund", -120],
        ],
      );
    });

    test("a refund told before its sale takes its earnings back once the sale arrives, on the refund's day, and only once", async () => {
      const t = await paddleTestbed(dialect);
      const start = t.clock.now();
      const person = await ensurePerson(t.services.db, t.ws.workspaceId, "test", "ada@example.com", start);
      const transaction = transactionObject({
        customData: { warden_tool: "tabmaster", warden_plan: "lifetime", warden_account: person.id },
        total: 4900,
        billedAt: start,
      });
      const refund = { action: "refund" as const, transactionId: transaction.id, total: 1000, at: start + DAY_MS, earnings: 780 };
      t.clock.advance(DAY_MS);
      // Paddle does not promise the order: the refund's notification first.
      assert.equal(await t.send("adjustment.updated", adjustmentObject(refund)), "ignored");
      assert.equal(await t.send("transaction.completed", transaction), "applied");
      // Paddle's retry of the sale (another event id) takes nothing more.
      assert.equal(await t.send("transaction.completed", transaction), "applied");
      const usd = (await revenue(t, start)).get("usd");
      assert.equal(usd?.earnings?.total, 3788 - 780);
      assert.deepEqual(nonZero(usd?.earnings?.points ?? []), [
        [dayOf(start), 3788],
        [dayOf(start + DAY_MS), -780],
      ]);
    });

    test("a transaction whose fee Paddle has not processed (earnings null) counts its amount, its earnings stay unknown, not zero, and its refund takes none back", async () => {
      const t = await paddleTestbed(dialect);
      const start = t.clock.now();
      const person = await ensurePerson(t.services.db, t.ws.workspaceId, "test", "ada@example.com", start);
      const transaction = transactionObject({
        customData: { warden_tool: "tabmaster", warden_plan: "lifetime", warden_account: person.id },
        total: 4900,
        billedAt: start,
      });
      const unprocessed = { ...transaction, details: { ...transaction.details, totals: { ...transaction.details.totals, fee: null, earnings: null } } };
      assert.equal(await t.send("transaction.completed", unprocessed), "applied");
      const [licence] = await t.licences();
      assert.deepEqual([Number(licence?.amount_cents), licence?.earnings_cents, licence?.fee_cents], [4900, null, null]);
      const usd = (await revenue(t, start)).get("usd");
      assert.deepEqual([usd?.gross.total, usd?.earnings], [4900, null]);
      // A figure that is no whole, non-negative amount: the sale counts, its earnings stay unknown (a guess would be worse).
      const malformed = transactionObject({
        customData: { warden_tool: "tabmaster", warden_plan: "lifetime", warden_account: person.id },
        total: 4900,
        billedAt: start,
      });
      const bad = { ...malformed, details: { ...malformed.details, totals: { ...malformed.details.totals, earnings: "-1" } } };
      assert.equal(await t.send("transaction.completed", bad), "applied");
      const [, second] = await t.licences();
      assert.deepEqual([Number(second?.amount_cents), second?.earnings_cents], [4900, null]);
      assert.deepEqual((await revenue(t, start)).get("usd")?.earnings, null);
      // Refunding a sale whose earnings were never counted (as one from before migration 053) takes nothing back: never less than nothing.
      t.clock.advance(DAY_MS);
      const refund = { action: "refund" as const, transactionId: transaction.id, total: 4900, type: "full" as const, at: t.clock.now(), earnings: 3788 };
      assert.equal(await t.send("adjustment.created", adjustmentObject(refund)), "applied");
      const after = (await revenue(t, start)).get("usd");
      assert.deepEqual([after?.refunds.total, after?.earnings], [4900, null]);
    });
  });
}
