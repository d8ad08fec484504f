// Paddle behind the processor boundary (payments/payment-processor.ts), through its API
// with the environment's API key (paddle-client.ts). The checkout is a transaction
// Warden creates with the plan's linked Paddle price and Warden's custom_data, opened at
// its `checkout.url`, Paddle's hosted checkout on the vendor's default payment link
// (docs/decisions.md, Payments: processors); the buyer types their address there.
import type { Paddle, Price } from "@paddle/paddle-node-sdk";
import { invalidParameter } from "../errors/errors.js";
import type { CheckedCheckout, CreatedCheckout, FoundCheckout, PaymentProcessor, PaymentScope } from "../payments/payment-processor.js";
import type { Services } from "../services.js";
import type { Plan } from "../workspaces/workspace.types.js";
import { insertPaddleCheckout, paddleCheckoutBuyer } from "./paddle-checkout.store.js";
import { isPaddleNotFound, paddleApiFor, paddleRefused } from "./paddle-client.js";
import { listPaddlePlanLinks } from "./paddle-plan-link.store.js";

/** Paddle's transaction ids: `txn_` and 26 lower-case base32 characters (a ULID). */
const PADDLE_TRANSACTION = /^txn_[0-9a-z]{26}$/;

async function startPaddleCheckout(services: Services, checked: CheckedCheckout): Promise<CreatedCheckout> {
  const { request, plan, metadata } = checked;
  const scope = { workspaceId: request.workspace.id, env: request.env };
  const api = await paddleApiFor(services, scope);
  if (!api) throw invalidParameter("livemode", `This workspace takes no payments in ${request.env} mode yet.`, { reason: "payments_off" });
  const price = await sellablePrice(
    api.sdk,
    await listPaddlePlanLinks(services.db, scope, { productKind: plan.productKind, productId: plan.productId, planId: plan.id }),
    plan,
  );
  if (price === null) {
    throw invalidParameter(
      "plan",
      `Plan "${plan.id}" is linked to no active Paddle price of its currency and billing in ${request.env} (warden admin plan update --paddle-price).`,
    );
  }
  try {
    const transaction = await api.sdk.transactions.create({
      items: [{ priceId: price, quantity: request.seats ?? 1 }],
      // Paddle's checkout has no return address of its own: the vendor's payment link page
      // reads this one from the checkout.completed event's custom_data and sends the buyer
      // there, the transaction's id in place of {CHECKOUT_SESSION_ID} (README, Connect Paddle).
      customData: { ...metadata, warden_success_url: request.successUrl },
      collectionMode: "automatic",
    });
    const url = transaction.checkout?.url;
    if (!url) throw invalidParameter("plan", "Paddle made the checkout without a link: set a default payment link in Paddle's checkout settings.");
    // The thank-you page asks Paddle only about a transaction recorded here, for its person.
    await insertPaddleCheckout(services.db, scope, transaction.id, metadata.warden_account ?? null, services.clock.now());
    return { url, checkout_session: transaction.id };
  } catch (error) {
    throw paddleRefused(error);
  }
}

/**
 * Paddle's last answer about a transaction, per process, for `RECENT_MS`: the thank-you
 * page's "Check again" (and a buyer reloading) asks Paddle at most once per transaction in
 * that time. A politeness limit, not a quota: each process keeps its own, so N processes
 * may ask N times. At most `RECENT_MAX` are kept; the oldest go first.
 */
const RECENT_MS = 5_000;
const RECENT_MAX = 10_000;
const recent = new Map<string, { at: number; answer: FoundCheckout | "unknown" | { unanswered: string } }>();

function remember(key: string, at: number, answer: FoundCheckout | "unknown" | { unanswered: string }) {
  recent.delete(key);
  recent.set(key, { at, answer });
  if (recent.size > RECENT_MAX) recent.delete(recent.keys().next().value as string);
}

async function findPaddleCheckout(services: Services, scope: PaymentScope, checkoutId: string, viewer: string) {
  // Only a transaction Warden made for this person: a made-up or another's id costs Paddle no call.
  // One started signed out (the buy button) belongs to nobody yet: the buyer waits for its
  // notifications, as a signed-out page would, and Paddle is not asked.
  const buyer = await paddleCheckoutBuyer(services.db, scope, checkoutId);
  if (buyer === null) return null;
  if (buyer !== viewer) return "unknown";
  const api = await paddleApiFor(services, scope);
  if (!api) return null;
  const key = `${scope.workspaceId}\n${scope.env}\n${checkoutId}`;
  const now = services.clock.now();
  const known = recent.get(key);
  if (known && now - known.at < RECENT_MS) return known.answer;
  let answer: FoundCheckout | "unknown" | { unanswered: string };
  try {
    answer = { metadata: (await api.sdk.transactions.get(checkoutId)).customData };
  } catch (error) {
    // Whatever Paddle answers (its 403, 429, an error of its own, no answer), the buyer waits: the event still comes.
    answer = isPaddleNotFound(error) ? "unknown" : { unanswered: error instanceof Error ? error.message : String(error) };
  }
  remember(key, now, answer);
  return answer;
}

/** Whether a Paddle price bills as the plan does: its currency, one-time or every one of its interval. */
function sellsAsPlan(price: Price, plan: Plan): boolean {
  if (price.status !== "active" || price.unitPrice.currencyCode.toLowerCase() !== plan.currency) return false;
  if (plan.billing !== "subscription") return price.billingCycle === null;
  return price.billingCycle !== null && price.billingCycle.interval === (plan.interval ?? "month") && price.billingCycle.frequency === 1;
}

/** The first linked price (in the order linked) that Paddle finds in this environment, active and billing as the plan does. */
async function sellablePrice(sdk: Paddle, linked: readonly string[], plan: Plan): Promise<string | null> {
  for (const id of linked) {
    if (!id.startsWith("pri_")) continue;
    try {
      const price = await sdk.prices.get(id);
      if (sellsAsPlan(price, plan)) return price.id;
    } catch (error) {
      if (!isPaddleNotFound(error)) throw paddleRefused(error);
    }
  }
  return null;
}

const cancel = async (services: Services, scope: PaymentScope, subscriptionId: string, now: boolean): Promise<boolean> => {
  const api = await paddleApiFor(services, scope);
  if (!api) return false;
  try {
    await api.sdk.subscriptions.cancel(subscriptionId, { effectiveFrom: now ? "immediately" : "next_billing_period" });
  } catch (error) {
    if (isPaddleNotFound(error)) return false;
    throw paddleRefused(error);
  }
  return true;
};

export const PADDLE_PROCESSOR: PaymentProcessor = {
  name: "paddle",
  canAct: async (services, scope) => (await paddleApiFor(services, scope)) !== null,
  isCheckoutId: (id) => PADDLE_TRANSACTION.test(id),
  startCheckout: startPaddleCheckout,
  findCheckout: findPaddleCheckout,
  /** A full refund is an adjustment Paddle approves later; its adjustment.updated (approved) is what Warden counts, under the same event id. */
  async refund(services, scope, payment) {
    const api = await paddleApiFor(services, scope);
    if (!api) return false;
    try {
      await api.sdk.adjustments.create({ action: "refund", type: "full", transactionId: payment.payment, reason: "Refunded by the vendor through Warden" });
    } catch (error) {
      throw paddleRefused(error);
    }
    return true;
  },
  cancel,
  async setCancelAtPeriodEnd(services, scope, subscriptionId, setToCancel) {
    if (setToCancel) return cancel(services, scope, subscriptionId, false);
    const api = await paddleApiFor(services, scope);
    if (!api) return false;
    try {
      // Paddle takes a scheduled cancellation back by removing the scheduled change.
      await api.sdk.subscriptions.update(subscriptionId, { scheduledChange: null });
    } catch (error) {
      if (isPaddleNotFound(error)) return false;
      throw paddleRefused(error);
    }
    return true;
  },
  async customerPortal(services, scope, subscriptionId) {
    const api = await paddleApiFor(services, scope);
    if (!api) return null;
    try {
      const subscription = await api.sdk.subscriptions.get(subscriptionId);
      const session = await api.sdk.customerPortalSessions.create(subscription.customerId, [subscriptionId]);
      return session.urls.general.overview;
    } catch (error) {
      if (isPaddleNotFound(error)) return null;
      throw paddleRefused(error);
    }
  },
};
