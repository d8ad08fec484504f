// A stand-in for Paddle Billing's notifications, written from Paddle's public API
// reference (API version 1), never from the real service: the event envelope
// (`event_id`, `event_type`, `occurred_at`, `notification_id`, `data`), the transaction,
// subscription and adjustment entities as the reference documents them (amounts as
// strings of minor units, RFC 3339 times, upper-case currency codes), and the
// `Paddle-Signature` header (`ts=<unix seconds>;h1=<hex HMAC-SHA256 of "<ts>:<body>">`).
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import type { Dialect } from "../db/database.js";
import type { Env } from "../db/schema.js";
import { randomBase62 } from "../ids.js";
import { connectPaddle } from "../paddle/paddle-account.service.js";
import { updatePlanPaddleLinks } from "../paddle/paddle-plan-link.service.js";
import type { Services } from "../services.js";
import { seedCatalogue, type TestApi, testApi, testServices, type Workspace } from "./harness.js";
import { emittedEvents } from "./stripe.js";

/** Paddle's ids: a prefix and 26 lower-case base32 characters (ULIDs). */
export const paddleId = (prefix: string) => `${prefix}_01${randomBase62(24).toLowerCase()}`;
const iso = (ms: number) => new Date(ms).toISOString().replace("Z", "000Z");

/**
 * The Paddle prices of the harness catalogue's plans (seedCatalogue), linked to them in the
 * testbed's environment: what a checkout Warden opened is paid with (the stand-in holds
 * them in euros, the catalogue's currency). A price not here is linked to no plan.
 */
export const PADDLE_PRICES: Record<string, { id: string; product: string; amount: number; interval: "month" | null }> = {
  lifetime: { id: "pri_01hv0000000000000000lifetm", product: "pro_01hv00000000000000tabmastr", amount: 4900, interval: null },
  monthly: { id: "pri_01hv0000000000000000monthy", product: "pro_01hv00000000000000tabmastr", amount: 500, interval: "month" },
  "suite-lifetime": { id: "pri_01hv000000000000000suitelf", product: "pro_01hv000000000000000suitepr", amount: 9900, interval: null },
};
const priceOf = (customData: CustomData | null) => PADDLE_PRICES[customData?.warden_plan ?? ""];

export async function connectTestPaddle(services: Services, ws: Workspace, env: Env = "test", apiKey?: string): Promise<string> {
  const secret = `pdl_ntfset_${paddleId("01")}_${randomBase62(32)}`;
  await connectPaddle(services, { workspace: ws.slug, env, webhookSecret: secret, ...(apiKey === undefined ? {} : { apiKey }) });
  return secret;
}

/** Links the catalogue's plans to PADDLE_PRICES in the environment, as the vendor does once. */
export async function linkTestPaddlePrices(services: Services, ws: Workspace, env: Env = "test"): Promise<void> {
  for (const [plan, price] of Object.entries(PADDLE_PRICES)) {
    const product = plan === "suite-lifetime" ? { bundle: "suite" } : { tool: "tabmaster" };
    await updatePlanPaddleLinks(services, { workspace: ws.slug, ...product, id: plan, env, prices: [price.id] });
  }
}

/** A price as Paddle's API answers it. */
export function priceObject(o: { id: string; product: string; amount: number; interval: "month" | "year" | null; currency?: string; status?: string }) {
  return {
    id: o.id,
    product_id: o.product,
    type: "standard",
    description: "Tab Master",
    name: null,
    billing_cycle: o.interval === null ? null : { interval: o.interval, frequency: 1 },
    trial_period: null,
    tax_mode: "account_setting",
    unit_price: { amount: String(o.amount), currency_code: o.currency ?? "USD" },
    unit_price_overrides: [],
    quantity: { minimum: 1, maximum: 10000 },
    status: o.status ?? "active",
    custom_data: null,
    import_meta: null,
    created_at: "2026-01-01T00:00:00.000000Z",
    updated_at: "2026-01-01T00:00:00.000000Z",
  };
}

export interface TestPaddleEvent {
  event_id: string;
  event_type: string;
  occurred_at: string;
  notification_id: string;
  data: Record<string, unknown>;
}

export function paddleEvent(type: string, data: Record<string, unknown>, o: { now: number; id?: string; occurredAt?: number }): TestPaddleEvent {
  return { event_id: o.id ?? paddleId("evt"), event_type: type, occurred_at: iso(o.occurredAt ?? o.now), notification_id: paddleId("ntf"), data };
}

export const paddleSignature = (payload: string, secret: string, at: number) => {
  const ts = Math.floor(at / 1000);
  return `ts=${ts};h1=${createHmac("sha256", secret).update(`${ts}:${payload}`).digest("hex")}`;
};

type CustomData = Record<string, string>;

/**
 * Paddle's totals of an amount the buyer pays, tax included as in a tax-inclusive price
 * (20% unless told): the tax in it, Paddle's fee (5% + 50 unless told), and what the
 * vendor earns, earnings = total − tax − fee, as Paddle's `details.totals` and an
 * adjustment's `totals` give them, in the buyer's currency.
 */
export function paddleTotals(total: number, currency: string, o: { taxRate?: number; fee?: number } = {}) {
  const tax = Math.round(total - total / (1 + (o.taxRate ?? 0.2)));
  // Never more than what is left after tax: Paddle's minimum prices keep a sale's earnings above zero.
  const fee = Math.min(o.fee ?? Math.round(total * 0.05) + 50, total - tax);
  const earnings = total - tax - fee;
  return {
    subtotal: String(total - tax),
    tax: String(tax),
    discount: "0",
    total: String(total),
    grand_total: String(total),
    fee: String(fee),
    earnings: String(earnings),
    currency_code: currency,
  };
}

/** A completed transaction: one-time (no subscription) or a subscription's payment. */
export function transactionObject(o: {
  id?: string;
  customData: CustomData | null;
  subscriptionId?: string;
  total: number;
  currency?: string;
  billedAt: number;
  priceId?: string;
  origin?: string;
  /** The tax in `total` (20% when left out). */
  taxRate?: number;
}) {
  const total = String(o.total);
  const totals = paddleTotals(o.total, o.currency ?? "USD", o.taxRate === undefined ? {} : { taxRate: o.taxRate });
  const price = priceOf(o.customData);
  return {
    id: o.id ?? paddleId("txn"),
    status: "completed",
    customer_id: paddleId("ctm"),
    address_id: paddleId("add"),
    business_id: null,
    custom_data: o.customData,
    currency_code: o.currency ?? "USD",
    origin: o.origin ?? (o.subscriptionId ? "subscription_recurring" : "web"),
    subscription_id: o.subscriptionId ?? null,
    invoice_id: paddleId("inv"),
    invoice_number: "325-10566",
    collection_mode: "automatic",
    billing_details: null,
    billing_period: null,
    items: [
      {
        price: priceObject({ id: o.priceId ?? price?.id ?? paddleId("pri"), product: price?.product ?? paddleId("pro"), amount: o.total, interval: null }),
        quantity: 1,
        proration: null,
      },
    ],
    details: {
      tax_rates_used: [],
      totals,
      // The payout currency's figures (Warden reads the buyer's, above): here as if paid out in EUR at 0.9.
      payout_totals: Object.fromEntries(Object.entries(totals).map(([k, v]) => [k, k === "currency_code" ? "EUR" : String(Math.round(Number(v) * 0.9))])),
      line_items: [],
    },
    payments: [{ amount: total, status: "captured", created_at: iso(o.billedAt), captured_at: iso(o.billedAt), method_details: { type: "card" } }],
    checkout: { url: "https://example.com/pay?_ptxn=txn" },
    created_at: iso(o.billedAt),
    updated_at: iso(o.billedAt),
    billed_at: iso(o.billedAt),
  };
}

export function subscriptionObject(o: {
  id: string;
  status: string;
  customData: CustomData | null;
  startedAt: number;
  periodEnd: number;
  periodStart?: number;
  cancelAt?: number | null;
  canceledAt?: number | null;
  quantity?: number;
  priceId?: string;
}) {
  return {
    id: o.id,
    status: o.status,
    customer_id: paddleId("ctm"),
    address_id: paddleId("add"),
    business_id: null,
    currency_code: "USD",
    created_at: iso(o.startedAt),
    updated_at: iso(o.startedAt),
    started_at: iso(o.startedAt),
    first_billed_at: iso(o.startedAt),
    next_billed_at: o.status === "canceled" ? null : iso(o.periodEnd),
    paused_at: null,
    canceled_at: o.canceledAt ? iso(o.canceledAt) : null,
    collection_mode: "automatic",
    billing_details: null,
    current_billing_period: o.status === "canceled" ? null : { starts_at: iso(o.periodStart ?? o.startedAt), ends_at: iso(o.periodEnd) },
    billing_cycle: { interval: "month", frequency: 1 },
    scheduled_change: o.cancelAt ? { action: "cancel", effective_at: iso(o.cancelAt), resume_at: null } : null,
    items: [
      {
        status: "active",
        quantity: o.quantity ?? 1,
        recurring: true,
        created_at: iso(o.startedAt),
        updated_at: iso(o.startedAt),
        price: priceObject({
          id: o.priceId ?? priceOf(o.customData)?.id ?? paddleId("pri"),
          product: priceOf(o.customData)?.product ?? paddleId("pro"),
          amount: 500,
          interval: "month",
        }),
        product: {
          id: priceOf(o.customData)?.product ?? paddleId("pro"),
          name: "Tab Master",
          type: "standard",
          tax_category: "standard",
          status: "active",
          created_at: iso(o.startedAt),
          updated_at: iso(o.startedAt),
        },
      },
    ],
    custom_data: o.customData,
    management_urls: { update_payment_method: "https://example.com/update", cancel: "https://example.com/cancel" },
    discount: null,
  };
}

export function adjustmentObject(o: {
  id?: string;
  action: "refund" | "chargeback" | "chargeback_reverse" | "credit" | "chargeback_warning";
  transactionId: string;
  status?: string;
  type?: "full" | "partial";
  total: number;
  currency?: string;
  at: number;
  /** What the adjustment takes back of the vendor's earnings, when a test names it: else the refunded amount less its tax (20%) and Paddle's fee on it (5%). */
  earnings?: number;
}) {
  const totals = paddleTotals(o.total, o.currency ?? "USD", { fee: Math.round(o.total * 0.05) });
  const { grand_total: _, discount: __, ...adjusted } = totals;
  const earnings = o.earnings ?? Number(totals.earnings);
  const fee = o.total - Number(totals.tax) - earnings;
  return {
    id: o.id ?? paddleId("adj"),
    action: o.action,
    type: o.type ?? "partial",
    transaction_id: o.transactionId,
    subscription_id: null,
    customer_id: paddleId("ctm"),
    reason: o.action === "refund" ? "requested by the buyer" : "fraudulent",
    credit_applied_to_balance: null,
    currency_code: o.currency ?? "USD",
    status: o.status ?? "approved",
    items: [{ item_id: paddleId("txnitm"), type: o.type ?? "partial", amount: String(o.total) }],
    totals: { ...adjusted, fee: String(fee), earnings: String(earnings) },
    payout_totals: null,
    created_at: iso(o.at),
    updated_at: iso(o.at),
  };
}

export async function sendPaddleEvent(
  api: TestApi,
  ws: Workspace,
  secret: string,
  event: TestPaddleEvent | string,
  o: { now: number; signedAt?: number; signatureSecret?: string; header?: string },
): Promise<LightMyRequestResponse> {
  const payload = typeof event === "string" ? event : JSON.stringify(event);
  return api.request({
    method: "POST",
    url: `/processor/paddle/${ws.slug}`,
    headers: {
      "content-type": "application/json",
      ...(o.header === "" ? {} : { "paddle-signature": o.header ?? paddleSignature(payload, o.signatureSecret ?? secret, o.signedAt ?? o.now) }),
    },
    payload,
  });
}

/** A workspace with the harness catalogue connected to Paddle's sandbox, and the calls its tests make. */
export async function paddleTestbed(dialect: Dialect, options: { paddleApi?: boolean } = {}) {
  const apiKey = `pdl_sdbx_apikey_${randomBase62(40)}`;
  const paddleApi = options.paddleApi ? await startPaddleApi(apiKey) : null;
  const { services, clock } = await testServices(dialect, paddleApi ? { WARDEN_PADDLE_API_URL: paddleApi.url } : {});
  const ws = await seedCatalogue(services);
  const api = await testApi(services);
  const secret = await connectTestPaddle(services, ws, "test", paddleApi ? apiKey : undefined);
  await linkTestPaddlePrices(services, ws);
  return {
    services,
    clock,
    ws,
    api,
    secret,
    /** The stand-in for Paddle's API, when asked for (the environment then has an API key). */
    paddleApi,
    /** Paddle sends `type` about `data`, occurred and signed now; answers the outcome. */
    async send(type: string, data: Record<string, unknown>, options: { id?: string } = {}) {
      const response = await sendPaddleEvent(api, ws, secret, paddleEvent(type, data, { now: clock.now(), ...options }), { now: clock.now() });
      assert.equal(response.statusCode, 200, response.body);
      return (response.json() as { outcome: string }).outcome;
    },
    async customer(email: string, tool = "tabmaster") {
      const response = await api.request({ url: `/api/v1/tools/${tool}/customers/${encodeURIComponent(email)}`, key: ws.testKey });
      return { status: response.statusCode, body: response.json() };
    },
    events: () => emittedEvents(services, ws),
    async licences() {
      return services.db.selectFrom("licences").selectAll().where("workspace_id", "=", ws.workspaceId).orderBy("created_at").execute();
    },
    async subscription(id: string) {
      return services.db.selectFrom("subscriptions").selectAll().where("workspace_id", "=", ws.workspaceId).where("id", "=", id).executeTakeFirst();
    },
    async reasons() {
      return services.db
        .selectFrom("paddle_events")
        .select(["type", "outcome", "reason"])
        .where("workspace_id", "=", ws.workspaceId)
        .orderBy("received_at")
        .execute();
    },
  };
}

type Entity = Record<string, unknown>;

/**
 * A local stand-in for the Paddle API endpoints Warden calls, written from Paddle's public
 * API reference: `GET /prices/{id}`, `POST /transactions` (answered with its `checkout.url`),
 * `GET /transactions/{id}`, `GET|PATCH /subscriptions/{id}`, `POST /subscriptions/{id}/cancel`,
 * `POST /customers/{id}/portal-sessions`, `POST /adjustments`, and the lists
 * `GET /transactions|subscriptions|adjustments` in pages (`{data, meta: {request_id,
 * pagination: {per_page, next, has_more, estimated_total}}}`, `after` cursors, `status`
 * filter). Errors are Paddle's shape (`{error: {type, code, detail, documentation_url}, meta: {request_id}}`);
 * `rateLimited` answers 429 with `Retry-After`. The official SDK is pointed at `url`
 * through WARDEN_PADDLE_API_URL. `payCheckout` is the buyer paying at Paddle's checkout.
 */
export async function startPaddleApi(apiKey: string) {
  const state = {
    url: "",
    calls: [] as { method: string; path: string; body: Entity | null }[],
    prices: new Map<string, Entity>(Object.values(PADDLE_PRICES).map((p) => [p.id, priceObject({ ...p, currency: "EUR" })])),
    subscriptions: new Map<string, Entity>(),
    /** The transactions Warden created (`POST /transactions`), by id. */
    transactions: new Map<string, Entity>(),
    /**
     * The buyer pays at the checkout of a transaction Warden created: it is completed and,
     * for a recurring price, its subscription made (then held here like any other). Answers
     * the notifications Paddle sends for it, to be signed and delivered, in the order
     * Paddle documents them (which it does not promise).
     */
    payCheckout(id: string, now: number): { type: string; data: Entity }[] {
      const created = state.transactions.get(id);
      assert.ok(created, `no transaction ${id} was created`);
      const customData = created.custom_data as CustomData | null;
      const recurring = (created.items as { price: Entity }[]).some((item) => item.price.billing_cycle !== null);
      const subscriptionId = recurring ? paddleId("sub") : undefined;
      const completed: Entity = {
        ...transactionObject({
          id,
          customData,
          total: Number((created.details as { totals: Entity }).totals.total),
          currency: "EUR",
          billedAt: now,
          ...(subscriptionId === undefined ? {} : { subscriptionId, origin: "web" }),
        }),
        customer_id: created.customer_id,
        items: created.items,
        checkout: created.checkout,
      };
      state.transactions.set(id, completed);
      const events = [{ type: "transaction.completed", data: completed }];
      if (subscriptionId !== undefined) {
        const subscription: Entity = {
          ...subscriptionObject({ id: subscriptionId, status: "active", customData, startedAt: now, periodEnd: now + 30 * 86_400_000 }),
          customer_id: created.customer_id,
          currency_code: "EUR",
        };
        state.subscriptions.set(subscriptionId, subscription);
        // The notification names the transaction that made the subscription; the entity read later does not.
        events.push({ type: "subscription.created", data: { ...subscription, transaction_id: id } });
      }
      return events;
    },
    /** What `GET /transactions|subscriptions|adjustments` lists, in Paddle's order (by id); an unset list is empty. */
    lists: new Map<string, Entity[]>(),
    /** Objects per page, whatever `per_page` asks: small pages make every list turn its pages. */
    pageSize: 2,
    /** The next this many requests answer 429 with Retry-After: 1. */
    rateLimited: 0,
  };
  const requestId = () => paddleId("req");
  const fail = (status: number, code: string, detail: string) => ({
    status,
    body: {
      error: { type: "request_error", code, detail, documentation_url: `https://developer.paddle.com/errors/shared/${code}` },
      meta: { request_id: requestId() },
    },
  });
  const one = (data: unknown) => ({ status: 200, body: { data, meta: { request_id: requestId() } } });
  const handle = (method: string, url: URL, body: Entity | null): { status: number; body: unknown; headers?: Record<string, string> } => {
    const path = url.pathname;
    const priceId = /^\/prices\/([^/]+)$/.exec(path)?.[1];
    if (method === "GET" && priceId !== undefined) {
      const price = state.prices.get(priceId);
      return price ? one(price) : fail(404, "not_found", `Entity ${priceId} not found`);
    }
    if (method === "POST" && path === "/transactions") {
      const items = (body?.items ?? []) as { price_id: string; quantity: number }[];
      const priced = items.map((item) => ({ item, price: state.prices.get(item.price_id) }));
      const missing = priced.find((p) => p.price === undefined);
      if (items.length === 0 || missing) return fail(400, "invalid_field", `price ${missing?.item.price_id ?? "?"} not found`);
      const id = paddleId("txn");
      const total = priced.reduce((sum, p) => sum + Number((p.price?.unit_price as Entity | undefined)?.amount) * p.item.quantity, 0);
      const transaction = {
        ...transactionObject({ id, customData: (body?.custom_data ?? null) as CustomData | null, total, currency: "EUR", billedAt: Date.now() }),
        status: "ready",
        billed_at: null,
        items: priced.map((p) => ({ price: p.price, quantity: p.item.quantity, proration: null })),
        payments: [],
        checkout: { url: `https://pay.example.com/checkout?_ptxn=${id}` },
      };
      state.transactions.set(id, transaction);
      return { status: 201, body: { data: transaction, meta: { request_id: requestId() } } };
    }
    const transactionId = /^\/transactions\/([^/]+)$/.exec(path)?.[1];
    if (method === "GET" && transactionId !== undefined) {
      const transaction = state.transactions.get(transactionId);
      return transaction ? one(transaction) : fail(404, "not_found", `Entity ${transactionId} not found`);
    }
    const m = /^\/subscriptions\/([^/]+)(\/cancel)?$/.exec(path);
    if (m) {
      const sub = state.subscriptions.get(m[1] as string);
      if (!sub) return fail(404, "not_found", `Entity ${m[1]} not found`);
      if (method === "GET" && !m[2]) return one(sub);
      if (method === "POST" && m[2]) {
        if (sub.status === "canceled") return fail(400, "subscription_locked_canceled", "subscription is canceled");
        if (body?.effective_from === "immediately") Object.assign(sub, { status: "canceled", scheduled_change: null, current_billing_period: null });
        else {
          const period = sub.current_billing_period as Entity;
          sub.scheduled_change = { action: "cancel", effective_at: period.ends_at, resume_at: null };
        }
        return one(sub);
      }
      if (method === "PATCH" && !m[2]) {
        if (body !== null && "scheduled_change" in body && body.scheduled_change === null) sub.scheduled_change = null;
        return one(sub);
      }
    }
    const customer = /^\/customers\/([^/]+)\/portal-sessions$/.exec(path)?.[1];
    if (method === "POST" && customer !== undefined) {
      const ids = (body?.subscription_ids ?? []) as string[];
      const id = paddleId("cpls");
      const base = `https://customer-portal.paddle.com/cpl_01hv/${customer}?token=${id}`;
      return {
        status: 201,
        body: {
          data: {
            id,
            customer_id: customer,
            urls: {
              general: { overview: base },
              subscriptions: ids.map((s) => ({
                id: s,
                cancel_subscription: `${base}&action=cancel&subscription=${s}`,
                update_subscription_payment_method: `${base}&action=update&subscription=${s}`,
              })),
            },
            created_at: new Date().toISOString(),
          },
          meta: { request_id: requestId() },
        },
      };
    }
    if (method === "POST" && path === "/adjustments") {
      if (body?.action !== "refund" || typeof body.transaction_id !== "string") return fail(400, "invalid_field", "action or transaction_id");
      const adjustment = {
        ...adjustmentObject({
          action: "refund",
          transactionId: body.transaction_id,
          type: body.type === "full" ? "full" : "partial",
          total: 0,
          at: Date.now(),
        }),
        status: "pending_approval",
      };
      return { status: 201, body: { data: adjustment, meta: { request_id: requestId() } } };
    }
    if (method === "GET" && ["/transactions", "/subscriptions", "/adjustments"].includes(path)) {
      const status = url.searchParams.get("status");
      const items = (state.lists.get(path) ?? []).filter((item) => status === null || status.split(",").includes(String(item.status)));
      const afterId = url.searchParams.get("after");
      const start = afterId === null ? 0 : items.findIndex((item) => item.id === afterId) + 1;
      const perPage = Math.min(Number(url.searchParams.get("per_page") ?? 50), state.pageSize);
      const page = items.slice(start, start + perPage);
      const next = new URL(url.href);
      next.searchParams.set("after", String(page.at(-1)?.id ?? afterId ?? ""));
      const pagination = { per_page: perPage, next: next.href, has_more: start + perPage < items.length, estimated_total: items.length };
      return { status: 200, body: { data: page, meta: { request_id: requestId(), pagination } } };
    }
    return fail(404, "not_found", `${method} ${path} is not an endpoint`);
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (c: Buffer) => chunks.push(c));
    request.on("end", () => {
      const url = new URL(request.url ?? "/", state.url);
      const raw = Buffer.concat(chunks).toString("utf8");
      const body = raw === "" ? null : (JSON.parse(raw) as Entity);
      state.calls.push({ method: request.method ?? "GET", path: url.pathname + url.search, body });
      let answer: { status: number; body: unknown; headers?: Record<string, string> };
      if (request.headers.authorization?.toLowerCase() !== `bearer ${apiKey}`.toLowerCase()) {
        answer = fail(403, "forbidden", "You aren't permitted to perform this request.");
      } else if (state.rateLimited > 0) {
        state.rateLimited--;
        answer = { ...fail(429, "too_many_requests", "Too many requests, slow down."), headers: { "retry-after": "1" } };
      } else answer = handle(request.method ?? "GET", url, body);
      response.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
      response.end(JSON.stringify(answer.body));
    });
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}
