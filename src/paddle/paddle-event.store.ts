import type { Executor } from "../db/database.js";
import type { Env, PaddleAdjustmentAction } from "../db/schema.js";

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
 * Records an approved adjustment once (by its id), and answers whether it was new and what
 * its transaction has had refunded in all: Paddle reports each refund alone, billing wants
 * the total so far (chargebacks are not refunds, and count in it for nothing).
 */
export async function addPaddleAdjustment(
  ex: Executor,
  scope: Scope,
  adjustment: { adjustmentId: string; transactionId: string; action: PaddleAdjustmentAction; amountCents: number; earningsCents: number | null; at: number },
  now: number,
): Promise<{ added: boolean; refundedCents: number }> {
  const inserted = await ex
    .insertInto("paddle_refunds")
    .values({
      workspace_id: scope.workspaceId,
      env: scope.env,
      adjustment_id: adjustment.adjustmentId,
      transaction_id: adjustment.transactionId,
      action: adjustment.action,
      amount_cents: adjustment.amountCents,
      earnings_cents: adjustment.earningsCents,
      adjusted_at: adjustment.at,
      created_at: now,
    })
    .onConflict((oc) => oc.columns(["workspace_id", "env", "adjustment_id"]).doNothing())
    .returning("adjustment_id")
    .executeTakeFirst();
  const row = await ex
    .selectFrom("paddle_refunds")
    .select((eb) => eb.fn.sum<string | number>("amount_cents").as("total"))
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("transaction_id", "=", adjustment.transactionId)
    .where("action", "=", "refund")
    .executeTakeFirstOrThrow();
  return { added: inserted !== undefined, refundedCents: Number(row.total ?? 0) };
}

/** The approved adjustments of a transaction that say what they take of its earnings (index paddle_refunds_transaction), oldest first. */
export async function listPaddleAdjustmentEarnings(
  ex: Executor,
  scope: Scope,
  transactionId: string,
): Promise<{ action: PaddleAdjustmentAction; earningsCents: number; at: number }[]> {
  const rows = await ex
    .selectFrom("paddle_refunds")
    .select(["action", "earnings_cents", "adjusted_at", "created_at"])
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("transaction_id", "=", transactionId)
    .where("earnings_cents", "is not", null)
    .execute();
  return rows
    .map((r) => ({ action: r.action, earningsCents: Number(r.earnings_cents), at: Number(r.adjusted_at ?? r.created_at) }))
    .sort((a, b) => a.at - b.at);
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
