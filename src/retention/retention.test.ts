import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { CompiledQuery, sql } from "kysely";
import { sha256 } from "../auth/mailed-code.js";
import { replaceSignInCode } from "../client/sign-in-code.store.js";
import { DAY_MS, ManualClock, MINUTE_MS } from "../clock.js";
import { parseConfig } from "../config.js";
import { openCustomerSession } from "../customer-pages/customer-session.service.js";
import { insertExchangeToken } from "../customer-pages/exchange-token.store.js";
import { ensurePerson } from "../customers/person.store.js";
import { openStorage } from "../db/database.js";
import { claimIdempotencyKey } from "../grants/idempotency.store.js";
import { newId } from "../ids.js";
import { addToCounters } from "../limits/counter.store.js";
import { claimDueMails, insertMails, recordMailSent } from "../mail/mail-outbox.store.js";
import { insertPaddleCheckout } from "../paddle/paddle-checkout.store.js";
import { claimPaddleEvent } from "../paddle/paddle-event.store.js";
import { createServices, type Services } from "../services.js";
import { claimStripeEvent, setStripeEventOutcome } from "../stripe/stripe-event.store.js";
import { createPgSchema, DIALECTS, PG_URL, seedWorkspace, testApi, testServices, unique, type Workspace } from "../test-support/harness.js";
import { emitExample, recordingLogger, startReceiver, testWorker } from "../test-support/webhooks.js";
import { queueResends } from "../webhooks/delivery.store.js";
import { type Pruned, pruneExpired, retentionPruner } from "./retention.service.js";

const HOUR_MS = 60 * MINUTE_MS;

interface PgPlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Cond"?: string;
  Plans?: PgPlanNode[];
}

/** A sequential scan, or an index walked end to end with no condition: a whole table read. */
const readsWholeTable = (node: PgPlanNode) =>
  node["Node Type"] === "Seq Scan" || ((node["Node Type"] === "Index Scan" || node["Node Type"] === "Index Only Scan") && node["Index Cond"] === undefined);
const NOW_OPTIONS = { batchSize: 500, pauseMs: 0, pauseFactor: 0 };

/** Emits a payment.refunded event now; `endpointIds` [] writes it with no delivery. */
const emit = (services: Services, ws: Workspace, endpointIds?: string[]) => emitExample(services, ws, endpointIds ? { endpointIds } : {});

async function eventExists(services: Services, ws: Workspace, id: string): Promise<boolean> {
  const row = await services.db.selectFrom("events").select("id").where("workspace_id", "=", ws.workspaceId).where("id", "=", id).executeTakeFirst();
  return row !== undefined;
}

async function deliveriesOf(services: Services, ws: Workspace, eventId: string): Promise<{ id: string; status: string; attempts: number }[]> {
  const rows = await services.db
    .selectFrom("deliveries")
    .select(["id", "status"])
    .where("workspace_id", "=", ws.workspaceId)
    .where("event_id", "=", eventId)
    .execute();
  const out = [];
  for (const row of rows) {
    const { n } = await services.db
      .selectFrom("delivery_attempts")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("delivery_id", "=", row.id)
      .executeTakeFirstOrThrow();
    out.push({ id: row.id, status: row.status, attempts: Number(n) });
  }
  return out;
}

async function attemptsOf(services: Services, deliveryIds: string[]): Promise<number> {
  if (deliveryIds.length === 0) return 0;
  const { n } = await services.db
    .selectFrom("delivery_attempts")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("delivery_id", "in", deliveryIds)
    .executeTakeFirstOrThrow();
  return Number(n);
}

for (const dialect of DIALECTS) {
  describe(`retention (${dialect})`, () => {
    test("prunes settled deliveries, their attempts and events past the retention; keeps what is owed, recent, or access", async () => {
      const { services, clock } = await testServices(dialect);
      clock.set(Date.now());
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const receiver = await startReceiver();
      const created = await api.request({ method: "POST", url: "/api/v1/webhooks/endpoints", key: ws.testKey, payload: { url: receiver.url } });
      assert.equal(created.statusCode, 201, created.body);
      const email = `${unique("p")}@example.com`;
      const grant = await api.request({ method: "POST", url: `/api/v1/tools/${ws.tool}/grants`, key: ws.testKey, payload: { email } });
      assert.equal(grant.statusCode, 201, grant.body);
      const delivered = await emit(services, ws);
      const resent = await emit(services, ws);
      const unsent = await emit(services, ws, []);
      const worker = testWorker(services);
      await worker.drain();
      const oldDeliveries = [...(await deliveriesOf(services, ws, delivered)), ...(await deliveriesOf(services, ws, resent))];
      assert.deepEqual(
        oldDeliveries.map((d) => [d.status, d.attempts]),
        [
          ["succeeded", 1],
          ["succeeded", 1],
        ],
      );

      clock.advance(30 * DAY_MS);
      const recent = await emit(services, ws);
      await worker.drain();
      assert.deepEqual(worker.errors, []);
      clock.advance(6 * DAY_MS);
      // Resent now, 36 days on: owed again, so neither it nor its event may go.
      const [resentDelivery] = await deliveriesOf(services, ws, resent);
      await queueResends(services.db, [resentDelivery?.id ?? ""], clock.now());

      const pruned = await pruneExpired(services, NOW_OPTIONS);
      assert.ok(pruned.deliveries >= 1 && pruned.events >= 2, JSON.stringify(pruned));
      assert.equal(await eventExists(services, ws, delivered), false);
      assert.equal(await eventExists(services, ws, unsent), false);
      assert.deepEqual(await deliveriesOf(services, ws, delivered), []);
      assert.equal(await attemptsOf(services, [oldDeliveries[0]?.id ?? ""]), 0);
      assert.equal(await eventExists(services, ws, resent), true);
      assert.deepEqual(
        (await deliveriesOf(services, ws, resent)).map((d) => [d.status, d.attempts]),
        [["pending", 1]],
      );
      assert.equal(await eventExists(services, ws, recent), true);
      assert.deepEqual(
        (await deliveriesOf(services, ws, recent)).map((d) => [d.status, d.attempts]),
        [["succeeded", 1]],
      );
      // Access is never pruned: the grant (its event gone) still answers.
      const grants = await api.request({ url: `/api/v1/tools/${ws.tool}/grants?email=${encodeURIComponent(email)}`, key: ws.testKey });
      assert.equal(grants.statusCode, 200, grants.body);
      assert.equal(
        await services.db
          .selectFrom("grants")
          .select("id")
          .where("workspace_id", "=", ws.workspaceId)
          .execute()
          .then((r) => r.length),
        1,
      );

      // Once sent, the resent delivery is settled and goes at the next run, then its event.
      await worker.drain();
      await pruneExpired(services, NOW_OPTIONS);
      assert.equal(await eventExists(services, ws, resent), false);
      assert.deepEqual(await deliveriesOf(services, ws, resent), []);
    });

    test("goes on in batches until nothing that old is left", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const ids = [];
      for (let i = 0; i < 7; i++) ids.push(await emit(services, ws, []));
      clock.advance(36 * DAY_MS);
      const pruned = await pruneExpired(services, { batchSize: 2, pauseMs: 0, pauseFactor: 0 });
      assert.ok(pruned.events >= 7, JSON.stringify(pruned));
      for (const id of ids) assert.equal(await eventExists(services, ws, id), false);
    });

    test("keeps events exactly as long as WARDEN_RETENTION_DAYS, and forever with 0", async () => {
      const { services, clock } = await testServices(dialect, { WARDEN_RETENTION_DAYS: "7" });
      const ws = await seedWorkspace(services);
      const id = await emit(services, ws, []);
      clock.advance(7 * DAY_MS);
      await pruneExpired(services, NOW_OPTIONS);
      assert.equal(await eventExists(services, ws, id), true, "an event exactly 7 days old is kept");
      clock.advance(1);
      await pruneExpired(services, NOW_OPTIONS);
      assert.equal(await eventExists(services, ws, id), false);

      const forever = await testServices(dialect, { WARDEN_RETENTION_DAYS: "0" });
      const kept = await emit(forever.services, ws, []);
      forever.clock.advance(3650 * DAY_MS);
      await pruneExpired(forever.services, NOW_OPTIONS);
      assert.equal(await eventExists(forever.services, ws, kept), true);
      assert.throws(() => parseConfig({ WARDEN_RETENTION_DAYS: "-1" }), /WARDEN_RETENTION_DAYS must be a whole number/);
      assert.equal(parseConfig({}).retentionDays, 35);
    });

    test("prunes Stripe event ids but the deferred, and Paddle's, idempotency keys after a day, expired sign-in codes, mails sent a week ago and closed counter windows", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const scope = { workspaceId: ws.workspaceId, env: "test" as const };
      const stripeEvent = async (deferred: boolean) => {
        const id = `evt_${unique("s")}`;
        assert.equal(
          await claimStripeEvent(services.db, scope, { id, type: "customer.subscription.updated", stripeCreated: clock.now(), receivedAt: clock.now() }),
          true,
        );
        if (deferred)
          await setStripeEventOutcome(services.db, scope, id, { outcome: "deferred", reason: "buyer unknown", subscriptionId: "sub_1", payload: "{}" });
        return id;
      };
      const applied = await stripeEvent(false);
      const deferred = await stripeEvent(true);
      const paddle = `evt_${unique("p")}`;
      assert.equal(
        await claimPaddleEvent(services.db, scope, { id: paddle, type: "transaction.completed", occurredAt: clock.now(), receivedAt: clock.now() }),
        true,
      );
      const checkout = `txn_${unique("c")}`;
      await insertPaddleCheckout(services.db, scope, checkout, null, clock.now());
      const key = unique("idem");
      await claimIdempotencyKey(services.db, { ...scope, key }, "hash", clock.now(), clock.now() - DAY_MS);
      const emailNorm = `${unique("c")}@example.com`;
      const code = newId("req");
      await replaceSignInCode(
        services.db,
        {
          id: code,
          ...scope,
          toolId: ws.tool,
          email: emailNorm,
          emailNorm,
          browserHash: null,
          codeHash: "h",
          attempts: 0,
          createdAt: clock.now(),
          expiresAt: clock.now() + 10 * MINUTE_MS,
        },
        clock.now(),
      );
      const mail = unique("mail");
      await insertMails(services.db, [{ id: mail, kind: "sign_in_code", recipient: emailNorm, contentSealed: "sealed", createdAt: clock.now() }]);
      const unsent = unique("mail");
      await insertMails(services.db, [{ id: unsent, kind: "sign_in_code", recipient: emailNorm, contentSealed: "sealed", createdAt: clock.now() }]);
      const claimed = await claimDueMails(services.db, { senderId: "s", now: clock.now(), leaseUntil: clock.now() + MINUTE_MS, limit: 100, skipLocked: false });
      assert.ok(claimed.some((m) => m.id === mail));
      assert.equal(await recordMailSent(services.db, mail, "s", clock.now()), true);
      const counter = unique("counter");
      await addToCounters(services.db, services.dialect, [{ scope: counter, nextWindowEnd: clock.now() + MINUTE_MS }], 1, clock.now());
      const stillCounting = unique("counter");

      const exists = {
        stripe: async (id: string) => (await services.db.selectFrom("stripe_events").select("id").where("id", "=", id).executeTakeFirst()) !== undefined,
        paddle: async () => (await services.db.selectFrom("paddle_events").select("id").where("id", "=", paddle).executeTakeFirst()) !== undefined,
        key: async () => (await services.db.selectFrom("idempotency_keys").select("key").where("key", "=", key).executeTakeFirst()) !== undefined,
        code: async () => (await services.db.selectFrom("sign_in_codes").select("id").where("id", "=", code).executeTakeFirst()) !== undefined,
        mail: async (id: string) => (await services.db.selectFrom("mail_outbox").select("id").where("id", "=", id).executeTakeFirst()) !== undefined,
        counter: async (s: string) => (await services.db.selectFrom("counters").select("scope").where("scope", "=", s).executeTakeFirst()) !== undefined,
      };

      // 23 hours on: the key still counts and the code expired less than a day ago; the
      // first counter's window closed long ago, the second's is open.
      clock.advance(23 * HOUR_MS);
      await addToCounters(services.db, services.dialect, [{ scope: stillCounting, nextWindowEnd: clock.now() + MINUTE_MS }], 1, clock.now());
      await pruneExpired(services, NOW_OPTIONS);
      assert.deepEqual(
        [await exists.key(), await exists.code(), await exists.counter(counter), await exists.counter(stillCounting)],
        [true, true, false, true],
      );
      clock.advance(2 * HOUR_MS);
      await pruneExpired(services, NOW_OPTIONS);
      assert.deepEqual([await exists.key(), await exists.code(), await exists.counter(stillCounting)], [false, false, false]);
      assert.deepEqual([await exists.stripe(applied), await exists.stripe(deferred), await exists.paddle()], [true, true, true]);
      assert.deepEqual([await exists.mail(mail), await exists.mail(unsent)], [true, true], "a sent mail is kept a week");
      clock.advance(6 * DAY_MS);
      await pruneExpired(services, NOW_OPTIONS);
      assert.deepEqual([await exists.mail(mail), await exists.mail(unsent)], [false, true], "an unsent mail is never pruned");
      clock.advance(29 * DAY_MS);
      await pruneExpired(services, NOW_OPTIONS);
      assert.deepEqual([await exists.stripe(applied), await exists.stripe(deferred)], [false, true], "a deferred Stripe event waits for its buyer");
      assert.equal(await exists.paddle(), false, "Paddle's event ids go as Stripe's do");
      const checkouts = await services.db.selectFrom("paddle_checkouts").select("transaction_id").where("transaction_id", "=", checkout).execute();
      assert.equal(checkouts.length, 0, "Paddle's checkouts go with its event ids");
    });

    test("prunes the hosted pages' sessions a day after their 7 days, and their one-time tokens a day after they expired", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const person = await ensurePerson(services.db, ws.workspaceId, "test", `${unique("p")}@example.com`, clock.now());
      const scope = { workspaceId: ws.workspaceId, env: "test" as const, personId: person.id, licenceId: null };
      const old = await services.db.transaction().execute((trx) => openCustomerSession(trx, { ...scope, now: clock.now() }));
      const token = unique("cx");
      await insertExchangeToken(services.db, {
        id: token,
        kind: "page_ticket",
        ...scope,
        toolId: ws.tool,
        codeChallenge: null,
        deviceId: null,
        tokenHash: token,
        createdAt: clock.now(),
        expiresAt: clock.now() + MINUTE_MS,
      });
      const sessionExists = async (t: string) =>
        (await services.db.selectFrom("customer_sessions").select("id").where("token_hash", "=", sha256(t)).executeTakeFirst()) !== undefined;
      const tokenExists = async () =>
        (await services.db.selectFrom("customer_exchange_tokens").select("id").where("id", "=", token).executeTakeFirst()) !== undefined;

      clock.advance(DAY_MS);
      const young = await services.db.transaction().execute((trx) => openCustomerSession(trx, { ...scope, now: clock.now() }));
      await pruneExpired(services, NOW_OPTIONS);
      assert.deepEqual([await tokenExists(), await sessionExists(old)], [true, true], "the ticket expired less than a day ago");
      clock.advance(2 * MINUTE_MS);
      await pruneExpired(services, NOW_OPTIONS);
      assert.equal(await tokenExists(), false);
      clock.advance(7 * DAY_MS);
      await pruneExpired(services, NOW_OPTIONS);
      assert.deepEqual([await sessionExists(old), await sessionExists(young)], [false, true]);
    });

    test("two pruners at once delete each row once and fail nothing", async () => {
      const { services, clock } = await testServices(dialect);
      clock.set(Date.now());
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      const receiver = await startReceiver();
      const created = await api.request({ method: "POST", url: "/api/v1/webhooks/endpoints", key: ws.testKey, payload: { url: receiver.url } });
      assert.equal(created.statusCode, 201, created.body);
      const ids = [];
      for (let i = 0; i < 12; i++) ids.push(await emit(services, ws));
      const worker = testWorker(services);
      await worker.drain();
      assert.deepEqual(worker.errors, []);
      clock.advance(36 * DAY_MS);
      const runs: Pruned[] = await Promise.all([
        pruneExpired(services, { batchSize: 3, pauseMs: 0, pauseFactor: 0 }),
        pruneExpired(services, { batchSize: 3, pauseMs: 0, pauseFactor: 0 }),
      ]);
      assert.ok(runs[0] && runs[1] && runs[0].deliveries + runs[1].deliveries >= 12);
      for (const id of ids) {
        assert.equal(await eventExists(services, ws, id), false);
        assert.deepEqual(await deliveriesOf(services, ws, id), []);
      }
    });

    test("the background pruner runs at start and stops between batches", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const id = await emit(services, ws, []);
      clock.advance(36 * DAY_MS);
      const { logger, errors } = recordingLogger();
      const pruner = retentionPruner(services, logger, { batchSize: 500, pauseMs: 0, pauseFactor: 0, intervalMs: 60 * MINUTE_MS });
      pruner.start();
      // The first run starts on the next turn of the event loop; wait for its work, not for time.
      for (let i = 0; i < 1000 && (await eventExists(services, ws, id)); i++) await new Promise((resolve) => setImmediate(resolve));
      await pruner.stop();
      assert.equal(await eventExists(services, ws, id), false);
      assert.deepEqual(errors, []);
    });
  });

  test(`each pruning statement reaches its rows through an index (${dialect})`, async () => {
    const statements = new Map<string, readonly unknown[]>();
    let recording = false;
    const onQuery = (text: string, parameters: readonly unknown[]) => {
      if (recording && /^(with|delete)/.test(text.trim())) statements.set(text, parameters);
    };
    const storage =
      dialect === "sqlite"
        ? openStorage({ databaseUrl: null, sqliteFile: ":memory:", onQuery })
        : openStorage({ databaseUrl: PG_URL, pgSchema: await createPgSchema(), poolSize: 2, onQuery });
    try {
      const clock = new ManualClock();
      const services = await createServices(parseConfig({ WARDEN_SECRET_KEY: "test-secret-key-0123456789abcdefghijklmnop" }), { clock, storage });
      recording = true;
      await pruneExpired(services, NOW_OPTIONS);
      recording = false;
      assert.equal(statements.size, dialect === "sqlite" ? 13 : 12);
      const scans: string[] = [];
      if (dialect === "sqlite") {
        for (const [text, parameters] of statements) {
          const plan = await services.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${text}`, [...parameters]));
          for (const { detail } of plan.rows) if (/^SCAN /.test(detail)) scans.push(`${detail} in ${text}`);
        }
      } else {
        await services.db.transaction().execute(async (trx) => {
          await sql`set local enable_seqscan = off`.execute(trx);
          for (const [text, parameters] of statements) {
            const plan = await trx.executeQuery<{ "QUERY PLAN": { Plan: PgPlanNode }[] }>(CompiledQuery.raw(`explain (format json) ${text}`, [...parameters]));
            const walk = (node: PgPlanNode | undefined): void => {
              if (!node) return;
              if (readsWholeTable(node)) scans.push(`${node["Node Type"]} of ${node["Relation Name"]} in ${text}`);
              for (const child of node.Plans ?? []) walk(child);
            };
            walk(plan.rows[0]?.["QUERY PLAN"][0]?.Plan);
          }
        });
      }
      assert.deepEqual(scans, []);
    } finally {
      await storage.close();
    }
  });
}
