// The library's caching, expiry, offline and recheck rules against a fake Warden and a
// fake clock (no test waits): tokens are signed here with node:crypto in Warden's format.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { FakeClock, fakeAlarms, fakeRuntime, fakeWarden, settle, sharedStorage, TARGET, testSigner, until } from "../test-support/fakes.js";
import { type AccessState, createWarden, UsageLimitError, WardenError, type WardenOptions } from "./index.js";

const URL_ = "http://warden.test";

function setup() {
  const clock = new FakeClock();
  const warden = fakeWarden(clock);
  const storage = sharedStorage();
  const make = (extra: Partial<WardenOptions> = {}) =>
    createWarden({ url: URL_, ...TARGET, clock, fetch: warden.fetch, storage: storage.area, alarms: null, runtime: null, contentScript: false, ...extra });
  return { clock, warden, storage, make };
}

async function signedIn(extra: Partial<WardenOptions> = {}) {
  const s = setup();
  const client = s.make(extra);
  await client.signIn("ada@example.com");
  await client.verify("123456");
  s.warden.calls.length = 0;
  return { ...s, client };
}

const SIGNED_IN_LOCKED: AccessState = {
  signedIn: true,
  entitled: false,
  via: null,
  plan: null,
  features: [],
  trialEndsAt: null,
  email: "ada@example.com",
  expiresAt: null,
  offline: false,
  version: null,
};

const ACCESS_KEY = `warden:${TARGET.workspace}:${TARGET.env}:${TARGET.tool}:access`;
const accessCalls = (calls: string[]) => calls.filter((c) => c.endsWith("/access")).length;

describe("access: the held answer and its token", () => {
  test("held while its token is valid, asked again once it expires", async () => {
    const { client, warden, clock } = await signedIn();
    warden.answer = { entitled: true, via: "grant", plan: null, trial_ends_at: null, recheck_after: 600 };
    const first = await client.access({ fresh: true });
    assert.equal(first.entitled, true);
    assert.equal(first.expiresAt, clock.now() + 600_000);
    warden.answer.entitled = false;
    await clock.advance(599_999);
    assert.equal((await client.access()).entitled, true, "the answer is kept for exp - iat");
    assert.equal(accessCalls(warden.calls), 1);
    await clock.advance(1);
    assert.equal((await client.access()).entitled, false, "at exp it asks again");
    assert.equal(accessCalls(warden.calls), 2);
  });

  test("the key set is fetched once and kept in storage for every part of the extension; a new kid fetches it again", async () => {
    const { client, warden, make } = await signedIn();
    await client.access({ fresh: true });
    const popup = make();
    await popup.access();
    assert.equal(warden.calls.filter((c) => c.includes("jwks")).length, 0, "verify already fetched the set; the popup reads it from storage");
    assert.equal(accessCalls(warden.calls), 1, "the popup holds the service worker's answer");

    // Warden rotates: tokens name a new key, the set has both.
    const old = warden.signer;
    warden.signer = testSigner("k2");
    warden.published = [old, warden.signer];
    warden.answer.entitled = true;
    assert.equal((await popup.access({ fresh: true })).entitled, true);
    assert.equal(warden.calls.filter((c) => c.includes("jwks")).length, 1);
  });

  test("a token Warden did not sign, or signed for another workspace, environment or tool, is never kept", async () => {
    const { client, warden } = await signedIn();
    warden.answer.entitled = true;
    const genuine = await client.access({ fresh: true });
    assert.equal(genuine.entitled, true);

    const cases: [string, () => void][] = [
      ["a key not in the set", () => (warden.signer = testSigner("k1"))],
      ["another workspace", () => (warden.overrides = { workspace: "evil", aud: "evil:test" })],
      ["the live environment", () => (warden.overrides = { env: "live", aud: `${TARGET.workspace}:live` })],
      ["an audience not its own", () => (warden.overrides = { aud: "evil:test" })],
      ["another tool", () => (warden.overrides = { tool: "other" })],
      ["a lifetime over 900 s", () => (warden.overrides = { exp: Math.floor(Date.parse("2026-11-21T12:00:00Z") / 1000) + 901 })],
    ];
    const original = warden.signer;
    for (const [name, spoil] of cases) {
      warden.signer = original;
      warden.overrides = {};
      spoil();
      await assert.rejects(client.access({ fresh: true }), (e: WardenError) => e instanceof WardenError && e.type === "invalid_token", name);
      assert.equal((await client.access()).expiresAt, genuine.expiresAt, `${name}: the genuine answer is still the one held`);
    }

    // A token whose claims were changed after signing.
    warden.signer = original;
    warden.overrides = {};
    warden.answer.entitled = false;
    const token = warden.signer.sign(warden.claims());
    const [h, , sig] = token.split(".");
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...warden.claims(), entitled: true })).toString("base64url")}.${sig}`;
    warden.queued.push(Response.json({ entitled: true, token: forged }));
    await assert.rejects(client.access({ fresh: true }), (e: WardenError) => e.type === "invalid_token" && /signature/.test(e.message));

    // A token that is not EdDSA.
    warden.queued.push(Response.json({ token: warden.signer.sign(warden.claims(), { alg: "none", kid: "k1" }) }));
    await assert.rejects(client.access({ fresh: true }), (e: WardenError) => e.type === "invalid_token");
  });

  test("the device's clock does not stretch an answer: held exp - iat from its arrival, and not when the clock goes back", async () => {
    const { client, warden, clock } = await signedIn();
    warden.answer.entitled = true;
    // The device's clock runs two hours ahead of Warden's: the token says iat two hours ago.
    const wardenNow = clock.now();
    warden.overrides = { iat: Math.floor(wardenNow / 1000), exp: Math.floor(wardenNow / 1000) + 900 };
    clock.set(wardenNow + 2 * 3600_000);
    const state = await client.access({ fresh: true });
    assert.equal(state.entitled, true, "a paying user is not locked out by a wrong clock");
    assert.equal(state.expiresAt, clock.now() + 900_000);
    // The clock is set back to before the answer arrived: it is not held.
    clock.set(wardenNow);
    await client.access();
    assert.equal(accessCalls(warden.calls), 2);
  });

  test("a token sent again, with less than its exp - iat left, is held only for the answer's recheck_after; a longer one lengthens nothing", async () => {
    const { client, warden, clock } = await signedIn();
    warden.answer.entitled = true;
    // Signed 400 seconds ago for 900: Warden answers recheck_after 500.
    const iat = Math.floor(clock.now() / 1000) - 400;
    warden.overrides = { iat, exp: iat + 900 };
    warden.answer.recheck_after = 500;
    assert.equal((await client.access({ fresh: true })).expiresAt, clock.now() + 500_000);
    // An unsigned recheck_after longer than the token's life does not stretch it.
    warden.overrides = { iat: iat + 400, exp: iat + 400 + 600 };
    warden.answer.recheck_after = 900;
    assert.equal((await client.access({ fresh: true })).expiresAt, clock.now() + 600_000);
  });
});

describe("offline", () => {
  test("the last valid answer holds until its exp and never past it; back online it is asked again", async () => {
    const { client, warden, clock } = await signedIn();
    warden.answer = { entitled: true, via: "licence", plan: "lifetime", trial_ends_at: null, recheck_after: 300 };
    const online = await client.access({ fresh: true });
    warden.down = true;
    await clock.advance(200_000);
    const offline = await client.access({ fresh: true });
    assert.deepEqual(offline, { ...online, offline: true });
    await clock.advance(99_999);
    assert.equal((await client.access()).entitled, true);
    await clock.advance(1);
    assert.deepEqual(await client.access(), { ...SIGNED_IN_LOCKED, offline: true });
    warden.down = false;
    assert.deepEqual(await client.access(), { ...online, expiresAt: clock.now() + 300_000 });
  });

  test("a 5xx or a rate limit longer than a minute is Warden unavailable, not a locked person", async () => {
    const { client, warden, clock } = await signedIn();
    warden.answer.entitled = true;
    await client.access({ fresh: true });
    warden.queued.push(Response.json({ error: { type: "api_error", message: "The service failed" } }, { status: 503 }));
    assert.deepEqual([(await client.access({ fresh: true })).entitled, (await client.access()).offline], [true, true]);
    warden.queued.push(Response.json({ error: { type: "rate_limit_error", message: "Too many" } }, { status: 429, headers: { "retry-after": "3600" } }));
    assert.equal((await client.access({ fresh: true })).entitled, true);
    await clock.advance(900_000);
    assert.equal((await client.access()).entitled, true, "asked again at exp, and answered");
    assert.equal((await client.access()).offline, false);
  });
});

describe("onAccessChange and the parts of an extension", () => {
  test("a change made in one part reaches the listeners of another; a renewal that changes nothing is not a change", async () => {
    const { client: worker, warden, make } = await signedIn();
    const popup = make();
    const seen: AccessState[] = [];
    popup.onAccessChange((state) => seen.push(state));
    await popup.access();
    assert.deepEqual(
      seen.map((s) => s.entitled),
      [false],
    );
    warden.answer.entitled = true;
    warden.answer.via = "grant";
    await worker.access({ fresh: true });
    await until(() => seen.length === 2, "the popup to follow");
    assert.deepEqual(
      seen.map((s) => [s.entitled, s.via]),
      [
        [false, null],
        [true, "grant"],
      ],
    );
    await worker.access({ fresh: true });
    await popup.access();
    assert.equal(seen.length, 2);
    await worker.signOut();
    await until(() => seen.length === 3, "the popup to follow");
    assert.deepEqual(seen.at(-1), {
      signedIn: false,
      entitled: false,
      via: null,
      plan: null,
      features: [],
      trialEndsAt: null,
      email: null,
      expiresAt: null,
      offline: false,
      version: null,
    });
    assert.equal(warden.signedOut, true, "signed out at Warden too");
  });

  test("a part that only listens locks when the answer runs out", async () => {
    const { warden, clock, make } = await signedIn();
    warden.answer = { entitled: true, via: "trial", plan: null, trial_ends_at: 1_900_000_000, recheck_after: 120 };
    const popup = make();
    const seen: AccessState[] = [];
    popup.onAccessChange((state) => seen.push(state));
    await popup.access({ fresh: true });
    assert.equal(seen.at(-1)?.trialEndsAt, 1_900_000_000_000);
    warden.down = true;
    await clock.advance(120_000);
    assert.deepEqual(
      seen.map((s) => [s.entitled, s.offline]),
      [
        [true, false],
        [false, true],
      ],
    );
  });

  test("a device signed out elsewhere is signed out here at its next check", async () => {
    const { client, warden } = await signedIn();
    const seen: boolean[] = [];
    client.onAccessChange((state) => seen.push(state.signedIn));
    await client.access();
    warden.signedOut = true;
    assert.equal((await client.access({ fresh: true })).signedIn, false);
    assert.deepEqual(seen, [false], "listeners hear of changes after they subscribe");
    await assert.rejects(client.devices(), (e: WardenError) => e.type === "authentication_error" && e.status === 401);
  });
});

describe("a content script's calls", () => {
  /** A signed-in service worker, and a content script of the same extension whose own fetch is recorded. */
  async function scriptAndWorker() {
    const { warden, make, storage } = await signedIn();
    const runtime = fakeRuntime();
    make({ runtime }).startBackground();
    const own: string[] = [];
    const script = make({
      runtime,
      contentScript: true,
      fetch: (async (...args: Parameters<typeof fetch>) => {
        own.push(String(args[0]));
        return warden.fetch(...args);
      }) as typeof fetch,
    });
    return { warden, runtime, script, own, storage };
  }

  test("access() asks the service worker, never Warden", async () => {
    const { warden, script, own, storage } = await scriptAndWorker();
    warden.answer.entitled = true;
    await storage.area.remove(ACCESS_KEY);
    assert.equal((await script.access()).entitled, true);
    assert.deepEqual(own, [], "the content script made no request of its own");
    assert.equal(accessCalls(warden.calls), 1, "the service worker asked");
  });

  test("usage and spend go through the service worker, with their Idempotency-Key; a refusal is still a UsageLimitError", async () => {
    const { warden, script, own } = await scriptAndWorker();
    assert.equal((await script.usage("summaries")).remaining, 10);
    const spent = await script.spend("summaries", 2, { idempotencyKey: "from-the-page" });
    assert.equal(spent.remaining, 8);
    assert.deepEqual(warden.spendKeys, ["from-the-page"]);
    const refused = await script.spend("summaries", 99).then(
      () => assert.fail("a spend over what is left resolved"),
      (error: UsageLimitError) => error,
    );
    assert.ok(refused instanceof UsageLimitError);
    assert.deepEqual([refused.status, refused.usage.remaining], [402, 8]);
    assert.deepEqual(own, [], "the content script sent nothing itself");
    assert.ok(warden.calls.includes(`POST /api/client/v1/tools/${TARGET.tool}/usage`), "the worker sent the spend");
  });

  test("the service worker sends nothing but Warden's own addresses; without a worker a call is a network_error", async () => {
    const { runtime } = await scriptAndWorker();
    const answer = await runtime.sendMessage({
      warden: `warden:${TARGET.workspace}:test:${TARGET.tool}`,
      relay: { url: "https://elsewhere.example.com/steal", method: "GET", headers: {}, body: null },
    });
    assert.deepEqual(answer, { failed: "not a Warden address: https://elsewhere.example.com/steal" });
    // Below a Warden served under a path, an address that climbs out of it is not Warden's.
    const { make } = await signedIn();
    const underPath = fakeRuntime();
    make({ runtime: underPath, url: `${URL_}/warden` }).startBackground();
    const climbed = await underPath.sendMessage({
      warden: `warden:${TARGET.workspace}:test:${TARGET.tool}`,
      relay: { url: `${URL_}/warden/../steal`, method: "GET", headers: {}, body: null },
    });
    assert.deepEqual(climbed, { failed: `not a Warden address: ${URL_}/warden/../steal` });

    const alone = make({ runtime: fakeRuntime(), contentScript: true });
    await assert.rejects(alone.usage(), (e: WardenError) => e.type === "network_error");
  });
});

describe("the recheck", () => {
  test("an alarm renews the answer before it expires, and survives the service worker being stopped", async () => {
    const { warden, clock, make } = await signedIn();
    const alarms = fakeAlarms();
    const name = `warden:${TARGET.workspace}:${TARGET.env}:${TARGET.tool}`;
    let worker = make({ alarms: alarms.api });
    worker.startBackground();
    assert.equal(alarms.listenerCount(), 1, "the alarm listener is added at once, in the worker's first turn");
    await settle();
    const first = await worker.access({ fresh: true });
    assert.equal(alarms.alarms.get(name), clock.now() + 810_000, "at 90% of the token's life");

    // The browser stops the worker; the alarm wakes a new one, which registers its listener at start.
    await clock.advance(810_000);
    alarms.stopWorker();
    worker = make({ alarms: alarms.api });
    worker.startBackground();
    await settle();
    warden.answer.entitled = true;
    alarms.fire(name);
    await until(() => alarms.alarms.get(name) === clock.now() + 810_000, "the next alarm");
    assert.equal(accessCalls(warden.calls), 2);
    const renewed = await make().access();
    assert.equal(renewed.entitled, true);
    assert.ok(renewed.expiresAt !== null && first.expiresAt !== null && renewed.expiresAt > first.expiresAt);
    assert.equal(alarms.alarms.get(name), clock.now() + 810_000);

    // Offline: retried every retrySeconds, and at the held answer's expiry, when it locks.
    warden.down = true;
    const renewedAt = clock.now();
    await clock.advance(810_000);
    alarms.fire(name);
    await until(() => alarms.alarms.get(name) === clock.now() + 60_000, "a retry a minute later");
    await clock.advance(60_000);
    alarms.fire(name);
    await until(() => alarms.alarms.get(name) === renewedAt + 900_000, "a retry at the answer's exp");
    assert.equal((await make().access()).entitled, true);
    await clock.advance(30_000);
    alarms.fire(name);
    await until(() => alarms.alarms.get(name) === clock.now() + 60_000, "a retry a minute later");
    assert.deepEqual(await make().access(), { ...SIGNED_IN_LOCKED, offline: true });
    // Signing out offline: signed out here at once (Warden is told when it can be), no more rechecks.
    await assert.rejects(worker.signOut(), (e: WardenError) => e.type === "network_error");
    assert.equal((await make().access()).signedIn, false);
    await until(() => !alarms.alarms.has(name), "the alarm to be cleared");
  });

  test("without alarms a timer does it", async () => {
    const { warden, clock, make, storage } = await signedIn();
    const worker = make();
    worker.startBackground();
    await worker.access({ fresh: true });
    const held = storage.values.get(ACCESS_KEY);
    warden.answer.entitled = true;
    await clock.advance(809_999);
    assert.equal(accessCalls(warden.calls), 1);
    await clock.advance(1);
    await until(() => storage.values.get(ACCESS_KEY) !== held, "the renewed answer");
    assert.equal(accessCalls(warden.calls), 2);
    assert.equal((await make().access()).entitled, true);
  });
});

describe("errors and rate limits", () => {
  test("the API's error is a typed value with its type, message and param", async () => {
    const { make } = setup();
    const client = make();
    await assert.rejects(client.verify("123456"), (e: WardenError) => e.type === "invalid_request_error" && e.param === "email");
    await client.signIn("ada@example.com");
    await assert.rejects(client.verify("000000"), {
      name: "WardenError",
      type: "invalid_request_error",
      message: "That code is not right.",
      param: "code",
      status: 400,
    });
    await assert.rejects(client.purchases(), (e: WardenError) => e.type === "authentication_error");
    await assert.rejects(client.checkout("lifetime"), (e: WardenError) => e.param === "success_url");
  });

  test("a 429 waits for Retry-After, then asks again", async () => {
    const { make, warden, clock } = setup();
    const client = make();
    warden.queued.push(Response.json({ error: { type: "rate_limit_error", message: "Slow down" } }, { status: 429, headers: { "retry-after": "7" } }));
    let done = false;
    const sent = client.signIn("ada@example.com").finally(() => {
      done = true;
    });
    await clock.advance(6_999);
    assert.equal(done, false, "still waiting");
    await clock.advance(1);
    assert.equal((await sent).sent, true);
    assert.deepEqual(warden.calls, ["POST /api/client/v1/sign-in", "POST /api/client/v1/sign-in"]);

    warden.queued.push(
      Response.json({ error: { type: "rate_limit_error", message: "Five codes an hour" } }, { status: 429, headers: { "retry-after": "1800" } }),
    );
    await assert.rejects(client.signIn("ada@example.com"), { type: "rate_limit_error", retryAfter: 1800, status: 429 });
  });

  test("Warden unreachable is a network_error", async () => {
    const { make, warden } = setup();
    warden.down = true;
    await assert.rejects(make().signIn("ada@example.com"), (e: WardenError) => e.type === "network_error" && e.status === 0);
  });
});

describe("features, meters and spends", () => {
  test("features come from the signed token (none from a Warden older than them); hasFeature answers from the held answer", async () => {
    const { client, warden } = await signedIn();
    assert.deepEqual((await client.access({ fresh: true })).features, [], "a token without the claim holds no feature");
    warden.overrides = { features: ["export", "sync"] };
    warden.answer.entitled = true;
    assert.deepEqual((await client.access({ fresh: true })).features, ["export", "sync"]);
    assert.deepEqual([await client.hasFeature("sync"), await client.hasFeature("share")], [true, false]);
    assert.equal(accessCalls(warden.calls), 2, "hasFeature used the held answer");
  });

  test("a token whose features are not a list of names is not Warden's", async () => {
    const { client, warden } = await signedIn();
    for (const features of ["export", [1], null]) {
      warden.overrides = { features };
      await assert.rejects(client.access({ fresh: true }), (e: WardenError) => e.type === "invalid_token", JSON.stringify(features));
    }
  });

  test("onAccessChange fires when only the answer's version moves (credits bought), not when the same answer is renewed", async () => {
    const { client, warden } = await signedIn();
    const seen: AccessState[] = [];
    client.onAccessChange((state) => seen.push(state));
    const first = await client.access({ fresh: true });
    assert.match(first.version ?? "", /^[0-9a-f]{16}$/);
    warden.creditsVersion += 1;
    const bought = await client.access({ fresh: true });
    assert.notEqual(bought.version, first.version);
    assert.equal(bought.entitled, first.entitled);
    await client.access({ fresh: true });
    assert.deepEqual(
      seen.map((s) => s.version),
      [bought.version],
      "the first answer was published at sign-in, before the listener; the renewal is no change",
    );
  });

  test("usage reads the meters, or one by id; a meter the tool lacks is an invalid_request_error", async () => {
    const { client } = await signedIn();
    const meters = await client.usage();
    assert.deepEqual(
      meters.map((m) => [m.meter, m.remaining]),
      [["summaries", 10]],
    );
    assert.equal((await client.usage("summaries")).allowance, 10);
    await assert.rejects(client.usage("pages"), (e: WardenError) => e instanceof WardenError && e.type === "invalid_request_error" && e.param === "meter");
  });

  test("spend: 1 by default; a new Idempotency-Key per call, the same on the library's own retry of a 429; the caller's own key when given", async () => {
    const { client, warden, clock } = await signedIn();
    assert.deepEqual([(await client.spend("summaries")).quantity, warden.meter.remaining], [1, 9]);
    warden.queued.push(
      new Response(JSON.stringify({ error: { type: "rate_limit_error", message: "Slow down." } }), { status: 429, headers: { "retry-after": "2" } }),
    );
    const retried = client.spend("summaries", 2);
    await clock.advance(2_000);
    assert.equal((await retried).remaining, 7);
    const [one, two, three] = warden.spendKeys;
    assert.match(one ?? "", /^[A-Za-z0-9_-]{43}$/);
    assert.equal(two, three, "the retry sent the same key: Warden counts the spend once");
    assert.notEqual(one, two, "each call its own key");
    await client.spend("summaries", 1, { idempotencyKey: "summary-42" });
    await client.spend("summaries", 1, { idempotencyKey: "summary-42" });
    assert.deepEqual([warden.spendKeys.slice(-2), warden.meter.remaining], [["summary-42", "summary-42"], 6]);
  });

  test("a spend over what is left rejects with a UsageLimitError saying what is left, and spends nothing", async () => {
    const { client, warden } = await signedIn();
    warden.meter = { ...warden.meter, credits: 5, remaining: 15 };
    const refused = await client.spend("summaries", 16).then(
      () => assert.fail("refused"),
      (error: unknown) => error,
    );
    assert.ok(refused instanceof UsageLimitError, "a UsageLimitError");
    assert.ok(refused instanceof WardenError, "and a WardenError, as every failure is");
    assert.deepEqual(
      [refused.type, refused.status, refused.name, refused.usage.remaining, refused.usage.allowance_remaining, refused.usage.credits, refused.usage.resets_at],
      ["usage_limit_error", 402, "UsageLimitError", 15, 10, 5, "2026-12-01T00:00:00.000Z"],
    );
    assert.match(refused.message, /Only 15 summaries are left/);
    assert.equal((await client.usage("summaries")).remaining, 15, "nothing spent");
    // A 402 not in Warden's shape (no usage) is a WardenError of the same type, without what it cannot know.
    warden.queued.push(new Response(JSON.stringify({ error: { type: "usage_limit_error", message: "No." } }), { status: 402 }));
    await assert.rejects(client.spend("summaries"), (e: WardenError) => e.type === "usage_limit_error" && !(e instanceof UsageLimitError));
  });

  test("signed out: usage and spend reject with authentication_error, asking Warden nothing; signed out at Warden: 401", async () => {
    const s = setup();
    const client = s.make();
    await assert.rejects(client.usage(), (e: WardenError) => e.type === "authentication_error" && e.status === 401);
    await assert.rejects(client.spend("summaries"), (e: WardenError) => e.type === "authentication_error");
    assert.deepEqual(s.warden.calls, []);
    await client.signIn("ada@example.com");
    await client.verify("123456");
    s.warden.signedOut = true;
    await assert.rejects(client.spend("summaries"), (e: WardenError) => e.status === 401);
    assert.equal(s.warden.meter.remaining, 10);
    assert.equal((await client.access()).signedIn, false, "the 401 signed this device out");
  });
});
