// The overview's recent activity: the newest purchases, cancellations and refunds of a
// workspace environment, read from the events they emitted (the facts as the vendor's
// webhooks received them, examples left out), with the address and amount an event of a
// subscription does not carry looked up in one statement.
import type { Env } from "../db/schema.js";
import { listRecentEvents } from "../events/event.store.js";
import type { Services } from "../services.js";
import { subscriptionBuyers } from "./subscription.store.js";

export type ActivityKind = "purchase" | "cancellation" | "refund";

export interface RecentActivity {
  kind: ActivityKind;
  /** Epoch ms: when the event was emitted. */
  at: number;
  /** The product's id: a tool's or a bundle's. */
  productId: string;
  /** The event's plan: `<tool>:<plan>`, or the bare id of the default plan. */
  plan: string;
  /** Null only when the subscription is no longer stored. */
  email: string | null;
  /** Minor units: a licence's price or refund; a subscription's newest paid invoice (null before its first). */
  amountCents: number | null;
  currency: string | null;
  /** A subscription's cancellation: it has ended (true), or is set to end. */
  endedNow: boolean;
}

const KINDS: Record<string, ActivityKind> = { "purchase.completed": "purchase", "subscription.cancelled": "cancellation", "payment.refunded": "refund" };

interface EventData {
  tool: string;
  plan?: string;
  email?: string | null;
  amount?: number | null;
  currency?: string | null;
  subscription?: string;
  immediately?: boolean;
}

/** The newest `limit` purchases, cancellations and refunds, newest first. */
export async function recentActivity(services: Pick<Services, "db">, where: { workspaceId: string; env: Env }, limit = 10): Promise<RecentActivity[]> {
  const events = await listRecentEvents(services.db, where.workspaceId, where.env, Object.keys(KINDS), limit);
  const read = events.map((e) => ({ event: e, data: (JSON.parse(e.body) as { data: EventData }).data }));
  const buyers = await subscriptionBuyers(
    services.db,
    where,
    read.flatMap(({ data }) => (data.subscription !== undefined && (data.email ?? null) === null ? [data.subscription] : [])),
  );
  return read.map(({ event, data }) => {
    const buyer = data.subscription === undefined ? undefined : buyers.get(data.subscription);
    const own = data.email !== undefined && data.email !== null;
    return {
      kind: KINDS[event.type] as ActivityKind,
      at: event.createdAt,
      productId: data.tool,
      plan: data.plan ?? "",
      email: own ? (data.email ?? null) : (buyer?.email ?? null),
      amountCents: own ? (data.amount ?? null) : (buyer?.amountCents ?? null),
      currency: own ? (data.currency ?? null) : (buyer?.currency ?? null),
      endedNow: data.immediately === true,
    };
  });
}
