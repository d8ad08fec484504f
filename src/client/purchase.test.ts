// What a buyer sees and does from the client: their purchases with licence keys, devices
// activated with a key (no sign-in, at most N per licence), and a team purchase's seats,
// which only its buyer hands out. SQLite and PostgreSQL.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, test } from "node:test";
import { refundLicence } from "../billing/licence.service.js";
import { toIso } from "../clock.js";
import { importNdjson } from "../import/import.service.js";
import { clientCalls, testMailbox } from "../test-support/client.js";
import { DIALECTS, seedCatalogue, type TestApi, testApi, testServices, type Workspace } from "../test-support/harness.js";

const mailbox = testMailbox();
const { signIn, check } = clientCalls(mailbox);

// Licence ids are lic_ + 24 base62 characters, unique across the service.
const lic = (name: string) => `lic_${name.padEnd(24, "0")}`;
const SINGLE = lic("KeySingle");
const BUNDLE = lic("KeyBundle");
const TEAM = lic("KeyTeam");
const SEATS = lic("SeatTeam");

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const purchases = async (api: TestApi, token: string) => {
  const answer = await api.request({ url: "/api/client/v1/purchases", headers: bearer(token) });
  assert.equal(answer.statusCode, 200, answer.body);
  return answer.json().data as Record<string, unknown>[];
};
const activate = (api: TestApi, ws: Workspace, key: string, tool = ws.tool, name = "Office PC") =>
  api.request({
    method: "POST",
    url: `/api/client/v1/tools/${tool}/activate`,
    payload: { workspace: ws.slug, key, device: { name, platform: "edge-windows" } },
  });
const listed = async (api: TestApi, ws: Workspace, email: string) =>
  (await api.request({ url: `/api/v1/tools/${ws.tool}/customers`, key: ws.testKey })).json().data.find((c: { email: string }) => c.email === email);

async function importLines(services: Awaited<ReturnType<typeof testServices>>["services"], ws: Workspace, lines: object[]) {
  await importNdjson(services.db, services.clock, { workspace: ws.slug, env: "test", text: lines.map((l) => JSON.stringify(l)).join("\n") });
}

for (const dialect of DIALECTS) {
  describe(`client purchases and licence keys (${dialect})`, () => {
    test("a buyer sees each licence's key; a device activated with it holds the tool without a sign-in, at most N at once", async () => {
      const { services, clock } = await testServices(dialect, { SMTP_URL: mailbox.url, WARDEN_LIMIT_DEVICES_PER_LICENCE: "2" });
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      const buyer = `buyer-${ws.slug}@example.com`;
      const boughtAt = clock.now() - 60_000;
      await importLines(services, ws, [
        {
          type: "licence",
          id: SINGLE,
          email: buyer,
          tool: "tabmaster",
          plan: "lifetime",
          purchased_at: toIso(boughtAt),
          amount_cents: 4900,
          currency: "eur",
          payment_intent: `pi_${ws.slug}`,
        },
        {
          type: "licence",
          id: BUNDLE,
          email: buyer,
          bundle: "suite",
          plan: "suite-lifetime",
          purchased_at: toIso(boughtAt - 1000),
          amount_cents: 9900,
          currency: "eur",
          payment_intent: `pi_bundle_${ws.slug}`,
        },
        { type: "licence", id: TEAM, email: buyer, tool: "tabmaster", seats: 3, purchased_at: toIso(boughtAt - 2000) },
      ]);
      const token = await signIn(api, ws, buyer);

      const mine = await purchases(api, token);
      assert.deepEqual(
        mine.map((p) => [p.id, p.kind, p.product, p.product_kind, p.plan, p.status, p.seats, p.seats_in_use, p.team]),
        [
          [SINGLE, "licence", "tabmaster", "tool", "lifetime", "active", null, null, null],
          [BUNDLE, "licence", "suite", "bundle", "suite-lifetime", "active", null, null, null],
          [TEAM, "licence", "tabmaster", "tool", null, "active", 3, 0, null],
        ],
      );
      const [single, bundle, team] = mine;
      assert.match(String(single?.key), /^wlk_[0-9A-Za-z]{32}$/);
      assert.match(String(bundle?.key), /^wlk_[0-9A-Za-z]{32}$/);
      assert.notEqual(single?.key, bundle?.key);
      assert.equal(team?.key, null, "a team purchase activates nothing itself");
      assert.equal(single?.purchased_at, toIso(boughtAt));
      const key = String(single?.key);
      // The same key every time; stored as its hash and sealed, never in clear.
      assert.equal((await purchases(api, token))[0]?.key, key);
      const row = await services.db.selectFrom("licences").select(["key_hash", "key_sealed"]).where("id", "=", SINGLE).executeTakeFirstOrThrow();
      assert.equal(row.key_hash, createHash("sha256").update(key).digest("hex"));
      assert.ok(row.key_sealed && !row.key_sealed.includes(key.slice(4)));

      // Activation: a device session for the licence's holder, counted among their devices.
      const activated = await activate(api, ws, key);
      assert.equal(activated.statusCode, 200, activated.body);
      const session = activated.json();
      assert.match(session.token, /^wdt_/);
      assert.equal(session.email, buyer);
      assert.equal(session.device.name, "Office PC");
      const access = (await check(api, ws.tool, session.token)).json();
      assert.equal(access.entitled, true);
      assert.equal(access.via, "licence");
      assert.equal((await listed(api, ws, buyer)).devices, 2);
      // A key-activated device sees its licence only, and is not the buyer's sign-in.
      assert.deepEqual(
        (await purchases(api, session.token)).map((p) => p.id),
        [SINGLE],
      );
      const seatsByKey = await api.request({ url: `/api/client/v1/purchases/${TEAM}/seats`, headers: bearer(session.token) });
      assert.equal(seatsByKey.statusCode, 401);
      // It sees, and signs out, only the devices of its licence: not the buyer's own sign-in.
      const byKey = await api.request({ url: "/api/client/v1/devices", headers: bearer(session.token) });
      assert.deepEqual(
        byKey.json().data.map((d: { name: string; current: boolean }) => [d.name, d.current]),
        [["Office PC", true]],
      );
      const buyersOwn = (await api.request({ url: "/api/client/v1/devices", headers: bearer(token) })).json().data;
      assert.equal(buyersOwn.length, 2);
      const signedInDevice = buyersOwn.find((d: { name: string }) => d.name !== "Office PC");
      assert.equal(
        (await api.request({ method: "DELETE", url: `/api/client/v1/devices/${signedInDevice.id}`, headers: bearer(session.token) })).statusCode,
        404,
      );

      // The bundle's key activates each tool of the bundle, and no other.
      assert.equal((await activate(api, ws, String(bundle?.key), "linkkeeper")).statusCode, 200);
      const notInBundle = await activate(api, ws, String(bundle?.key), "notepad");
      assert.equal(notInBundle.statusCode, 400);
      assert.equal(notInBundle.json().error.param, "key");

      // Two devices per licence here: the third is refused until one signs out.
      const second = await activate(api, ws, key, ws.tool, "Laptop");
      assert.equal(second.statusCode, 200, second.body);
      const third = await activate(api, ws, key, ws.tool, "Tablet");
      assert.equal(third.statusCode, 403, third.body);
      assert.equal(third.json().error.type, "plan_limit_error");
      const out = await api.request({ method: "DELETE", url: `/api/client/v1/devices/${second.json().device.id}`, headers: bearer(session.token) });
      assert.equal(out.statusCode, 200, out.body);
      assert.equal((await activate(api, ws, key, ws.tool, "Tablet")).statusCode, 200);

      // Refunds revoke both licences that cover the tool: the devices stay, but lock; the key activates no more.
      await refundLicence(services, { id: SINGLE });
      assert.equal((await check(api, ws.tool, session.token)).json().via, "licence", "the bundle's licence still holds it");
      await refundLicence(services, { id: BUNDLE });
      const locked = (await check(api, ws.tool, session.token)).json();
      assert.equal(locked.entitled, false);
      const refused = await activate(api, ws, key, ws.tool, "Phone");
      assert.equal(refused.statusCode, 400);
      assert.match(refused.json().error.message, /revoked/);
      assert.equal((await listed(api, ws, buyer)).devices, 3);
    });

    test("wrong, malformed and foreign keys are refused and count as wrong keys of the source address", async () => {
      const { services } = await testServices(dialect, { SMTP_URL: mailbox.url, WARDEN_LIMIT_WRONG_KEYS_PER_MIN: "3" });
      const ws = await seedCatalogue(services);
      const other = await seedCatalogue(services);
      const api = await testApi(services);
      const buyer = `foreign-${other.slug}@example.com`;
      await importNdjson(services.db, services.clock, {
        workspace: other.slug,
        env: "test",
        text: JSON.stringify({ type: "licence", email: buyer, tool: "tabmaster", purchased_at: toIso(services.clock.now() - 1000) }),
      });
      const theirs = String((await purchases(api, await signIn(api, other, buyer)))[0]?.key);
      const source = { remoteAddress: `10.9.${Math.floor(Math.random() * 250)}.${dialect === "sqlite" ? 1 : 2}` };
      const attempt = (key: string) =>
        api.request({
          method: "POST",
          url: `/api/client/v1/tools/${ws.tool}/activate`,
          payload: { workspace: ws.slug, key, device: { name: "PC", platform: "x" } },
          ...source,
        });
      for (const key of [theirs, "wlk_0000000000000000000000000000000A", "not-a-key"]) {
        const answer = await attempt(key);
        assert.equal(answer.statusCode, 400, key);
        assert.equal(answer.json().error.param, "key");
      }
      const limited = await attempt(theirs);
      assert.equal(limited.statusCode, 429);
      assert.equal(limited.json().error.type, "rate_limit_error");
    });

    test("the buyer of a team purchase hands seats out and takes them back; nobody else can; never more than bought", async () => {
      const { services, clock } = await testServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      const buyer = `it-${ws.slug}@example.org`;
      const now = services.clock.now();
      await importLines(services, ws, [
        { type: "licence", id: SEATS, email: buyer, tool: "tabmaster", seats: 2, purchased_at: toIso(now - 1000) },
        {
          type: "subscription",
          id: `sub_team_${ws.slug}`,
          email: buyer,
          tool: "tabmaster",
          plan: "monthly",
          status: "active",
          seats: 1,
          current_period_start: toIso(now - 500),
          current_period_end: toIso(now + 30 * 86_400_000),
        },
      ]);
      const token = await signIn(api, ws, buyer);
      const team = SEATS;
      const seats = (id: string, who = token) => api.request({ url: `/api/client/v1/purchases/${id}/seats`, headers: bearer(who) });
      const assign = (id: string, email: string, who = token) =>
        api.request({ method: "POST", url: `/api/client/v1/purchases/${id}/seats`, headers: bearer(who), payload: { email } });

      const alan = `alan-${ws.slug}@example.org`;
      const barbara = `barbara-${ws.slug}@example.org`;
      const first = await assign(team, alan);
      assert.equal(first.statusCode, 200, first.body);
      assert.deepEqual(
        { ...(first.json() as object), seat: undefined },
        { seat: undefined, purchase: team, email: alan, status: "active", seats: 2, seats_in_use: 1 },
      );
      assert.equal((await assign(team, alan.toUpperCase())).json().seat, first.json().seat, "the same address keeps its seat");
      clock.advance(1000);
      assert.equal((await assign(team, barbara)).statusCode, 200);
      const full = await assign(team, `carol-${ws.slug}@example.org`);
      assert.equal(full.statusCode, 400);
      assert.match(full.json().error.message, /all in use/);

      const list = (await seats(team)).json();
      assert.equal(list.seats, 2);
      assert.equal(list.seats_in_use, 2);
      assert.deepEqual(
        list.data.map((s: { email: string }) => s.email),
        [alan, barbara],
      );
      const mine = await purchases(api, token);
      assert.deepEqual(
        mine.filter((p) => p.seats !== null).map((p) => [p.id, p.kind, p.seats, p.seats_in_use]),
        [
          [`sub_team_${ws.slug}`, "subscription", 1, 0],
          [team, "licence", 2, 2],
        ],
      );

      // The seat holder holds the tool; their purchases show the seat and its team, with a key of its own.
      const alanToken = await signIn(api, ws, alan);
      assert.equal((await check(api, ws.tool, alanToken)).json().via, "licence");
      const seatView = (await purchases(api, alanToken))[0];
      assert.equal(seatView?.team, team);
      assert.match(String(seatView?.key), /^wlk_/);
      // Nobody but the buyer sees or changes the seats, whatever the id.
      assert.equal((await seats(team, alanToken)).statusCode, 404);
      assert.equal((await assign(team, `mallory-${ws.slug}@example.org`, alanToken)).statusCode, 404);
      assert.equal((await seats("lic_000000000000000000000000")).statusCode, 404);
      assert.equal((await seats(SINGLE)).statusCode, 404);

      // Taken back: the holder locks at the next check and the seat is free again.
      const back = await api.request({ method: "DELETE", url: `/api/client/v1/purchases/${team}/seats/${first.json().seat}`, headers: bearer(token) });
      assert.equal(back.statusCode, 200, back.body);
      assert.equal(back.json().status, "revoked");
      assert.equal(back.json().seats_in_use, 1);
      assert.equal((await check(api, ws.tool, alanToken)).json().entitled, false);
      const again = await api.request({ method: "DELETE", url: `/api/client/v1/purchases/${team}/seats/${first.json().seat}`, headers: bearer(token) });
      assert.equal(again.statusCode, 404);
      assert.equal((await assign(team, `carol-${ws.slug}@example.org`)).statusCode, 200);

      // A team subscription's seats work the same way.
      const subSeat = await assign(`sub_team_${ws.slug}`, alan);
      assert.equal(subSeat.statusCode, 200, subSeat.body);
      assert.equal((await check(api, ws.tool, alanToken)).json().entitled, true);
      assert.equal((await assign(`sub_team_${ws.slug}`, barbara)).statusCode, 400);
      // A purchase that is not a team's has no seats.
      const single = await seats(SINGLE);
      assert.equal(single.statusCode, 404);
    });
  });
}
