import type { Executor } from "../db/database.js";
import type { Env } from "../db/schema.js";

type Scope = { workspaceId: string; env: Env };

/**
 * Records a Paddle event as handled, in the transaction that applies it; answers false
 * when it was handled before (Paddle's retry, or a replay), so it is applied once.
 */
export async function claimPaddleEvent(
  ex: Executor,
  scope: Scope,
  event: { id: string; type: string; occurredAt: number; receivedAt: number },
): Promise<boolean> {
  const inserted = await ex
    .insertInto("paddle_events")
    .values({
      workspace_id: scope.workspaceId,
      env: scope.env,
      id: event.id,
      type: event.type,
      occurred_at: event.occurredAt,
      received_at: event.receivedAt,
      outcome: "applied",
      reason: null,
    })
    .onConflict((oc) => oc.columns(["workspace_id", "env", "id"]).doNothing())
    .returning("id")
    .executeTakeFirst();
  return inserted !== undefined;
}

/** Settles how a handled event ended. */
export async function setPaddleEventOutcome(
  ex: Executor,
  scope: Scope,
  id: string,
  outcome: { outcome: "applied" | "ignored"; reason: string | null },
): Promise<void> {
  await ex
    .updateTable("paddle_events")
    .set({ outcome: outcome.outcome, reason: outcome.reason })
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("id", "=", id)
    .execute();
}

/**
 * Records an approved refund once (by its adjustment id) and answers what its transaction
 * has had refunded in all: Paddle reports each refund alone, billing wants the total so far.
 */
export async function addPaddleRefund(
  ex: Executor,
  scope: Scope,
  refund: { adjustmentId: string; transactionId: string; amountCents: number },
  now: number,
): Promise<number> {
  await ex
    .insertInto("paddle_refunds")
    .values({
      workspace_id: scope.workspaceId,
      env: scope.env,
      adjustment_id: refund.adjustmentId,
      transaction_id: refund.transactionId,
      amount_cents: refund.amountCents,
      created_at: now,
    })
    .onConflict((oc) => oc.columns(["workspace_id", "env", "adjustment_id"]).doNothing())
    .execute();
  const row = await ex
    .selectFrom("paddle_refunds")
    .select((eb) => eb.fn.sum<string | number>("amount_cents").as("total"))
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("transaction_id", "=", refund.transactionId)
    .executeTakeFirstOrThrow();
  return Number(row.total);
}

/** The newest event the environment received (index paddle_events_received, migration 047). */
export async function findLastPaddleEvent(
  ex: Executor,
  scope: Scope,
): Promise<{ id: string; type: string; receivedAt: number; outcome: "applied" | "ignored"; reason: string | null } | null> {
  const row = await ex
    .selectFrom("paddle_events")
    .select(["id", "type", "received_at", "outcome", "reason"])
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .orderBy("received_at", "desc")
    .limit(1)
    .executeTakeFirst();
  return row ? { id: row.id, type: row.type, receivedAt: Number(row.received_at), outcome: row.outcome, reason: row.reason } : null;
}
