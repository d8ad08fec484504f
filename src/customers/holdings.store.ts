// What a customer's dashboard page shows of one person for one tool: their licences,
// subscriptions and newest devices, and the devices' last activity for the list.
import { sql } from "kysely";
import type { Executor } from "../db/database.js";
import type { ToolScope } from "./customer.store.js";
import { coversTool } from "./customer-sources.store.js";

export interface DeviceActivity {
  devices: number;
  lastActiveAt: number | null;
}

/** Devices signed in or activated, and the last check-in of any of them, per person. */
export async function loadDeviceActivity(ex: Executor, scope: ToolScope, personIds: readonly string[]): Promise<Map<string, DeviceActivity>> {
  const result = new Map<string, DeviceActivity>();
  if (personIds.length === 0) return result;
  const rows = await ex
    .selectFrom("devices")
    .select((eb) => [
      "person_id",
      eb.fn.count<number>("id").filterWhere("signed_out_at", "is", null).as("devices"),
      eb.fn.max("last_active_at").as("last_active_at"),
    ])
    .where("person_id", "in", personIds)
    .where("tool_id", "=", scope.toolId)
    .groupBy("person_id")
    .execute();
  for (const r of rows) {
    result.set(r.person_id, { devices: Number(r.devices), lastActiveAt: r.last_active_at === null ? null : Number(r.last_active_at) });
  }
  return result;
}

/** A licence as a customer's page lists it. */
export interface HeldLicence {
  id: string;
  status: "active" | "suspended" | "revoked";
  planName: string | null;
  purchasedAt: number;
  amountCents: number | null;
  currency: string | null;
  /** Above 0: a team purchase; its seats are licences of their own. */
  seats: number | null;
  /** A seat handed out from a team licence or team subscription. */
  seat: boolean;
  /** Whether a payment is recorded for it (a refund needs one). */
  paid: boolean;
  refundedAt: number | null;
}

/** A subscription as a customer's page lists it. */
export interface HeldSubscription {
  id: string;
  status: string;
  planName: string | null;
  currentPeriodEnd: number;
  cancelAtPeriodEnd: boolean;
  cancelAt: number | null;
  endedAt: number | null;
  seats: number | null;
}

export interface HeldDevice {
  id: string;
  name: string;
  platform: string | null;
  createdAt: number;
  lastActiveAt: number | null;
  signedOutAt: number | null;
}

export interface Holdings {
  licences: HeldLicence[];
  subscriptions: HeldSubscription[];
  devices: HeldDevice[];
}

/** What a customer's page shows of one person for one tool at most: their newest devices. */
const HELD_DEVICES = 100;

/**
 * A person's licences and subscriptions that cover the tool (itself or a bundle naming
 * it), newest first, and their devices of the tool, the most recently active first.
 * A person belongs to one workspace environment, so the person's id is the whole filter
 * (and the index the planner takes: `…_person`).
 */
export async function loadHoldings(ex: Executor, scope: ToolScope, personId: string): Promise<Holdings> {
  const planName = (alias: "l" | "s") =>
    sql<
      string | null
    >`(select p.name from plans p where p.workspace_id = ${sql.ref(`${alias}.workspace_id`)} and p.product_kind = ${sql.ref(`${alias}.product_kind`)} and p.product_id = ${sql.ref(`${alias}.product_id`)} and p.id = ${sql.ref(`${alias}.plan_id`)})`;
  const licences = await ex
    .selectFrom("licences as l")
    .select([
      "l.id",
      "l.status",
      "l.purchased_at",
      "l.amount_cents",
      "l.currency",
      "l.payment_intent",
      "l.seats",
      "l.team_licence_id",
      "l.team_subscription_id",
      "l.refunded_at",
      planName("l").as("plan_name"),
    ])
    .where("l.person_id", "=", personId)
    .where(coversTool("l", scope))
    .orderBy("l.purchased_at", "desc")
    .orderBy("l.id")
    .execute();
  const subscriptions = await ex
    .selectFrom("subscriptions as s")
    .select(["s.id", "s.status", "s.current_period_end", "s.cancel_at_period_end", "s.cancel_at", "s.ended_at", "s.seats", planName("s").as("plan_name")])
    .where("s.person_id", "=", personId)
    .where(coversTool("s", scope))
    .orderBy("s.created_at", "desc")
    .orderBy("s.id")
    .execute();
  const devices = await ex
    .selectFrom("devices")
    .select(["id", "name", "platform", "created_at", "last_active_at", "signed_out_at"])
    .where("person_id", "=", personId)
    .where("tool_id", "=", scope.toolId)
    .orderBy(sql`coalesce(last_active_at, created_at)`, "desc")
    .orderBy("id")
    .limit(HELD_DEVICES)
    .execute();
  const ms = (v: number | string | null) => (v === null ? null : Number(v));
  return {
    licences: licences.map((r) => ({
      id: r.id,
      status: r.status,
      planName: r.plan_name,
      purchasedAt: Number(r.purchased_at),
      amountCents: ms(r.amount_cents),
      currency: r.currency,
      seats: ms(r.seats),
      seat: r.team_licence_id !== null || r.team_subscription_id !== null,
      paid: r.payment_intent !== null && r.amount_cents !== null && r.currency !== null,
      refundedAt: ms(r.refunded_at),
    })),
    subscriptions: subscriptions.map((r) => ({
      id: r.id,
      status: r.status,
      planName: r.plan_name,
      currentPeriodEnd: Number(r.current_period_end),
      cancelAtPeriodEnd: Number(r.cancel_at_period_end) === 1,
      cancelAt: ms(r.cancel_at),
      endedAt: ms(r.ended_at),
      seats: ms(r.seats),
    })),
    devices: devices.map((r) => ({
      id: r.id,
      name: r.name,
      platform: r.platform,
      createdAt: Number(r.created_at),
      lastActiveAt: ms(r.last_active_at),
      signedOutAt: ms(r.signed_out_at),
    })),
  };
}
