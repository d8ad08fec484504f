// Unlock within seconds: a device waiting on GET /tools/{tool}/access/changes is answered
// at the loop's next turn after any change of its person's access (a vendor's grant, a
// purchase, a trial, a seat, a revocation, a sign-out), by whichever process wrote it,
// and otherwise after its bounded wait. The ManualClock never moves past a wait unless a
// test says so; each turn of the loop is called by the test (a second apart in
// `warden serve`). SQLite and PostgreSQL.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { sql } from "kysely";
import { toIso } from "../clock.js";
import { migrateToLatest, openStorage } from "../db/database.js";
import { randomBase62 } from "../ids.js";
import { importNdjson } from "../import/import.service.js";
import { pruneExpired } from "../retention/retention.service.js";
import type { Services } from "../services.js";
import { clientCalls, DEVICE, testMailbox, untilParked } from "../test-support/client.js";
import { DIALECTS, seedCatalogue, seedWorkspace, type TestApi, testApi, testServices, type Workspace } from "../test-support/harness.js";
import { chargeObject, connectTestStripe, deliver, disputeObject, paymentSession, stripeEvent, stripeId } from "../test-support/stripe.js";
import { seedUsageCatalogue } from "../test-support/usage.js";
import { updateTool } from "../workspaces/workspace.service.js";
import { AccessWatch, DEFAULT_ACCESS_WATCH_OPTIONS } from "./access-watch.js";

const mailbox = testMailbox();
const { signIn, check } = clientCalls(mailbox);
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
/** A wait of a device and person of no particular workspace, for the watch driven by hand. */
const waitOf = (deviceId: string, personId: string) => ({ deviceId, personId, workspaceId: "ws_watch", env: "test" as const });

/** A wait started, with whether it was answered yet. */
interface Wait {
  answered: () => boolean;
  response: Promise<LightMyRequestResponse>;
}

function startWait(api: TestApi, token: string, state: string, tool = "tabmaster", query = ""): Wait {
  let done = false;
  const response = api.request({ url: `/api/client/v1/tools/${tool}/access/changes?state=${state}${query}`, headers: bearer(token) }).finally(() => {
    done = true;
  });
  return { answered: () => done, response };
}

/** Lets the request run until its wait is parked (its own check done): no clock moves. */
const parked = untilParked;

/** Signs the address in and answers its token and the state its first check holds. */
async function signedIn(api: TestApi, ws: Workspace, email: string, device = DEVICE) {
  const token = await signIn(api, ws, email, device);
  const first = await check(api, ws.tool, token);
  assert.equal(first.statusCode, 200, first.body);
  return { token, state: first.json().state as string, entitled: first.json().entitled as boolean };
}

/** The loop's next turn wakes the wait, with the clock not moved (its own timer would need the clock to move): no wall-clock budget, which a busy machine breaks. */
async function answeredAtNextTurn(services: Services, wait: Wait) {
  assert.equal(wait.answered(), false, "nothing answers before the loop reads the change");
  const before = services.clock.now();
  await services.accessWatch.poll();
  const response = await wait.response;
  assert.equal(services.clock.now(), before, "answered without the clock moving: at the turn after the change");
  return response;
}

for (const dialect of DIALECTS) {
  describe(`waiting for an access change (${dialect})`, () => {
    test("a grant by the vendor API wakes the waiting device with its new answer; its revocation too", async () => {
      const { services } = await testServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const email = `ada-${ws.slug}@example.com`;
      const held = await signedIn(api, ws, email);
      assert.equal(held.entitled, false);

      const wait = startWait(api, held.token, held.state);
      await parked(services);
      const granted = await api.request({ method: "POST", url: `/api/v1/tools/${ws.tool}/grants`, key: ws.testKey, payload: { email, days: 30 } });
      assert.equal(granted.statusCode, 201, granted.body);
      const woken = await answeredAtNextTurn(services, wait);
      assert.equal(woken.statusCode, 200, woken.body);
      assert.equal(woken.headers["cache-control"], "no-store");
      const fresh = woken.json();
      assert.equal(fresh.entitled, true);
      assert.equal(fresh.via, "grant");
      assert.notEqual(fresh.state, held.state);
      assert.equal(services.accessWatch.size, 0, "an answered wait frees its place");

      const again = startWait(api, held.token, fresh.state);
      await parked(services);
      const revoked = await api.request({ method: "DELETE", url: `/api/v1/tools/${ws.tool}/grants/${granted.json().id}`, key: ws.testKey });
      assert.equal(revoked.statusCode, 200, revoked.body);
      const locked = await answeredAtNextTurn(services, again);
      assert.equal(locked.statusCode, 200);
      assert.equal(locked.json().entitled, false);
      assert.equal(locked.json().state, held.state, "the same access says the same state");
    });

    test("a purchase (Stripe's signed event) wakes the buyer's waiting device", async () => {
      const { services, clock } = await testServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      const secret = await connectTestStripe(services, ws);
      const email = `buyer-${ws.slug}@example.com`;
      const held = await signedIn(api, ws, email);

      const wait = startWait(api, held.token, held.state);
      await parked(services);
      const now = clock.now();
      const session = paymentSession({ email, metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" }, now });
      await deliver(api, ws, secret, stripeEvent("checkout.session.completed", session, { now }), now);
      const woken = await answeredAtNextTurn(services, wait);
      assert.equal(woken.statusCode, 200, woken.body);
      assert.deepEqual([woken.json().entitled, woken.json().via, woken.json().plan?.id], [true, "licence", "lifetime"]);
    });

    test("a credit pack bought (no access) wakes the buyer's waiting device with a new state; credits added by hand too; a spend changes no state", async () => {
      const { services, clock } = await testServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedUsageCatalogue(services);
      const api = await testApi(services);
      const secret = await connectTestStripe(services, ws);
      const email = `packs-${ws.slug}@example.com`;
      const held = await signedIn(api, ws, email);

      const wait = startWait(api, held.token, held.state);
      await parked(services);
      const now = clock.now();
      const session = paymentSession({ email, metadata: { warden_tool: "tabmaster", warden_plan: "pack-1000" }, amount: 900, now });
      assert.equal(await deliver(api, ws, secret, stripeEvent("checkout.session.completed", session, { now }), now), "applied");
      const woken = await answeredAtNextTurn(services, wait);
      assert.equal(woken.statusCode, 200, woken.body);
      assert.equal(woken.json().entitled, false, "a pack sold alone gives no access");
      assert.notEqual(woken.json().state, held.state, "but the credits it gave are news to the device");
      const bought = woken.json().state as string;

      const spent = await api.request({
        method: "POST",
        url: "/api/client/v1/tools/tabmaster/usage",
        headers: bearer(held.token),
        payload: { meter: "summaries", quantity: 15 },
      });
      assert.equal(spent.statusCode, 200, spent.body);
      assert.equal(spent.json().credits, 995, "the free 10, then 5 of the pack's credits");
      assert.equal((await check(api, ws.tool, held.token)).json().state, bought, "a spend is the device's own doing: no new state");

      const again = startWait(api, held.token, bought);
      await parked(services);
      const added = await api.request({
        method: "POST",
        url: `/api/v1/tools/tabmaster/customers/${email}/credits`,
        key: ws.testKey,
        payload: { meter: "summaries", amount: 50, note: "Sorry for the outage" },
      });
      assert.equal(added.statusCode, 201, added.body);
      const handed = await answeredAtNextTurn(services, again);
      assert.equal(handed.statusCode, 200, handed.body);
      assert.notEqual(handed.json().state, bought);
    });

    test("a pack's dispute, a won close and a refund each wake the buyer's waiting device: held, spendable again, taken back", async () => {
      const { services, clock } = await testServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedUsageCatalogue(services);
      const api = await testApi(services);
      const secret = await connectTestStripe(services, ws);
      const send = (type: string, object: Record<string, unknown>) => deliver(api, ws, secret, stripeEvent(type, object, { now: clock.now() }), clock.now());
      const email = `disputed-${ws.slug}@example.com`;
      const held = await signedIn(api, ws, email);
      const paymentIntent = stripeId("pi");
      const now = clock.now();
      const session = paymentSession({ email, metadata: { warden_tool: "tabmaster", warden_plan: "pack-1000" }, amount: 900, paymentIntent, now });
      assert.equal(await send("checkout.session.completed", session), "applied");
      const states = [(await check(api, ws.tool, held.token)).json().state as string];

      const disputeId = stripeId("du");
      const dispute = (status: string) => disputeObject({ id: disputeId, paymentIntent, amount: 900, status });
      /** Sends the report while the device waits on the state it holds; answers the state it is woken with. */
      const wokenBy = async (type: string, object: Record<string, unknown>) => {
        const wait = startWait(api, held.token, states.at(-1) as string);
        await parked(services);
        assert.equal(await send(type, object), "applied", type);
        const woken = await answeredAtNextTurn(services, wait);
        assert.equal(woken.statusCode, 200, `${type}: ${woken.body}`);
        states.push(woken.json().state);
        return woken.json().state as string;
      };
      const [bought] = states;
      const disputed = await wokenBy("charge.dispute.created", dispute("needs_response"));
      assert.notEqual(disputed, bought, "the pack's credits are held");
      assert.equal(await wokenBy("charge.dispute.closed", dispute("won")), bought, "won: the credits are spendable again, as before the dispute");
      const refunded = await wokenBy("charge.refunded", chargeObject({ paymentIntent, amount: 900, amountRefunded: 900 }));
      // The state versions what the device can use: a refunded pack's credits are as unspendable as a disputed one's.
      assert.equal(refunded, disputed, "a refund takes the credits back");
    });

    test("a trial started elsewhere (another device, a hosted page) wakes the person's waiting device", async () => {
      const { services } = await testServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedWorkspace(services);
      await updateTool(services.db, services.clock, { workspace: ws.slug, id: ws.tool, trialDays: "7" });
      const api = await testApi(services);
      const email = `trial-${ws.slug}@example.com`;
      const extension = await signedIn(api, ws, email);
      const page = await signIn(api, ws, email, { name: "Phone", platform: "chrome-android" });

      const wait = startWait(api, extension.token, extension.state);
      await parked(services);
      const started = await api.request({ method: "POST", url: `/api/client/v1/tools/${ws.tool}/trial`, headers: bearer(page) });
      assert.equal(started.statusCode, 201, started.body);
      const woken = await answeredAtNextTurn(services, wait);
      assert.deepEqual([woken.json().entitled, woken.json().via], [true, "trial"]);
    });

    test("a seat handed out wakes the member's waiting device; another person's change does not", async () => {
      const { services, clock } = await testServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedCatalogue(services);
      const api = await testApi(services);
      const buyer = `team-${ws.slug}@example.com`;
      const member = `member-${ws.slug}@example.com`;
      const team = `lic_${randomBase62(24)}`;
      await importNdjson(services.db, clock, {
        workspace: ws.slug,
        env: "test",
        text: JSON.stringify({ type: "licence", id: team, email: buyer, tool: "tabmaster", seats: 3, purchased_at: toIso(clock.now() - 60_000) }),
      });
      const held = await signedIn(api, ws, member);
      const buyerToken = await signIn(api, ws, buyer);

      const wait = startWait(api, held.token, held.state);
      await parked(services);
      // The buyer's own change (a device of theirs signing out) names only the buyer.
      const other = await signIn(api, ws, buyer, { name: "Old laptop", platform: "chrome-linux" });
      const devices = (await api.request({ url: "/api/client/v1/devices", headers: bearer(other) })).json().data as { id: string; current: boolean }[];
      const old = devices.find((d) => d.current)?.id;
      assert.equal((await api.request({ method: "DELETE", url: `/api/client/v1/devices/${old}`, headers: bearer(buyerToken) })).statusCode, 200);
      await services.accessWatch.poll();
      assert.equal(wait.answered(), false, "another person's change does not answer the wait");
      assert.equal(services.accessWatch.parked, 1);

      const seat = await api.request({
        method: "POST",
        url: `/api/client/v1/purchases/${team}/seats`,
        headers: bearer(buyerToken),
        payload: { email: member },
      });
      assert.equal(seat.statusCode, 200, seat.body);
      const woken = await answeredAtNextTurn(services, wait);
      assert.deepEqual([woken.json().entitled, woken.json().via], [true, "licence"]);
    });

    test("no change: 204 once the wait is over; the same device may wait once at a time; the waiters are in /metrics", async () => {
      const { services, clock } = await testServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const held = await signedIn(api, ws, `idle-${ws.slug}@example.com`);

      const wait = startWait(api, held.token, held.state, "tabmaster", "&wait=10");
      await parked(services);
      const second = await api.request({ url: `/api/client/v1/tools/tabmaster/access/changes?state=${held.state}`, headers: bearer(held.token) });
      assert.equal(second.statusCode, 429, second.body);
      assert.equal(second.json().error.type, "rate_limit_error");
      assert.equal(second.headers["retry-after"], "10", "until the first wait is over");
      const figures = await services.metrics.render();
      assert.match(figures, /^warden_access_waiters 1$/m);
      assert.match(figures, /warden_limit_refusals_total\{limit="access-waits-per-device"\} 1/);

      clock.advance(9_000);
      await services.accessWatch.poll();
      assert.equal(wait.answered(), false, "still within its 10 s");
      clock.advance(1_000);
      await services.accessWatch.poll();
      const over = await wait.response;
      assert.equal(over.statusCode, 204);
      assert.equal(over.body, "");
      assert.match(await services.metrics.render(), /warden_access_waits_total\{result="unchanged"\} 1/);

      const stale = await api.request({ url: "/api/client/v1/tools/tabmaster/access/changes?state=0000000000000000", headers: bearer(held.token) });
      assert.equal(stale.statusCode, 200, "a device holding another state is answered at once");
      assert.equal(stale.json().state, held.state);
    });

    test("a device signed out while it waits gets 401 at once; a stranger's token and another tool are refused", async () => {
      const { services } = await testServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const email = `gone-${ws.slug}@example.com`;
      const held = await signedIn(api, ws, email);
      const phone = await signIn(api, ws, email, { name: "Phone", platform: "chrome-android" });

      const wait = startWait(api, held.token, held.state);
      await parked(services);
      const devices = (await api.request({ url: "/api/client/v1/devices", headers: bearer(phone) })).json().data as { id: string; current: boolean }[];
      const laptop = devices.find((d) => !d.current)?.id;
      assert.equal((await api.request({ method: "DELETE", url: `/api/client/v1/devices/${laptop}`, headers: bearer(phone) })).statusCode, 200);
      const out = await answeredAtNextTurn(services, wait);
      assert.equal(out.statusCode, 401, out.body);

      const stranger = await api.request({ url: `/api/client/v1/tools/${ws.tool}/access/changes?state=x`, headers: bearer(`wdt_${"a".repeat(43)}`) });
      assert.equal(stranger.statusCode, 401);
      const otherTool = await api.request({ url: "/api/client/v1/tools/notepad/access/changes?state=x", headers: bearer(phone) });
      assert.equal(otherTool.statusCode, 404);
      const tooLong = await api.request({ url: `/api/client/v1/tools/${ws.tool}/access/changes?state=x&wait=26`, headers: bearer(phone) });
      assert.equal(tooLong.statusCode, 400);
      assert.equal(services.accessWatch.size, 0);
    });

    test("closing answers every wait at once with 204, and takes no new one", async () => {
      const { services } = await testServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const held = await signedIn(api, ws, `closing-${ws.slug}@example.com`);
      const wait = startWait(api, held.token, held.state);
      await parked(services);
      await services.accessWatch.stop();
      assert.equal((await wait.response).statusCode, 204);
      const late = await api.request({ url: `/api/client/v1/tools/tabmaster/access/changes?state=${held.state}`, headers: bearer(held.token) });
      assert.equal(late.statusCode, 204);
    });

    test("the feed: a position committed after a later one is still read; the process's maximum refuses with 429", async () => {
      const { services, clock } = await testServices(dialect);
      const watch = new AccessWatch(services.db, clock, { ...DEFAULT_ACCESS_WATCH_OPTIONS, maxWaiters: 2 });
      const deadline = clock.now() + 25_000;
      const first = await watch.open(waitOf("dev_first", "psn_first"), deadline);
      const second = await watch.open(waitOf("dev_second", "psn_second"), deadline);
      await assert.rejects(watch.open(waitOf("dev_third", "psn_third"), deadline), (error: Error & { code?: string }) => error.code === "rate_limited");

      // A transaction holding position n+1 commits after the one holding n+2 was read.
      const last = Number((await sql<{ last: number | null }>`select max(seq) as last from access_changes`.execute(services.db)).rows[0]?.last ?? 0);
      const insert = async (seq: number, personId: string) => {
        await services.db
          .insertInto("access_changes")
          .values({ seq, workspace_id: "wsp_x", env: "test", person_id: personId, changed_at: clock.now() })
          .execute();
        if (dialect === "postgres")
          await sql`select setval(pg_get_serial_sequence('access_changes', 'seq'), (select max(seq) from access_changes))`.execute(services.db);
      };
      await insert(last + 2, "psn_second");
      const secondWoken = second.next();
      const firstWoken = first.next();
      await watch.poll();
      assert.equal(await secondWoken, "changed");
      await insert(last + 1, "psn_first");
      await watch.poll();
      assert.equal(await firstWoken, "changed", "the skipped position was looked for again");
      await watch.stop();
    });

    test("the feed is pruned an hour after its rows were written, never sooner", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const grant = (email: string) => api.request({ method: "POST", url: `/api/v1/tools/${ws.tool}/grants`, key: ws.testKey, payload: { email, days: 1 } });
      const rows = () => services.db.selectFrom("access_changes").select("changed_at").where("workspace_id", "=", ws.workspaceId).execute();
      assert.equal((await grant(`old-${ws.slug}@example.com`)).statusCode, 201);
      clock.advance(30 * 60_000);
      assert.equal((await grant(`new-${ws.slug}@example.com`)).statusCode, 201);
      assert.equal((await rows()).length, 2);
      clock.advance(30 * 60_000 + 1);
      await pruneExpired(services, { batchSize: 500, pauseMs: 0, pauseFactor: 0 });
      assert.deepEqual(
        (await rows()).map((r) => Number(r.changed_at)),
        [clock.now() - 30 * 60_000 - 1],
      );
    });

    test("a database that stops answering ends the waits with no change, and the loop goes on", async () => {
      const { clock } = await testServices(dialect);
      if (dialect === "postgres") {
        // Unreachable from the start: no wait is taken, and a turn of the loop does not throw.
        const nowhere = openStorage({ databaseUrl: "postgres://postgres@127.0.0.1:1/none", poolSize: 1 });
        const watch = new AccessWatch(nowhere.db, clock);
        await assert.rejects(watch.open(waitOf("dev_lost", "psn_lost"), clock.now() + 25_000));
        await watch.poll();
        await nowhere.close();
        return;
      }
      const storage = openStorage({ databaseUrl: null, sqliteFile: ":memory:" });
      await migrateToLatest(storage.db, storage.dialect);
      const watch = new AccessWatch(storage.db, clock);
      const waiter = await watch.open(waitOf("dev_lost", "psn_lost"), clock.now() + 25_000);
      const ended = waiter.next();
      await storage.close();
      await watch.poll();
      assert.equal(await ended, "ended");
      watch.close(waiter);
      await watch.poll();
      assert.equal(watch.size, 0);
    });
  });
}
