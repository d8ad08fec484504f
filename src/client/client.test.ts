// The client API end to end in-process: sign-in with the code read from a real SMTP
// server on loopback, device sessions, the access check and what the vendor API then
// reports. Every test runs on SQLite and PostgreSQL.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { decodeJwt } from "jose";
import { toIso } from "../clock.js";
import { importNdjson } from "../import/import.service.js";
import { clientCalls, testMailbox } from "../test-support/client.js";
import { fillDiskFor } from "../test-support/full-disk.js";
import { DIALECTS, seedCatalogue, seedWorkspace, testApi, testServices } from "../test-support/harness.js";
import { settleMail } from "../test-support/mail.js";

const mailbox = testMailbox();
const codeFor = (address: string) => mailbox.codeFor(address);
const { askCode, verify, signIn, check } = clientCalls(mailbox);

for (const dialect of DIALECTS) {
  describe(`client sign-in (${dialect})`, () => {
    test("a code read from the SMTP server signs in; a grant made earlier and a licence bought signed-out apply", async () => {
      const { services } = await testServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      const grantee = `ada.lovelace.${ws.slug}@gmail.com`;
      const granted = await api.request({ method: "POST", url: `/api/v1/tools/${ws.tool}/grants`, key: ws.testKey, payload: { email: grantee, days: 30 } });
      assert.equal(granted.statusCode, 201, granted.body);
      const buyer = `grace-${ws.slug}@example.com`;
      await importNdjson(services.db, services.clock, {
        workspace: ws.slug,
        env: "test",
        text: JSON.stringify({ type: "licence", email: buyer, tool: "tabmaster", plan: "lifetime", purchased_at: toIso(services.clock.now() - 1000) }),
      });

      for (const [email, typed, via] of [
        [grantee, grantee.replaceAll(".", "").replace("@gmailcom", "@googlemail.com"), "grant"],
        [buyer, buyer.toUpperCase(), "licence"],
      ] as const) {
        const before = await api.request({ url: `/api/v1/tools/${ws.tool}/customers/${encodeURIComponent(email)}`, key: ws.testKey });
        assert.equal(before.json().account, false);

        const asked = await askCode(api, ws, typed);
        assert.equal(asked.statusCode, 200, asked.body);
        assert.equal(asked.json().expires_at, "2026-11-21T12:10:00.000Z", "a code lasts 10 minutes");
        const code = await codeFor(typed);
        const verified = await verify(api, ws, typed, code);
        assert.equal(verified.statusCode, 200, verified.body);
        const session = verified.json();
        assert.match(session.token, /^wdt_[0-9A-Za-z]{43}$/);
        assert.equal(session.email, email, "the address as first stored");
        assert.equal(session.device.name, "Work laptop");
        assert.equal(session.device.current, true);

        // Stored hashed, never in clear.
        const row = await services.db.selectFrom("devices").select("token_hash").where("id", "=", session.device.id).executeTakeFirstOrThrow();
        assert.equal(row.token_hash, createHash("sha256").update(session.token).digest("hex"));

        const customer = await api.request({ url: `/api/v1/tools/${ws.tool}/customers/${encodeURIComponent(email)}`, key: ws.testKey });
        assert.equal(customer.statusCode, 200);
        assert.equal(customer.json().account, true);
        assert.equal(customer.json().entitled, true);
        assert.equal(customer.json().via, via);

        // Single use.
        const again = await verify(api, ws, typed, code);
        assert.equal(again.statusCode, 400);
        assert.equal(again.json().error.param, "code");
      }
    });

    test("five wrong codes void the code; a code expires after 10 minutes; a newer code replaces an older one", async () => {
      const { services, clock } = await testServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const email = `tries-${ws.slug}@example.com`;

      await askCode(api, ws, email);
      const code = await codeFor(email);
      const wrong = code === "000000" ? "000001" : "000000";
      for (let i = 0; i < 5; i++) {
        const answer = await verify(api, ws, email, wrong);
        assert.equal(answer.statusCode, 400);
        assert.equal(answer.json().error.param, "code");
      }
      assert.equal((await verify(api, ws, email, code)).statusCode, 400, "void after 5 tries");

      await askCode(api, ws, email);
      const expiring = await codeFor(email);
      clock.advance(600_000);
      assert.equal((await verify(api, ws, email, expiring)).statusCode, 400, "expired");

      await askCode(api, ws, email);
      const older = await codeFor(email);
      await askCode(api, ws, email);
      const newer = await codeFor(email);
      if (older !== newer) assert.equal((await verify(api, ws, email, older)).statusCode, 400, "replaced");
      assert.equal((await verify(api, ws, email, newer)).statusCode, 200);

      const people = await services.db.selectFrom("people").select("signed_in_at").where("workspace_id", "=", ws.workspaceId).execute();
      assert.deepEqual(people, [{ signed_in_at: clock.now() }]);
    });

    test("sign-in requests are rate limited per address and per source address", async () => {
      const { services, clock } = await testServices(dialect, {
        SMTP_URL: mailbox.url,
        WARDEN_LIMIT_SIGN_INS_PER_ADDRESS_PER_HOUR: "2",
        WARDEN_LIMIT_SIGN_INS_PER_SOURCE_PER_HOUR: "4",
      });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      // Counters of the source address are shared by every test of the file: start on a fresh hour.
      clock.advance(3_600_000 * (10 + DIALECTS.indexOf(dialect)) + 1);
      const a = `a-${ws.slug}@gmail.com`;
      assert.equal((await askCode(api, ws, a)).statusCode, 200);
      assert.equal((await askCode(api, ws, a.replace("a-", "a.-"))).statusCode, 200);
      const limited = await askCode(api, ws, a);
      assert.equal(limited.statusCode, 429);
      assert.equal(limited.json().error.type, "rate_limit_error");
      assert.ok(Number(limited.headers["retry-after"]) > 0);

      assert.equal((await askCode(api, ws, `b-${ws.slug}@example.com`)).statusCode, 200);
      assert.equal((await askCode(api, ws, `c-${ws.slug}@example.com`)).statusCode, 200);
      assert.equal((await askCode(api, ws, `d-${ws.slug}@example.com`)).statusCode, 429, "the source address is used up");

      clock.advance(3_600_000);
      assert.equal((await askCode(api, ws, a)).statusCode, 200);
    });

    test("at most 100 wrong codes in a row per address and environment: then every code is refused (429, Retry-After) until 24 hours after the first; a right code before that starts the count again", async () => {
      // Enough codes an hour to reach the ceiling in one: the hourly quotas are not what is tested here.
      const { services, clock } = await testServices(dialect, {
        SMTP_URL: mailbox.url,
        WARDEN_LIMIT_SIGN_INS_PER_ADDRESS_PER_HOUR: "1000",
        WARDEN_LIMIT_SIGN_INS_PER_SOURCE_PER_HOUR: "1000",
      });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      // The source address's hourly counter is shared by the file's tests: an hour of this test's own.
      clock.advance(3_600_000 * (30 + DIALECTS.indexOf(dialect)));
      const email = `guessed-${ws.slug}@example.com`;
      /** `n` wrong codes for the address, a new code asked after each 5 (a code's tries). */
      const guess = async (n: number, address = email) => {
        for (let i = 0; i < n; i++) {
          if (i % 5 === 0) assert.equal((await askCode(api, ws, address)).statusCode, 200);
          const code = await codeFor(address);
          const answer = await verify(api, ws, address, code === "000000" ? "000001" : "000000");
          assert.equal(answer.statusCode, 400, `wrong code ${i + 1}: ${answer.body}`);
        }
      };
      const rightCode = async (address = email) => {
        assert.equal((await askCode(api, ws, address)).statusCode, 200);
        return verify(api, ws, address, await codeFor(address));
      };

      // One short of the ceiling, a right code signs in and starts the count again.
      await guess(99);
      assert.equal((await rightCode()).statusCode, 200);
      const first = clock.now();
      await guess(100);
      clock.advance(3_600_000);
      const refused = await rightCode();
      assert.equal(refused.statusCode, 429, refused.body);
      assert.equal(refused.json().error.type, "rate_limit_error");
      assert.equal(refused.json().error.message, "Too many wrong sign-in codes for this address in a day (100): codes for it work again in 24 hours.");
      assert.equal(refused.headers["retry-after"], String(23 * 3600), "24 hours after the first wrong code of the run");
      // The refused code kept its tries: nothing was compared.
      const tries = await services.db
        .selectFrom("sign_in_codes")
        .select("attempts")
        .where("closed_at", "is", null)
        .where("workspace_id", "=", ws.workspaceId)
        .execute();
      assert.deepEqual(
        tries.map((t) => Number(t.attempts)),
        [0],
      );

      // Another address, and the same address in the other environment, have their own counts.
      assert.equal((await rightCode(`other-${ws.slug}@example.com`)).statusCode, 200);
      const live = { workspace: ws.slug, tool: ws.tool, email, env: "live" };
      assert.equal((await api.request({ method: "POST", url: "/api/client/v1/sign-in", payload: live })).statusCode, 200);
      const inLive = await api.request({
        method: "POST",
        url: "/api/client/v1/sign-in/verify",
        payload: { ...live, code: await codeFor(email), device: { name: "Work laptop", platform: "chrome-mac" } },
      });
      assert.equal(inLive.statusCode, 200, inLive.body);

      // 24 hours after the first wrong code, codes work again.
      clock.set(first + 24 * 3_600_000);
      assert.equal((await rightCode()).statusCode, 200);
    });

    test("without SMTP_URL the mail is written to the log and the data folder's outbox", async () => {
      const dir = await mkdtemp(join(tmpdir(), "warden-outbox-"));
      after(() => rm(dir, { recursive: true, force: true }));
      const { services } = await testServices(dialect, { WARDEN_DATA_DIR: dir });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const email = `local-${ws.slug}@example.com`;
      assert.equal((await askCode(api, ws, email)).statusCode, 200);
      await settleMail();
      const [file] = await readdir(join(dir, "outbox"));
      assert.ok(file);
      const text = await readFile(join(dir, "outbox", file), "utf8");
      const code = text.match(/is (\d{6})\./)?.[1];
      assert.ok(code && text.includes(`To: ${email}`));
      assert.equal((await verify(api, ws, email, code)).statusCode, 200);
    });
  });

  describe(`client devices and the access check (${dialect})`, () => {
    test("the check answers the grant, sets last_active_at, and locks within 900 s of a revocation", async () => {
      const { services, clock } = await testServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const email = `check-${ws.slug}@example.com`;
      const grant = (await api.request({ method: "POST", url: `/api/v1/tools/${ws.tool}/grants`, key: ws.testKey, payload: { email, days: 30 } })).json();
      const token = await signIn(api, ws, email);

      clock.advance(5_000);
      const open = await check(api, ws.tool, token);
      assert.equal(open.statusCode, 200, open.body);
      const { token: signed, state, ...answer } = open.json();
      assert.deepEqual(answer, { entitled: true, via: "grant", plan: null, trial: null, subscription: null, features: [], recheck_after: 900 });
      assert.match(state, /^[0-9a-f]{16}$/, "what the answer says, fingerprinted for GET …/access/changes (access-watch.test.ts)");
      assert.match(signed, /^[\w-]+\.[\w-]+\.[\w-]+$/, "the answer signed (src/tokens/access-token.test.ts verifies it)");
      assert.equal(open.headers["cache-control"], "private, max-age=900");

      const listed = await api.request({ url: `/api/v1/tools/${ws.tool}/customers`, key: ws.testKey });
      const item = listed.json().data.find((c: { email: string }) => c.email === email);
      assert.equal(item.devices, 1);
      assert.equal(item.last_active_at, toIso(clock.now()));
      assert.equal(item.account, true);

      const revoked = await api.request({ method: "DELETE", url: `/api/v1/tools/${ws.tool}/grants/${grant.id}`, key: ws.testKey });
      assert.equal(revoked.statusCode, 200);
      clock.advance(open.json().recheck_after * 1000);
      const locked = await check(api, ws.tool, token);
      assert.equal(locked.statusCode, 200);
      assert.equal(locked.json().entitled, false);
      assert.equal(locked.json().via, null);

      // The revocation did not sign the device out.
      const after = (await api.request({ url: `/api/v1/tools/${ws.tool}/customers`, key: ws.testKey })).json();
      const member = after.data.find((c: { email: string }) => c.email === email);
      assert.equal(member.devices, 1);
      assert.equal(member.last_active_at, toIso(clock.now()));
      assert.equal(member.entitled, false);
    });

    test("checks at the same moment each record their own device's last activity (written together)", async () => {
      const { services, clock } = await testServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const tokens: string[] = [];
      for (let i = 0; i < 4; i++) tokens.push(await signIn(api, ws, `many-${i}-${ws.slug}@example.com`));
      const lastActive = async () =>
        (await services.db.selectFrom("devices").select(["id", "last_active_at"]).where("workspace_id", "=", ws.workspaceId).orderBy("id").execute()).map(
          (d) => d.last_active_at,
        );
      assert.deepEqual(await lastActive(), [null, null, null, null]);

      clock.advance(7_000);
      // The last device twice in the same turn: written once, at the latest time.
      const answers = await Promise.all([...tokens, tokens[3] as string].map((token) => check(api, ws.tool, token)));
      assert.deepEqual(
        answers.map((a) => a.statusCode),
        [200, 200, 200, 200, 200],
      );
      assert.deepEqual((await lastActive()).map(Number), [clock.now(), clock.now(), clock.now(), clock.now()]);
      // Each answer is its own device's, though their reads may have shared a statement.
      const signedFor = answers.map((a) => decodeJwt(a.json().token).email);
      assert.deepEqual(
        signedFor,
        [0, 1, 2, 3, 3].map((i) => `many-${i}-${ws.slug}@example.com`),
      );

      // Within the minute a device's activity is not written again (decisions.md: once a minute per device).
      clock.advance(59_000);
      await check(api, ws.tool, tokens[1] as string);
      assert.deepEqual((await lastActive()).map(Number), [clock.now() - 59_000, clock.now() - 59_000, clock.now() - 59_000, clock.now() - 59_000]);
      clock.advance(1_000);
      await check(api, ws.tool, tokens[1] as string);
      const after = (await lastActive()).map(Number);
      assert.equal(after.filter((at) => at === clock.now()).length, 1);
      assert.equal(after.filter((at) => at === clock.now() - 60_000).length, 3);
    });

    test("a check answers while the disk is full; its device's last activity is written once there is room", async () => {
      const { services, clock } = await testServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const [first, second] = [await signIn(api, ws, `full-1-${ws.slug}@example.com`), await signIn(api, ws, `full-2-${ws.slug}@example.com`)];
      const lastActive = async () =>
        (await services.db.selectFrom("devices").select("last_active_at").where("workspace_id", "=", ws.workspaceId).orderBy("id").execute()).map(
          (d) => d.last_active_at,
        );
      const giveRoomBack = await fillDiskFor(services.db, dialect, "devices");
      clock.advance(5_000);
      const heldAt = clock.now();
      try {
        const answer = await check(api, ws.tool, first as string);
        assert.equal(answer.statusCode, 200, answer.body);
        assert.deepEqual(await lastActive(), [null, null]);
      } finally {
        await giveRoomBack();
      }
      clock.advance(1_000);
      assert.equal((await check(api, ws.tool, second as string)).statusCode, 200);
      // The second check's batch wrote the first device's held time with its own.
      assert.deepEqual(new Set((await lastActive()).map(Number)), new Set([heldAt, clock.now()]));
    });

    test("access that runs out sooner is rechecked when it ends", async () => {
      const { services, clock } = await testServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const email = `soon-${ws.slug}@example.com`;
      await api.request({ method: "POST", url: `/api/v1/tools/${ws.tool}/grants`, key: ws.testKey, payload: { email, days: 1 } });
      const token = await signIn(api, ws, email);
      clock.advance(86_400_000 - 120_000);
      assert.equal((await check(api, ws.tool, token)).json().recheck_after, 120);
    });

    test("a person lists and signs out their devices; a token reads only its own workspace, environment and tool", async () => {
      const { services, clock } = await testServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedWorkspace(services);
      const other = await seedWorkspace(services);
      const api = await testApi(services);
      const email = `devices-${ws.slug}@example.com`;
      const laptop = await signIn(api, ws, email);
      clock.advance(1000);
      const phone = await signIn(api, ws, email, { name: "Home desktop", platform: "firefox-linux" });

      const list = await api.request({ url: "/api/client/v1/devices", headers: { authorization: `Bearer ${laptop}` } });
      assert.equal(list.statusCode, 200, list.body);
      const devices = list.json().data;
      assert.deepEqual(
        devices.map((d: { name: string; current: boolean; platform: string }) => [d.name, d.platform, d.current]),
        [
          ["Work laptop", "chrome-mac", true],
          ["Home desktop", "firefox-linux", false],
        ],
      );
      let listed = (await api.request({ url: `/api/v1/tools/${ws.tool}/customers`, key: ws.testKey })).json().data;
      assert.equal(listed.find((c: { email: string }) => c.email === email).devices, 2);

      // Another workspace's address, another tool, the live environment: nothing to read.
      assert.equal((await check(api, ws.tool, laptop, { host: `${other.slug}.warden.test` })).statusCode, 401);
      assert.equal((await check(api, ws.tool, laptop, { host: `${other.slug}.warden.test.` })).statusCode, 401);
      assert.equal((await check(api, ws.tool, laptop, { host: `${other.slug}.warden.test.:443` })).statusCode, 401);
      assert.equal((await check(api, ws.tool, laptop, { host: `${ws.slug}.warden.test` })).statusCode, 200);
      assert.equal((await check(api, "linkkeeper", laptop)).statusCode, 404);
      const live = await api.request({ url: `/api/v1/tools/${ws.tool}/customers/${encodeURIComponent(email)}`, key: ws.liveKey });
      assert.equal(live.statusCode, 404, "a test sign-in is not a live account");

      for (const bad of [undefined, "Bearer nope", `Bearer ${laptop.slice(0, -1)}${laptop.endsWith("x") ? "y" : "x"}`, `Bearer ${ws.testKey}`]) {
        const answer = await api.request({ url: `/api/client/v1/tools/${ws.tool}/access`, headers: bad ? { authorization: bad } : {} });
        assert.equal(answer.statusCode, 401, String(bad));
        assert.equal(answer.json().error.type, "authentication_error");
      }

      const phoneId = devices[1].id;
      const out = await api.request({ method: "DELETE", url: `/api/client/v1/devices/${phoneId}`, headers: { authorization: `Bearer ${laptop}` } });
      assert.equal(out.statusCode, 200, out.body);
      assert.equal((await check(api, ws.tool, phone)).statusCode, 401, "a signed-out token stops at once");
      const twice = await api.request({ method: "DELETE", url: `/api/client/v1/devices/${phoneId}`, headers: { authorization: `Bearer ${laptop}` } });
      assert.equal(twice.statusCode, 404);
      listed = (await api.request({ url: `/api/v1/tools/${ws.tool}/customers`, key: ws.testKey })).json().data;
      assert.equal(listed.find((c: { email: string }) => c.email === email).devices, 1);

      // Someone else's device cannot be signed out.
      const stranger = await signIn(api, ws, `stranger-${ws.slug}@example.com`);
      const theirs = await api.request({ method: "DELETE", url: `/api/client/v1/devices/${devices[0].id}`, headers: { authorization: `Bearer ${stranger}` } });
      assert.equal(theirs.statusCode, 404);
    });
  });
}

describe("client CORS", () => {
  test("extension origins may call the client API; other web origins only when configured", async () => {
    const { services } = await testServices("sqlite", { SMTP_URL: mailbox.url, WARDEN_CLIENT_ORIGINS: "https://app.example.com" });
    const api = await testApi(services);
    const preflight = (origin: string) =>
      api.request({
        method: "OPTIONS",
        url: "/api/client/v1/tools/tabmaster/access",
        headers: { origin, "access-control-request-method": "GET", "access-control-request-headers": "authorization" },
      });
    for (const origin of [
      "chrome-extension://abcdefghijklmnopabcdefghijklmnop",
      "moz-extension://0b1c2d3e-1111-2222-3333-444455556666",
      "https://app.example.com",
    ]) {
      const answer = await preflight(origin);
      assert.equal(answer.statusCode, 204, origin);
      assert.equal(answer.headers["access-control-allow-origin"], origin);
      assert.match(String(answer.headers["access-control-allow-headers"]), /Authorization/);
    }
    for (const origin of ["https://evil.example", "http://app.example.com", "chrome-extension://x/../y"]) {
      const answer = await preflight(origin);
      assert.equal(answer.headers["access-control-allow-origin"], undefined, origin);
    }
    // Not a preflight (no Access-Control-Request-Method): never a plain-text answer.
    const bare = await api.request({
      method: "OPTIONS",
      url: "/api/client/v1/tools/tabmaster/access",
      headers: { origin: "chrome-extension://abcdefghijklmnopabcdefghijklmnop" },
    });
    assert.ok(bare.statusCode < 300 || bare.json().error.type, bare.body);
    assert.doesNotMatch(String(bare.headers["content-type"] ?? ""), /text\/plain/);
    const unauthorised = await api.request({ url: "/api/client/v1/devices", headers: { origin: "chrome-extension://abcdefghijklmnopabcdefghijklmnop" } });
    assert.equal(unauthorised.statusCode, 401);
    assert.equal(unauthorised.headers["access-control-allow-origin"], "chrome-extension://abcdefghijklmnopabcdefghijklmnop");
    assert.match(String(unauthorised.headers["access-control-expose-headers"]), /Request-Id/);
    const vendor = await api.request({ url: "/api/v1/tools/tabmaster/customers", headers: { origin: "chrome-extension://abcdefghijklmnopabcdefghijklmnop" } });
    assert.equal(vendor.headers["access-control-allow-origin"], undefined, "the vendor API is not for browsers");
  });
});
