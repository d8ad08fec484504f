// Subscription life cycle (the specification's Subscription table), from the payment
// processor's reports and from the vendor's cancellation:
// - it starts (status active or trialing): purchase.completed and subscription.started, once;
// - the buyer sets it to cancel: subscription.cancelled, immediately false, at most once
//   per UTC day;
// - it ends (deleted, a status that ends it, or the vendor's cancellation with --now):
//   subscription.cancelled, immediately true, once; a team subscription's seats end with it;
// - a team subscription's quantity changes: its seats follow (fewer: the newest handed out
//   go), and MRR moves; a price linked to another plan of the product changes its plan.
// Reports may arrive in any order and more than once: a report older than the stored
// state changes nothing (the processor's time decides, not arrival), an ended
// subscription stays ended, and every event's id is derived from its fact.
import { type Actor, recordAction } from "../audit/audit.service.js";
import { toIso } from "../clock.js";
import type { Env } from "../db/schema.js";
import { invalidParameter, notFound } from "../errors/errors.js";
import { countSubscriptionRefunds, countSubscriptionRevenue, recordSubscriptionMrr } from "../insights/rollup.store.js";
import { listSubscriptionInvoices, listSubscriptionRefunds } from "../payments/payment-link.store.js";
import type { ProcessorName } from "../payments/payment-processor.js";
import { processorOf } from "../payments/processors.js";
import type { Services } from "../services.js";
import { requireEnv, requireWorkspace } from "../workspaces/workspace-lookup.service.js";
import { type BillingTx, inBillingTransaction, syncHolders } from "./billing.context.js";
import { emitSubscriptionEnded, emitSubscriptionSetToCancel, emitSubscriptionStarted, utcDay } from "./billing.events.js";
import type { PurchaseTerms } from "./catalogue.js";
import { listSeats, setLicenceStatus } from "./licence.store.js";
import {
  findSubscription,
  findSubscriptionsById,
  insertSubscription,
  insertSubscriptionChange,
  type StoredSubscription,
  type SubscriptionPatch,
  updateSubscription,
} from "./subscription.store.js";

/** Statuses in which a subscription has begun (the specification: active or trialing). */
const STARTED = new Set(["active", "trialing"]);

/** What the processor reports about a subscription at one moment. */
export interface SubscriptionReport {
  id: string;
  /** A creation report never overwrites what is stored: whatever is stored is at least as new. */
  kind: "created" | "updated" | "deleted";
  /** The processor's time of this state (its event's creation), epoch milliseconds. */
  at: number;
  status: string;
  periodStart: number;
  periodEnd: number;
  cancelAtPeriodEnd: boolean;
  cancelAt: number | null;
  /** When it ended, for a report of a status that ends it; else null. */
  endedAt: number | null;
  startedAt: number;
  /**
   * Whether this report is the change that set it to cancel, as the processor's list of
   * changed fields tells; null when it gave none (then the stored state decides).
   */
  setToCancel: boolean | null;
  /**
   * When the buyer asked for the end, when the report is a reading of the processor's
   * object rather than its event of the change (a reconcile): the once-a-day rule counts
   * that day, as the event of the change would have. Absent: the report's own time.
   */
  cancelRequestedAt?: number;
  /** The quantity billed (Stripe's subscription item quantity): a team subscription's seats; null when not told. */
  quantity: number | null;
  /** Another plan of the same product that the processor now bills (its price is linked to that plan); absent: the plan stays. */
  planId?: string;
}

/** Who bought a subscription Warden has not stored yet, and what. */
export interface NewSubscription {
  terms: PurchaseTerms;
  personId: string;
  accountPersonId: string | null;
}

const scheduledToCancel = (s: { cancelAtPeriodEnd: boolean; cancelAt: number | null }) => s.cancelAtPeriodEnd || s.cancelAt !== null;

async function reload(tx: BillingTx, id: string): Promise<StoredSubscription> {
  const sub = await findSubscription(tx.trx, tx, id);
  if (!sub) throw new Error(`subscription ${id} vanished`);
  return sub;
}

/**
 * The seats a subscription has as billed: a team subscription's (seats above 0) follow the
 * quantity; one bought for one person stays so whatever the quantity (it is not a team,
 * and becoming one would take its buyer's own access away). A quantity of 0 is no count
 * of seats: 0 would make a team purchase its buyer's own.
 */
const billedSeats = (seats: number | null, quantity: number | null) => (seats !== null && seats > 0 && quantity !== null && quantity > 0 ? quantity : seats);

/**
 * Fewer seats than are handed out: the newest handed out are taken back (their licences
 * revoked), as the buyer pays for fewer from now on. Answers their holders.
 */
async function releaseSeatsBeyond(tx: BillingTx, sub: StoredSubscription): Promise<string[]> {
  const taken = await listSeats(tx.trx, tx, { teamSubscriptionId: sub.id });
  const beyond = taken.slice(sub.seats ?? 0);
  for (const seat of beyond) await setLicenceStatus(tx.trx, seat.id, "revoked");
  return beyond.map((s) => s.personId);
}

/** The buyer and, for a team subscription, every seat holder. */
async function holdersOf(tx: BillingTx, sub: StoredSubscription): Promise<string[]> {
  const seats = sub.seats !== null && sub.seats > 0 ? await listSeats(tx.trx, tx, { teamSubscriptionId: sub.id }) : [];
  return [sub.personId, ...seats.map((s) => s.personId)];
}

/** subscription.cancelled (immediately false) under the once-a-day rule, and the day remembered. */
async function notifySetToCancel(tx: BillingTx, sub: StoredSubscription, day: string): Promise<void> {
  const sent = await emitSubscriptionSetToCancel(tx, sub, day);
  if (sent && (sub.cancelNotifiedDay === null || day > sub.cancelNotifiedDay)) {
    await updateSubscription(tx.trx, tx, sub.id, { cancelNotifiedDay: day });
  }
}

/**
 * Applies one report. `buyer` is needed only when the subscription is not stored yet
 * (the caller holds the report back until the buyer is known).
 */
export async function applySubscriptionReport(tx: BillingTx, report: SubscriptionReport, buyer: NewSubscription | null): Promise<"applied" | "stale"> {
  const before = await findSubscription(tx.trx, tx, report.id);
  let newer = true;
  if (!before) {
    if (!buyer) throw new Error(`subscription ${report.id} is new and its buyer is unknown`);
    await insertSubscription(tx.trx, {
      workspaceId: tx.workspaceId,
      env: tx.env,
      id: report.id,
      personId: buyer.personId,
      productKind: buyer.terms.productKind,
      productId: buyer.terms.productId,
      planId: buyer.terms.planId,
      status: report.status,
      currentPeriodStart: report.periodStart,
      currentPeriodEnd: report.periodEnd,
      cancelAtPeriodEnd: report.cancelAtPeriodEnd,
      cancelAt: report.cancelAt,
      endedAt: report.endedAt,
      seats: billedSeats(buyer.terms.seats, report.quantity),
      createdAt: report.startedAt,
      processorAt: report.at,
      cancelNotifiedDay: null,
      accountPersonId: buyer.accountPersonId,
    });
  } else {
    newer = report.kind !== "created" && (before.processorAt === null || report.at >= before.processorAt);
    const patch: SubscriptionPatch = {};
    // An ended subscription stays ended (the specification's table has no way out of it).
    if (before.endedAt === null) {
      if (newer) {
        Object.assign(patch, {
          status: report.status,
          currentPeriodStart: report.periodStart,
          currentPeriodEnd: report.periodEnd,
          cancelAtPeriodEnd: report.cancelAtPeriodEnd,
          cancelAt: report.cancelAt,
          processorAt: report.at,
        });
        const seats = billedSeats(before.seats, report.quantity);
        if (seats !== before.seats) patch.seats = seats;
        if (report.planId !== undefined && report.planId !== before.planId) patch.planId = report.planId;
        if (patch.seats !== undefined || patch.planId !== undefined) {
          await insertSubscriptionChange(tx.trx, tx, {
            subscriptionId: report.id,
            at: report.at,
            plan: patch.planId === undefined ? null : { from: before.planId, to: patch.planId },
            seats: patch.seats === undefined ? null : { from: before.seats, to: patch.seats },
          });
        }
      }
      // The end applies even from a report older than the stored state: nothing comes after it.
      if (report.endedAt !== null) {
        Object.assign(patch, { status: report.status, endedAt: report.endedAt, processorAt: Math.max(report.at, before.processorAt ?? 0) });
      }
    }
    await updateSubscription(tx.trx, tx, report.id, patch);
  }
  const after = await reload(tx, report.id);
  if (!before) {
    await countSubscriptionRevenue(tx.trx, after, await listSubscriptionInvoices(tx.trx, tx, after.id));
    await countSubscriptionRefunds(tx.trx, after, await listSubscriptionRefunds(tx.trx, tx, after.id));
  }
  await recordSubscriptionMrr(tx.trx, after, report.at);
  const released = before !== null && before.seats !== null && after.seats !== null && after.seats < before.seats ? await releaseSeatsBeyond(tx, after) : [];

  if ((before === null || before.status === "incomplete") && after.endedAt === null && STARTED.has(after.status)) {
    await emitSubscriptionStarted(tx, after);
  }
  if (newer && after.endedAt === null && scheduledToCancel(after)) {
    const setNow = report.setToCancel ?? (before !== null && !scheduledToCancel(before));
    if (setNow) await notifySetToCancel(tx, after, utcDay(report.cancelRequestedAt ?? report.at));
  }
  if (after.endedAt !== null) await emitSubscriptionEnded(tx, after);
  await syncHolders(tx, after, [...(await holdersOf(tx, after)), ...released]);
  return newer || (before?.endedAt === null && after.endedAt !== null) ? "applied" : "stale";
}

export interface CancelResult {
  id: string;
  workspaceId: string;
  env: Env;
  status: string;
  cancel_at_period_end: boolean;
  /** When access ends (or ended). */
  ends_at: string;
  ended: boolean;
  /** The processor that cancelled it too (the environment's, when it has an API key and holds it), or null when none did. */
  at_processor: ProcessorName | null;
}

/** A subscription by the processor's id, in the named workspace environment when given. */
export async function requireSubscription(services: Services, input: { id: string; workspace?: string; env?: string }): Promise<StoredSubscription> {
  let found = await findSubscriptionsById(services.db, input.id);
  if (input.workspace !== undefined) {
    const workspace = await requireWorkspace(services.db, input.workspace);
    found = found.filter((s) => s.workspaceId === workspace.id);
  }
  if (input.env !== undefined) {
    const env = requireEnv(input.env);
    found = found.filter((s) => s.env === env);
  }
  const [sub, ...others] = found;
  if (!sub) throw notFound(`No subscription "${input.id}".`);
  if (others.length > 0)
    throw invalidParameter("id", `Subscription ${input.id} exists in more than one workspace environment; name it with --workspace and --env.`);
  return sub;
}

async function audit(tx: BillingTx, actor: Actor | undefined, action: "subscription.ended" | "subscription.set_to_cancel", id: string): Promise<void> {
  if (actor !== undefined) await recordAction(tx.trx, actor, { action, workspaceId: tx.workspaceId, env: tx.env, subject: id }, tx.now);
}

/**
 * The vendor's cancellation (the specification's dashboard source), made at the
 * environment's processor too (Stripe, Paddle) when it has an API key there. Without `now` it is
 * set to end at the period's end (subscription.cancelled, immediately false, once a UTC
 * day); with `now` it ends at once (immediately true) and a team's seats end with it.
 * An owner's cancellation from the dashboard names them as `actor`: audited with the change.
 */
export async function cancelSubscription(
  services: Services,
  input: { id: string; now: boolean; workspace?: string; env?: string; actor?: Actor },
): Promise<CancelResult> {
  const found = await requireSubscription(services, input);
  if (found.endedAt !== null) throw invalidParameter("id", `Subscription ${found.id} ended at ${toIso(found.endedAt)}.`);
  // At the processor first, so that it stops billing; if it refuses, nothing changes here.
  const processor = await processorOf(services, found);
  const asked = input.now || !scheduledToCancel(found) ? await processor.cancel(services, found, found.id, input.now) : false;
  return inBillingTransaction(services, found, async (tx) => {
    const sub = await reload(tx, found.id);
    if (sub.endedAt !== null) throw invalidParameter("id", `Subscription ${sub.id} ended at ${toIso(sub.endedAt)}.`);
    if (input.now) {
      await updateSubscription(tx.trx, tx, sub.id, { status: "canceled", endedAt: tx.now });
      const ended = await reload(tx, sub.id);
      await recordSubscriptionMrr(tx.trx, ended, tx.now);
      await emitSubscriptionEnded(tx, ended);
      await syncHolders(tx, ended, await holdersOf(tx, ended));
      await audit(tx, input.actor, "subscription.ended", sub.id);
    } else if (!scheduledToCancel(sub)) {
      await updateSubscription(tx.trx, tx, sub.id, { cancelAtPeriodEnd: true });
      await notifySetToCancel(tx, await reload(tx, sub.id), utcDay(tx.now));
      await audit(tx, input.actor, "subscription.set_to_cancel", sub.id);
    }
    const after = await reload(tx, sub.id);
    return {
      id: after.id,
      workspaceId: after.workspaceId,
      env: after.env,
      status: after.status,
      cancel_at_period_end: after.cancelAtPeriodEnd,
      ends_at: toIso(after.endedAt ?? after.cancelAt ?? after.currentPeriodEnd),
      ended: after.endedAt !== null,
      at_processor: asked ? processor.name : null,
    };
  });
}

const assertRunning = (sub: StoredSubscription) => {
  if (sub.endedAt !== null) {
    throw invalidParameter("id", `Subscription ${sub.id} ended at ${toIso(sub.endedAt)}.`, { reason: "subscription_ended", facts: { at: sub.endedAt } });
  }
};

/**
 * The buyer's own choice (the hosted Manage page, the client API): end the subscription
 * at its period's end, or take that back. Made at the environment's processor first
 * (Stripe, Paddle), and only through it: one it does not bill (no API key, or imported
 * from another provider) goes on being billed wherever it is, so a change in Warden alone
 * would tell the buyer something false; it is refused and nothing changes. Setting it to
 * cancel writes the event the processor's report of the change writes (the same id:
 * subscription and UTC day, so the report adds nothing); taking it back writes none, as
 * that report writes none. Asking for what already holds asks the processor nothing and
 * answers the subscription as it is.
 */
export async function setOwnCancelAtPeriodEnd(services: Services, found: StoredSubscription, cancel: boolean): Promise<StoredSubscription> {
  assertRunning(found);
  if (!cancel && !found.cancelAtPeriodEnd && found.cancelAt !== null) {
    throw invalidParameter("id", `The vendor set subscription ${found.id} to end at ${toIso(found.cancelAt)}; ask them to change that.`, {
      reason: "cancel_set_by_vendor",
      facts: { at: found.cancelAt },
    });
  }
  if (cancel === scheduledToCancel(found)) return found;
  if (!(await (await processorOf(services, found)).setCancelAtPeriodEnd(services, found, found.id, cancel))) {
    throw invalidParameter("id", `Subscription ${found.id} is billed by the vendor outside Warden: ask them to ${cancel ? "cancel" : "resume"} it.`, {
      reason: "billed_outside",
    });
  }
  return inBillingTransaction(services, found, async (tx) => {
    const sub = await reload(tx, found.id);
    assertRunning(sub);
    if (cancel && !scheduledToCancel(sub)) {
      await updateSubscription(tx.trx, tx, sub.id, { cancelAtPeriodEnd: true });
      await notifySetToCancel(tx, await reload(tx, sub.id), utcDay(tx.now));
    } else if (!cancel && sub.cancelAtPeriodEnd) {
      // Stripe may also report the period's end as cancel_at; taking the cancellation back clears both.
      await updateSubscription(tx.trx, tx, sub.id, { cancelAtPeriodEnd: false, cancelAt: sub.cancelAt === sub.currentPeriodEnd ? null : sub.cancelAt });
    }
    return reload(tx, sub.id);
  });
}
