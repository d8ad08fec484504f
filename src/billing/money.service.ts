// A customer's money for one tool, for their dashboard page: every payment, refund and
// dispute newest first, each subscription's start and its plan and seat changes, and the
// lifetime value per currency (payments minus refunds: docs/decisions.md, "A customer's
// money"). Read from the facts the payments already store (`money.store.ts`), so it costs
// the same few index walks for a customer with hundreds of payments as with one.
import { requireToolScope } from "../customers/customer.service.js";
import { findPersonByEmail } from "../customers/person.store.js";
import type { RequestContext } from "../services.js";
import { loadMoney, type StoredChange, type StoredMoney } from "./money.store.js";

export interface MoneySource {
  kind: "licence" | "subscription";
  id: string;
  planName: string | null;
}

interface LineBase {
  /** Epoch ms; null only for a licence's refund recorded before its time was kept (migration 046). */
  at: number | null;
  amountCents: number | null;
  currency: string | null;
  /** The payment processor's id of what the line is: a payment intent, an invoice, a dispute. */
  processorId: string | null;
  source: MoneySource;
}

export type MoneyLine =
  /** `refundedAt`: when the payment was refunded in full (a licence's, which is revoked by it). */
  | (LineBase & { kind: "payment"; refundedAt: number | null })
  /** `full`: the whole payment was returned; null when the store cannot tell (a subscription's payment is not tied to its invoice's amount). */
  | (LineBase & { kind: "refund"; full: boolean | null })
  /** The processor's status (needs_response, under_review, won, lost, warning_closed). */
  | (LineBase & { kind: "dispute"; status: string; closedAt: number | null });

export interface SubscriptionTimeline {
  id: string;
  planName: string | null;
  startedAt: number;
  endedAt: number | null;
  seats: number | null;
  /** The plan's name and the seats it began with: the first change's old ones, else today's. */
  start: { planName: string | null; seats: number | null };
  /** Oldest first. */
  changes: StoredChange[];
}

export interface LifetimeValue {
  currency: string;
  paidCents: number;
  refundedCents: number;
  /** Paid minus refunded. */
  valueCents: number;
}

export interface MoneyHistory {
  /** Newest first. */
  lines: MoneyLine[];
  /** Newest first. */
  subscriptions: SubscriptionTimeline[];
  /** One per currency paid in, by currency code. */
  lifetime: LifetimeValue[];
}

const NONE: MoneyHistory = { lines: [], subscriptions: [], lifetime: [] };

/** A customer's money for one tool; an address that is nobody's has none. */
export async function customerMoney(ctx: RequestContext, toolId: string, email: string): Promise<MoneyHistory> {
  const scope = await requireToolScope(ctx, toolId);
  const person = await findPersonByEmail(ctx.services.db, scope.workspaceId, scope.env, email);
  if (!person) return NONE;
  return historyOf(await loadMoney(ctx.services.db, scope, person.id));
}

function historyOf(stored: StoredMoney): MoneyHistory {
  const lines: { line: MoneyLine; order: number }[] = [];
  const changesOf = new Map<string, StoredChange[]>();
  for (const c of [...stored.changes].sort((a, b) => a.at - b.at)) changesOf.set(c.subscriptionId, [...(changesOf.get(c.subscriptionId) ?? []), c]);
  const current = new Map(stored.subscriptions.map((s) => [s.id, s.planName]));
  // A subscription's line names the plan it was on then: the first later change's old plan, else today's.
  const subscriptionAt = (id: string, at: number): MoneySource => {
    const later = (changesOf.get(id) ?? []).find((c) => c.plan !== null && c.at > at);
    return { kind: "subscription", id, planName: later?.plan ? later.plan.from : (current.get(id) ?? null) };
  };
  const licenceOf = new Map(stored.licences.map((l) => [l.id, { kind: "licence" as const, id: l.id, planName: l.planName }]));
  for (const l of stored.licences) {
    const source = licenceOf.get(l.id) as MoneySource;
    if (l.paymentIntent === null || l.amountCents === null) continue;
    lines.push({
      line: {
        kind: "payment",
        at: l.purchasedAt,
        amountCents: l.amountCents,
        currency: l.currency,
        processorId: l.paymentIntent,
        source,
        refundedAt: l.refundedAt,
      },
      order: l.purchasedAt,
    });
    if (l.refundedCents > 0) {
      const at = l.lastRefundAt ?? l.refundedAt;
      lines.push({
        line: {
          kind: "refund",
          at,
          amountCents: l.refundedCents,
          currency: l.currency,
          processorId: l.paymentIntent,
          source,
          full: l.refundedCents >= l.amountCents,
        },
        order: at ?? l.purchasedAt,
      });
    }
  }
  for (const i of stored.invoices) {
    const source = subscriptionAt(i.subscriptionId, i.paidAt);
    lines.push({
      line: { kind: "payment", at: i.paidAt, amountCents: i.amountCents, currency: i.currency, processorId: i.invoiceId, source, refundedAt: null },
      order: i.paidAt,
    });
  }
  for (const p of stored.payments) {
    if (p.refundedCents === 0 || p.refundedAt === null) continue;
    const source = subscriptionAt(p.subscriptionId, p.refundedAt);
    lines.push({
      line: { kind: "refund", at: p.refundedAt, amountCents: p.refundedCents, currency: p.currency, processorId: p.paymentIntent, source, full: null },
      order: p.refundedAt,
    });
  }
  for (const d of stored.disputes) {
    const source =
      (d.licenceId === null ? undefined : licenceOf.get(d.licenceId)) ??
      (d.subscriptionId !== null && current.has(d.subscriptionId) ? subscriptionAt(d.subscriptionId, d.openedAt) : undefined);
    // A dispute of a payment of someone else's purchase (the same payment intent) is not this customer's.
    if (!source) continue;
    lines.push({
      line: {
        kind: "dispute",
        at: d.openedAt,
        amountCents: d.amountCents,
        currency: d.currency,
        processorId: d.id,
        source,
        status: d.status,
        closedAt: d.closedAt,
      },
      order: d.openedAt,
    });
  }
  lines.sort((a, b) => b.order - a.order);
  return {
    lines: lines.map(({ line }) => line),
    subscriptions: [...stored.subscriptions]
      .sort((a, b) => b.startedAt - a.startedAt)
      .map((s) => {
        const changes = changesOf.get(s.id) ?? [];
        const firstPlan = changes.find((c) => c.plan !== null)?.plan;
        const firstSeats = changes.find((c) => c.seats !== null)?.seats;
        return { ...s, start: { planName: firstPlan ? firstPlan.from : s.planName, seats: firstSeats ? firstSeats.from : s.seats }, changes };
      }),
    lifetime: lifetimeOf(lines.map(({ line }) => line)),
  };
}

/** Payments minus refunds, per currency. A dispute is shown on its line and not subtracted, lost or not (docs/decisions.md). */
function lifetimeOf(lines: readonly MoneyLine[]): LifetimeValue[] {
  const per = new Map<string, { paid: number; refunded: number }>();
  for (const line of lines) {
    if (line.amountCents === null || line.currency === null || line.kind === "dispute") continue;
    const sums = per.get(line.currency) ?? { paid: 0, refunded: 0 };
    if (line.kind === "payment") sums.paid += line.amountCents;
    else sums.refunded += line.amountCents;
    per.set(line.currency, sums);
  }
  return [...per]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([currency, { paid, refunded }]) => ({ currency, paidCents: paid, refundedCents: refunded, valueCents: paid - refunded }));
}
