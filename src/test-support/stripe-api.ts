// A local stand-in for the few Stripe API endpoints Warden calls (retrieve a Price, create a Checkout
// Session, refund a payment, retrieve, update or cancel a subscription, open a billing
// portal session; the lists a reconcile reads, served in pages with `has_more` and
// `starting_after` as Stripe does), so that the `stripe` client is exercised for real (its
// request encoding, auth, pagination, error mapping) without the internet: point
// WARDEN_STRIPE_API_URL at `url`.
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { after } from "node:test";
import { randomBase62 } from "../ids.js";

export interface StripeApiCall {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The form-encoded body as Stripe's bracketed keys: `line_items[0][quantity]` → "1". */
  form: Record<string, string>;
}

export interface StripeApiStandIn {
  url: string;
  calls: StripeApiCall[];
  /** The next answers are this Stripe error instead of the object asked for. */
  failWith: { status: number; error: { type: string; message: string; param?: string; code?: string } } | null;
  /** Subscription ids Stripe does not hold (imported from another provider). */
  unknownSubscriptions: Set<string>;
  /**
   * What GET on a list path answers (`/v1/checkout/sessions`, `/v1/subscriptions`,
   * `/v1/invoices`, `/v1/refunds`, `/v1/disputes`, `/v1/checkout/sessions/{id}/line_items`),
   * newest first as Stripe lists; an unset list is empty.
   */
  lists: Map<string, Record<string, unknown>[]>;
  /** Objects per page, whatever `limit` asks: small pages make every list turn its pages. */
  pageSize: number;
  /** The next this many requests answer 429 with Retry-After: 2, as Stripe's rate limiter does. */
  rateLimited: number;
  /**
   * Prices a retrieve finds (`GET /v1/prices/{id}`), each in its mode (`livemode`): one of
   * the other mode is not found, as at Stripe, where test and live hold their own objects.
   */
  prices: Map<
    string,
    {
      id: string;
      livemode: boolean;
      active: boolean;
      currency: string;
      type: "one_time" | "recurring";
      recurring: { interval: "month" | "year"; interval_count: number; usage_type: "licensed" | "metered" } | null;
    }
  >;
  /** Requests made with this secret key wait until `gate` settles: a run held mid-way. */
  gated: { secretKey: string; gate: Promise<void> } | null;
}

/** One page of a list after `starting_after`, as Stripe answers it. */
function listPage(items: Record<string, unknown>[], query: URLSearchParams, pageSize: number, path: string) {
  const after = query.get("starting_after");
  const start = after === null ? 0 : items.findIndex((item) => item.id === after) + 1;
  const limit = Math.min(Number(query.get("limit") ?? 10), pageSize);
  const data = items.slice(start, start + limit);
  return { object: "list", url: path, data, has_more: start + limit < items.length };
}

export async function startStripeApi(): Promise<StripeApiStandIn> {
  const standIn: StripeApiStandIn = {
    url: "",
    calls: [],
    failWith: null,
    unknownSubscriptions: new Set(),
    lists: new Map(),
    pageSize: 100,
    rateLimited: 0,
    prices: new Map(),
    gated: null,
  };
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => {
      body += String(chunk);
    });
    request.on("end", async () => {
      const call: StripeApiCall = {
        method: request.method ?? "",
        path: request.url ?? "",
        headers: request.headers,
        form: Object.fromEntries(new URLSearchParams(body)),
      };
      standIn.calls.push(call);
      if (standIn.gated && request.headers.authorization === `Bearer ${standIn.gated.secretKey}`) await standIn.gated.gate;
      const send = (status: number, json: unknown) =>
        response.writeHead(status, { "content-type": "application/json", "request-id": `req_${randomBase62(14)}` }).end(JSON.stringify(json));
      if (standIn.failWith) return send(standIn.failWith.status, { error: standIn.failWith.error });
      if (standIn.rateLimited > 0) {
        standIn.rateLimited -= 1;
        response
          .writeHead(429, { "content-type": "application/json", "retry-after": "2", "stripe-should-retry": "true" })
          .end(JSON.stringify({ error: { type: "invalid_request_error", code: "rate_limit", message: "Too many requests hit the API too quickly." } }));
        return;
      }
      const livemode = String(request.headers.authorization).startsWith("Bearer sk_live_");
      const priceId = /^\/v1\/prices\/([^/?]+)$/.exec(call.path)?.[1];
      if (call.method === "GET" && priceId) {
        const price = standIn.prices.get(priceId);
        if (price && price.livemode === livemode) return send(200, { object: "price", ...price });
        return send(404, { error: { type: "invalid_request_error", code: "resource_missing", message: `No such price: '${priceId}'`, param: "id" } });
      }
      // A GET of one subscription is a retrieve (below); any other GET reads a list.
      const subscription = /^\/v1\/subscriptions\/([^/?]+)$/.exec(call.path)?.[1];
      if (call.method === "GET" && !subscription) {
        const url = new URL(call.path, "http://stripe.test");
        return send(200, listPage(standIn.lists.get(url.pathname) ?? [], url.searchParams, standIn.pageSize, url.pathname));
      }
      if (call.method === "POST" && call.path === "/v1/checkout/sessions") {
        const id = `cs_${livemode ? "live" : "test"}_${randomBase62(58)}`;
        return send(200, {
          id,
          object: "checkout.session",
          mode: call.form.mode,
          livemode,
          metadata: Object.fromEntries(
            Object.entries(call.form)
              .filter(([k]) => k.startsWith("metadata["))
              .map(([k, v]) => [k.slice(9, -1), v]),
          ),
          url: `https://checkout.stripe.com/c/pay/${id}`,
        });
      }
      if (call.method === "POST" && call.path === "/v1/refunds") {
        return send(200, { id: `re_${randomBase62(24)}`, object: "refund", payment_intent: call.form.payment_intent, status: "succeeded", livemode });
      }
      if (call.method === "POST" && call.path === "/v1/billing_portal/sessions") {
        const id = `bps_${randomBase62(24)}`;
        return send(200, {
          id,
          object: "billing_portal.session",
          customer: call.form.customer,
          return_url: call.form.return_url,
          livemode,
          url: `https://billing.stripe.com/p/session/${id}`,
        });
      }
      if (subscription && (call.method === "POST" || call.method === "DELETE" || call.method === "GET")) {
        if (standIn.unknownSubscriptions.has(subscription)) {
          return send(404, {
            error: { type: "invalid_request_error", code: "resource_missing", message: `No such subscription: '${subscription}'`, param: "id" },
          });
        }
        const cancelled =
          call.method === "DELETE" ? { status: "canceled" } : { status: "active", cancel_at_period_end: call.form.cancel_at_period_end === "true" };
        return send(200, { id: subscription, object: "subscription", customer: `cus_of_${subscription}`, livemode, ...cancelled });
      }
      send(404, { error: { type: "invalid_request_error", message: `Unrecognized request URL (${call.method}: ${call.path}).` } });
    });
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  standIn.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return standIn;
}
