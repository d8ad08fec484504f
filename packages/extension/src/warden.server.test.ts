// The library against Warden itself (the app built in process, listening on 127.0.0.1),
// on SQLite and PostgreSQL: every call an extension makes, with codes read from the
// outbox, grants and revocations through the vendor API, and tokens signed by Warden.
// The library's own clock is a fake one, so expiry is reached without waiting.
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, describe, test } from "node:test";
import { buildApp } from "../../../src/app.js";
import { toIso } from "../../../src/clock.js";
import { randomBase62 } from "../../../src/ids.js";
import { importNdjson } from "../../../src/import/import.service.js";
import type { Services } from "../../../src/services.js";
import { connectStripe } from "../../../src/stripe/stripe-account.service.js";
import { dashboardServices, readCode } from "../../../src/test-support/dashboard.js";
import { DIALECTS, seedCatalogue, testApi, type Workspace } from "../../../src/test-support/harness.js";
import { connectTestStripe, deliver, paymentSession, stripeEvent } from "../../../src/test-support/stripe.js";
import { startStripeApi } from "../../../src/test-support/stripe-api.js";
import { seedUsageCatalogue } from "../../../src/test-support/usage.js";
import { updateTool } from "../../../src/workspaces/workspace.service.js";
import { FakeClock, sharedStorage, until } from "../test-support/fakes.js";
import { createWarden, UsageLimitError, WardenError, type WardenOptions } from "./index.js";

async function setUp(dialect: (typeof DIALECTS)[number], seed: (services: Services) => Promise<Workspace> = seedCatalogue) {
  const stripeApi = await startStripeApi();
  const env = await dashboardServices(dialect, { WARDEN_STRIPE_API_URL: stripeApi.url });
  const ws = await seed(env.services);
  const app = await buildApp(env.services, { logger: false });
  await app.listen({ host: "127.0.0.1", port: 0 });
  after(() => app.close());
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const clock = new FakeClock(env.clock.now());
  const requests: string[] = [];
  const counted = (async (input: RequestInfo | URL, init?: RequestInit) => {
    requests.push(`${init?.method ?? "GET"} ${new URL(String(input)).pathname}`);
    return fetch(input, init);
  }) as typeof fetch;
  const make = (extra: Partial<WardenOptions> = {}) =>
    createWarden({
      url,
      workspace: ws.slug,
      tool: ws.tool,
      env: "test",
      clock,
      fetch: counted,
      storage: sharedStorage().area,
      alarms: null,
      runtime: null,
      ...extra,
    });
  const SESSION_KEY = `warden:${ws.slug}:test:${ws.tool}:session`;
  const vendor = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${url}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${ws.testKey}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    assert.ok(response.ok, await response.clone().text());
    return (await response.json()) as Record<string, unknown>;
  };
  const signIn = async (client: ReturnType<typeof make>, email: string) => {
    await client.signIn(email);
    return client.verify(await readCode(env.dataDir, email), { name: "Test laptop", platform: "chrome-linux" });
  };
  return { ...env, ws, url, clock, requests, make, vendor, signIn, stripeApi, SESSION_KEY };
}

for (const dialect of DIALECTS) {
  describe(`the library against Warden (${dialect})`, () => {
    test("a page the library opened: a grant made meanwhile unlocks the extension at Warden's next turn, with no call from it", async () => {
      const { ws, make, vendor, signIn, services } = await setUp(dialect);
      const opened: string[] = [];
      const client = make({ tabs: { create: ({ url }) => void opened.push(url) } });
      const email = `page-${ws.slug}@example.com`;
      await signIn(client, email);
      const seen: boolean[] = [];
      client.onAccessChange((state) => seen.push(state.entitled));
      assert.equal((await client.access()).entitled, false);

      await client.openPaymentPage({ plan: "lifetime" });
      assert.match(opened[0] ?? "", new RegExp(`/c/${ws.slug}/test/${ws.tool}/plans\\?plan=lifetime`));
      await until(() => services.accessWatch.parked === 1, "the library's long poll waits at Warden");
      await vendor("POST", `/tools/${ws.tool}/grants`, { email, days: 7 });
      await services.accessWatch.poll();
      await until(() => seen.at(-1) === true, "unlocked with no click");
      assert.equal((await client.access()).via, "grant");
      // The server closes: its waits end at once, and the library does not ask again at once.
      await until(() => services.accessWatch.parked === 1, "waiting on");
      await services.accessWatch.stop();
    });

    test("sign-in with the mailed code; locked, unlocked by a grant at the next check, locked by its revocation once the token runs out", async () => {
      const { ws, url, clock, requests, make, vendor, dataDir, SESSION_KEY } = await setUp(dialect);
      const storage = sharedStorage();
      const client = make({ storage: storage.area });
      const email = `ada-${ws.slug}@example.com`;
      await client.signIn(email);
      assert.equal(await client.pendingEmail(), email);
      await assert.rejects(client.verify("000000"), (e: WardenError) => e instanceof WardenError && e.type === "invalid_request_error" && e.param === "code");
      const signedIn = await client.verify(await readCode(dataDir, email), { name: "Test laptop", platform: "chrome-linux" });
      assert.deepEqual([signedIn.email, signedIn.device.name, signedIn.device.current], [email, "Test laptop", true]);
      assert.equal(await client.pendingEmail(), null);

      const { version, ...locked } = await client.access();
      assert.match(version ?? "", /^[0-9a-f]{16}$/, "Warden's state of the answer");
      assert.deepEqual(locked, {
        signedIn: true,
        entitled: false,
        via: null,
        plan: null,
        features: [],
        trialEndsAt: null,
        email,
        expiresAt: clock.now() + 900_000,
        offline: false,
      });
      assert.deepEqual(
        requests.filter((r) => r.includes("jwks")),
        ["GET /.well-known/jwks.json"],
        "the key set came from Warden",
      );

      const grant = await vendor("POST", `/tools/${ws.tool}/grants`, { email, days: 30 });
      requests.length = 0;
      assert.equal((await client.access()).entitled, false, "the held answer stands until it runs out");
      assert.deepEqual(requests, []);
      const unlocked = await client.access({ fresh: true });
      assert.deepEqual([unlocked.entitled, unlocked.via, unlocked.email], [true, "grant", email]);

      const devices = await client.devices();
      assert.deepEqual(
        devices.map((d) => [d.name, d.current]),
        [["Test laptop", true]],
      );

      await vendor("DELETE", `/tools/${ws.tool}/grants/${grant.id}`);
      await clock.advance(899_999);
      assert.equal((await client.access()).entitled, true);
      await clock.advance(1);
      assert.equal((await client.access()).entitled, false, "locked once the token ran out");

      const deviceToken = ((await storage.area.get(SESSION_KEY)) as { token: string }).token;
      const listDevices = () => fetch(`${url}/api/client/v1/devices`, { headers: { authorization: `Bearer ${deviceToken}` } });
      assert.equal((await listDevices()).status, 200);
      await client.signOut();
      assert.equal((await client.access()).signedIn, false);
      assert.equal(await storage.area.get(SESSION_KEY), undefined);
      assert.equal((await listDevices()).status, 401, "signed out at Warden too");
    });

    test("a device signed out from another device is signed out at its next check", async () => {
      const { ws, make, signIn } = await setUp(dialect);
      const email = `grace-${ws.slug}@example.com`;
      const laptop = make();
      const desktop = make();
      await signIn(laptop, email);
      const other = await signIn(desktop, email);
      assert.equal((await laptop.devices()).length, 2);
      await laptop.signOutDevice(other.device.id);
      assert.equal((await desktop.access({ fresh: true })).signedIn, false);
      await assert.rejects(desktop.devices(), (e: WardenError) => e.type === "authentication_error");
      assert.equal((await laptop.access()).signedIn, true);
    });

    test("a trial, the purchases with their keys, a device activated with a key, a team's seats, a checkout", async () => {
      const { services, ws, clock, make, signIn, stripeApi } = await setUp(dialect);
      await updateTool(services.db, services.clock, { workspace: ws.slug, id: ws.tool, trialDays: "14" });
      const email = `alan-${ws.slug}@example.com`;
      const client = make();
      await signIn(client, email);

      const trial = await client.startTrial();
      assert.equal(trial.kind, "trial");
      const during = await client.access();
      assert.deepEqual([during.entitled, during.via, during.trialEndsAt], [true, "trial", Date.parse(trial.ends_at ?? "")]);

      const single = `lic_${randomBase62(24)}`;
      const team = `lic_${randomBase62(24)}`;
      const boughtAt = services.clock.now() - 60_000;
      const lines = [
        {
          type: "licence",
          id: single,
          email,
          tool: ws.tool,
          plan: "lifetime",
          purchased_at: toIso(boughtAt),
          amount_cents: 4900,
          currency: "eur",
          payment_intent: `pi_${single}`,
        },
        { type: "licence", id: team, email, tool: ws.tool, seats: 2, purchased_at: toIso(boughtAt - 1000) },
      ];
      await importNdjson(services.db, services.clock, { workspace: ws.slug, env: "test", text: lines.map((l) => JSON.stringify(l)).join("\n") });
      const bought = await client.purchases();
      assert.deepEqual(
        bought.map((p) => [p.id, p.plan, p.seats]),
        [
          [single, "lifetime", null],
          [team, null, 2],
        ],
      );
      const key = bought[0]?.key;
      assert.match(key ?? "", /^wlk_[0-9A-Za-z]{32}$/);

      // Another browser, no sign-in: the key alone.
      const other = make();
      await assert.rejects(other.activate("wlk_wrong"), (e: WardenError) => e.type === "invalid_request_error" && e.param === "key");
      const activated = await other.activate(key ?? "", { name: "Office PC", platform: "edge-windows" });
      assert.equal(activated.device.name, "Office PC");
      const byKey = await other.access();
      assert.deepEqual([byKey.entitled, byKey.via, byKey.plan, byKey.email, byKey.expiresAt], [true, "licence", "lifetime", null, clock.now() + 900_000]);
      await assert.rejects(other.startTrial(), (e: WardenError) => e.type === "authentication_error");
      assert.equal((await other.access()).signedIn, true, "a key-activated device asking for a sign-in's action stays activated");

      const seat = await client.assignSeat(team, `ben-${ws.slug}@example.com`);
      assert.deepEqual([seat.status, seat.seats, seat.seats_in_use], ["active", 2, 1]);
      assert.deepEqual(
        (await client.seats(team)).data.map((s) => s.email),
        [`ben-${ws.slug}@example.com`],
      );
      assert.equal((await client.unassignSeat(team, seat.seat)).status, "revoked");
      await assert.rejects(other.seats(team), (e: WardenError) => e.type === "authentication_error");

      await assert.rejects(client.checkout("lifetime", { successUrl: "https://tabmaster.example/thanks" }), {
        type: "invalid_request_error",
        param: "livemode",
      });
      await connectStripe(services, { workspace: ws.slug, env: "test", webhookSecret: "whsec_libraryTest0123", secretKey: "sk_test_libraryTest0123" });
      const checkoutUrl = await client.checkout("lifetime", { successUrl: "https://tabmaster.example/thanks", seats: 3 });
      assert.match(checkoutUrl, /^https:\/\/checkout\.stripe\.com\//);
      const sent = stripeApi.calls.at(-1)?.form ?? {};
      assert.deepEqual(
        [sent["line_items[0][quantity]"], sent.customer_email, sent.success_url, sent["metadata[warden_seats]"]],
        ["3", email, "https://tabmaster.example/thanks", "3"],
      );
      await assert.rejects(client.checkout("no-such-plan", { successUrl: "https://tabmaster.example/thanks" }), {
        type: "invalid_request_error",
        param: "plan",
      });
    });
    test("features, meters and credit packs: hasFeature, usage, spend until refused with what is left, a pack bought on the plans page fires onAccessChange, a key-activated device reads no meters", async () => {
      const { services, ws, make, signIn, vendor } = await setUp(dialect, seedUsageCatalogue);
      const secret = await connectTestStripe(services, ws);
      const api = await testApi(services);
      const client = make({ tabs: { create: () => {} } });
      const email = `meters-${ws.slug}@example.com`;
      await signIn(client, email);
      assert.deepEqual((await client.access()).features, []);
      assert.equal(await client.hasFeature("export"), false, "someone who holds nothing holds no feature");

      const [free] = await client.usage();
      assert.deepEqual([free?.meter, free?.allowance, free?.remaining, free?.credits, free?.buckets[0]?.via], ["summaries", 10, 10, 0, "free"]);
      await assert.rejects(client.usage("pages"), (e: WardenError) => e.type === "invalid_request_error" && e.param === "meter");
      const spent = await client.spend("summaries", 8);
      assert.deepEqual([spent.quantity, spent.allowed, spent.remaining, spent.used], [8, true, 2, 8]);
      assert.equal((await client.spend("summaries", 1, { idempotencyKey: "summary-42" })).remaining, 1);
      assert.equal((await client.spend("summaries", 1, { idempotencyKey: "summary-42" })).remaining, 1, "the same key spends once");
      const refused = await client.spend("summaries", 2).then(
        () => assert.fail("a spend over what is left is refused"),
        (error: unknown) => error,
      );
      assert.ok(refused instanceof UsageLimitError && refused instanceof WardenError);
      assert.deepEqual(
        [refused.type, refused.status, refused.usage.meter, refused.usage.remaining, refused.usage.credits],
        ["usage_limit_error", 402, "summaries", 1, 0],
      );
      assert.equal(refused.usage.resets_at, free?.resets_at, "when the allowance comes back");
      assert.equal((await client.usage("summaries")).remaining, 1, "the refusal spent nothing");

      // A pack sold alone gives no access: what changes is the answer's version, and the device hears of it while the plans page is open.
      const seen: { entitled: boolean; version: string | null }[] = [];
      client.onAccessChange(({ entitled, version }) => seen.push({ entitled, version }));
      const before = (await client.access()).version;
      assert.match(before ?? "", /^[0-9a-f]{16}$/);
      await client.openPaymentPage({ plan: "pack-1000" });
      await until(() => services.accessWatch.parked === 1, "the library's long poll waits at Warden");
      const now = services.clock.now();
      const session = paymentSession({ email, metadata: { warden_tool: "tabmaster", warden_plan: "pack-1000" }, amount: 900, now });
      assert.equal(await deliver(api, ws, secret, stripeEvent("checkout.session.completed", session, { now }), now), "applied");
      await services.accessWatch.poll();
      await until(() => seen.some((s) => s.version !== before), "onAccessChange for the pack, with no click");
      assert.equal(seen.at(-1)?.entitled, false);
      assert.deepEqual([(await client.usage("summaries")).credits, (await client.spend("summaries", 3)).remaining], [1000, 998]);

      await vendor("POST", `/tools/${ws.tool}/grants`, { email, days: 7, plan: "lifetime" });
      assert.deepEqual((await client.access({ fresh: true })).features, ["export"]);
      assert.deepEqual([await client.hasFeature("export"), await client.hasFeature("sync")], [true, false]);

      // A licence key proves the licence, not whose meters to spend.
      const licence = `lic_${randomBase62(24)}`;
      const line = { type: "licence", id: licence, email, tool: ws.tool, plan: "lifetime", purchased_at: toIso(services.clock.now() - 60_000) };
      await importNdjson(services.db, services.clock, { workspace: ws.slug, env: "test", text: JSON.stringify(line) });
      const key = (await client.purchases()).find((p) => p.id === licence)?.key ?? "";
      const byKey = make();
      await byKey.activate(key);
      assert.deepEqual((await byKey.access()).features, ["export"], "the licence's features are the device's");
      await assert.rejects(byKey.usage(), (e: WardenError) => e.type === "authentication_error" && e.status === 401);
      await assert.rejects(byKey.spend("summaries"), (e: WardenError) => e.type === "authentication_error");
      assert.equal((await byKey.access()).signedIn, true, "and stays activated");
      await services.accessWatch.stop();
    });
  });
}
