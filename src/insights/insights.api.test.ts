import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DIALECTS, seedCatalogue } from "../test-support/harness.js";
import { connectTestStripe, deliver, paymentSession, paymentsTestbed, stripeEvent } from "../test-support/stripe.js";

const DAY = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

for (const dialect of DIALECTS) {
  describe(`Insights API (${dialect})`, () => {
    test("a purchase shows in the revenue of its key's workspace environment, the day it was paid, in its currency", async () => {
      const bed = await paymentsTestbed(dialect);
      const buyer = "buyer@example.com";
      await bed.send(
        "checkout.session.completed",
        paymentSession({ email: buyer, metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" }, amount: 4900, currency: "usd", now: bed.clock.now() }),
      );
      const today = dayOf(bed.clock.now());
      const from = dayOf(bed.clock.now() - 6 * DAY);
      const response = await bed.api.request({ url: `/api/v1/insights/revenue?from=${from}&to=${today}`, key: bed.ws.testKey });
      assert.equal(response.statusCode, 200, response.body);
      const [usd, ...others] = response.json().currencies;
      assert.equal(others.length, 0);
      assert.equal(usd.currency, "usd");
      assert.equal(usd.gross.total, 4900);
      assert.equal(usd.net.total, 4900);
      assert.equal(usd.oneTime.total, 4900);
      assert.equal(usd.subscription.total, 0);
      assert.equal(usd.gross.points.length, 7);
      assert.deepEqual(usd.gross.points.at(-1), { date: "2026-11-21", value: 4900 }, "the day the clock says it was paid");
      assert.equal(usd.gross.previous.length, 7);
      assert.deepEqual(usd.byPlan, [{ planId: "lifetime", planName: "Lifetime", bundleId: null, pack: false, gross: 4900, refunds: 0 }]);
      assert.equal(usd.earnings, null, "Stripe reports no fee with a sale: what the vendor earns is unknown, not 0");

      const people = (await bed.api.request({ url: `/api/v1/insights/people?from=${from}&to=${today}&tool=tabmaster`, key: bed.ws.testKey })).json();
      assert.equal(people.newCustomers.total, 1);
      // The live environment's key sees none of it.
      const live = (await bed.api.request({ url: `/api/v1/insights/revenue?from=${from}&to=${today}`, key: bed.ws.liveKey })).json();
      assert.deepEqual(live.currencies, []);
    });

    test("another workspace's key never sees this workspace's figures; a tool of another workspace is 404", async () => {
      const bed = await paymentsTestbed(dialect);
      await bed.send(
        "checkout.session.completed",
        paymentSession({ email: "a@example.com", metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" }, now: bed.clock.now() }),
      );
      const other = await seedCatalogue(bed.services);
      await bed.services.db.deleteFrom("tools").where("workspace_id", "=", other.workspaceId).where("id", "=", "notepad").execute();
      const today = dayOf(bed.clock.now());
      for (const group of ["revenue", "subscriptions", "people", "use"]) {
        const response = await bed.api.request({ url: `/api/v1/insights/${group}?to=${today}`, key: other.testKey });
        assert.equal(response.statusCode, 200, response.body);
        const body = response.json();
        const totals = JSON.stringify(body).match(/"total":(\d+)/g) ?? [];
        assert.ok(
          totals.every((t) => t === '"total":0'),
          `${group}: ${response.body}`,
        );
      }
      const missing = await bed.api.request({ url: `/api/v1/insights/revenue?tool=notepad`, key: other.testKey });
      assert.equal(missing.statusCode, 404, missing.body);
      // Stripe of the other workspace is connected, and its own sale is its own.
      const secret = await connectTestStripe(bed.services, other);
      await deliver(
        bed.api,
        other,
        secret,
        stripeEvent(
          "checkout.session.completed",
          paymentSession({ email: "b@example.com", metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" }, amount: 100, now: bed.clock.now() }),
          { now: bed.clock.now() },
        ),
        bed.clock.now(),
      );
      const mine = (await bed.api.request({ url: `/api/v1/insights/revenue?to=${today}`, key: bed.ws.testKey })).json();
      assert.equal(mine.currencies[0].gross.total, 4900);
    });

    test("without a key, 401; a bad range answers 400 in the error shape and names the parameter", async () => {
      const bed = await paymentsTestbed(dialect);
      assert.equal((await bed.api.request({ url: "/api/v1/insights/revenue" })).statusCode, 401);
      const cases: [string, string][] = [
        ["from=2026-02-30&to=2026-03-01", "from"],
        ["from=2026-03-02&to=2026-03-01", "to"],
        ["from=2020-01-01&to=2026-03-01", "from"],
        ["from=yesterday", "from"],
        ["grain=week", "grain"],
      ];
      for (const [query, param] of cases) {
        const response = await bed.api.request({ url: `/api/v1/insights/use?${query}`, key: bed.ws.testKey });
        assert.equal(response.statusCode, 400, `${query}: ${response.body}`);
        const { error } = response.json();
        assert.equal(error.type, "invalid_request_error");
        assert.match(error.param ?? error.message, new RegExp(param), query);
      }
    });

    test("every insights request counts towards the key's requests per minute", async () => {
      const bed = await paymentsTestbed(dialect, { env: { WARDEN_LIMIT_KEY_REQUESTS_PER_MIN: "3" } });
      const statuses = [];
      for (const group of ["revenue", "subscriptions", "people", "use"]) {
        statuses.push((await bed.api.request({ url: `/api/v1/insights/${group}`, key: bed.ws.testKey })).statusCode);
      }
      assert.deepEqual(statuses, [200, 200, 200, 429]);
    });
  });
}
