// Points 2, 7, 8 and 10 of the reliability issue, for the Stripe endpoint: open to anyone,
// it checks the signature over the raw bytes before parsing anything and caps the body;
// a slug or processor data it cannot store (control characters, amounts and times out of
// range or of the wrong type) never answers 500, which Stripe would retry for days; and
// every malformed Stripe-Signature header is refused in Warden's own words.
import assert from "node:assert/strict";
import { describe, mock, test } from "node:test";
import Stripe from "stripe";
import { DIALECTS, seedCatalogue, type TestApi, testApi, testServices, type Workspace } from "../test-support/harness.js";
import {
  chargeObject,
  connectTestStripe,
  deliver,
  disputeObject,
  emittedEvents,
  paymentSession,
  sendStripeEvent,
  stripeEvent,
  stripeId,
  subscriptionObject,
} from "../test-support/stripe.js";

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
const OUR_SIGNATURE_MESSAGE = /^The Stripe-Signature header (is missing|is malformed|was made more than 300 seconds ago|does not match)/;

/** Posts `payload` as it is, with `signature` as the Stripe-Signature header (none when undefined). */
function post(api: TestApi, ws: Workspace, payload: string, signature: string | undefined) {
  return api.request({
    method: "POST",
    url: `/processor/stripe/${ws.slug}`,
    headers: { "content-type": "application/json", ...(signature === undefined ? {} : { "stripe-signature": signature }) },
    payload,
  });
}

const sign = (payload: string, secret: string, now: number) => Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: Math.floor(now / 1000) });

async function reasonOf(services: Awaited<ReturnType<typeof testServices>>["services"], ws: Workspace, eventId: string) {
  const row = await services.db
    .selectFrom("stripe_events")
    .select(["outcome", "reason"])
    .where("workspace_id", "=", ws.workspaceId)
    .where("id", "=", eventId)
    .executeTakeFirst();
  return row ? `${row.outcome}: ${row.reason}` : "not recorded";
}

const lifetime = { warden_tool: "tabmaster", warden_plan: "lifetime" };

for (const dialect of DIALECTS) {
  describe(`Stripe endpoint under hostile input (${dialect})`, () => {
    test("an unsigned or badly signed body is refused by its signature without being parsed, however it is nested", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      const secret = await connectTestStripe(services, ws);
      const now = clock.now();
      // 200,000 unclosed arrays: parsing them is what costs (and it would fail as "not JSON").
      const nested = "[".repeat(200_000);
      const parse = mock.method(JSON, "parse");
      try {
        for (const signature of [undefined, sign(nested, `whsec_${"x".repeat(32)}`, now), "t=,v1=", sign("{}", secret, now)]) {
          const response = await post(api, ws, nested, signature);
          assert.equal(response.statusCode, 400, response.body);
          assert.equal(response.json().error.param, "Stripe-Signature", response.body);
        }
        const garbage = await post(api, ws, "{not json", "t=1,v1=00");
        assert.equal(garbage.json().error.param, "Stripe-Signature", garbage.body);
        const parsedBodies = parse.mock.calls.filter((c) => typeof c.arguments[0] === "string" && /^(\[\[|\{not)/.test(c.arguments[0]));
        assert.equal(parsedBodies.length, 0);
      } finally {
        parse.mock.restore();
      }
      // Signed, the same text is parsed and refused as what it is.
      const signedGarbage = await post(api, ws, "{not json", sign("{not json", secret, now));
      assert.equal(signedGarbage.statusCode, 400, signedGarbage.body);
      assert.equal(signedGarbage.json().error.param, "body");
    });

    test("a body above 256 KiB answers 413 in the error shape, even correctly signed; one just under is taken", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      const secret = await connectTestStripe(services, ws);
      const now = clock.now();
      const session = paymentSession({ email: "ada@example.com", metadata: lifetime, now });
      const withText = (bytes: number) =>
        stripeEvent("checkout.session.completed", { ...session, custom_text: { submit: { message: "x".repeat(bytes) } } }, { now });
      const tooLarge = await sendStripeEvent(api, ws, secret, withText(256 * 1024), { now });
      assert.equal(tooLarge.statusCode, 413, tooLarge.body);
      assert.equal(tooLarge.json().error.type, "invalid_request_error");
      const nested = await post(api, ws, "[".repeat(300 * 1024), undefined);
      assert.equal(nested.statusCode, 413, nested.body);
      assert.deepEqual(await emittedEvents(services, ws), []);
      assert.equal(await deliver(api, ws, secret, withText(250 * 1024), now), "applied");
    });

    test("every malformed or failing Stripe-Signature header is refused with 400 in Warden's words", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      const secret = await connectTestStripe(services, ws);
      const now = clock.now();
      const payload = JSON.stringify(stripeEvent("customer.created", { id: "cus_1", object: "customer" }, { now }));
      const good = sign(payload, secret, now);
      const v1 = good.split("v1=")[1]?.split(",")[0] as string;
      const t = Math.floor(now / 1000);
      const headers = [
        undefined,
        "",
        " ",
        "t=,v1=",
        "t=",
        "v1=",
        `v1=${v1}`,
        `t=${t}`,
        `t=${t},v0=${v1}`,
        `t=abc,v1=${v1}`,
        `t=-5,v1=${v1}`,
        `t=1e9,v1=${v1}`,
        `t=${t},v1=zz`,
        `t=${t},v1=${v1.slice(2)}`,
        `t=${t},t=${t},v1=${v1}`,
        "garbage",
        `t=${t - 301},v1=${v1}`,
        sign(payload, secret, now - 10 * MINUTE_MS),
        `t=${t},v1=${"0".repeat(64)}`,
      ];
      for (const header of headers) {
        const response = await post(api, ws, payload, header);
        assert.equal(response.statusCode, 400, `${header}: ${response.body}`);
        const { error } = response.json();
        assert.equal(error.type, "invalid_request_error");
        assert.equal(error.param, "Stripe-Signature");
        assert.match(error.message, OUR_SIGNATURE_MESSAGE, `${header}: ${error.message}`);
      }
      // The same body with its own header still goes through; a second, rolled secret's v1 alongside is fine.
      assert.equal((await post(api, ws, payload, `${good},v1=${"0".repeat(64)}`)).statusCode, 200);
    });

    test("a slug with NUL or another control character answers 400 naming it, never 500", async () => {
      const { services } = await testServices(dialect);
      const api = await testApi(services);
      for (const slug of ["x%00", "x%01", "%0a", "x%7f", "UPPER"]) {
        const response = await api.request({
          method: "POST",
          url: `/processor/stripe/${slug}`,
          headers: { "content-type": "application/json" },
          payload: "{}",
        });
        assert.equal(response.statusCode, 400, `${slug}: ${response.body}`);
        assert.equal(response.json().error.type, "invalid_request_error");
        assert.equal(response.json().error.param, "slug");
      }
    });

    test("control characters in Stripe's ids, addresses or Warden's metadata are acknowledged as ignored with the reason, never stored", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      const secret = await connectTestStripe(services, ws);
      const now = clock.now();
      const sessions = [
        paymentSession({ email: "ada@example.com", metadata: { warden_tool: "tab\u0000master", warden_plan: "lifetime" }, now }),
        paymentSession({ email: "ada@example.com", metadata: { ...lifetime, warden_plan: "life\u0000time" }, now }),
        paymentSession({ email: "ada@example.com", metadata: { ...lifetime, warden_account: "per_\u0000" }, now }),
        paymentSession({ email: "ada@example.com", metadata: { ...lifetime, warden_seats: "2\u0000" }, now }),
        paymentSession({ email: "ada\u0000@example.com", metadata: lifetime, now }),
        paymentSession({ email: "ada@example.com\n", metadata: lifetime, now }),
        paymentSession({ email: "ada@example.com", metadata: lifetime, paymentIntent: "pi_\u0000", now }),
        paymentSession({ email: "ada@example.com", metadata: lifetime, id: "cs_\u001b[31m", now }),
        { ...paymentSession({ email: "ada@example.com", metadata: lifetime, now }), currency: "eu\u0000r" },
      ];
      for (const session of sessions) {
        const event = stripeEvent("checkout.session.completed", session, { now });
        assert.equal(await deliver(api, ws, secret, event, now), "ignored", JSON.stringify(session));
        assert.match(await reasonOf(services, ws, event.id), /^ignored: .*contains control characters/);
      }
      const subscription = stripeEvent(
        "customer.subscription.created",
        subscriptionObject({ id: "sub_\u0000", status: "active", metadata: lifetime, startedAt: now, periodStart: now, periodEnd: now + 30 * DAY_MS }),
        { now },
      );
      assert.equal(await deliver(api, ws, secret, subscription, now), "ignored");
      const refund = stripeEvent("charge.refunded", chargeObject({ paymentIntent: "pi_\u0000", amount: 4900, amountRefunded: 4900 }), { now });
      assert.equal(await deliver(api, ws, secret, refund, now), "ignored");
      assert.match(await reasonOf(services, ws, refund.id), /control characters/);
      // Without a clean event id there is nothing to record it under: refused, not failed.
      const badId = stripeEvent("customer.created", { id: "cus_1" }, { now, id: "evt_\u0000" });
      const refused = await sendStripeEvent(api, ws, secret, badId, { now });
      assert.equal(refused.statusCode, 400, refused.body);
      assert.equal(refused.json().error.param, "body");
      assert.deepEqual(await emittedEvents(services, ws), []);
      const people = await services.db.selectFrom("people").select("id").where("workspace_id", "=", ws.workspaceId).execute();
      assert.equal(people.length, 0);
    });

    test("amounts and times that are not whole, non-negative and in range are acknowledged as ignored with the reason, never 500", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      const secret = await connectTestStripe(services, ws);
      const now = clock.now();
      for (const amount of [1e300, -4900, 49.5, "4900", 2 ** 53, Number.MAX_VALUE, true]) {
        const session = { ...paymentSession({ email: "ada@example.com", metadata: lifetime, now }), amount_total: amount };
        const event = stripeEvent("checkout.session.completed", session, { now });
        assert.equal(await deliver(api, ws, secret, event, now), "ignored", String(amount));
        assert.match(await reasonOf(services, ws, event.id), /^ignored: amount_total .* is not a whole, non-negative amount/);
      }
      const licences = () => services.db.selectFrom("licences").select(["id", "status"]).where("workspace_id", "=", ws.workspaceId).execute();
      assert.equal((await licences()).length, 0);

      // A licence bought, then refunds and disputes of it with amounts no payment has.
      const paymentIntent = stripeId("pi");
      const bought = stripeEvent("checkout.session.completed", paymentSession({ email: "ada@example.com", metadata: lifetime, paymentIntent, now }), { now });
      assert.equal(await deliver(api, ws, secret, bought, now), "applied");
      const malformed = [
        stripeEvent("charge.refunded", { ...chargeObject({ paymentIntent, amount: 4900, amountRefunded: 4900 }), amount_refunded: 1e300 }, { now }),
        stripeEvent("charge.refunded", { ...chargeObject({ paymentIntent, amount: 4900, amountRefunded: 4900 }), amount: -1 }, { now }),
        stripeEvent("charge.dispute.created", disputeObject({ id: stripeId("dp"), paymentIntent, amount: -4900, status: "needs_response" }), { now }),
        stripeEvent(
          "charge.dispute.created",
          { ...disputeObject({ id: stripeId("dp"), paymentIntent, amount: 4900, status: "needs_response" }), amount: "4900" },
          { now },
        ),
        stripeEvent(
          "charge.dispute.created",
          { ...disputeObject({ id: stripeId("dp"), paymentIntent, amount: 4900, status: "needs_response" }), evidence_details: { due_by: 1e300 } },
          { now },
        ),
      ];
      for (const event of malformed) {
        assert.equal(await deliver(api, ws, secret, event, now), "ignored", JSON.stringify(event.data.object));
        assert.match(await reasonOf(services, ws, event.id), /is not (a whole, non-negative amount|a Unix time in seconds)/);
      }
      assert.deepEqual(
        (await licences()).map((l) => l.status),
        ["active"],
      );
      assert.deepEqual(
        (await emittedEvents(services, ws)).map((e) => e.type),
        ["purchase.completed"],
      );

      // Times: a subscription's period end past year 9999, and an event's own `created`.
      const subscription = stripeEvent(
        "customer.subscription.created",
        {
          ...subscriptionObject({ id: stripeId("sub"), status: "active", metadata: lifetime, startedAt: now, periodStart: now, periodEnd: now }),
          cancel_at: 1e300,
        },
        { now },
      );
      assert.equal(await deliver(api, ws, secret, subscription, now), "ignored");
      assert.match(await reasonOf(services, ws, subscription.id), /cancel_at 1e\+300 is not a Unix time in seconds/);
      const farCreated = { ...stripeEvent("customer.created", { id: "cus_1" }, { now }), created: 1e300 };
      const refused = await sendStripeEvent(api, ws, secret, farCreated, { now });
      assert.equal(refused.statusCode, 400, refused.body);
      assert.equal(refused.json().error.param, "body");
    });
  });
}
