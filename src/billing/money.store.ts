// A customer's money for one tool, as stored: the licences and subscriptions they bought of
// it (or of a bundle naming it), what each paid, what was refunded, the disputes, and a
// subscription's plan and seat changes. Six statements whatever the count, each an index
// walk from the person (`licences_person`, `subscriptions_person`) or the payments found
// (`subscription_invoices_subscription`, `subscription_payments_subscription`,
// `disputes_payment`, `subscription_changes_subscription`: migrations 040 and 046).
import { sql } from "kysely";
import type { ToolScope } from "../customers/customer.store.js";
import { coversTool } from "../customers/customer-sources.store.js";
import type { Executor } from "../db/database.js";

export interface PaidLicence {
  id: string;
  planName: string | null;
  purchasedAt: number;
  amountCents: number | null;
  currency: string | null;
  /** The processor's payment id; null for a licence with no payment (imported, granted). */
  paymentIntent: string | null;
  refundedCents: number;
  /** When refunded in full (the licence is revoked). */
  refundedAt: number | null;
  /** When the last refund was recorded; null before migration 046. */
  lastRefundAt: number | null;
}

export interface PaidSubscription {
  id: string;
  planName: string | null;
  startedAt: number;
  endedAt: number | null;
  seats: number | null;
}

export interface StoredInvoice {
  subscriptionId: string;
  invoiceId: string;
  amountCents: number | null;
  currency: string | null;
  paidAt: number;
}

export interface StoredSubscriptionPayment {
  subscriptionId: string;
  paymentIntent: string;
  refundedCents: number;
  currency: string | null;
  refundedAt: number | null;
}

export interface StoredDispute {
  id: string;
  paymentIntent: string;
  licenceId: string | null;
  subscriptionId: string | null;
  amountCents: number;
  currency: string;
  status: string;
  openedAt: number;
  closedAt: number | null;
}

export interface StoredChange {
  subscriptionId: string;
  at: number;
  /** The plans' names when they still exist, else their ids; null when the plan did not change. */
  plan: { from: string | null; to: string | null } | null;
  seats: { from: number | null; to: number | null } | null;
}

export interface StoredMoney {
  licences: PaidLicence[];
  subscriptions: PaidSubscription[];
  invoices: StoredInvoice[];
  payments: StoredSubscriptionPayment[];
  disputes: StoredDispute[];
  changes: StoredChange[];
}

const ms = (v: number | string | null) => (v === null ? null : Number(v));

/** A plan's name by a source's product and a plan id column, or the id when the plan is gone. */
function planName(alias: "l" | "s", planColumn: string) {
  const ref = (column: string) => sql.ref(`${alias}.${column}`);
  return sql<
    string | null
  >`coalesce((select p.name from plans p where p.workspace_id = ${ref("workspace_id")} and p.product_kind = ${ref("product_kind")} and p.product_id = ${ref("product_id")} and p.id = ${sql.ref(planColumn)}), ${sql.ref(planColumn)})`;
}

/** Everything paid, refunded and disputed by one person for one tool. */
export async function loadMoney(ex: Executor, scope: ToolScope, personId: string): Promise<StoredMoney> {
  // A seat is paid for by its team's purchase, which is its buyer's money, not the holder's.
  const licences = await ex
    .selectFrom("licences as l")
    .select([
      "l.id",
      "l.purchased_at",
      "l.amount_cents",
      "l.currency",
      "l.payment_intent",
      "l.refunded_cents",
      "l.refunded_at",
      "l.last_refund_at",
      planName("l", "l.plan_id").as("plan_name"),
    ])
    .where("l.person_id", "=", personId)
    .where(coversTool("l", scope))
    .where("l.team_licence_id", "is", null)
    .where("l.team_subscription_id", "is", null)
    .execute();
  const subscriptions = await ex
    .selectFrom("subscriptions as s")
    .select(["s.id", "s.created_at", "s.ended_at", "s.seats", planName("s", "s.plan_id").as("plan_name")])
    .where("s.person_id", "=", personId)
    .where(coversTool("s", scope))
    .execute();
  const invoices = await ex
    .selectFrom("subscriptions as s")
    .innerJoin("subscription_invoices as x", (join) =>
      join.onRef("x.workspace_id", "=", "s.workspace_id").onRef("x.env", "=", "s.env").onRef("x.subscription_id", "=", "s.id"),
    )
    .select(["x.subscription_id", "x.invoice_id", "x.amount_cents", "x.currency", "x.paid_at"])
    .where("s.person_id", "=", personId)
    .where(coversTool("s", scope))
    .execute();
  const payments = await ex
    .selectFrom("subscriptions as s")
    .innerJoin("subscription_payments as x", (join) =>
      join.onRef("x.workspace_id", "=", "s.workspace_id").onRef("x.env", "=", "s.env").onRef("x.subscription_id", "=", "s.id"),
    )
    .select(["x.subscription_id", "x.payment_intent", "x.refunded_cents", "x.currency", "x.refunded_at"])
    .where("s.person_id", "=", personId)
    .where(coversTool("s", scope))
    .execute();
  const changes = await ex
    .selectFrom("subscriptions as s")
    .innerJoin("subscription_changes as x", (join) =>
      join.onRef("x.workspace_id", "=", "s.workspace_id").onRef("x.env", "=", "s.env").onRef("x.subscription_id", "=", "s.id"),
    )
    .select([
      "x.subscription_id",
      "x.at",
      "x.seats_from",
      "x.seats_to",
      "x.plan_from",
      "x.plan_to",
      planName("s", "x.plan_from").as("from_name"),
      planName("s", "x.plan_to").as("to_name"),
    ])
    .where("s.person_id", "=", personId)
    .where(coversTool("s", scope))
    .execute();
  const paymentIntents = [...licences.flatMap((l) => (l.payment_intent === null ? [] : [l.payment_intent])), ...payments.map((p) => p.payment_intent)];
  const disputes =
    paymentIntents.length === 0
      ? []
      : await ex
          .selectFrom("disputes")
          .select(["id", "payment_intent", "licence_id", "subscription_id", "amount_cents", "currency", "status", "opened_at", "closed_at"])
          .where("workspace_id", "=", scope.workspaceId)
          .where("env", "=", scope.env)
          .where("payment_intent", "in", [...new Set(paymentIntents)])
          .execute();
  return {
    licences: licences.map((r) => ({
      id: r.id,
      planName: r.plan_name,
      purchasedAt: Number(r.purchased_at),
      amountCents: ms(r.amount_cents),
      currency: r.currency,
      paymentIntent: r.payment_intent,
      refundedCents: Number(r.refunded_cents),
      refundedAt: ms(r.refunded_at),
      lastRefundAt: ms(r.last_refund_at),
    })),
    subscriptions: subscriptions.map((r) => ({
      id: r.id,
      planName: r.plan_name,
      startedAt: Number(r.created_at),
      endedAt: ms(r.ended_at),
      seats: ms(r.seats),
    })),
    invoices: invoices.map((r) => ({
      subscriptionId: r.subscription_id,
      invoiceId: r.invoice_id,
      amountCents: ms(r.amount_cents),
      currency: r.currency,
      paidAt: Number(r.paid_at),
    })),
    payments: payments.map((r) => ({
      subscriptionId: r.subscription_id,
      paymentIntent: r.payment_intent,
      refundedCents: Number(r.refunded_cents),
      currency: r.currency,
      refundedAt: ms(r.refunded_at),
    })),
    disputes: disputes.map((r) => ({
      id: r.id,
      paymentIntent: r.payment_intent,
      licenceId: r.licence_id,
      subscriptionId: r.subscription_id,
      amountCents: Number(r.amount_cents),
      currency: r.currency,
      status: r.status,
      openedAt: Number(r.opened_at),
      closedAt: ms(r.closed_at),
    })),
    changes: changes.map((r) => ({
      subscriptionId: r.subscription_id,
      at: Number(r.at),
      plan: r.plan_from === null && r.plan_to === null ? null : { from: r.from_name, to: r.to_name },
      seats: r.seats_from === null && r.seats_to === null ? null : { from: ms(r.seats_from), to: ms(r.seats_to) },
    })),
  };
}
