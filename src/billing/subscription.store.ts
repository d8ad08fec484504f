import type { Executor } from "../db/database.js";
import type { Env, ProductKind } from "../db/schema.js";

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

export async function insertSubscription(ex: Executor, subscription: Subscription): Promise<void> {
  await ex
    .insertInto("subscriptions")
    .values({
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
    })
    .execute();
}

export async function findSubscription(ex: Executor, scope: { workspaceId: string; env: Env }, id: string): Promise<Subscription | null> {
  const r = await ex
    .selectFrom("subscriptions")
    .selectAll()
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("id", "=", id)
    .executeTakeFirst();
  if (!r) return null;
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
  };
}
