// Stripe as tests see it: events shaped like Stripe's (current API version: periods on
// the subscription items), signed the way Stripe signs them (the `stripe` package's own
// test header), posted to the ingest route; and the events Warden emitted, read back and
// checked against their schemas.
import assert from "node:assert/strict";
import { Value } from "@sinclair/typebox/value";
import type { LightMyRequestResponse } from "fastify";
import Stripe from "stripe";
import type { Dialect } from "../db/database.js";
import type { Env } from "../db/schema.js";
import { type EventEnvelope, eventSchema } from "../events/event-types.js";
import { randomBase62 } from "../ids.js";
import type { Services } from "../services.js";
import { connectStripe } from "../stripe/stripe-account.service.js";
import { seedCatalogue, type TestApi, testApi, testServices, type Workspace } from "./harness.js";

const sec = (ms: number) => Math.floor(ms / 1000);
export const stripeId = (prefix: string) => `${prefix}_${randomBase62(24)}`;

/** Connects the workspace's environment to Stripe with a fresh signing secret; answers it. */
export async function connectTestStripe(services: Services, ws: Workspace, env: Env = "test", secretKey?: string): Promise<string> {
  const secret = `whsec_${randomBase62(32)}`;
  await connectStripe(services, { workspace: ws.slug, env, webhookSecret: secret, ...(secretKey ? { secretKey } : {}) });
  return secret;
}

export interface StripeEventOptions {
  id?: string;
  /** Epoch milliseconds; the clock's now by default. */
  created?: number;
  livemode?: boolean;
  previousAttributes?: Record<string, unknown>;
  /** The endpoint's API version; the `stripe` package's (2026-10-28.endive) by default. */
  apiVersion?: string;
}

export interface TestStripeEvent {
  id: string;
  object: "event";
  type: string;
  created: number;
  livemode: boolean;
  api_version: string;
  data: { object: Record<string, unknown>; previous_attributes?: Record<string, unknown> };
}

export function stripeEvent(type: string, object: Record<string, unknown>, options: StripeEventOptions & { now: number }): TestStripeEvent {
  return {
    id: options.id ?? stripeId("evt"),
    object: "event",
    type,
    created: sec(options.created ?? options.now),
    livemode: options.livemode ?? false,
    api_version: options.apiVersion ?? "2026-10-28.endive",
    data: { object, ...(options.previousAttributes ? { previous_attributes: options.previousAttributes } : {}) },
  };
}

export interface Metadata {
  warden_tool?: string;
  warden_bundle?: string;
  warden_plan?: string;
  warden_seats?: string;
  warden_account?: string;
}

export function paymentSession(o: {
  email: string | null;
  metadata: Metadata;
  amount?: number;
  currency?: string;
  paymentStatus?: string;
  id?: string;
  paymentIntent?: string;
  now: number;
}) {
  return {
    id: o.id ?? stripeId("cs_test"),
    object: "checkout.session",
    mode: "payment",
    status: "complete",
    payment_status: o.paymentStatus ?? "paid",
    amount_total: o.amount ?? 4900,
    amount_subtotal: o.amount ?? 4900,
    currency: o.currency ?? "eur",
    customer: null,
    customer_email: null,
    customer_details: o.email === null ? null : { email: o.email, name: "Buyer", address: null, phone: null, tax_exempt: "none", tax_ids: [] },
    payment_intent: o.paymentIntent ?? stripeId("pi"),
    subscription: null,
    invoice: null,
    livemode: false,
    metadata: o.metadata,
    created: sec(o.now) - 60,
    expires_at: sec(o.now) + 86_400,
  };
}

export function subscriptionSession(o: { email: string | null; subscription: string; metadata: Metadata; id?: string; now: number }) {
  return {
    ...paymentSession({ email: o.email, metadata: o.metadata, now: o.now, ...(o.id ? { id: o.id } : {}) }),
    mode: "subscription",
    amount_total: 500,
    amount_subtotal: 500,
    payment_intent: null,
    subscription: o.subscription,
    invoice: stripeId("in"),
  };
}

export interface SubscriptionShape {
  id: string;
  status: string;
  metadata: Metadata;
  /** Epoch milliseconds. */
  startedAt: number;
  periodStart: number;
  periodEnd: number;
  cancelAtPeriodEnd?: boolean;
  cancelAt?: number | null;
  canceledAt?: number | null;
  endedAt?: number | null;
  quantity?: number;
  /** The item's Stripe Price id; `price_monthly` by default. */
  price?: string;
}

/** A subscription object of the current API version: the periods live on its items. */
export function subscriptionObject(s: SubscriptionShape) {
  return {
    id: s.id,
    object: "subscription",
    status: s.status,
    customer: "cus_test",
    livemode: false,
    metadata: s.metadata,
    created: sec(s.startedAt),
    start_date: sec(s.startedAt),
    billing_cycle_anchor: sec(s.periodStart),
    cancel_at_period_end: s.cancelAtPeriodEnd ?? false,
    cancel_at: s.cancelAt === undefined || s.cancelAt === null ? null : sec(s.cancelAt),
    canceled_at: s.canceledAt === undefined || s.canceledAt === null ? null : sec(s.canceledAt),
    ended_at: s.endedAt === undefined || s.endedAt === null ? null : sec(s.endedAt),
    items: {
      object: "list",
      data: [
        {
          id: stripeId("si"),
          object: "subscription_item",
          // Warden's checkout bills a team's seats as the quantity.
          quantity: s.quantity ?? Number(s.metadata.warden_seats ?? 1),
          current_period_start: sec(s.periodStart),
          current_period_end: sec(s.periodEnd),
          price: { id: s.price ?? "price_monthly", object: "price", recurring: { interval: "month" }, unit_amount: 500, currency: "eur" },
        },
      ],
      has_more: false,
    },
  };
}

export function chargeObject(o: {
  paymentIntent: string;
  amount: number;
  amountRefunded: number;
  currency?: string;
  /** The charge's refunds as `refunds` lists them (API versions before 2022-11-15, or expanded); left out by default, as webhooks of current versions do. */
  refunds?: { amount: number; at: number }[];
}) {
  return {
    id: stripeId("ch"),
    object: "charge",
    amount: o.amount,
    amount_captured: o.amount,
    amount_refunded: o.amountRefunded,
    refunded: o.amountRefunded >= o.amount,
    currency: o.currency ?? "eur",
    payment_intent: o.paymentIntent,
    paid: true,
    status: "succeeded",
    livemode: false,
    ...(o.refunds === undefined
      ? {}
      : {
          refunds: {
            object: "list",
            data: o.refunds.map((r) => ({ id: stripeId("re"), object: "refund", amount: r.amount, created: sec(r.at), status: "succeeded" })),
            has_more: false,
          },
        }),
  };
}

export function disputeObject(o: {
  id: string;
  paymentIntent: string;
  amount: number;
  status: string;
  reason?: string;
  dueBy?: number | null;
  currency?: string;
  /** When it was opened (epoch milliseconds); the machine's time by default. */
  created?: number;
}) {
  return {
    id: o.id,
    object: "dispute",
    amount: o.amount,
    currency: o.currency ?? "eur",
    charge: stripeId("ch"),
    payment_intent: o.paymentIntent,
    reason: o.reason ?? "fraudulent",
    status: o.status,
    evidence_details: { due_by: o.dueBy === undefined || o.dueBy === null ? null : sec(o.dueBy), has_evidence: false, past_due: false, submission_count: 0 },
    is_charge_refundable: false,
    livemode: false,
    created: sec(o.created ?? Date.now()),
  };
}

/**
 * The shapes of a paid subscription invoice, by the API version of the endpoint or request:
 * - `expanded`: the current versions' (2025-03-31 on; the `stripe` package pins
 *   2026-10-28.endive) with `payments` expanded, as the reconcile reads it;
 * - `webhook`: the current versions' as a webhook delivers it: `payments` is left out
 *   unless expanded, so it names no payment intent (invoice_payment.paid names it);
 * - `2024`: older versions' (2024-era): `subscription` and `payment_intent` on the invoice.
 */
export type InvoiceShape = "expanded" | "webhook" | "2024";

export function invoiceObject(o: {
  subscription: string;
  paymentIntent: string;
  amountPaid?: number;
  currency?: string;
  id?: string;
  /** When Stripe was paid (epoch milliseconds): `status_transitions.paid_at`, the invoice made an hour before; both left out by default. */
  paidAt?: number;
  shape?: InvoiceShape;
}) {
  const shape = o.shape ?? "expanded";
  return {
    id: o.id ?? stripeId("in"),
    object: "invoice",
    status: "paid",
    ...(o.amountPaid === undefined ? {} : { amount_paid: o.amountPaid, currency: o.currency ?? "eur" }),
    ...(o.paidAt === undefined
      ? {}
      : { created: sec(o.paidAt) - 3600, status_transitions: { finalized_at: sec(o.paidAt) - 3600, paid_at: sec(o.paidAt), voided_at: null } }),
    ...(shape === "2024"
      ? { subscription: o.subscription, payment_intent: o.paymentIntent }
      : { parent: { type: "subscription_details", subscription_details: { subscription: o.subscription, metadata: {} } } }),
    ...(shape === "expanded"
      ? {
          payments: {
            object: "list",
            data: [{ id: stripeId("inpay"), object: "invoice_payment", payment: { type: "payment_intent", payment_intent: o.paymentIntent } }],
          },
        }
      : {}),
  };
}

/** An invoice payment (current API versions; the object of `invoice_payment.paid`): which payment intent paid which invoice. */
export function invoicePaymentObject(o: { invoice: string; paymentIntent: string; amountPaid: number; currency?: string; paidAt: number }) {
  return {
    id: stripeId("inpay"),
    object: "invoice_payment",
    amount_paid: o.amountPaid,
    amount_requested: o.amountPaid,
    created: sec(o.paidAt) - 3600,
    currency: o.currency ?? "eur",
    invoice: o.invoice,
    is_default: true,
    livemode: false,
    payment: { type: "payment_intent", payment_intent: o.paymentIntent },
    status: "paid",
    status_transitions: { canceled_at: null, paid_at: sec(o.paidAt) },
  };
}

/** Posts the event as Stripe does: the JSON text, signed over those exact bytes at `signedAt` (the clock's now by default). */
export async function sendStripeEvent(
  api: TestApi,
  ws: Workspace,
  secret: string,
  event: TestStripeEvent,
  options: { signedAt?: number; now: number; signatureSecret?: string },
): Promise<LightMyRequestResponse> {
  const payload = JSON.stringify(event, null, 2);
  const header = Stripe.webhooks.generateTestHeaderString({
    payload,
    secret: options.signatureSecret ?? secret,
    timestamp: sec(options.signedAt ?? options.now),
  });
  return api.request({
    method: "POST",
    url: `/processor/stripe/${ws.slug}`,
    headers: { "content-type": "application/json; charset=utf-8", "stripe-signature": header },
    payload,
  });
}

/** Sends and expects Stripe's delivery to be acknowledged. */
export async function deliver(api: TestApi, ws: Workspace, secret: string, event: TestStripeEvent, now: number): Promise<string> {
  const response = await sendStripeEvent(api, ws, secret, event, { now });
  assert.equal(response.statusCode, 200, response.body);
  return (response.json() as { outcome: string }).outcome;
}

/** Every event emitted in the workspace environment, oldest first, each checked against its schema. */
export async function emittedEvents(services: Services, ws: Workspace, env: Env = "test"): Promise<EventEnvelope[]> {
  const rows = await services.db
    .selectFrom("events")
    .select(["body", "type"])
    .where("workspace_id", "=", ws.workspaceId)
    .where("env", "=", env)
    .orderBy("created_at")
    .execute();
  return rows.map((row) => {
    const body = JSON.parse(row.body) as EventEnvelope;
    const schema = eventSchema(body.type);
    assert.ok(
      Value.Check(schema, body),
      `${row.type} does not match its schema: ${JSON.stringify([...Value.Errors(schema, body)].map((e) => `${e.path} ${e.message}`))}\n${row.body}`,
    );
    return body;
  });
}

/** A workspace with the harness catalogue, connected to Stripe in test mode, and the calls payment tests make. */
export async function paymentsTestbed(dialect: Dialect, options: { env?: Record<string, string>; secretKey?: string } = {}) {
  const { services, clock } = await testServices(dialect, options.env);
  const ws = await seedCatalogue(services);
  const api = await testApi(services);
  const secret = await connectTestStripe(services, ws, "test", options.secretKey);
  return {
    services,
    clock,
    ws,
    api,
    secret,
    /** Stripe sends `type` about `object`, created now (or at `created`); answers the outcome. */
    send: (type: string, object: Record<string, unknown>, options: StripeEventOptions = {}) =>
      deliver(api, ws, secret, stripeEvent(type, object, { now: clock.now(), ...options }), clock.now()),
    /** Retrieve-a-customer's status and body. */
    async customer(email: string, tool = "tabmaster") {
      const response = await api.request({ url: `/api/v1/tools/${tool}/customers/${encodeURIComponent(email)}`, key: ws.testKey });
      return { status: response.statusCode, body: response.json() };
    },
    /** List-customers' rows. */
    async list(tool = "tabmaster", query = "") {
      const response = await api.request({ url: `/api/v1/tools/${tool}/customers${query}`, key: ws.testKey });
      assert.equal(response.statusCode, 200, response.body);
      return (response.json() as { data: Record<string, unknown>[] }).data;
    },
    events: (env: Env = "test") => emittedEvents(services, ws, env),
    async licences() {
      return services.db
        .selectFrom("licences")
        .selectAll()
        .where("workspace_id", "=", ws.workspaceId)
        .where("env", "=", "test")
        .orderBy("created_at")
        .execute();
    },
    async subscription(id: string) {
      return services.db.selectFrom("subscriptions").selectAll().where("workspace_id", "=", ws.workspaceId).where("id", "=", id).executeTakeFirst();
    },
  };
}

/** The events of one type, in the order they were written. */
export const ofType = <T extends EventEnvelope["type"]>(events: EventEnvelope[], type: T) =>
  events.filter((e): e is Extract<EventEnvelope, { type: T }> => e.type === type);
