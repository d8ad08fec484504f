// The Events and Deliveries lists name whom each event is about and the amount it names,
// and filter by a customer's address (the dashboard's `?customer=` and the API's); another
// workspace's customer of the same address is never shown. Both engines.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { dashboardApp, dashboardServices, TestBrowser } from "../../test-support/dashboard.js";
import { apiOver, DIALECTS, seedCatalogue, type Workspace } from "../../test-support/harness.js";
import { connectTestStripe, deliver, paymentSession, stripeEvent, subscriptionObject, subscriptionSession } from "../../test-support/stripe.js";

/** Each listed event's id with what its cell says under its type, newest first. */
function listed(body: string): [string, string][] {
  return [
    ...body.matchAll(
      /<code>[a-z_]+(?:\.<wbr>[a-z_]+)*<\/code><\/a>(?:<span class="event-gist">([^<]*)<\/span>)? <code class="id-secondary">(evt_\w+)<\/code>/g,
    ),
  ].map((m) => [m[2] ?? "", m[1] ?? ""]);
}

async function setUp(dialect: (typeof DIALECTS)[number]) {
  const env = await dashboardServices(dialect);
  const app = await dashboardApp(env);
  const api = apiOver(app);
  const ws = await seedCatalogue(env.services);
  const theirs = await seedCatalogue(env.services);
  const buy = async (at: Workspace, email: string, amount: number, currency: string) => {
    const secret = await connectTestStripe(env.services, at);
    const session = paymentSession({ email, metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" }, amount, currency, now: env.clock.now() });
    assert.equal(await deliver(api, at, secret, stripeEvent("checkout.session.completed", session, { now: env.clock.now() }), env.clock.now()), "applied");
    env.clock.advance(1000);
  };
  // An endpoint first, so that each event has a delivery.
  const endpoint = await api.request({ method: "POST", url: "/api/v1/webhooks/endpoints", key: ws.testKey, payload: { url: "https://example.com/hook" } });
  assert.equal(endpoint.statusCode, 201, endpoint.body);
  await buy(ws, "ada@example.com", 4900, "eur");
  await buy(ws, "bob@example.com", 9900, "usd");
  await buy(theirs, "ada@example.com", 1234, "eur");
  // Ada's subscription: its events carry no address; the list names her from whom it is about.
  const secret = await connectTestStripe(env.services, ws);
  const sub = {
    id: "sub_ada00000000000000000000",
    status: "active",
    metadata: { warden_tool: "tabmaster", warden_plan: "monthly" },
    startedAt: env.clock.now(),
    periodStart: env.clock.now(),
    periodEnd: env.clock.now() + 30 * 86_400_000,
  };
  const send = (type: string, object: Record<string, unknown>) =>
    deliver(api, ws, secret, stripeEvent(type, object, { now: env.clock.now() }), env.clock.now());
  assert.equal(
    await send(
      "checkout.session.completed",
      subscriptionSession({ email: "ada@example.com", subscription: sub.id, metadata: sub.metadata, now: env.clock.now() }),
    ),
    "applied",
  );
  assert.equal(await send("customer.subscription.created", subscriptionObject(sub)), "applied");
  const browser = new TestBrowser(app);
  await browser.signIn(env.dataDir, ws.ownerEmail);
  return { env, app, api, ws, theirs, browser, events: `/dashboard/w/${ws.slug}/test/events` };
}

for (const dialect of DIALECTS) {
  describe(`events and deliveries name and filter by customer (${dialect})`, () => {
    test("each event names its customer and amount; ?customer= keeps one person's events and deliveries, in any case; nobody's address lists none", async () => {
      const { browser, events } = await setUp(dialect);
      const all = listed((await browser.get(events)).body);
      assert.deepEqual(
        all.map(([, gist]) => gist),
        ["ada@example.com", "ada@example.com", "bob@example.com · $99.00", "ada@example.com · €49.00"],
        "the subscription's purchase.completed and subscription.started (no amount in them), then the two licences",
      );
      const ada = listed((await browser.get(`${events}?customer=ADA%40Example.com`)).body);
      assert.deepEqual(
        ada.map(([, gist]) => gist),
        ["ada@example.com", "ada@example.com", "ada@example.com · €49.00"],
      );
      assert.deepEqual(
        ada.map(([id]) => id),
        all.filter(([, gist]) => gist.startsWith("ada@")).map(([id]) => id),
      );
      const nobody = await browser.get(`${events}?customer=nobody%40example.com`);
      assert.equal(nobody.statusCode, 200);
      assert.match(nobody.body, /No events about nobody@example\.com/);
      assert.equal((await browser.get(`${events}?customer=${"a".repeat(255)}`)).statusCode, 400);

      const deliveries = await browser.get(`${events}/deliveries?customer=bob%40example.com`);
      assert.equal(deliveries.statusCode, 200);
      const bobs = listed(deliveries.body);
      assert.deepEqual(
        bobs,
        all.filter(([, gist]) => gist.startsWith("bob@")),
      );
      assert.equal(listed((await browser.get(`${events}/deliveries`)).body).length, 4, "every delivery, each naming its customer");
    });

    test("an endpoint's own deliveries filter by customer as the deliveries list does; another workspace's endpoint is not found", async () => {
      const { api, browser, ws, theirs } = await setUp(dialect);
      const { data } = (await api.request({ url: "/api/v1/webhooks/endpoints", key: ws.testKey })).json() as { data: { id: string }[] };
      const page = `/dashboard/w/${ws.slug}/test/webhooks/${data[0]?.id}`;
      const all = await browser.get(page);
      assert.equal(all.statusCode, 200);
      assert.match(all.body, /<form method="get" action="[^"]+" class="inline-form filters">\s*<div class="field"><label for="customer">Customer<\/label>/);
      assert.equal(listed(all.body).length, 4);
      const bob = await browser.get(`${page}?customer=BOB%40example.com`);
      assert.deepEqual(
        listed(bob.body).map(([, gist]) => gist),
        ["bob@example.com · $99.00"],
      );
      assert.match(
        bob.body,
        /id="customer" name="customer" type="email" maxlength="254" placeholder="ada@example\.com" value="BOB@example\.com"/,
        "the filter as typed",
      );
      const nobody = await browser.get(`${page}?customer=nobody%40example.com`);
      assert.equal(nobody.statusCode, 200);
      assert.match(nobody.body, /No deliveries about nobody@example\.com/);
      assert.equal((await browser.get(`${page}?customer=${"a".repeat(255)}`)).statusCode, 400);
      const other = (
        await api.request({ method: "POST", url: "/api/v1/webhooks/endpoints", key: theirs.testKey, payload: { url: "https://example.com/theirs" } })
      ).json() as { id: string };
      assert.equal((await browser.get(`/dashboard/w/${ws.slug}/test/webhooks/${other.id}?customer=ada%40example.com`)).statusCode, 404);
    });

    test("another workspace's customer of the same address is never shown, in the dashboard or the API", async () => {
      const { api, browser, events, ws, theirs } = await setUp(dialect);
      for (const path of [`${events}?customer=ada%40example.com`, `${events}/deliveries?customer=ada%40example.com`, events]) {
        const body = (await browser.get(path)).body;
        assert.ok(!body.includes("€12.34"), `${path}: the other workspace's purchase`);
      }
      const ours = await api.request({ url: "/api/v1/webhooks/events?customer=ada%40example.com", key: ws.testKey });
      assert.equal(ours.statusCode, 200, ours.body);
      const data = (ours.json() as { data: { type: string; data: { email?: string | null; amount?: number | null } }[] }).data;
      // The subscription's two events are written in one transaction at one time: their order is their ids'.
      assert.deepEqual(data.map((e) => `${e.type} ${e.data.amount ?? null}`).sort(), [
        "purchase.completed 4900",
        "purchase.completed null",
        "subscription.started null",
      ]);
      const theirsListed = await api.request({ url: "/api/v1/webhooks/events?customer=ada%40example.com", key: theirs.testKey });
      assert.deepEqual(
        (theirsListed.json() as { data: { data: { amount?: number } }[] }).data.map((e) => e.data.amount),
        [1234],
      );
      const live = await api.request({ url: "/api/v1/webhooks/deliveries?customer=ada%40example.com", key: ws.liveKey });
      assert.deepEqual((live.json() as { data: unknown[] }).data, [], "the live environment has none of the test environment's");
      const tooLong = await api.request({ url: `/api/v1/webhooks/events?customer=${"a".repeat(255)}`, key: ws.testKey });
      assert.equal(tooLong.statusCode, 400);
    });
  });
}
