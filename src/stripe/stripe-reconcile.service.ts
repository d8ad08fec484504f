// Reconciling with Stripe: `warden admin stripe reconcile`, the Stripe page's button and
// the scheduled run of `warden serve` read the account's Checkout Sessions,
// subscriptions, paid invoices, refunds and disputes with the environment's secret key
// and apply each as the webhook event that reports it would be (applyStripeEvent), so
// the same fact makes the same change and derives the same event id: what webhooks
// delivered already changes nothing, what they missed is applied and sent once. A
// purchase without Warden's metadata is mapped by its Stripe Price or Product to a plan
// (stripe-plan-link.service.ts); what maps to none is listed with its buyer, not guessed.
import Stripe from "stripe";
import { type Actor, recordAction } from "../audit/audit.service.js";
import { type BillingTx, inBillingTransaction } from "../billing/billing.context.js";
import { findSubscription } from "../billing/subscription.store.js";
import { toIso } from "../clock.js";
import type { Env, ReconcileTrigger } from "../db/schema.js";
import { invalidParameter, notFound } from "../errors/errors.js";
import { newId } from "../ids.js";
import type { Handled } from "../payments/apply-fact.service.js";
import { isProblem, readWardenMetadata } from "../payments/fields.js";
import type { BoughtItem } from "../payments/payment-facts.js";
import { insertSubscriptionBuyer } from "../payments/payment-link.store.js";
import type { Services } from "../services.js";
import { requireEnv, requireWorkspace } from "../workspaces/workspace-lookup.service.js";
import { findStripeAccount } from "./stripe-account.store.js";
import { stripeClient } from "./stripe-client.js";
import { applyStripeEvent } from "./stripe-ingest.service.js";
import type { StripeEvent } from "./stripe-objects.js";
import { planOfItems } from "./stripe-plan-link.service.js";
import {
  failAbandonedRuns,
  findLastScheduledStart,
  findReconcileRun,
  insertReconcileRun,
  listEventsWrittenAt,
  listReconcilableScopes,
  listReconcileRuns,
  pruneReconcileRuns,
  type ReconcileRun,
  releaseReconcileLease,
  takeReconcileLease,
  updateReconcileRun,
} from "./stripe-reconcile.store.js";

type Obj = Record<string, unknown>;
type Scope = { workspaceId: string; env: Env };

/** A run holds its environment this long past its last page; a crashed process's lease runs out by itself. */
const LEASE_MS = 5 * 60_000;
/** Stripe's largest page. */
const PAGE_SIZE = 100;
/** Each list of a run's report keeps this many entries; the counts stay exact. */
const REPORT_CAP = 200;
/** A 429 is waited out this many times per page before the run fails (about 2 minutes with backoff). */
const RATE_LIMIT_ATTEMPTS = 8;
const MAX_WAIT_MS = 60_000;
/** Runs kept per environment: four days of hourly scheduled runs, far more than the page shows. */
const RUNS_KEPT = 100;

export interface ReconcileChange {
  object: string;
  kind: ObjectKind;
  /** The events it sent (or, in a dry run, would send). */
  events: { id: string; type: string }[];
  /** What else moved: a subscription's status or period. */
  note: string | null;
}

export interface UnmappedPurchase {
  object: string;
  kind: "checkout" | "subscription";
  /** The buyer, as the Checkout Session names them. */
  email: string | null;
  items: BoughtItem[];
  reason: string;
}

export interface ReconcileReport {
  changes: ReconcileChange[];
  unmapped: UnmappedPurchase[];
  /** Objects that name a Warden purchase Warden cannot apply (a plan removed, a buyer unknown), with why. */
  skipped: { object: string; kind: ObjectKind; reason: string }[];
}

export interface ReconcileResult {
  id: string;
  workspace: string;
  env: Env;
  dryRun: boolean;
  since: number | null;
  /** A run whose process stopped is marked failed by the next run of its environment. */
  status: ReconcileRun["status"];
  scanned: number;
  applied: number;
  unmapped: number;
  error: string | null;
  startedAt: number;
  finishedAt: number | null;
  report: ReconcileReport;
}

export interface ReconcileOptions {
  /** Waits out a 429; tests pass one that moves their clock instead of sleeping. */
  sleep?: (ms: number) => Promise<void>;
}

type ObjectKind = "checkout" | "subscription" | "invoice" | "refund" | "dispute";

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A date (`2026-01-31`) or a full ISO time, as typed after --since. */
function parseSince(since: string | undefined): number | null {
  if (since === undefined || since.trim() === "") return null;
  const value = since.trim();
  const at = /^\d{4}-\d{2}-\d{2}$/.test(value) ? Date.parse(`${value}T00:00:00Z`) : Date.parse(value);
  if (!Number.isFinite(at) || !/^\d{4}-\d{2}-\d{2}/.test(value)) throw invalidParameter("since", "since must be a date such as 2026-01-31, or an ISO time.");
  return at;
}

async function secretKeyOf(services: Services, scope: Scope): Promise<string> {
  const account = await findStripeAccount(services.db, scope.workspaceId, scope.env);
  if (!account) throw invalidParameter("env", "Stripe is not connected for this environment (warden admin stripe connect).");
  if (!account.secretKeySealed) {
    throw invalidParameter(
      "secret-key",
      "Reconciling reads Stripe's API with the environment's secret key: connect one (warden admin stripe connect --secret-key sk_…).",
    );
  }
  return services.secretBox.open(account.secretKeySealed);
}

interface Begun {
  run: ReconcileRun;
  scope: Scope;
  slug: string;
  secretKey: string;
}

/** Takes the environment's lease and records the run; refuses while another run holds the environment. */
async function beginRun(
  services: Services,
  input: { workspace: string; env: string; since?: string; dryRun: boolean; trigger: ReconcileTrigger },
  actor: Actor | undefined,
): Promise<Begun | null> {
  const workspace = await requireWorkspace(services.db, input.workspace);
  const env = requireEnv(input.env);
  const scope = { workspaceId: workspace.id, env };
  const since = parseSince(input.since);
  const secretKey = await secretKeyOf(services, scope);
  const now = services.clock.now();
  const run: ReconcileRun = {
    id: newId("rec"),
    workspaceId: workspace.id,
    env,
    trigger: input.trigger,
    dryRun: input.dryRun,
    since,
    status: "running",
    scanned: 0,
    applied: 0,
    unmapped: 0,
    report: null,
    error: null,
    startedAt: now,
    finishedAt: null,
  };
  const taken = await services.db.transaction().execute(async (trx) => {
    if (!(await takeReconcileLease(trx, scope, run.id, now, now + LEASE_MS))) return false;
    await failAbandonedRuns(trx, scope, now);
    await pruneReconcileRuns(trx, scope, RUNS_KEPT);
    await insertReconcileRun(trx, run);
    if (actor) await recordAction(trx, actor, { action: "stripe.reconciled", workspaceId: workspace.id, env, subject: run.id }, now);
    return true;
  });
  return taken ? { run, scope, slug: workspace.slug, secretKey } : null;
}

const busy = (input: { workspace: string; env: string }) =>
  invalidParameter("env", `A reconcile of ${input.workspace} (${input.env}) is under way; wait for it to finish.`);

/** Runs a reconcile to its end (the CLI and the schedule): answers what it found. */
export async function reconcileStripe(
  services: Services,
  input: { workspace: string; env: string; since?: string; dryRun: boolean; trigger: ReconcileTrigger },
  options: ReconcileOptions = {},
): Promise<ReconcileResult> {
  const begun = await beginRun(services, input, undefined);
  if (!begun) throw busy(input);
  return runReconcile(services, begun, options);
}

/**
 * Starts a reconcile and answers at once (the dashboard's button): the run row tells
 * its progress and result; `done` settles when it ends (tests await it).
 */
export async function startReconcile(
  services: Services,
  input: { workspace: string; env: string; dryRun: boolean },
  actor: Actor,
): Promise<{ id: string; done: Promise<ReconcileResult> }> {
  const begun = await beginRun(services, { ...input, trigger: "dashboard" }, actor);
  if (!begun) throw busy(input);
  const done = runReconcile(services, begun, {});
  // Its failure is in the run row; a rejection nobody awaits must not end the process.
  done.catch(() => {});
  return { id: begun.run.id, done };
}

class Counters {
  scanned = 0;
  applied = 0;
  unmapped = 0;
  readonly report: ReconcileReport = { changes: [], unmapped: [], skipped: [] };
  push<K extends keyof ReconcileReport>(list: K, entry: ReconcileReport[K][number]): void {
    const target = this.report[list] as ReconcileReport[K][number][];
    if (target.length < REPORT_CAP) target.push(entry);
  }
}

async function runReconcile(services: Services, begun: Begun, options: ReconcileOptions): Promise<ReconcileResult> {
  const { run, scope } = begun;
  const counters = new Counters();
  const sleep = options.sleep ?? realSleep;
  const stripe = stripeClient(begun.secretKey, services.config.stripeApiUrl);
  const saveProgress = async (status: ReconcileRun["status"], error: string | null) => {
    const finished = status !== "running";
    await updateReconcileRun(services.db, run.id, {
      status,
      scanned: counters.scanned,
      applied: counters.applied,
      unmapped: counters.unmapped,
      report: JSON.stringify(counters.report),
      error,
      ...(finished ? { finishedAt: services.clock.now() } : {}),
    });
    if (!finished) {
      const now = services.clock.now();
      if (!(await takeReconcileLease(services.db, scope, run.id, now, now + LEASE_MS))) throw new Error("the reconcile's lease was taken by another run");
    }
  };
  try {
    await readAndApply(services, { scope, stripe, dryRun: run.dryRun, since: run.since, sleep, counters, onPage: () => saveProgress("running", null) });
    await saveProgress("done", null);
    if (!run.dryRun) services.metrics.countReconcileFindings(counters.applied, counters.unmapped);
  } catch (error) {
    const message =
      error instanceof Stripe.errors.StripeError ? `Stripe: ${error.message.split("\n")[0]}` : error instanceof Error ? error.message : String(error);
    await saveProgress("failed", message).catch(() => {});
    await releaseReconcileLease(services.db, scope, run.id).catch(() => {});
    throw error;
  }
  await releaseReconcileLease(services.db, scope, run.id);
  const stored = await findReconcileRun(services.db, scope, run.id);
  if (!stored) throw new Error(`reconcile run ${run.id} vanished`);
  return resultOf(begun.slug, stored);
}

function resultOf(slug: string, run: ReconcileRun): ReconcileResult {
  const report = run.report === null ? { changes: [], unmapped: [], skipped: [] } : (JSON.parse(run.report) as ReconcileReport);
  return {
    id: run.id,
    workspace: slug,
    env: run.env,
    dryRun: run.dryRun,
    since: run.since,
    status: run.status,
    scanned: run.scanned,
    applied: run.applied,
    unmapped: run.unmapped,
    error: run.error,
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
    report,
  };
}

/**
 * Stripe retries a delivery for three days: a scheduled run reads what was created since
 * a little more than that before the previous scheduled run began (subscriptions whole).
 */
const SCHEDULE_OVERLAP_MS = 4 * 86_400_000;

/**
 * One scheduled round (`warden serve`, WARDEN_STRIPE_RECONCILE_MINUTES): every environment
 * with a secret key, each skipped while another process reconciles it. Answers the runs
 * made, failed ones included.
 */
export async function reconcileScheduled(services: Services, options: ReconcileOptions = {}): Promise<ReconcileResult[]> {
  const results: ReconcileResult[] = [];
  for (const scope of await listReconcilableScopes(services.db)) {
    const last = await findLastScheduledStart(services.db, scope);
    const since = last === null ? undefined : toIso(last - SCHEDULE_OVERLAP_MS);
    const begun = await beginRun(
      services,
      { workspace: scope.slug, env: scope.env, dryRun: false, trigger: "schedule", ...(since ? { since } : {}) },
      undefined,
    );
    if (!begun) continue;
    // One environment's failure (a key revoked at Stripe) is in its run's row; the others still run.
    const result = await runReconcile(services, begun, options).catch(async () => {
      const failed = await findReconcileRun(services.db, scope, begun.run.id);
      return failed ? resultOf(scope.slug, failed) : null;
    });
    if (result) results.push(result);
  }
  return results;
}

/** The environment's recent reconciles, newest first (the Stripe page). */
export async function listReconciles(services: Services, input: { workspace: string; env: string }, limit = 5): Promise<ReconcileResult[]> {
  const workspace = await requireWorkspace(services.db, input.workspace);
  const env = requireEnv(input.env);
  const runs = await listReconcileRuns(services.db, { workspaceId: workspace.id, env }, limit);
  return runs.map((run) => resultOf(workspace.slug, run));
}

export async function findReconcile(services: Services, input: { workspace: string; env: string; id: string }): Promise<ReconcileResult> {
  const workspace = await requireWorkspace(services.db, input.workspace);
  const env = requireEnv(input.env);
  const run = await findReconcileRun(services.db, { workspaceId: workspace.id, env }, input.id);
  if (!run) throw notFound(`No reconcile "${input.id}".`);
  return resultOf(workspace.slug, run);
}

interface Reading {
  scope: Scope;
  stripe: Stripe;
  dryRun: boolean;
  since: number | null;
  sleep: (ms: number) => Promise<void>;
  counters: Counters;
  onPage: () => Promise<void>;
}

/** Waits out Stripe's 429: its Retry-After when it gives one, else a doubling backoff. */
async function withRateLimit<T>(sleep: (ms: number) => Promise<void>, call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      const limited = error instanceof Stripe.errors.StripeError && (error.statusCode === 429 || error.type === "StripeRateLimitError");
      if (!limited || attempt >= RATE_LIMIT_ATTEMPTS) throw error;
      const header = (error as { headers?: Record<string, string> }).headers?.["retry-after"];
      const retryAfter = header === undefined ? Number.NaN : Number(header) * 1000;
      await sleep(Math.min(Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : 500 * 2 ** attempt, MAX_WAIT_MS));
    }
  }
}

type Page = { data: unknown[]; has_more: boolean };

/** Every object of one list, page by page (`starting_after`), each page's 429s waited out. */
async function forEachObject(reading: Reading, list: (params: { limit: number; starting_after?: string }) => Promise<Page>, each: (o: Obj) => Promise<void>) {
  let startingAfter: string | undefined;
  for (;;) {
    const page = await withRateLimit(reading.sleep, () => list({ limit: PAGE_SIZE, ...(startingAfter ? { starting_after: startingAfter } : {}) }));
    for (const item of page.data) {
      reading.counters.scanned += 1;
      await each(item as Obj);
    }
    await reading.onPage();
    const last = page.data.at(-1) as Obj | undefined;
    if (!page.has_more || typeof last?.id !== "string") return;
    startingAfter = last.id;
  }
}

class DryRunRollback extends Error {
  constructor(readonly outcome: Applied) {
    super("dry run");
  }
}

interface Applied {
  handled: Handled;
  events: { id: string; type: string }[];
  note: string | null;
}

const sec = (o: Obj, key: string) => (typeof o[key] === "number" ? (o[key] as number) * 1000 : null);

/**
 * Applies one object as the event that reports it, in its own payment transaction (as a
 * delivery is), and answers what it sent; a dry run rolls the transaction back.
 */
async function applyObject(services: Services, reading: Reading, event: StripeEvent, prepare?: (tx: BillingTx) => Promise<void>): Promise<Applied> {
  const work = async (tx: BillingTx): Promise<Applied> => {
    if (prepare) await prepare(tx);
    const before = await listEventsWrittenAt(tx.trx, tx, tx.now);
    const subscriptionBefore = event.type.startsWith("customer.subscription.") ? await findSubscription(tx.trx, tx, String(event.object.id)) : null;
    const handled = await applyStripeEvent(tx, event);
    const known = new Set(before.map((e) => e.id));
    const events = (await listEventsWrittenAt(tx.trx, tx, tx.now)).filter((e) => !known.has(e.id));
    let note: string | null = null;
    if (event.type.startsWith("customer.subscription.") && subscriptionBefore) {
      const after = await findSubscription(tx.trx, tx, subscriptionBefore.id);
      const seats = after !== null && after.seats !== subscriptionBefore.seats ? `, ${after.seats} seats` : "";
      const plan = after !== null && after.planId !== subscriptionBefore.planId ? `, plan ${after.planId}` : "";
      if (after && (after.status !== subscriptionBefore.status || after.currentPeriodEnd !== subscriptionBefore.currentPeriodEnd || seats || plan)) {
        note = `status ${after.status}, period to ${toIso(after.currentPeriodEnd)}${seats}${plan}`;
      }
    }
    const applied = { handled, events, note };
    if (reading.dryRun) throw new DryRunRollback(applied);
    return applied;
  };
  try {
    return await inBillingTransaction(services, reading.scope, work);
  } catch (error) {
    if (error instanceof DryRunRollback) return error.outcome;
    throw error;
  }
}

function record(reading: Reading, kind: ObjectKind, object: string, applied: Applied): void {
  const { counters } = reading;
  if (applied.events.length > 0 || applied.note !== null) {
    counters.applied += 1;
    counters.push("changes", { object, kind, events: applied.events, note: applied.note });
  }
  const { outcome, reason } = applied.handled;
  // A deferred subscription waits for a checkout no list named: its buyer is unknown.
  if (outcome === "deferred") counters.push("skipped", { object, kind, reason: "no Checkout Session names its buyer" });
  else if (outcome === "ignored" && reason !== null && concernsThePurchase(reason)) counters.push("skipped", { object, kind, reason });
}

// Ignored for a reason that concerns what was bought (a product or plan Warden lacks),
// worth the vendor's eye; not the everyday ones (a partial refund, an unpaid checkout).
const concernsThePurchase = (reason: string) => /^no (tool|bundle|plan) |is billed /.test(reason);

const eventOf = (type: string, object: Obj, created: number): StripeEvent => ({
  id: typeof object.id === "string" ? object.id : "",
  type,
  created,
  livemode: object.livemode === true,
  object,
  previousAttributes: null,
  fromApi: true,
});

const itemOf = (price: unknown): BoughtItem => {
  const p = typeof price === "object" && price !== null ? (price as Obj) : {};
  const product = p.product;
  return {
    price: typeof p.id === "string" ? p.id : null,
    product: typeof product === "string" ? product : typeof product === "object" && product !== null ? String((product as Obj).id) : null,
  };
};

/** Warden's metadata for a purchase that carries none, from the plan its items map to. */
async function mappedMetadata(services: Services, scope: Scope, metadata: unknown, items: () => Promise<BoughtItem[]>) {
  if (!isProblem(readWardenMetadata(metadata))) return { metadata, items: [] as BoughtItem[], problem: null };
  const bought = await items();
  const plan = await planOfItems(services.db, scope.workspaceId, bought);
  if (isProblem(plan)) return { metadata, items: bought, problem: plan.problem };
  const own = typeof metadata === "object" && metadata !== null ? metadata : {};
  return {
    metadata: { ...own, [plan.productKind === "tool" ? "warden_tool" : "warden_bundle"]: plan.productId, warden_plan: plan.planId },
    items: bought,
    problem: null,
  };
}

/**
 * The five lists in an order where each finds what it depends on: checkouts (licences,
 * and who bought each subscription), subscriptions, paid invoices (which payments are a
 * subscription's), refunds, disputes. `since` bounds them by creation, except
 * subscriptions, read whole: an old one renews, or is cancelled, long after it began.
 */
async function readAndApply(services: Services, reading: Reading): Promise<void> {
  const { stripe, scope, counters } = reading;
  const created = reading.since === null ? {} : { created: { gte: Math.floor(reading.since / 1000) } };
  const noRetry = { maxNetworkRetries: 0 };
  // Who bought each subscription, from its checkout: listed with an unmapped one, and
  // (in a dry run, where the checkout's own change was rolled back) taken as its buyer.
  const buyers = new Map<string, { email: string | null; checkoutSession: string }>();

  await forEachObject(
    reading,
    (p) => stripe.checkout.sessions.list({ ...p, ...created, status: "complete" }, noRetry),
    async (session) => {
      const id = String(session.id);
      const details = session.customer_details as Obj | null | undefined;
      const email = typeof details?.email === "string" ? details.email : typeof session.customer_email === "string" ? session.customer_email : null;
      if (session.mode === "subscription") {
        if (typeof session.subscription === "string") buyers.set(session.subscription, { email, checkoutSession: id });
        // The subscription carries its own metadata: the checkout only says who bought it.
        record(reading, "checkout", id, await applyObject(services, reading, eventOf("checkout.session.completed", session, sec(session, "created") ?? 0)));
        return;
      }
      if (session.mode !== "payment") return;
      const mapped = await mappedMetadata(services, scope, session.metadata, async () => {
        const lines = await withRateLimit(reading.sleep, () => stripe.checkout.sessions.listLineItems(id, { limit: PAGE_SIZE }, noRetry));
        return lines.data.map((line) => itemOf(line.price));
      });
      if (mapped.problem !== null) {
        counters.unmapped += 1;
        counters.push("unmapped", { object: id, kind: "checkout", email, items: mapped.items, reason: mapped.problem });
        return;
      }
      const event = eventOf("checkout.session.completed", { ...session, metadata: mapped.metadata }, sec(session, "created") ?? 0);
      record(reading, "checkout", id, await applyObject(services, reading, event));
    },
  );

  await forEachObject(
    reading,
    (p) => stripe.subscriptions.list({ ...p, status: "all" }, noRetry),
    async (subscription) => {
      const id = String(subscription.id);
      const items = (subscription.items as { data?: Obj[] } | undefined)?.data ?? [];
      const stored = await findSubscription(services.db, scope, id);
      const mapped = stored
        ? { metadata: subscription.metadata, items: [], problem: null }
        : await mappedMetadata(services, scope, subscription.metadata, async () => items.map((i) => itemOf(i.price)));
      if (mapped.problem !== null) {
        counters.unmapped += 1;
        counters.push("unmapped", { object: id, kind: "subscription", email: buyers.get(id)?.email ?? null, items: mapped.items, reason: mapped.problem });
        return;
      }
      const ended = ["canceled", "incomplete_expired"].includes(String(subscription.status));
      // Read now, so it is newer than any delivery already applied, and older than any sent after this reading.
      const event = eventOf(
        ended ? "customer.subscription.deleted" : "customer.subscription.updated",
        { ...subscription, metadata: mapped.metadata },
        services.clock.now(),
      );
      const buyer = buyers.get(id);
      const prepare =
        reading.dryRun && buyer
          ? (tx: BillingTx) =>
              insertSubscriptionBuyer(
                tx.trx,
                tx,
                { subscriptionId: id, email: buyer.email, accountPersonId: null, checkoutSession: buyer.checkoutSession },
                tx.now,
              )
          : undefined;
      record(reading, "subscription", id, await applyObject(services, reading, event, prepare));
    },
  );

  await forEachObject(
    reading,
    (p) => stripe.invoices.list({ ...p, ...created, status: "paid", expand: ["data.payments"] }, noRetry),
    async (invoice) => {
      record(reading, "invoice", String(invoice.id), await applyObject(services, reading, eventOf("invoice.paid", invoice, sec(invoice, "created") ?? 0)));
    },
  );

  const refundedCharges = new Set<string>();
  await forEachObject(
    reading,
    (p) => stripe.refunds.list({ ...p, ...created, expand: ["data.charge"] }, noRetry),
    async (refund) => {
      const charge = refund.charge;
      if (typeof charge !== "object" || charge === null) return;
      const chargeId = String((charge as Obj).id);
      // A charge refunded in parts is read once: its amount_refunded is the sum.
      if (refundedCharges.has(chargeId)) return;
      refundedCharges.add(chargeId);
      record(
        reading,
        "refund",
        String(refund.id),
        await applyObject(services, reading, eventOf("charge.refunded", charge as Obj, sec(refund, "created") ?? 0)),
      );
    },
  );

  await forEachObject(
    reading,
    (p) => stripe.disputes.list({ ...p, ...created }, noRetry),
    async (dispute) => {
      const closed = ["won", "lost", "warning_closed"].includes(String(dispute.status));
      const event = eventOf(closed ? "charge.dispute.closed" : "charge.dispute.created", dispute, sec(dispute, "created") ?? 0);
      record(reading, "dispute", String(dispute.id), await applyObject(services, reading, event));
    },
  );
}
