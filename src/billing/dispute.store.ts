import type { Selectable } from "kysely";
import type { Executor } from "../db/database.js";
import type { DisputesTable, Env, ProductKind } from "../db/schema.js";

/** A buyer's dispute of a payment: of a licence's, or of a subscription's (licence null). */
export interface Dispute {
  workspaceId: string;
  env: Env;
  /** The payment processor's id (`du_…`). */
  id: string;
  licenceId: string | null;
  subscriptionId: string | null;
  productKind: ProductKind;
  productId: string;
  paymentIntent: string;
  amountCents: number;
  currency: string;
  reason: string;
  /** The processor's status: needs_response, under_review… then won, lost or warning_closed. */
  status: string;
  respondBy: number | null;
  openedAt: number;
  closedAt: number | null;
}

type Scope = { workspaceId: string; env: Env };

function toDispute(r: Selectable<DisputesTable>): Dispute {
  return {
    workspaceId: r.workspace_id,
    env: r.env,
    id: r.id,
    licenceId: r.licence_id,
    subscriptionId: r.subscription_id,
    productKind: r.product_kind,
    productId: r.product_id,
    paymentIntent: r.payment_intent,
    amountCents: Number(r.amount_cents),
    currency: r.currency,
    reason: r.reason,
    status: r.status,
    respondBy: r.respond_by === null ? null : Number(r.respond_by),
    openedAt: Number(r.opened_at),
    closedAt: r.closed_at === null ? null : Number(r.closed_at),
  };
}

export async function insertDispute(ex: Executor, dispute: Dispute): Promise<void> {
  await ex
    .insertInto("disputes")
    .values({
      workspace_id: dispute.workspaceId,
      env: dispute.env,
      id: dispute.id,
      licence_id: dispute.licenceId,
      subscription_id: dispute.subscriptionId,
      product_kind: dispute.productKind,
      product_id: dispute.productId,
      payment_intent: dispute.paymentIntent,
      amount_cents: dispute.amountCents,
      currency: dispute.currency,
      reason: dispute.reason,
      status: dispute.status,
      respond_by: dispute.respondBy,
      opened_at: dispute.openedAt,
      closed_at: dispute.closedAt,
    })
    .execute();
}

export async function findDispute(ex: Executor, scope: Scope, id: string): Promise<Dispute | null> {
  const r = await ex
    .selectFrom("disputes")
    .selectAll()
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("id", "=", id)
    .executeTakeFirst();
  return r ? toDispute(r) : null;
}

/** Disputes with this id in any workspace environment (for the operator's command line). */
export async function findDisputesById(ex: Executor, id: string): Promise<Dispute[]> {
  const rows = await ex.selectFrom("disputes").selectAll().where("id", "=", id).execute();
  return rows.map(toDispute);
}

export async function closeDisputeRow(ex: Executor, scope: Scope, id: string, status: string, closedAt: number): Promise<void> {
  await ex
    .updateTable("disputes")
    .set({ status, closed_at: closedAt })
    .where("workspace_id", "=", scope.workspaceId)
    .where("env", "=", scope.env)
    .where("id", "=", id)
    .execute();
}
