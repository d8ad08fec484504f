import type { Selectable, Updateable } from "kysely";
import type { Executor } from "../db/database.js";
import type { Env, ProductKind, SubscriptionsTable } from "../db/schema.js";
import { settleTrialOutcomes } from "../insights/rollup.store.js";

/** The payment processor's statuses (Stripe's), kept as given. */
export type SubscriptionStatus = "incomplete" | "incomplete_expired" | "trialing" | "active" | "past_due" | "canceled" | "unpaid" | "paused";

export interface Subscription {
  workspaceId: string;
  env: Env;
  /** The payment processor's id; unique within a workspace environment only. */
  id: string;
  personId: string;
  productKind: ProductKind;
  productId: string;
  planId: string | null;
  status: string;
  currentPeriodStart: number;
  currentPeriodEnd: number;
  cancelAtPeriodEnd: boolean;
  cancelAt: number | null;
  endedAt: number | null;
  /** A team subscription when above 0: it entitles its buyer to nothing; its seats are licences. */
  seats: number | null;
  createdAt: number;
}

/** A subscription as stored, with what only the payment processor's reports write. */
export interface StoredSubscription extends Subscription {
  /** The processor's time of the state last applied; null for one never reported by it (imported). */
  processorAt: number | null;
  /** UTC day (YYYY-MM-DD) of the last subscription.cancelled with immediately false. */
  cancelNotifiedDay: string | null;
  /** The buyer's person id when bought signed in: the events' user_id. */
  accountPersonId: string | null;
}

type Scope = { workspaceId: string; env: Env };

export async function insertSubscription(ex: Executor, subscription: Subscription & Partial<StoredSubscription>): Promise<void> {
  await insertSubscriptions(ex, [subscription]);
}

/** Several subscriptions in one statement. */
export async function insertSubscriptions(ex: Executor, subscriptions: readonly (Subscription & Partial<StoredSubscription>)[]): Promise<void> {
  if (subscriptions.length === 0) return;
  await ex
    .insertInto("subscriptions")
    .values(
      subscriptions.map((subscription) => ({
        workspace_id: subscription.workspaceId,
        env: subscription.env,
        id: subscription.id,
        person_id: subscription.personId,
        product_kind: subscription.productKind,
        product_id: subscription.productId,
        plan_id: subscription.planId,
        status: subscription.status,
        current_period_start: subscription.currentPeriodStart,
        current_period_end: subscription.currentPeriodEnd,
        cancel_at_period_end: subscription.cancelAtPeriodEnd ? 1 : 0,
        cancel_at: subscription.cancelAt,
        ended_at: subscription.endedAt,
        seats: subscription.seats,
        created_at: subscription.createdAt,
        processor_at: subscription.processorAt ?? null,
        cancel_notified_day: subscription.cancelNotifiedDay ?? null,
        account_person_id: subscription.accountPersonId ?? null,
      })),
    )
    .execute(); // A subscription may decide its buyer's trials.
  await settleTrialOutcomes(ex, subscriptions);
}

function toSubscription(r: Selectable<SubscriptionsTable>): StoredSubscription {
  return {
    workspaceId: r.workspace_id,
    env: r.env,
    id: r.id,
    personId: r.person_id,
    productKind: r.product_kind,
    productId: r.product_id,
    planId: r.plan_id,
    status: r.status,
    currentPeriodStart: Number(r.current_period_start),
    currentPeriodEnd: Number(r.current_period_end),
    cancelAtPeriodEnd: Number(r.cancel_at_period_end) === 1,
    cancelAt: r.cancel_at === null ? null : Number(r.cancel_at),
    endedAt: r.ended_at === null ? null : Number(r.ended_at),
    seats: r.seats === null ? null : Number(r.seats),
    createdAt: Number(r.created_at),
    processorAt: r.processor_at === null ? null : Number(r.processor_at),
    cancelNotifiedDay: r.cancel_notified_day,
    accountPersonId: r.account_person_id,
  };
}

export async function findSubscription(ex: Executor, scope: Scope, id: string): Promise<StoredSubscription | null> {
  const r = await ex
    .selectFrom("subscriptions")
    .selectAll()
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("id", "=", id)
    .executeTakeFirst();
  return r ? toSubscription(r) : null;
}

/** Subscriptions of one workspace environment by processor id, those that exist. */
export async function findSubscriptions(ex: Executor, scope: Scope, ids: readonly string[]): Promise<Map<string, StoredSubscription>> {
  if (ids.length === 0) return new Map();
  const rows = await ex
    .selectFrom("subscriptions")
    .selectAll()
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("id", "in", ids)
    .execute();
  return new Map(rows.map((r) => [r.id, toSubscription(r)]));
}

/** Subscriptions with this processor id in any workspace environment (ids are unique per environment only). */
export async function findSubscriptionsById(ex: Executor, id: string): Promise<StoredSubscription[]> {
  const rows = await ex.selectFrom("subscriptions").selectAll().where("id", "=", id).execute();
  return rows.map(toSubscription);
}

export type SubscriptionPatch = Partial<
  Pick<
    StoredSubscription,
    | "status"
    | "currentPeriodStart"
    | "currentPeriodEnd"
    | "cancelAtPeriodEnd"
    | "cancelAt"
    | "endedAt"
    | "processorAt"
    | "cancelNotifiedDay"
    | "seats"
    | "planId"
  >
>;

export async function updateSubscription(ex: Executor, scope: Scope, id: string, patch: SubscriptionPatch): Promise<void> {
  const set: Updateable<SubscriptionsTable> = {};
  if (patch.status !== undefined) set.status = patch.status;
  if (patch.currentPeriodStart !== undefined) set.current_period_start = patch.currentPeriodStart;
  if (patch.currentPeriodEnd !== undefined) set.current_period_end = patch.currentPeriodEnd;
  if (patch.cancelAtPeriodEnd !== undefined) set.cancel_at_period_end = patch.cancelAtPeriodEnd ? 1 : 0;
  if (patch.cancelAt !== undefined) set.cancel_at = patch.cancelAt;
  if (patch.endedAt !== undefined) set.ended_at = patch.endedAt;
  if (patch.processorAt !== undefined) set.processor_at = patch.processorAt;
  if (patch.cancelNotifiedDay !== undefined) set.cancel_notified_day = patch.cancelNotifiedDay;
  if (patch.seats !== undefined) set.seats = patch.seats;
  if (patch.planId !== undefined) set.plan_id = patch.planId;
  if (Object.keys(set).length === 0) return;
  await ex.updateTable("subscriptions").set(set).where("workspace_id", "=", scope.workspaceId).where("env", "=", scope.env).where("id", "=", id).execute();
}

/** A change of plan or seats the processor reported, kept for the customer's page (migration 046); null: that one did not change. */
export async function insertSubscriptionChange(
  ex: Executor,
  scope: Scope,
  change: {
    subscriptionId: string;
    at: number;
    plan: { from: string | null; to: string | null } | null;
    seats: { from: number | null; to: number | null } | null;
  },
): Promise<void> {
  await ex
    .insertInto("subscription_changes")
    .values({
      workspace_id: scope.workspaceId,
      env: scope.env,
      subscription_id: change.subscriptionId,
      at: change.at,
      plan_from: change.plan?.from ?? null,
      plan_to: change.plan?.to ?? null,
      seats_from: change.seats?.from ?? null,
      seats_to: change.seats?.to ?? null,
    })
    .execute();
}

/** The subscriptions a person bought in one workspace environment, newest first. */
export async function listSubscriptionsOfPerson(ex: Executor, scope: Scope, personId: string): Promise<StoredSubscription[]> {
  const rows = await ex
    .selectFrom("subscriptions")
    .selectAll()
    .where("person_id", "=", personId)
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .orderBy("created_at", "desc")
    .orderBy("id")
    .execute();
  return rows.map(toSubscription);
}

/**
 * Of these subscriptions, each one's person's address and its newest paid invoice's amount
 * (null before its first): what the overview's recent activity shows beside its events,
 * which carry neither for a subscription. One statement, by the invoices' subscription index.
 */
export async function subscriptionBuyers(
  ex: Executor,
  scope: Scope,
  ids: readonly string[],
): Promise<Map<string, { email: string; amountCents: number | null; currency: string | null }>> {
  if (ids.length === 0) return new Map();
  const rows = await ex
    .selectFrom("subscriptions as s")
    .innerJoin("people as p", "p.id", "s.person_id")
    .leftJoin("subscription_invoices as i", (join) =>
      join.onRef("i.workspace_id", "=", "s.workspace_id").onRef("i.env", "=", "s.env").onRef("i.subscription_id", "=", "s.id"),
    )
    .select(["s.id", "p.email", "i.amount_cents", "i.currency", "i.paid_at"])
    .where("s.workspace_id", "=", scope.workspaceId)
    .where("s.env", "=", scope.env)
    .where("s.id", "in", [...new Set(ids)])
    .execute();
  const out = new Map<string, { email: string; amountCents: number | null; currency: string | null; paidAt: number }>();
  for (const r of rows) {
    const paidAt = r.paid_at === null ? -1 : Number(r.paid_at);
    const held = out.get(r.id);
    if (held && held.paidAt >= paidAt) continue;
    out.set(r.id, { email: r.email, amountCents: r.amount_cents === null ? null : Number(r.amount_cents), currency: r.currency, paidAt });
  }
  return new Map([...out].map(([id, { paidAt: _, ...buyer }]) => [id, buyer]));
}
