// Reading and spending a person's meters through the vendor API and the client API: the
// draw order (allowances soonest reset first, then credits soonest expiring first), the
// period's reset, all or nothing, idempotent retries, and who may ask. Both engines.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { DAY_MS } from "../clock.js";
import { newId } from "../ids.js";
import type { Services } from "../services.js";
import { clientCalls, testMailbox } from "../test-support/client.js";
import { DIALECTS, seedWorkspace, type TestApi, testApi, testServices, unique, type Workspace } from "../test-support/harness.js";
import {
  connectTestStripe,
  deliver,
  invoiceObject,
  paymentSession,
  stripeEvent,
  stripeId,
  subscriptionObject,
  subscriptionSession,
} from "../test-support/stripe.js";
import { seedUsageCatalogue } from "../test-support/usage.js";

const mailbox = testMailbox();
const { signIn } = clientCalls(mailbox);

const NOV_20 = Date.parse("2026-11-20T10:00:00.000Z");
const NOV_1 = "2026-11-01T00:00:00.000Z";
const DEC_1 = "2026-12-01T00:00:00.000Z";
const JAN_1 = "2027-01-01T00:00:00.000Z";

const path = (email: string, tool = "tabmaster") => `/api/v1/tools/${tool}/customers/${encodeURIComponent(email)}/usage`;
const readUsage = (api: TestApi, ws: Workspace, email: string) => api.request({ url: path(email), key: ws.testKey });
const spend = (api: TestApi, ws: Workspace, email: string, payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
  api.request({ method: "POST", url: path(email), key: ws.testKey, payload, headers });

/** Credits added by hand (no pack), expiring at `expiresAt` or never. */
async function addCredits(
  services: Services,
  ws: Workspace,
  email: string,
  amount: number,
  expiresAt: number | null,
  createdAt: number,
  licenceId: string | null = null,
) {
  const person = await services.db
    .selectFrom("people")
    .select("id")
    .where("workspace_id", "=", ws.workspaceId)
    .where("email", "=", email)
    .executeTakeFirstOrThrow();
  const id = unique("crd");
  await services.db
    .insertInto("meter_credits")
    .values({
      id,
      workspace_id: ws.workspaceId,
      env: "test",
      person_id: person.id,
      tool_id: "tabmaster",
      meter_id: "summaries",
      licence_id: licenceId,
      amount,
      remaining: amount,
      expires_at: expiresAt,
      note: null,
      created_at: createdAt,
    })
    .execute();
  return id;
}

/** What a workspace's spends wrote. */
async function writes(services: Services, ws: Workspace) {
  const { db } = services;
  const count = async (table: "meter_usage" | "meter_locks" | "people" | "idempotency_keys") =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as("n"))
          .where("workspace_id", "=", ws.workspaceId)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const credits = await db.selectFrom("meter_credits").select(["id", "remaining"]).where("workspace_id", "=", ws.workspaceId).orderBy("id").execute();
  const used = await db.selectFrom("meter_usage").select(["bucket", "used"]).where("workspace_id", "=", ws.workspaceId).orderBy("bucket").execute();
  return {
    usage: await count("meter_usage"),
    locks: await count("meter_locks"),
    people: await count("people"),
    keys: await count("idempotency_keys"),
    credits: credits.map((c): [string, number] => [c.id, Number(c.remaining)]),
    used: used.map((r) => [r.bucket, Number(r.used)]),
  };
}

for (const dialect of DIALECTS) {
  describe(`usage: reading and spending meters (${dialect})`, () => {
    test("an unknown address reads the free allowance; its first spend creates the person, and the count follows", async () => {
      const { services, clock } = await testServices(dialect);
      clock.set(NOV_20);
      const ws = await seedUsageCatalogue(services);
      const api = await testApi(services);
      const email = "new.person@example.com";

      const before = await readUsage(api, ws, email);
      assert.equal(before.statusCode, 200, before.body);
      assert.deepEqual(before.json(), {
        data: [
          {
            meter: "summaries",
            unit: "summaries",
            used: 0,
            allowance: 10,
            allowance_remaining: 10,
            credits: 0,
            remaining: 10,
            resets_at: DEC_1,
            period_start: NOV_1,
            buckets: [{ via: "free", source: null, allowance: 10, used: 0, period_start: NOV_1, resets_at: DEC_1 }],
          },
        ],
      });
      assert.equal((await writes(services, ws)).people, 0, "a read writes nothing");

      const spent = await spend(api, ws, email, { meter: "summaries", quantity: 3 });
      assert.equal(spent.statusCode, 200, spent.body);
      assert.equal(spent.json().allowed, true);
      assert.equal(spent.json().quantity, 3);
      assert.equal(spent.json().remaining, 7);
      assert.equal(spent.json().used, 3);
      const person = await services.db.selectFrom("people").select(["email", "signed_in_at"]).where("workspace_id", "=", ws.workspaceId).execute();
      assert.deepEqual(person, [{ email, signed_in_at: null }], "created without an account");
      const { allowed: _a, quantity: _q, ...after } = spent.json();
      assert.deepEqual((await readUsage(api, ws, email)).json().data[0], after, "the spend answers the usage a read answers after it");

      // Quantity defaults to 1.
      assert.equal((await spend(api, ws, email, { meter: "summaries" })).json().remaining, 6);
    });

    test("an unknown address when the tool has no free allowance: 402 with nothing left, and nothing written", async () => {
      const { services, clock } = await testServices(dialect);
      clock.set(NOV_20);
      const ws = await seedUsageCatalogue(services);
      const api = await testApi(services);
      await services.db.updateTable("tool_meters").set({ free_allowance: null }).execute();
      const refused = await spend(api, ws, "nobody@example.com", { meter: "summaries" });
      assert.equal(refused.statusCode, 402, refused.body);
      assert.equal(refused.json().error.type, "usage_limit_error");
      assert.match(refused.json().error.message, /No summaries are left of meter "summaries" and this use needs 1; no allowance resets/);
      assert.equal(refused.json().error.usage.remaining, 0);
      assert.deepEqual(refused.json().error.usage.buckets, []);
      // More than the free allowance is refused the same way, creating nobody.
      await services.db.updateTable("tool_meters").set({ free_allowance: 10 }).execute();
      const tooMuch = await spend(api, ws, "nobody@example.com", { meter: "summaries", quantity: 11 });
      assert.equal(tooMuch.statusCode, 402);
      assert.match(tooMuch.json().error.message, /Only 10 summaries are left .* needs 11; the allowance resets at 2026-12-01T00:00:00.000Z/);
      assert.deepEqual(await writes(services, ws), { usage: 0, locks: 0, people: 0, keys: 0, credits: [], used: [] });
    });

    test("draws the allowance that resets first, then credits soonest expiring first, then those that never expire, oldest first", async () => {
      const { services, clock } = await testServices(dialect);
      clock.set(NOV_20);
      const ws = await seedUsageCatalogue(services);
      const api = await testApi(services);
      const secret = await connectTestStripe(services, ws, "test");
      const email = "ada@example.com";
      // A monthly subscription whose period runs 10 November to 10 December, and a grant of the lifetime plan's terms (the calendar month).
      const subId = stripeId("sub");
      const period = { periodStart: Date.parse("2026-11-10T00:00:00.000Z"), periodEnd: Date.parse("2026-12-10T00:00:00.000Z") };
      const metadata = { warden_tool: "tabmaster", warden_plan: "monthly" };
      const send = (type: string, object: Record<string, unknown>) => deliver(api, ws, secret, stripeEvent(type, object, { now: clock.now() }), clock.now());
      assert.equal(await send("checkout.session.completed", subscriptionSession({ email, subscription: subId, metadata, now: clock.now() })), "applied");
      const sub = (changes: Partial<Parameters<typeof subscriptionObject>[0]> = {}) =>
        subscriptionObject({ id: subId, status: "active", metadata, startedAt: period.periodStart, ...period, ...changes });
      assert.equal(await send("customer.subscription.created", sub()), "applied");
      const grant = await api.request({ method: "POST", url: "/api/v1/tools/tabmaster/grants", key: ws.testKey, payload: { email } });
      assert.equal(grant.statusCode, 201, grant.body);
      await services.db.updateTable("grants").set({ plan_id: "lifetime" }).where("id", "=", grant.json().id).execute();
      const never = await addCredits(services, ws, email, 5, null, clock.now() - DAY_MS);
      const neverNewer = await addCredits(services, ws, email, 5, null, clock.now());
      const soon = await addCredits(services, ws, email, 5, clock.now() + 3 * DAY_MS, clock.now());
      const expired = await addCredits(services, ws, email, 50, clock.now() - 1, clock.now() - 30 * DAY_MS);

      const read = (await readUsage(api, ws, email)).json().data[0];
      assert.deepEqual(
        read.buckets.map((b: { via: string; allowance: number; resets_at: string }) => [b.via, b.allowance, b.resets_at]),
        [
          ["grant", 100, DEC_1],
          ["subscription", 500, "2026-12-10T00:00:00.000Z"],
        ],
      );
      assert.equal(read.credits, 15, "expired credits do not count");
      assert.equal(read.remaining, 615);
      assert.equal(read.resets_at, DEC_1);

      assert.equal((await spend(api, ws, email, { meter: "summaries", quantity: 99 })).json().remaining, 516);
      const across = (await spend(api, ws, email, { meter: "summaries", quantity: 2 })).json();
      assert.deepEqual(
        across.buckets.map((b: { used: number }) => b.used),
        [100, 1],
        "the grant's month filled, the rest from the subscription's period",
      );
      await spend(api, ws, email, { meter: "summaries", quantity: 499 });
      assert.deepEqual((await writes(services, ws)).credits.find(([id]) => id === soon)?.[1], 5, "credits untouched while an allowance is left");
      const credits = (await spend(api, ws, email, { meter: "summaries", quantity: 7 })).json();
      assert.equal(credits.allowance_remaining, 0);
      assert.equal(credits.credits, 8);
      const left = new Map((await writes(services, ws)).credits);
      assert.deepEqual(
        [left.get(soon), left.get(never), left.get(neverNewer), left.get(expired)],
        [0, 3, 5, 50],
        "soonest expiring first, then the oldest of those that never expire",
      );

      // The subscription renews (Stripe moves its period and sends invoice.paid): its bucket starts again from 0; the grant's month is unchanged.
      clock.set(Date.parse("2026-12-10T00:05:00.000Z"));
      const next = { periodStart: Date.parse("2026-12-10T00:00:00.000Z"), periodEnd: Date.parse("2027-01-10T00:00:00.000Z") };
      assert.equal(await send("customer.subscription.updated", sub(next)), "applied");
      assert.equal(await send("invoice.paid", invoiceObject({ subscription: subId, paymentIntent: stripeId("pi"), amountPaid: 500 })), "applied");
      const renewed = (await readUsage(api, ws, email)).json().data[0];
      assert.deepEqual(
        renewed.buckets.map((b: { via: string; used: number; period_start: string; resets_at: string }) => [b.via, b.used, b.period_start, b.resets_at]),
        [
          ["grant", 0, DEC_1, JAN_1],
          ["subscription", 0, "2026-12-10T00:00:00.000Z", "2027-01-10T00:00:00.000Z"],
        ],
      );
      assert.equal(renewed.remaining, 608);
    });

    test("a month later the calendar month's allowance starts again; a smaller plan mid-period keeps what was used", async () => {
      const { services, clock } = await testServices(dialect);
      clock.set(NOV_20);
      const ws = await seedUsageCatalogue(services);
      const api = await testApi(services);
      const email = "grace@example.com";
      const grant = await api.request({ method: "POST", url: "/api/v1/tools/tabmaster/grants", key: ws.testKey, payload: { email } });
      assert.equal((await spend(api, ws, email, { meter: "summaries", quantity: 300 })).json().remaining, 200, "the top terms: 500 a month");
      // Downgraded to the lifetime plan's 100: 300 used stays counted, nothing is left, never less than nothing.
      await services.db.updateTable("grants").set({ plan_id: "lifetime" }).where("id", "=", grant.json().id).execute();
      const down = (await readUsage(api, ws, email)).json().data[0];
      assert.deepEqual([down.used, down.allowance, down.allowance_remaining, down.remaining], [300, 100, 0, 0]);
      assert.equal((await spend(api, ws, email, { meter: "summaries" })).statusCode, 402);

      clock.set(Date.parse("2026-12-01T00:00:00.000Z"));
      const december = (await readUsage(api, ws, email)).json().data[0];
      assert.deepEqual([december.used, december.remaining, december.period_start, december.resets_at], [0, 100, DEC_1, JAN_1]);
      assert.equal((await spend(api, ws, email, { meter: "summaries", quantity: 100 })).statusCode, 200);
    });

    test("a refusal is all or nothing and writes nothing; it answers the meter's usage in error.usage", async () => {
      const { services, clock } = await testServices(dialect);
      clock.set(NOV_20);
      const ws = await seedUsageCatalogue(services);
      const api = await testApi(services);
      const email = "bob@example.com";
      await spend(api, ws, email, { meter: "summaries", quantity: 4 });
      await addCredits(services, ws, email, 2, null, clock.now());
      const before = await writes(services, ws);
      const usage = (await readUsage(api, ws, email)).json().data[0];
      const refused = await spend(api, ws, email, { meter: "summaries", quantity: 9 }, { "idempotency-key": "k-refused" });
      assert.equal(refused.statusCode, 402, refused.body);
      assert.equal(refused.json().error.type, "usage_limit_error");
      assert.equal(
        refused.json().error.message,
        'Only 8 summaries are left of meter "summaries" and this use needs 9; the allowance resets at 2026-12-01T00:00:00.000Z. Nothing was spent.',
      );
      assert.deepEqual(refused.json().error.usage, usage);
      assert.deepEqual(await writes(services, ws), before, "no count, no credit, no lock, no idempotency record");
      // The refused key was not kept: the same key later spends what is there.
      assert.equal((await spend(api, ws, email, { meter: "summaries", quantity: 8 }, { "idempotency-key": "k-refused" })).json().remaining, 0);
    });

    test("credits of a pack held by a dispute or taken back are not spent", async () => {
      const { services, clock } = await testServices(dialect);
      clock.set(NOV_20);
      const ws = await seedUsageCatalogue(services);
      const api = await testApi(services);
      const email = "carol@example.com";
      await spend(api, ws, email, { meter: "summaries", quantity: 10 });
      const person = await services.db.selectFrom("people").select("id").where("email", "=", email).executeTakeFirstOrThrow();
      const licence = async (status: "active" | "suspended" | "revoked") => {
        const id = newId("lic");
        await services.db
          .insertInto("licences")
          .values({
            id,
            workspace_id: ws.workspaceId,
            env: "test",
            person_id: person.id,
            product_kind: "tool",
            product_id: "tabmaster",
            plan_id: "pack-1000",
            status,
            purchased_at: clock.now(),
            created_at: clock.now(),
          } as never)
          .execute();
        return id;
      };
      await addCredits(services, ws, email, 100, null, clock.now(), await licence("suspended"));
      await addCredits(services, ws, email, 100, null, clock.now(), await licence("revoked"));
      await addCredits(services, ws, email, 7, null, clock.now(), await licence("active"));
      const read = (await readUsage(api, ws, email)).json().data[0];
      assert.equal(read.credits, 7);
      assert.equal((await spend(api, ws, email, { meter: "summaries", quantity: 8 })).statusCode, 402);
      assert.equal((await spend(api, ws, email, { meter: "summaries", quantity: 7 })).json().remaining, 0);
    });

    test("an Idempotency-Key replays the first answer and spends nothing more; another body with it is refused", async () => {
      const { services, clock } = await testServices(dialect);
      clock.set(NOV_20);
      const ws = await seedUsageCatalogue(services);
      const api = await testApi(services);
      const email = "dan@example.com";
      const first = await spend(api, ws, email, { meter: "summaries", quantity: 2 }, { "idempotency-key": "spend-1" });
      assert.equal(first.statusCode, 200);
      assert.equal(first.headers["idempotent-replayed"], undefined);
      const again = await spend(api, ws, email, { meter: "summaries", quantity: 2 }, { "idempotency-key": "spend-1" });
      assert.equal(again.statusCode, 200);
      assert.equal(again.headers["idempotent-replayed"], "true");
      assert.deepEqual(again.json(), first.json());
      assert.equal((await readUsage(api, ws, email)).json().data[0].used, 2, "counted once");
      const other = await spend(api, ws, email, { meter: "summaries", quantity: 3 }, { "idempotency-key": "spend-1" });
      assert.equal(other.statusCode, 400);
      assert.equal(other.json().error.param, "Idempotency-Key");
      assert.equal((await readUsage(api, ws, email)).json().data[0].used, 2);
    });

    test("bad requests name the parameter; another workspace's tool is not found; a wrong key is refused", async () => {
      const { services, clock } = await testServices(dialect);
      clock.set(NOV_20);
      const ws = await seedUsageCatalogue(services);
      const other = await seedWorkspace(services);
      const api = await testApi(services);
      const email = "eve@example.com";
      const param = async (payload: Record<string, unknown>) => (await spend(api, ws, email, payload)).json().error?.param;
      assert.equal(await param({ meter: "pages" }), "meter");
      assert.equal(await param({ meter: "summaries", quantity: 0 }), "quantity");
      assert.equal(await param({ meter: "summaries", quantity: 1.5 }), "quantity");
      assert.equal(await param({ meter: "summaries", quantity: 1_000_001 }), "quantity");
      assert.equal(await param({ quantity: 1 }), "meter");
      assert.equal((await spend(api, ws, "not-an-address", { meter: "summaries" })).json().error.param, "email");
      assert.equal((await api.request({ url: path(email, "linkkeeper"), key: ws.testKey })).json().data.length, 0, "a tool without meters");
      // The other workspace's tool tabmaster is not this key's.
      const otherTool = await api.request({ method: "POST", url: path(email, "notatool"), key: other.testKey, payload: { meter: "summaries" } });
      assert.equal(otherTool.statusCode, 404);
      const cross = await api.request({ url: path(email, "linkkeeper"), key: other.testKey });
      assert.equal(cross.statusCode, 404, "linkkeeper is the first workspace's");
      const wrongKey = await api.request({ method: "POST", url: path(email), key: "wk_test_wrong", payload: { meter: "summaries" } });
      assert.equal(wrongKey.statusCode, 401);
      assert.deepEqual(await writes(services, ws), { usage: 0, locks: 0, people: 0, keys: 0, credits: [], used: [] });
    });

    test("the client API reads and spends the device's person's meters", async () => {
      const { services, clock } = await testServices(dialect, { SMTP_URL: mailbox.url });
      clock.set(NOV_20);
      const ws = await seedUsageCatalogue(services);
      const api = await testApi(services);
      const email = "fay@example.com";
      const token = await signIn(api, ws, email);
      const auth = { authorization: `Bearer ${token}` };
      const url = "/api/client/v1/tools/tabmaster/usage";
      const read = await api.request({ url, headers: auth });
      assert.equal(read.statusCode, 200, read.body);
      assert.equal(read.json().data[0].remaining, 10);
      const spent = await api.request({ method: "POST", url, headers: { ...auth, "idempotency-key": "c-1" }, payload: { meter: "summaries", quantity: 4 } });
      assert.equal(spent.statusCode, 200, spent.body);
      assert.equal(spent.json().remaining, 6);
      const replay = await api.request({ method: "POST", url, headers: { ...auth, "idempotency-key": "c-1" }, payload: { meter: "summaries", quantity: 4 } });
      assert.equal(replay.headers["idempotent-replayed"], "true");
      assert.equal((await readUsage(api, ws, email)).json().data[0].remaining, 6, "the vendor reads the same meter");
      const refused = await api.request({ method: "POST", url, headers: auth, payload: { meter: "summaries", quantity: 7 } });
      assert.equal(refused.statusCode, 402);
      assert.equal(refused.json().error.usage.remaining, 6);
      assert.equal((await api.request({ url: "/api/client/v1/tools/linkkeeper/usage", headers: auth })).statusCode, 404, "another tool than the device's");
      assert.equal((await api.request({ url, headers: { authorization: "Bearer wdt_wrong" } })).statusCode, 401);
      const preflight = await api.request({
        method: "OPTIONS",
        url,
        headers: { origin: "chrome-extension://abcdefghijklmnopabcdefghijklmnop", "access-control-request-method": "POST" },
      });
      assert.equal(preflight.statusCode, 204);
      const fromExtension = await api.request({ url, headers: { ...auth, origin: "chrome-extension://abcdefghijklmnopabcdefghijklmnop" } });
      assert.equal(fromExtension.headers["access-control-allow-origin"], "chrome-extension://abcdefghijklmnopabcdefghijklmnop");
    });

    test("a device activated with a licence key proved no address: it neither reads nor spends the holder's meters", async () => {
      const { services, clock } = await testServices(dialect, { SMTP_URL: mailbox.url });
      clock.set(NOV_20);
      const ws = await seedUsageCatalogue(services);
      const api = await testApi(services);
      const secret = await connectTestStripe(services, ws, "test");
      const email = "gus@example.com";
      const session = paymentSession({ email, metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" }, now: clock.now() });
      assert.equal(await deliver(api, ws, secret, stripeEvent("checkout.session.completed", session, { now: clock.now() }), clock.now()), "applied");
      const token = await signIn(api, ws, email);
      const licence = (await api.request({ url: "/api/client/v1/purchases", headers: { authorization: `Bearer ${token}` } }))
        .json()
        .data.find((p: { kind: string }) => p.kind === "licence");
      const activated = await api.request({
        method: "POST",
        url: "/api/client/v1/tools/tabmaster/activate",
        payload: { workspace: ws.slug, key: licence.key, device: { name: "Shared PC", platform: "chrome-windows" } },
      });
      assert.equal(activated.statusCode, 200, activated.body);
      const byKey = { authorization: `Bearer ${activated.json().token}` };
      const url = "/api/client/v1/tools/tabmaster/usage";
      const read = await api.request({ url, headers: byKey });
      assert.equal(read.statusCode, 401, read.body);
      assert.match(read.json().error.message, /sign in with your email address to use your meters/);
      const spent = await api.request({ method: "POST", url, headers: byKey, payload: { meter: "summaries", quantity: 1 } });
      assert.equal(spent.statusCode, 401, spent.body);
      assert.equal((await readUsage(api, ws, email)).json().data[0].used, 0, "nothing was spent");
    });
  });
}
