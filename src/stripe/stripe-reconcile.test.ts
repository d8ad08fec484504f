// Issue 36, points 2 and 3: the reconcile reads a Stripe account (a local stand-in of
// Stripe's API serving list pages with has_more and starting_after) and makes the state
// what the webhooks would have made: a twin workspace is fed the same facts as webhooks,
// and both end with the same licences, subscriptions, disputes and events, on both engines.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Dialect } from "../db/database.js";
import { DIALECTS, seedCatalogue, testApi, testServices, type Workspace } from "../test-support/harness.js";
import {
  chargeObject,
  connectTestStripe,
  deliver,
  disputeObject,
  emittedEvents,
  invoiceObject,
  paymentSession,
  stripeEvent,
  stripeId,
  subscriptionObject,
  subscriptionSession,
} from "../test-support/stripe.js";
import { startStripeApi } from "../test-support/stripe-api.js";
import { updatePlanStripeLinks } from "./stripe-plan-link.service.js";
import { listReconciles, reconcileScheduled, reconcileStripe, startReconcile } from "./stripe-reconcile.service.js";
import { pruneReconcileRuns } from "./stripe-reconcile.store.js";

const DAY_MS = 86_400_000;
const SECRET_KEY = "sk_test_reconcileStandIn0123";

type Obj = Record<string, unknown>;

async function setUp(dialect: Dialect) {
  const stripeApi = await startStripeApi();
  const { services, clock } = await testServices(dialect, { WARDEN_STRIPE_API_URL: stripeApi.url });
  const api = await testApi(services);
  // `webhooks` is fed every fact as Stripe's deliveries; `reconciled` heard some, then its endpoint was down.
  const webhooks = await seedCatalogue(services);
  const reconciled = await seedCatalogue(services);
  const secrets = new Map<Workspace, string>();
  for (const ws of [webhooks, reconciled]) secrets.set(ws, await connectTestStripe(services, ws, "test", SECRET_KEY));
  const send = async (ws: Workspace, type: string, object: Obj, options: { created?: number; previousAttributes?: Obj } = {}) =>
    deliver(api, ws, secrets.get(ws) ?? "", stripeEvent(type, object, { now: clock.now(), ...options }), clock.now());
  const waits: number[] = [];
  const sleep = async (ms: number) => {
    waits.push(ms);
    clock.advance(ms);
  };
  const reconcile = (options: { dryRun?: boolean; since?: string } = {}) =>
    reconcileStripe(services, { workspace: reconciled.slug, env: "test", dryRun: options.dryRun ?? false, trigger: "cli", ...options }, { sleep });
  return { services, clock, stripeApi, webhooks, reconciled, send, reconcile, waits };
}

type TestBed = Awaited<ReturnType<typeof setUp>>;

/** What a workspace holds, without its own ids and the times of writing: comparable across the twins. */
async function stateOf(t: TestBed, ws: Workspace) {
  const { db } = t.services;
  const licences = await db
    .selectFrom("licences")
    .innerJoin("people", "people.id", "licences.person_id")
    .select(["people.email", "licences.product_id", "licences.plan_id", "licences.status", "licences.payment_intent", "licences.checkout_session"])
    .where("licences.workspace_id", "=", ws.workspaceId)
    .orderBy("licences.checkout_session")
    .execute();
  const subscriptions = await db
    .selectFrom("subscriptions")
    .innerJoin("people", "people.id", "subscriptions.person_id")
    .select([
      "subscriptions.id",
      "people.email",
      "subscriptions.plan_id",
      "subscriptions.status",
      "subscriptions.current_period_end",
      "subscriptions.cancel_at_period_end",
    ])
    .where("subscriptions.workspace_id", "=", ws.workspaceId)
    .orderBy("subscriptions.id")
    .execute();
  const disputes = await db.selectFrom("disputes").select(["id", "status"]).where("workspace_id", "=", ws.workspaceId).orderBy("id").execute();
  return {
    licences,
    subscriptions: subscriptions.map((s) => ({
      ...s,
      current_period_end: Number(s.current_period_end),
      cancel_at_period_end: Boolean(s.cancel_at_period_end),
    })),
    disputes,
  };
}

/**
 * The events as facts: type and what they name. Left out: the licence's id (Warden's
 * own, random per workspace), and a subscription's period_end and status, which Warden
 * reports as it learns of the start: the reconcile learns of a subscription renewed
 * twice at its third period (decisions.md).
 */
async function factsOf(t: TestBed, ws: Workspace) {
  const events = await emittedEvents(t.services, ws);
  return events
    .map((e) => {
      const { period_end: _end, status: _status, licence: _licence, ...data } = e.data as Obj;
      return JSON.stringify({ type: e.type, ...data });
    })
    .sort();
}

for (const dialect of DIALECTS) {
  describe(`reconcile with Stripe (${dialect})`, () => {
    test("a reconcile applies what webhooks missed, maps a checkout without metadata by its price, and lists what maps to no plan", async () => {
      const t = await setUp(dialect);
      const now = t.clock.now();
      await updatePlanStripeLinks(t.services, { workspace: t.reconciled.slug, tool: "tabmaster", id: "lifetime", prices: ["price_extLifetime"] });
      await updatePlanStripeLinks(t.services, { workspace: t.reconciled.slug, tool: "tabmaster", id: "monthly", products: ["prod_monthly"] });

      // Before the endpoint went down, both heard Ada's purchase.
      const ada = paymentSession({ email: "ada@example.com", metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" }, now });
      for (const ws of [t.webhooks, t.reconciled]) assert.equal(await t.send(ws, "checkout.session.completed", ada), "applied");

      // Then, while it was down: Bob buys and is refunded; Cy buys through ExtensionPay
      // (no Warden metadata, price_extLifetime); Dee buys a price linked to no plan; Ada
      // disputes her payment; Eve subscribes, renews twice; Fay subscribes through ExtensionPay
      // (her subscription carries no metadata; its product is linked) and sets it to cancel.
      const bob = paymentSession({ email: "bob@example.com", metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" }, now });
      const cy = paymentSession({ email: "cy@example.com", metadata: {}, now });
      const dee = paymentSession({ email: "dee@example.com", metadata: {}, now });
      const refund = {
        id: stripeId("re"),
        object: "refund",
        created: Math.floor(now / 1000),
        charge: chargeObject({ paymentIntent: bob.payment_intent, amount: 4900, amountRefunded: 4900 }),
      };
      const dispute = disputeObject({ id: stripeId("dp"), paymentIntent: ada.payment_intent, amount: 4900, status: "needs_response" });
      const eveSub = stripeId("sub");
      const eveCheckout = subscriptionSession({ email: "eve@example.com", subscription: eveSub, metadata: {}, now });
      const monthly = { warden_tool: "tabmaster", warden_plan: "monthly" };
      const period = (n: number) => ({ periodStart: now + n * 30 * DAY_MS, periodEnd: now + (n + 1) * 30 * DAY_MS });
      const eve = (n: number) => subscriptionObject({ id: eveSub, status: "active", metadata: monthly, startedAt: now, ...period(n) });
      const eveInvoices = [0, 1, 2].map(() => invoiceObject({ subscription: eveSub, paymentIntent: stripeId("pi") }));
      const faySub = stripeId("sub");
      const fayCheckout = subscriptionSession({ email: "fay@example.com", subscription: faySub, metadata: {}, now });
      const fay = (cancel: boolean) =>
        subscriptionObject({
          id: faySub,
          status: "active",
          metadata: monthly,
          startedAt: now,
          ...period(0),
          cancelAtPeriodEnd: cancel,
          canceledAt: cancel ? now + DAY_MS : null,
        });

      // The twin hears all of it as webhooks, in Stripe's order (Cy's as Warden's own checkout of that plan would say it).
      const w = t.webhooks;
      await t.send(w, "checkout.session.completed", bob);
      await t.send(w, "charge.refunded", refund.charge);
      await t.send(w, "checkout.session.completed", { ...cy, metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" } });
      await t.send(w, "charge.dispute.created", dispute);
      await t.send(w, "checkout.session.completed", eveCheckout);
      await t.send(w, "customer.subscription.created", eve(0));
      await t.send(w, "invoice.paid", eveInvoices[0] as Obj);
      await t.send(w, "customer.subscription.updated", eve(1), { created: now + 30 * DAY_MS });
      await t.send(w, "invoice.paid", eveInvoices[1] as Obj);
      await t.send(w, "customer.subscription.updated", eve(2), { created: now + 60 * DAY_MS });
      await t.send(w, "invoice.paid", eveInvoices[2] as Obj);
      await t.send(w, "checkout.session.completed", fayCheckout);
      await t.send(w, "customer.subscription.created", fay(false));
      await t.send(w, "customer.subscription.updated", fay(true), {
        created: now + DAY_MS,
        previousAttributes: { cancel_at_period_end: false, canceled_at: null },
      });

      // The account as Stripe's API lists it, newest first, two to a page.
      t.stripeApi.pageSize = 2;
      t.stripeApi.lists.set("/v1/checkout/sessions", [fayCheckout, eveCheckout, dee, cy, bob, ada]);
      t.stripeApi.lists.set(`/v1/checkout/sessions/${cy.id}/line_items`, [
        { id: stripeId("li"), object: "item", price: { id: "price_extLifetime", product: "prod_ext" }, quantity: 1 },
      ]);
      t.stripeApi.lists.set(`/v1/checkout/sessions/${dee.id}/line_items`, [
        { id: stripeId("li"), object: "item", price: { id: "price_other", product: "prod_other" }, quantity: 1 },
      ]);
      const fayAtStripe = fay(true);
      const [fayItem] = fayAtStripe.items.data;
      t.stripeApi.lists.set("/v1/subscriptions", [
        {
          ...fayAtStripe,
          metadata: {},
          items: { ...fayAtStripe.items, data: [{ ...fayItem, price: { ...fayItem?.price, id: "price_extMonthly", product: "prod_monthly" } }] },
        },
        eve(2),
      ]);
      t.stripeApi.lists.set("/v1/invoices", [...eveInvoices].reverse());
      t.stripeApi.lists.set("/v1/refunds", [refund]);
      t.stripeApi.lists.set("/v1/disputes", [dispute]);

      // A dry run says what would change and changes nothing.
      const eventsBefore = (await emittedEvents(t.services, t.reconciled)).length;
      const dry = await t.reconcile({ dryRun: true });
      assert.equal(dry.status, "done");
      assert.ok(dry.applied >= 4, JSON.stringify(dry.report.changes));
      assert.equal((await emittedEvents(t.services, t.reconciled)).length, eventsBefore);
      assert.equal((await stateOf(t, t.reconciled)).licences.length, 1);

      const first = await t.reconcile();
      assert.equal(first.status, "done", first.error ?? "");
      assert.deepEqual(await stateOf(t, t.reconciled), await stateOf(t, t.webhooks));
      assert.deepEqual(await factsOf(t, t.reconciled), await factsOf(t, t.webhooks));
      // Ada's purchase, heard before, was not sent again: one event per fact.
      const reconciledEvents = await emittedEvents(t.services, t.reconciled);
      assert.equal(new Set(reconciledEvents.map((e) => e.id)).size, reconciledEvents.length);
      assert.equal(reconciledEvents.filter((e) => e.type === "purchase.completed" && e.data.checkout_session === ada.id).length, 1);
      // Dee's purchase is listed with her address and what she bought, not guessed.
      assert.equal(first.unmapped, 1);
      assert.deepEqual(first.report.unmapped, [
        {
          object: dee.id,
          kind: "checkout",
          email: "dee@example.com",
          items: [{ price: "price_other", product: "prod_other" }],
          reason: "price price_other (product prod_other) is linked to no plan",
        },
      ]);
      assert.ok(first.scanned >= 13);
      // Every list was read page by page.
      assert.ok(t.stripeApi.calls.some((c) => c.path.startsWith("/v1/checkout/sessions?") && c.path.includes("starting_after=")));

      // A second run changes nothing, though Stripe rate-limits it twice first: both waited out.
      t.stripeApi.rateLimited = 2;
      const second = await t.reconcile();
      assert.equal(second.status, "done");
      assert.equal(second.applied, 0, JSON.stringify(second.report.changes));
      assert.deepEqual(t.waits, [2000, 2000]);
      assert.deepEqual(await emittedEvents(t.services, t.reconciled), reconciledEvents);
    });

    test("a run left running by a process that stopped is marked failed by the next run of its environment", async () => {
      const t = await setUp(dialect);
      const abandoned = await t.reconcile({ dryRun: true });
      // As a process that died mid-run leaves it: still running, its lease run out.
      await t.services.db.updateTable("stripe_reconcile_runs").set({ status: "running", finished_at: null }).where("id", "=", abandoned.id).execute();
      t.clock.advance(10 * 60_000);
      await t.reconcile();
      const runs = await listReconciles(t.services, { workspace: t.reconciled.slug, env: "test" });
      const old = runs.find((r) => r.id === abandoned.id);
      assert.equal(old?.status, "failed");
      assert.match(old?.error ?? "", /process stopped/);

      // Old runs are pruned, the newest kept.
      t.clock.advance(60_000);
      const newest = await t.reconcile({ dryRun: true });
      await pruneReconcileRuns(t.services.db, { workspaceId: t.reconciled.workspaceId, env: "test" }, 2);
      const kept = await listReconciles(t.services, { workspace: t.reconciled.slug, env: "test" });
      assert.equal(kept.length, 2);
      assert.equal(kept[0]?.id, newest.id);
      assert.ok(!kept.some((r) => r.id === abandoned.id));
    });

    test("without a secret key, or while another reconcile holds the environment, a reconcile is refused", async () => {
      const t = await setUp(dialect);
      const bare = await seedCatalogue(t.services);
      await connectTestStripe(t.services, bare);
      await assert.rejects(reconcileStripe(t.services, { workspace: bare.slug, env: "test", dryRun: false, trigger: "cli" }), /secret key/);
      await assert.rejects(t.reconcile({ since: "last tuesday" }), /since must be a date/);

      // Stripe answering 429 without end: the run fails after its bounded waits, and says so.
      t.stripeApi.rateLimited = 100;
      await assert.rejects(t.reconcile());
      const [failed] = await listReconciles(t.services, { workspace: t.reconciled.slug, env: "test" });
      assert.equal(failed?.status, "failed");
      assert.match(failed?.error ?? "", /Too many requests/);
      // Its lease was given back: the next run may start.
      t.stripeApi.rateLimited = 0;
      assert.equal((await t.reconcile()).status, "done");
    });

    test("one reconcile of an environment at a time, whichever process asks; the schedule skips it meanwhile, then reads from before its last round", async () => {
      const t = await setUp(dialect);
      const gatedKey = "sk_test_gatedReconcile0123";
      const solo = await seedCatalogue(t.services);
      await connectTestStripe(t.services, solo, "test", gatedKey);
      const owner = await t.services.db.selectFrom("owners").select("id").where("email", "=", solo.ownerEmail).executeTakeFirstOrThrow();
      const paid = paymentSession({ email: "gus@example.com", metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" }, now: t.clock.now() });
      t.stripeApi.lists.set("/v1/checkout/sessions", [paid]);

      // The dashboard's run is held mid-way at Stripe.
      let open = () => {};
      t.stripeApi.gated = { secretKey: gatedKey, gate: new Promise<void>((resolve) => (open = resolve)) };
      const started = await startReconcile(t.services, { workspace: solo.slug, env: "test", dryRun: false }, { ownerId: owner.id, email: solo.ownerEmail });
      const [running] = await listReconciles(t.services, { workspace: solo.slug, env: "test" });
      assert.deepEqual([running?.id, running?.status], [started.id, "running"]);
      await assert.rejects(
        reconcileStripe(t.services, { workspace: solo.slug, env: "test", dryRun: false, trigger: "cli" }),
        /under way; wait for it to finish/,
      );
      const meanwhile = await reconcileScheduled(t.services, { sleep: async () => {} });
      assert.equal(meanwhile.filter((r) => r.workspace === solo.slug).length, 0);
      open();
      t.stripeApi.gated = null;
      const done = await started.done;
      assert.deepEqual([done.status, done.applied], ["done", 1]);
      const audit = await t.services.db.selectFrom("audit_log").select(["action", "subject"]).where("workspace_id", "=", solo.workspaceId).execute();
      assert.deepEqual(audit, [{ action: "stripe.reconciled", subject: started.id }]);

      // The schedule's first round reads everything; the next from four days before it.
      const first = (await reconcileScheduled(t.services, { sleep: async () => {} })).find((r) => r.workspace === solo.slug);
      assert.deepEqual([first?.since, first?.applied], [null, 0]);
      t.clock.advance(60 * 60_000);
      const next = (await reconcileScheduled(t.services, { sleep: async () => {} })).find((r) => r.workspace === solo.slug);
      assert.equal(next?.since, Date.parse("2026-11-17T12:00:00.000Z"), "four days before the first round, on 21 November at 12:00");
      // Stripe refusing one environment's key fails its run alone; the round goes on.
      t.stripeApi.failWith = { status: 401, error: { type: "invalid_request_error", message: "Invalid API Key provided: sk_test_****0123" } };
      const refused = (await reconcileScheduled(t.services, { sleep: async () => {} })).filter((r) => r.status === "failed");
      assert.ok(refused.some((r) => r.workspace === solo.slug && /Invalid API Key/.test(r.error ?? "")));
      assert.ok(
        refused.some((r) => r.workspace === t.reconciled.slug),
        "the next environment was still tried",
      );
      t.stripeApi.failWith = null;
      // What runs found is counted for /metrics (the dashboard's run found one purchase).
      assert.match(await t.services.metrics.render(), /warden_stripe_reconcile_found_total\{kind="applied"\} [1-9]/);
    });
  });
}
