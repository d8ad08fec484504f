// The signed access token as a vendor's server sees it: verified with `jose` against the
// served JWK Set and nothing else. Its claims are the access answer's; its audience keeps
// each workspace and environment apart; it expires with the answer. SQLite and PostgreSQL.
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, describe, test } from "node:test";
import { createLocalJWKSet, createRemoteJWKSet, decodeProtectedHeader, errors, type JSONWebKeySet, jwtVerify } from "jose";
import { buildApp } from "../app.js";
import { toIso } from "../clock.js";
import { importNdjson } from "../import/import.service.js";
import { clientCalls, testMailbox } from "../test-support/client.js";
import { DIALECTS, seedCatalogue, seedWorkspace, type TestApi, testApi, testServices, type Workspace } from "../test-support/harness.js";

const mailbox = testMailbox();
const { signIn, check } = clientCalls(mailbox);

const jwksOf = async (api: TestApi) => {
  const served = await api.request({ url: "/.well-known/jwks.json" });
  assert.equal(served.statusCode, 200, served.body);
  return served.json() as JSONWebKeySet;
};
/** Verifies as a vendor would, at the test clock's time. */
const verifyAt = (token: string, jwks: JSONWebKeySet, audience: string, now: number) =>
  jwtVerify(token, createLocalJWKSet(jwks), { issuer: "warden", audience, algorithms: ["EdDSA"], currentDate: new Date(now) });
const personId = async (services: Awaited<ReturnType<typeof testServices>>["services"], ws: Workspace, email: string) =>
  (await services.db.selectFrom("people").select("id").where("workspace_id", "=", ws.workspaceId).where("email", "=", email).executeTakeFirstOrThrow()).id;

for (const dialect of DIALECTS) {
  describe(`access tokens (${dialect})`, () => {
    test("the access check's token verifies against the served JWK Set, and its claims are the answer's", async () => {
      const { services, clock } = await testServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      const email = `Ada-${ws.slug}@example.com`;
      const token = await signIn(api, ws, email);

      const served = await api.request({ url: "/.well-known/jwks.json" });
      assert.equal(served.headers["cache-control"], "public, max-age=300");
      assert.equal(served.headers["access-control-allow-origin"], "*");
      const jwks = served.json() as JSONWebKeySet;
      assert.equal(jwks.keys.length, 1);
      const [jwk] = jwks.keys;
      assert.deepEqual(Object.keys(jwk ?? {}).sort(), ["alg", "crv", "kid", "kty", "use", "x"]);
      assert.deepEqual({ kty: jwk?.kty, crv: jwk?.crv, alg: jwk?.alg, use: jwk?.use }, { kty: "OKP", crv: "Ed25519", alg: "EdDSA", use: "sig" });

      // Signed in, holding nothing: locked, for the full 900 seconds.
      const locked = await check(api, ws.tool, token);
      assert.equal(locked.statusCode, 200, locked.body);
      const lockedAnswer = locked.json();
      assert.deepEqual(decodeProtectedHeader(lockedAnswer.token), { alg: "EdDSA", typ: "JWT", kid: jwk?.kid });
      const { payload } = await verifyAt(lockedAnswer.token, jwks, `${ws.slug}:test`, clock.now());
      const iat = Math.floor(clock.now() / 1000);
      assert.deepEqual(payload, {
        iss: "warden",
        aud: `${ws.slug}:test`,
        sub: await personId(services, ws, email),
        email,
        workspace: ws.slug,
        env: "test",
        tool: ws.tool,
        entitled: false,
        via: null,
        plan: null,
        features: [],
        trial_ends_at: null,
        iat,
        exp: iat + 900,
      });
      assert.equal(lockedAnswer.recheck_after, 900);

      // A licence with a plan, and an expired trial before it: every claim follows the answer.
      clock.advance(1500);
      const trialEnd = clock.now() - 86_400_000;
      await importNdjson(services.db, services.clock, {
        workspace: ws.slug,
        env: "test",
        text: [
          { type: "trial", email, tool: ws.tool, starts_at: toIso(trialEnd - 7 * 86_400_000), ends_at: toIso(trialEnd) },
          { type: "licence", email, tool: ws.tool, plan: "lifetime", purchased_at: toIso(clock.now() - 1000) },
        ]
          .map((line) => JSON.stringify(line))
          .join("\n"),
      });
      const unlocked = (await check(api, ws.tool, token)).json();
      assert.equal(unlocked.entitled, true);
      const claims = (await verifyAt(unlocked.token, jwks, `${ws.slug}:test`, clock.now())).payload;
      assert.equal(claims.entitled, unlocked.entitled);
      assert.equal(claims.via, "licence");
      assert.equal(claims.via, unlocked.via);
      assert.equal(claims.plan, "lifetime");
      assert.equal(claims.plan, unlocked.plan.id);
      assert.deepEqual(claims.features, unlocked.features, "the answer's features (features.test.ts signs some)");
      assert.equal(claims.trial_ends_at, Math.floor(trialEnd / 1000));
      assert.equal(claims.trial_ends_at, Math.floor(Date.parse(unlocked.trial.endsAt) / 1000));
      assert.equal(claims.iat, Math.floor(clock.now() / 1000));
      assert.equal(claims.exp, (claims.iat as number) + unlocked.recheck_after);
    });

    test("a vendor's server verifies with createRemoteJWKSet from a listening Warden", async () => {
      const { services } = await testServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const token = await signIn(api, ws, `remote-${ws.slug}@example.com`);
      await api.request({
        method: "POST",
        url: `/api/v1/tools/${ws.tool}/grants`,
        key: ws.testKey,
        payload: { email: `remote-${ws.slug}@example.com`, days: 30 },
      });
      const answer = (await check(api, ws.tool, token)).json();

      const server = await buildApp(services, { logger: false });
      await server.listen({ port: 0, host: "127.0.0.1" });
      after(() => server.close());
      const { port } = server.server.address() as AddressInfo;
      const keys = createRemoteJWKSet(new URL(`http://127.0.0.1:${port}/.well-known/jwks.json`));
      // The test clock is days behind the machine's: verify at its time, as a server with that clock would.
      const { payload } = await jwtVerify(answer.token, keys, { issuer: "warden", audience: `${ws.slug}:test`, currentDate: new Date(services.clock.now()) });
      assert.equal(payload.entitled, true);
      assert.equal(payload.via, "grant");
    });

    test("a token is accepted only for its own workspace and environment, and a changed claim breaks the signature", async () => {
      const { services, clock } = await testServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedWorkspace(services);
      const other = await seedWorkspace(services);
      const api = await testApi(services);
      const email = `aud-${ws.slug}@example.com`;
      const testToken = (await check(api, ws.tool, await signIn(api, ws, email))).json().token;
      // The same address signed in to the live environment.
      const asked = await api.request({ method: "POST", url: "/api/client/v1/sign-in", payload: { workspace: ws.slug, tool: ws.tool, email, env: "live" } });
      assert.equal(asked.statusCode, 200, asked.body);
      const verified = await api.request({
        method: "POST",
        url: "/api/client/v1/sign-in/verify",
        payload: {
          workspace: ws.slug,
          tool: ws.tool,
          email,
          env: "live",
          code: await mailbox.codeFor(email),
          device: { name: "Home", platform: "firefox-linux" },
        },
      });
      assert.equal(verified.statusCode, 200, verified.body);
      const liveToken = (await check(api, ws.tool, verified.json().token)).json().token;
      const otherToken = (await check(api, other.tool, await signIn(api, other, `aud-${other.slug}@example.com`))).json().token;
      const jwks = await jwksOf(api);
      const now = clock.now();

      assert.equal((await verifyAt(testToken, jwks, `${ws.slug}:test`, now)).payload.env, "test");
      assert.equal((await verifyAt(liveToken, jwks, `${ws.slug}:live`, now)).payload.env, "live");
      for (const [token, audience] of [
        [testToken, `${ws.slug}:live`],
        [liveToken, `${ws.slug}:test`],
        [testToken, `${other.slug}:test`],
        [otherToken, `${ws.slug}:test`],
        [testToken, ws.slug],
      ] as const) {
        await assert.rejects(verifyAt(token, jwks, audience, now), (error: unknown) => {
          assert.ok(error instanceof errors.JWTClaimValidationFailed, String(error));
          assert.equal(error.claim, "aud");
          return true;
        });
      }

      // The other workspace's claims pasted under this token's signature do not verify.
      const [header, , signature] = testToken.split(".");
      const forgedClaims = otherToken.split(".")[1];
      await assert.rejects(verifyAt(`${header}.${forgedClaims}.${signature}`, jwks, `${other.slug}:test`, now), errors.JWSSignatureVerificationFailed);
      // Nor does a token with the signature taken off, or another algorithm named.
      await assert.rejects(verifyAt(`${header}.${forgedClaims}.`, jwks, `${other.slug}:test`, now), errors.JWSSignatureVerificationFailed);
      const none = Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url");
      await assert.rejects(verifyAt(`${none}.${forgedClaims}.`, jwks, `${other.slug}:test`, now));
    });

    test("a token expires with its answer: after recheck_after it is refused, and access that ends sooner ends it sooner", async () => {
      const { services, clock } = await testServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const email = `exp-${ws.slug}@example.com`;
      const token = await signIn(api, ws, email);
      const jwks = await jwksOf(api);
      const audience = `${ws.slug}:test`;

      const first = (await check(api, ws.tool, token)).json();
      const issuedAt = clock.now();
      clock.advance(899_000);
      await verifyAt(first.token, jwks, audience, clock.now());
      clock.advance(1000);
      await assert.rejects(verifyAt(first.token, jwks, audience, clock.now()), (error: unknown) => {
        assert.ok(error instanceof errors.JWTExpired, String(error));
        return true;
      });
      assert.equal(clock.now() - issuedAt, 900_000);

      // A grant of one day, 300 seconds before it ends: the answer is kept 300 seconds, and so is the token.
      await api.request({ method: "POST", url: `/api/v1/tools/${ws.tool}/grants`, key: ws.testKey, payload: { email, days: 1 } });
      clock.advance(86_400_000 - 300_000);
      const ending = (await check(api, ws.tool, token)).json();
      assert.equal(ending.entitled, true);
      assert.equal(ending.recheck_after, 300);
      const { payload } = await verifyAt(ending.token, jwks, audience, clock.now());
      assert.equal(payload.exp, (payload.iat as number) + 300);
      clock.advance(300_000);
      await assert.rejects(verifyAt(ending.token, jwks, audience, clock.now()), errors.JWTExpired);
      assert.equal((await check(api, ws.tool, token)).json().entitled, false);
    });

    test("a device's token is sent again while it says the same and has more than half its life left; a change of access signs a new one at once", async () => {
      const { services, clock } = await testServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const email = `again-${ws.slug}@example.com`;
      const token = await signIn(api, ws, email);
      const jwks = await jwksOf(api);
      const audience = `${ws.slug}:test`;
      // The server's loop reads the access-change feed each second; answers are kept once it does.
      await services.accessWatch.poll();

      const first = (await check(api, ws.tool, token)).json();
      assert.equal(first.recheck_after, 900);
      clock.advance(10_000);
      const again = (await check(api, ws.tool, token)).json();
      assert.equal(again.token, first.token, "unchanged access: the same token");
      assert.equal(again.recheck_after, 890, "the answer is kept no longer than its token lives");
      const { payload } = await verifyAt(again.token, jwks, audience, clock.now());
      assert.equal(payload.exp, Math.floor((clock.now() - 10_000) / 1000) + 900);

      // A grant: the next check, before the feed is read again, says so in a new token.
      const granted = await api.request({ method: "POST", url: `/api/v1/tools/${ws.tool}/grants`, key: ws.testKey, payload: { email, days: 1 } });
      assert.equal(granted.statusCode, 201, granted.body);
      const unlocked = (await check(api, ws.tool, token)).json();
      assert.equal(unlocked.entitled, true);
      assert.notEqual(unlocked.token, first.token);
      const claims = (await verifyAt(unlocked.token, jwks, audience, clock.now())).payload;
      assert.deepEqual([claims.entitled, claims.via, claims.iat], [true, "grant", Math.floor(clock.now() / 1000)]);
      await services.accessWatch.poll();

      // 100 seconds before the grant ends the token lives 100 seconds: sent again for 49, not at 50.
      clock.advance(86_400_000 - 100_000);
      await services.accessWatch.poll();
      const ending = (await check(api, ws.tool, token)).json();
      assert.equal(ending.recheck_after, 100);
      const endingExp = (await verifyAt(ending.token, jwks, audience, clock.now())).payload.exp;
      clock.advance(49_000);
      const halfLeft = (await check(api, ws.tool, token)).json();
      assert.equal(halfLeft.token, ending.token, "more than half its life left");
      assert.equal(halfLeft.recheck_after, 51);
      clock.advance(1000);
      const renewed = (await check(api, ws.tool, token)).json();
      assert.notEqual(renewed.token, ending.token, "half its life gone: signed anew");
      const renewedClaims = (await verifyAt(renewed.token, jwks, audience, clock.now())).payload;
      assert.deepEqual([renewedClaims.iat, renewedClaims.exp], [Math.floor(clock.now() / 1000), endingExp], "the new one ends with the access too");
      assert.equal(renewed.recheck_after, 50);
    });

    test("activating a licence key answers the device's first check, signed for the device without the buyer's address", async () => {
      const { services, clock } = await testServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      const buyer = `key-buyer-${ws.slug}@example.com`;
      await importNdjson(services.db, services.clock, {
        workspace: ws.slug,
        env: "test",
        text: JSON.stringify({ type: "licence", email: buyer, tool: ws.tool, plan: "lifetime", purchased_at: toIso(clock.now() - 1000) }),
      });
      const buyerToken = await signIn(api, ws, buyer);
      const bought = await api.request({ url: "/api/client/v1/purchases", headers: { authorization: `Bearer ${buyerToken}` } });
      const key = String(bought.json().data[0].key);

      const activated = await api.request({
        method: "POST",
        url: `/api/client/v1/tools/${ws.tool}/activate`,
        payload: { workspace: ws.slug, key, device: { name: "Office PC", platform: "edge-windows" } },
      });
      assert.equal(activated.statusCode, 200, activated.body);
      const session = activated.json();
      assert.match(session.token, /^wdt_/);
      assert.equal(session.access.entitled, true);
      assert.equal(session.access.via, "licence");
      const jwks = await jwksOf(api);
      const { payload } = await verifyAt(session.access.token, jwks, `${ws.slug}:test`, clock.now());
      assert.equal(payload.sub, session.device.id);
      assert.equal(payload.email, null);
      assert.equal(payload.entitled, true);
      assert.equal(payload.plan, "lifetime");
      assert.equal(payload.exp, (payload.iat as number) + session.access.recheck_after);

      // The device's own checks are signed the same way.
      const again = (await check(api, ws.tool, session.token)).json();
      assert.equal((await verifyAt(again.token, jwks, `${ws.slug}:test`, clock.now())).payload.sub, session.device.id);
      // The buyer's own devices are the person, with the address.
      const own = (await check(api, ws.tool, buyerToken)).json();
      const ownClaims = (await verifyAt(own.token, jwks, `${ws.slug}:test`, clock.now())).payload;
      assert.equal(ownClaims.sub, await personId(services, ws, buyer));
      assert.equal(ownClaims.email, buyer);
    });

    test("the JWK Set takes no key, counts against no limit, and answers the same at every address", async () => {
      const { services } = await testServices(dialect, { SMTP_URL: mailbox.url, WARDEN_LIMIT_WRONG_KEYS_PER_MIN: "1" });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      // An address of this test's own: wrong keys are counted per source address, in the file's database.
      const remoteAddress = `10.25.${DIALECTS.indexOf(dialect)}.7`;
      const first = await api.request({ url: "/.well-known/jwks.json", remoteAddress, headers: { origin: "chrome-extension://abcdefghijklmnop" } });
      assert.equal(first.headers["access-control-allow-origin"], "*");
      for (let i = 0; i < 5; i++) {
        const again = await api.request({
          url: "/.well-known/jwks.json",
          remoteAddress,
          headers: { host: `${ws.slug}.warden.test`, authorization: "Bearer wk_test_wrong" },
        });
        assert.equal(again.statusCode, 200, again.body);
        assert.equal(again.body, first.body);
      }
      // The wrong key sent five times above counted nothing: the first one sent to the API is still the first.
      const wrong = { url: `/api/v1/tools/${ws.tool}/customers`, remoteAddress, headers: { authorization: "Bearer wk_test_wrong" } };
      assert.equal((await api.request(wrong)).statusCode, 401);
      assert.equal((await api.request(wrong)).statusCode, 429);
    });
  });
}
