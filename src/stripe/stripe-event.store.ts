import type { Executor } from "../db/database.js";
import type { Env, StripeEventOutcome } from "../db/schema.js";

type Scope = { workspaceId: string; env: Env };

/**
 * Records a Stripe event as handled, in the transaction that applies it; answers false
 * when it was handled before (a retry or a duplicate delivery), so it is applied once.
 */
export async function claimStripeEvent(
  ex: Executor,
  scope: Scope,
  event: { id: string; type: string; stripeCreated: number; receivedAt: number },
): Promise<boolean> {
  const inserted = await ex
    .insertInto("stripe_events")
    .values({
      workspace_id: scope.workspaceId,
      env: scope.env,
      id: event.id,
      type: event.type,
      stripe_created: event.stripeCreated,
      received_at: event.receivedAt,
      outcome: "applied",
      reason: null,
      subscription_id: null,
      payload: null,
    })
    .onConflict((oc) => oc.columns(["workspace_id", "env", "id"]).doNothing())
    .returning("id")
    .executeTakeFirst();
  return inserted !== undefined;
}

/** Settles how a handled event ended; a deferred one keeps its payload and the subscription it waits for. */
export async function setStripeEventOutcome(
  ex: Executor,
  scope: Scope,
  id: string,
  outcome: { outcome: StripeEventOutcome; reason: string | null; subscriptionId?: string; payload?: string },
): Promise<void> {
  await ex
    .updateTable("stripe_events")
    .set({ outcome: outcome.outcome, reason: outcome.reason, subscription_id: outcome.subscriptionId ?? null, payload: outcome.payload ?? null })
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("id", "=", id)
    .execute();
}

/** Events held back until the subscription's buyer is known, in Stripe's order. */
export async function listDeferredEvents(ex: Executor, scope: Scope, subscriptionId: string): Promise<{ id: string; payload: string }[]> {
  const rows = await ex
    .selectFrom("stripe_events")
    .select(["id", "payload"])
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("subscription_id", "=", subscriptionId)
    .where("outcome", "=", "deferred")
    .orderBy("stripe_created")
    .orderBy("received_at")
    .orderBy("id")
    .execute();
  return rows.map((r) => ({ id: r.id, payload: r.payload ?? "" }));
}

/** The newest event the environment received (index stripe_events_received, migration 017). */
export async function findLastStripeEvent(
  ex: Executor,
  scope: Scope,
): Promise<{ id: string; type: string; receivedAt: number; outcome: StripeEventOutcome; reason: string | null } | null> {
  const row = await ex
    .selectFrom("stripe_events")
    .select(["id", "type", "received_at", "outcome", "reason"])
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .orderBy("received_at", "desc")
    .limit(1)
    .executeTakeFirst();
  return row ? { id: row.id, type: row.type, receivedAt: Number(row.received_at), outcome: row.outcome, reason: row.reason } : null;
}

export interface ReceivedStripeEvent {
  id: string;
  type: string;
  receivedAt: number;
  outcome: StripeEventOutcome;
  reason: string | null;
}

/**
 * The environment's received events, newest first, from after a keyset position, of one
 * outcome or all (index stripe_events_received, migration 017: a page reads `limit` rows).
 */
export async function listStripeEvents(
  ex: Executor,
  scope: Scope,
  options: { outcome: StripeEventOutcome | null; after: { receivedAt: number; id: string } | null; limit: number },
): Promise<ReceivedStripeEvent[]> {
  let query = ex
    .selectFrom("stripe_events")
    .select(["id", "type", "received_at", "outcome", "reason"])
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env);
  if (options.outcome !== null) query = query.where("outcome", "=", options.outcome);
  const after = options.after;
  if (after !== null) {
    query = query.where((eb) => eb.or([eb("received_at", "<", after.receivedAt), eb.and([eb("received_at", "=", after.receivedAt), eb("id", "<", after.id)])]));
  }
  const rows = await query.orderBy("received_at", "desc").orderBy("id", "desc").limit(options.limit).execute();
  return rows.map((r) => ({ id: r.id, type: r.type, receivedAt: Number(r.received_at), outcome: r.outcome, reason: r.reason }));
}
