// `warden admin paddle reconcile` against the stand-in for Paddle's API: what the
// notifications missed is read page by page (`after`, a 429 waited out on the test's
// clock) and applied as the notifications would have applied it, with the same events as
// a twin workspace that received them; a second run, and the late notifications, send nothing.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DAY_MS } from "../clock.js";
import { ensurePerson } from "../customers/person.store.js";
import { DIALECTS } from "../test-support/harness.js";
import { adjustmentObject, paddleId, paddleTestbed, subscriptionObject, transactionObject } from "../test-support/paddle.js";
import { reconcilePaddle, reconcilePaddleScheduled } from "./paddle-reconcile.service.js";

type Testbed = Awaited<ReturnType<typeof paddleTestbed>>;

/** What the buyer did while Warden heard nothing, as Paddle holds it. */
function history(t: Testbed, personId: string) {
  const at = t.clock.now();
  const lifetime = { warden_tool: "tabmaster", warden_plan: "lifetime", warden_account: personId };
  const monthly = { warden_tool: "tabmaster", warden_plan: "monthly", warden_account: personId, warden_seats: "3" };
  const sub = subscriptionObject({ id: paddleId("sub"), status: "active", customData: monthly, startedAt: at, periodEnd: at + 30 * DAY_MS, quantity: 3 });
  const bought = transactionObject({ customData: lifetime, total: 4900, currency: "EUR", billedAt: at });
  const paid = transactionObject({ customData: monthly, subscriptionId: sub.id, total: 1500, currency: "EUR", billedAt: at });
  const unknownPrice = transactionObject({ customData: lifetime, priceId: paddleId("pri"), total: 100, billedAt: at });
  const notWardens = transactionObject({ customData: null, total: 900, billedAt: at });
  const refund = adjustmentObject({ action: "refund", transactionId: bought.id, total: 900, currency: "EUR", at: at + DAY_MS });
  return { sub, transactions: [bought, paid, unknownPrice, notWardens], refund };
}

const summary = (events: { type: string; data: Record<string, unknown> }[]) =>
  events.map((e) => [e.type, e.data.plan ?? null, e.data.seats ?? null, e.data.amount ?? null]).sort((a, b) => String(a).localeCompare(String(b)));

for (const dialect of DIALECTS) {
  describe(`Paddle reconcile (${dialect})`, () => {
    test("after missed notifications: applied as they would have been (the twin's events and states), pages turned, a 429 waited out; a second run and the late notifications send nothing", async () => {
      const t = await paddleTestbed(dialect, { paddleApi: true });
      const person = await ensurePerson(t.services.db, t.ws.workspaceId, "test", "ada@example.com", t.clock.now());
      const { sub, transactions, refund } = history(t, person.id);
      t.paddleApi?.lists.set("/subscriptions", [sub]);
      t.paddleApi?.lists.set("/transactions", transactions);
      t.paddleApi?.lists.set("/adjustments", [refund]);
      if (t.paddleApi) t.paddleApi.rateLimited = 1;
      const slept: number[] = [];
      const sleep = async (ms: number) => {
        slept.push(ms);
        t.clock.advance(ms);
      };

      const result = await reconcilePaddle(t.services, { workspace: t.ws.slug, env: "test" }, { sleep });
      assert.deepEqual(result.read, { subscription: 1, transaction: 4, adjustment: 1 });
      assert.equal(result.applied, 4);
      assert.deepEqual(
        result.ignored.map((i) => [i.kind, i.id]),
        [
          ["transaction", transactions[2]?.id],
          ["transaction", transactions[3]?.id],
        ],
      );
      assert.match(result.ignored[0]?.reason ?? "", /is linked to no plan in test/);
      assert.match(result.ignored[1]?.reason ?? "", /no warden_tool or warden_bundle/);
      assert.deepEqual(slept, [1000], "Paddle's Retry-After, on the test's clock");
      // Four transactions in pages of two: the second asked after the first page's last id.
      const pages = (t.paddleApi?.calls ?? []).filter((c) => c.path.startsWith("/transactions"));
      assert.equal(pages.length, 2);
      assert.match(pages[1]?.path ?? "", new RegExp(`after=${transactions[1]?.id}`));

      const [licence, ...others] = await t.licences();
      assert.deepEqual([licence?.status, Number(licence?.refunded_cents), others.length], ["active", 900, 0]);
      const stored = await t.subscription(sub.id);
      assert.deepEqual([stored?.status, stored?.seats, stored?.person_id], ["active", 3, person.id]);

      // The twin heard the same as notifications, in Paddle's order: the same events.
      const twin = await paddleTestbed(dialect);
      const twinPerson = await ensurePerson(twin.services.db, twin.ws.workspaceId, "test", "ada@example.com", twin.clock.now());
      const sent = history(twin, twinPerson.id);
      await twin.send("subscription.created", { ...sent.sub, id: sub.id });
      for (const transaction of transactions) {
        await twin.send("transaction.completed", {
          ...transaction,
          custom_data: transaction.custom_data ? { ...transaction.custom_data, warden_account: twinPerson.id } : null,
        });
      }
      await twin.send("adjustment.updated", refund);
      const events = await t.events();
      assert.deepEqual(summary(events), summary(await twin.events()));
      assert.deepEqual(events.map((e) => e.type).sort(), ["purchase.completed", "purchase.completed", "subscription.started"]);

      // Run again, and the notifications arriving late: nothing more is sent.
      const again = await reconcilePaddle(t.services, { workspace: t.ws.slug, env: "test" }, { sleep });
      // The partial refund seen again is billing's repeat: nothing new to count.
      assert.equal(again.applied, 3);
      assert.deepEqual(again.ignored.at(-1), { kind: "adjustment", id: refund.id, reason: "partial refund (900 of 4900): the licence stands" });
      assert.equal(await t.send("transaction.completed", transactions[0] as Record<string, unknown>), "applied");
      assert.equal(await t.send("adjustment.updated", refund), "ignored", "the partial refund counted already");
      assert.deepEqual(
        (await t.events()).map((e) => e.id),
        events.map((e) => e.id),
      );
      assert.equal(Number((await t.licences())[0]?.refunded_cents), 900, "the refund counted once");
    });

    test("the scheduled round reconciles each environment with a Paddle API key, one failing without stopping the others", async () => {
      const t = await paddleTestbed(dialect, { paddleApi: true });
      const person = await ensurePerson(t.services.db, t.ws.workspaceId, "test", "ada@example.com", t.clock.now());
      const { transactions } = history(t, person.id);
      t.paddleApi?.lists.set("/transactions", transactions.slice(0, 1));
      // The live environment's key is one Paddle refuses.
      await t.services.db
        .insertInto("paddle_accounts")
        .values({
          workspace_id: t.ws.workspaceId,
          env: "live",
          webhook_secret_sealed: t.services.secretBox.seal(`pdl_ntfset_${"l".repeat(30)}`),
          api_key_sealed: t.services.secretBox.seal(`pdl_live_apikey_${"l".repeat(30)}`),
          created_at: t.clock.now(),
          updated_at: t.clock.now(),
        })
        .execute();
      // Other tests' workspaces may share the database: this one's runs are looked at.
      const round = (await reconcilePaddleScheduled(t.services)).filter((r) => r.workspace === t.ws.slug);
      assert.deepEqual(
        round.map((r) => [r.env, "error" in r ? String(r.error) : r.applied]),
        [
          ["live", "ApiError: Paddle refused: You aren't permitted to perform this request. (forbidden)"],
          ["test", 1],
        ],
      );
      assert.equal((await t.licences()).length, 1);
    });

    test("refused without Paddle's API key, and Paddle's refusal is said in Warden's words", async () => {
      const bare = await paddleTestbed(dialect);
      await assert.rejects(reconcilePaddle(bare.services, { workspace: bare.ws.slug, env: "test" }), /needs Paddle's API key for test/);
      const t = await paddleTestbed(dialect, { paddleApi: true });
      await t.services.db
        .updateTable("paddle_accounts")
        .set({ api_key_sealed: t.services.secretBox.seal(`pdl_sdbx_apikey_${"w".repeat(30)}`) })
        .execute();
      await assert.rejects(
        reconcilePaddle(t.services, { workspace: t.ws.slug, env: "test" }),
        /Paddle refused: You aren't permitted to perform this request\. \(forbidden\)/,
      );
    });
  });
}
