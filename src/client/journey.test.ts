// One person's story end to end on a listening server (real sockets; only the clock is
// the test's): sign-in with the code read from a local SMTP server, a trial, a vendor's
// grant and its revocation locking within 15 minutes, a purchase through the Stripe
// ingest that attaches when its buyer signs in, and the vendor API telling all of it.
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, describe, test } from "node:test";
import Stripe from "stripe";
import { buildApp } from "../app.js";
import { DAY_MS, toIso } from "../clock.js";
import { testMailbox } from "../test-support/client.js";
import { DIALECTS, seedCatalogue, testServices } from "../test-support/harness.js";
import { connectTestStripe, paymentSession, stripeEvent } from "../test-support/stripe.js";
import { updateTool } from "../workspaces/workspace.service.js";

const mailbox = testMailbox();

for (const dialect of DIALECTS) {
  describe(`client journey on a running server (${dialect})`, () => {
    test("sign-in, trial, grant, revocation, purchase and sign-in again, as the vendor API tells it", async () => {
      const { services, clock } = await testServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedCatalogue(services);
      const stripeSecret = await connectTestStripe(services, ws);
      await updateTool(services.db, services.clock, { workspace: ws.slug, id: ws.tool, trialDays: "14" });
      const app = await buildApp(services, { logger: false });
      await app.listen({ host: "127.0.0.1", port: 0 });
      after(() => app.close());
      const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

      async function call(method: string, path: string, options: { bearer?: string; body?: unknown; headers?: Record<string, string> } = {}) {
        const response = await fetch(`${base}${path}`, {
          method,
          headers: {
            ...(options.bearer ? { authorization: `Bearer ${options.bearer}` } : {}),
            ...(options.body === undefined ? {} : { "content-type": "application/json" }),
            ...options.headers,
          },
          body: options.body === undefined ? undefined : typeof options.body === "string" ? options.body : JSON.stringify(options.body),
        });
        assert.ok(response.headers.get("request-id"), `${method} ${path} has a Request-Id`);
        // biome-ignore lint/suspicious/noExplicitAny: the story reads answers by path; their shapes are checked against the OpenAPI document by the in-process tests
        return { status: response.status, body: (await response.json()) as Record<string, any> };
      }
      async function signIn(email: string, device: string) {
        const asked = await call("POST", "/api/client/v1/sign-in", { body: { workspace: ws.slug, tool: ws.tool, email, env: "test" } });
        assert.equal(asked.status, 200);
        const verified = await call("POST", "/api/client/v1/sign-in/verify", {
          body: { workspace: ws.slug, tool: ws.tool, email, env: "test", code: await mailbox.codeFor(email), device: { name: device, platform: "chrome-mac" } },
        });
        assert.equal(verified.status, 200);
        return String(verified.body.token);
      }
      const check = (token: string) => call("GET", `/api/client/v1/tools/${ws.tool}/access`, { bearer: token });
      const customer = async (email: string) =>
        (await call("GET", `/api/v1/tools/${ws.tool}/customers/${encodeURIComponent(email)}`, { bearer: ws.testKey })).body;
      const listed = async (email: string) =>
        (await call("GET", `/api/v1/tools/${ws.tool}/customers?limit=500`, { bearer: ws.testKey })).body.data.find((c: { email: string }) => c.email === email);

      // 1. Ada signs in on her laptop with the mailed code: an account, no access yet.
      const ada = `ada.lovelace.${ws.slug}@gmail.com`;
      const signedInAt = clock.now();
      const laptop = await signIn(ada, "Laptop");
      assert.deepEqual(await customer(ada), {
        email: ada,
        account: true,
        entitled: false,
        via: null,
        paid_at: null,
        plan: null,
        subscription: null,
        trial: null,
        features: [],
      });

      // 2. She starts the 14-day trial; the check unlocks.
      clock.advance(60_000);
      const trial = await call("POST", `/api/client/v1/tools/${ws.tool}/trial`, { bearer: laptop });
      assert.equal(trial.status, 201);
      let access = await check(laptop);
      assert.deepEqual(
        { entitled: access.body.entitled, via: access.body.via, trial: access.body.trial },
        { entitled: true, via: "trial", trial: { endsAt: trial.body.ends_at, active: true } },
      );

      // 3. The vendor grants her 30 days; the trial still comes first, then the grant outlives it.
      const grant = await call("POST", `/api/v1/tools/${ws.tool}/grants`, { bearer: ws.testKey, body: { email: ada.toUpperCase(), days: 30, note: "beta" } });
      assert.equal(grant.status, 201);
      assert.equal((await check(laptop)).body.via, "trial");
      clock.advance(15 * DAY_MS);
      access = await check(laptop);
      assert.deepEqual([access.body.entitled, access.body.via, access.body.trial.active], [true, "grant", false]);
      assert.ok(access.body.recheck_after <= 900);

      // 4. The vendor revokes the grant: the next check, at most recheck_after (<= 900 s) later, locks.
      const revoked = await call("DELETE", `/api/v1/tools/${ws.tool}/grants/${grant.body.id}`, { bearer: ws.testKey });
      assert.deepEqual(revoked.body, { id: grant.body.id, tool: ws.tool, revoked_at: toIso(clock.now()), live: false });
      clock.advance(access.body.recheck_after * 1000);
      const lastCheck = clock.now();
      access = await check(laptop);
      assert.deepEqual([access.body.entitled, access.body.via], [false, null]);

      // 5. She buys the lifetime licence signed out, under another spelling of her address, through Stripe's webhook.
      clock.advance(60_000);
      const session = paymentSession({
        email: ada.replaceAll(".", "").replace("@gmailcom", "@googlemail.com"),
        metadata: { warden_tool: ws.tool, warden_plan: "lifetime" },
        now: clock.now(),
      });
      const payload = JSON.stringify(stripeEvent("checkout.session.completed", session, { now: clock.now() }));
      const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: stripeSecret, timestamp: Math.floor(clock.now() / 1000) });
      const ingested = await call("POST", `/processor/stripe/${ws.slug}`, { body: payload, headers: { "stripe-signature": signature } });
      assert.equal(ingested.status, 200, JSON.stringify(ingested.body));
      const paidAt = clock.now();

      // 6. Signing in on a second device shows the licence, with its key, and the check unlocks by it.
      clock.advance(60_000);
      const desktop = await signIn(ada, "Desktop");
      const bought = (await call("GET", "/api/client/v1/purchases", { bearer: desktop })).body.data;
      assert.deepEqual(
        bought.map((p: { kind: string; product: string; plan: string; status: string }) => [p.kind, p.product, p.plan, p.status]),
        [["licence", ws.tool, "lifetime", "active"]],
      );
      assert.match(bought[0].key, /^wlk_/);
      access = await check(desktop);
      assert.deepEqual([access.body.entitled, access.body.via, access.body.plan.id], [true, "licence", "lifetime"]);

      // 7. The vendor API tells the story: an account, two devices, the last check-in, held since she first signed in.
      const adaNow = await customer(ada);
      assert.deepEqual(
        { ...adaNow, plan: adaNow.plan.id },
        {
          email: ada,
          account: true,
          entitled: true,
          via: "licence",
          paid_at: toIso(paidAt),
          plan: "lifetime",
          subscription: null,
          trial: { endsAt: trial.body.ends_at, active: false },
          features: [],
        },
      );
      assert.deepEqual(await listed(ada), {
        email: ada,
        account: true,
        entitled: true,
        via: "licence",
        since: toIso(signedInAt),
        last_active_at: toIso(clock.now()),
        devices: 2,
      });
      assert.ok(lastCheck < clock.now());

      // 8. Grace buys signed out: the licence answers for her address before any account; her sign-in attaches it.
      const grace = `grace-${ws.slug}@example.com`;
      const graceSession = paymentSession({ email: grace, metadata: { warden_tool: ws.tool, warden_plan: "lifetime" }, now: clock.now() });
      const gracePayload = JSON.stringify(stripeEvent("checkout.session.completed", graceSession, { now: clock.now() }));
      const graceSignature = Stripe.webhooks.generateTestHeaderString({
        payload: gracePayload,
        secret: stripeSecret,
        timestamp: Math.floor(clock.now() / 1000),
      });
      assert.equal((await call("POST", `/processor/stripe/${ws.slug}`, { body: gracePayload, headers: { "stripe-signature": graceSignature } })).status, 200);
      assert.deepEqual([(await customer(grace)).account, (await customer(grace)).via], [false, "licence"]);
      assert.equal((await listed(grace)).devices, 0);
      const graceToken = await signIn(grace, "Work PC");
      assert.equal((await check(graceToken)).body.via, "licence");
      assert.deepEqual([(await listed(grace)).account, (await listed(grace)).devices, (await listed(grace)).last_active_at], [true, 1, toIso(clock.now())]);
    });
  });
}
