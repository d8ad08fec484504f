// A paid checkout of the bench's lifetime plan as Stripe reports it
// (`checkout.session.completed`), signed as Stripe signs it. Each report is a new sale:
// a buyer, a licence and a `purchase.completed` event. Posted by scenario 5
// (webhook-delivery.ts) and by bench/ab.ts's `--request ingest` (through load-worker.ts).
import Stripe from "stripe";
import { BENCH } from "./customer-mix.js";

/** The path of the bench workspace's Stripe endpoint. */
export const STRIPE_PATH = `/processor/stripe/${BENCH.workspace}`;

function checkoutReport(tag: string, n: number, now: number): string {
  const created = Math.floor(now / 1000);
  const session = {
    id: `cs_live_bench${tag}x${n}`,
    object: "checkout.session",
    mode: "payment",
    status: "complete",
    payment_status: "paid",
    amount_total: BENCH.plans.lifetime.amountCents,
    amount_subtotal: BENCH.plans.lifetime.amountCents,
    currency: "eur",
    customer: null,
    customer_email: null,
    customer_details: { email: `buyer.${tag}.${n}@bench.example.com`, name: "Buyer", address: null, phone: null, tax_exempt: "none", tax_ids: [] },
    payment_intent: `pi_live_bench${tag}x${n}`,
    subscription: null,
    invoice: null,
    livemode: true,
    metadata: { warden_tool: BENCH.tool, warden_plan: BENCH.plans.lifetime.id },
    created: created - 60,
    expires_at: created + 86_400,
  };
  return JSON.stringify({
    id: `evt_bench${tag}x${n}`,
    object: "event",
    type: "checkout.session.completed",
    created,
    livemode: true,
    api_version: "2026-10-28.endive",
    data: { object: session },
  });
}

/** Report `n` of the series `tag` (ids and buyer unique to both), created now, with its `stripe-signature` header. */
export function signedCheckoutReport(tag: string, n: number, secret: string): { payload: string; signature: string } {
  const payload = checkoutReport(tag, n, Date.now());
  return { payload, signature: Stripe.webhooks.generateTestHeaderString({ payload, secret }) };
}
