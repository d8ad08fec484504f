// A short history for the Insights pages' tests, made as it happens in production:
// Stripe's signed events, the API's grants, and an extension's sign-in and access checks,
// over three days of the test clock. Answers what the pages must show of it.
import assert from "node:assert/strict";
import { insertLicence } from "../billing/licence.store.js";
import { cancelSubscription } from "../billing/subscription.service.js";
import { insertSubscriptions, type Subscription } from "../billing/subscription.store.js";
import { DAY_MS, type ManualClock } from "../clock.js";
import { ensurePerson } from "../customers/person.store.js";
import type { Executor } from "../db/database.js";
import type { Env, ProductKind } from "../db/schema.js";
import { newId } from "../ids.js";
import { recordSubscriptionMrr } from "../insights/rollup.store.js";
import type { Services } from "../services.js";
import { createPlan } from "../workspaces/workspace.service.js";
import { readCode } from "./dashboard.js";
import { testApi, type Workspace } from "./harness.js";
import {
  chargeObject,
  connectTestStripe,
  deliver,
  invoiceObject,
  paymentSession,
  stripeEvent,
  stripeId,
  subscriptionObject,
  subscriptionSession,
} from "./stripe.js";

/** What the history amounts to, in the words and formats the pages use. */
export interface InsightsHistory {
  /** The last day of the history (UTC), the clock's today. */
  today: string;
  buyer: string;
  refunded: string;
  subscriber: string;
  granted: string;
  user: string;
}

/**
 * Two days ago `refunded` buys Lifetime (€49.00); yesterday `buyer` buys the Suite for life
 * (€99.00) and `subscriber` subscribes Monthly (€5.00 a month, its first invoice paid); today the first purchase
 * is refunded in full, `granted` is granted 30 days by the API, and `user` signs in on one
 * device and checks access. Revenue: gross €153.00, refunds €49.00, net €104.00, in eur.
 */
export async function makeInsightsHistory(services: Services, clock: ManualClock, ws: Workspace, dataDir: string): Promise<InsightsHistory> {
  const api = await testApi(services);
  const secret = await connectTestStripe(services, ws);
  const send = (type: string, object: Record<string, unknown>) => deliver(api, ws, secret, stripeEvent(type, object, { now: clock.now() }), clock.now());
  const names = { buyer: `buyer@${ws.slug}.example.com`, refunded: `refunded@${ws.slug}.example.com`, subscriber: `subscriber@${ws.slug}.example.com` };

  const today = clock.now();
  clock.set(today - 2 * DAY_MS);
  const intent = stripeId("pi");
  await send(
    "checkout.session.completed",
    paymentSession({
      email: names.refunded,
      metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" },
      amount: 4900,
      paymentIntent: intent,
      now: clock.now(),
    }),
  );

  clock.set(today - DAY_MS);
  await send(
    "checkout.session.completed",
    paymentSession({ email: names.buyer, metadata: { warden_bundle: "suite", warden_plan: "suite-lifetime" }, amount: 9900, now: clock.now() }),
  );
  const sub = stripeId("sub");
  const monthly = { warden_tool: "tabmaster", warden_plan: "monthly" };
  await send("checkout.session.completed", subscriptionSession({ email: names.subscriber, subscription: sub, metadata: monthly, now: clock.now() }));
  await send(
    "customer.subscription.created",
    subscriptionObject({
      id: sub,
      status: "active",
      metadata: monthly,
      startedAt: clock.now(),
      periodStart: clock.now(),
      periodEnd: clock.now() + 30 * DAY_MS,
    }),
  );
  await send("invoice.paid", { ...invoiceObject({ subscription: sub, paymentIntent: stripeId("pi") }), amount_paid: 500, currency: "eur" });

  clock.set(today);
  await send("charge.refunded", chargeObject({ paymentIntent: intent, amount: 4900, amountRefunded: 4900 }));
  const granted = `granted@${ws.slug}.example.com`;
  const grant = await api.request({ method: "POST", url: `/api/v1/tools/${ws.tool}/grants`, key: ws.testKey, payload: { email: granted, days: 30 } });
  assert.equal(grant.statusCode, 201, grant.body);

  const user = `user@${ws.slug}.example.com`;
  const asked = await api.request({ method: "POST", url: "/api/client/v1/sign-in", payload: { workspace: ws.slug, tool: ws.tool, email: user, env: "test" } });
  assert.equal(asked.statusCode, 200, asked.body);
  const verified = await api.request({
    method: "POST",
    url: "/api/client/v1/sign-in/verify",
    payload: {
      workspace: ws.slug,
      tool: ws.tool,
      email: user,
      env: "test",
      code: await readCode(dataDir, user),
      device: { name: "Laptop", platform: "chrome-mac" },
    },
  });
  assert.equal(verified.statusCode, 200, verified.body);
  const check = await api.request({ url: `/api/client/v1/tools/${ws.tool}/access`, headers: { authorization: `Bearer ${verified.json().token}` } });
  assert.equal(check.statusCode, 200, check.body);

  return { today: new Date(today).toISOString().slice(0, 10), ...names, granted, user };
}

/** A licence bought (or free, with no amount) by the person at `at`, written by the licence store as a sale writes it. */
export async function buyLicence(
  ex: Executor,
  workspaceId: string,
  personId: string,
  kind: ProductKind,
  productId: string,
  at: number,
  amountCents: number | null = 4900,
  env: Env = "test",
) {
  await insertLicence(ex, {
    id: newId("lic"),
    workspaceId,
    env,
    personId,
    productKind: kind,
    productId,
    planId: null,
    status: "active",
    purchasedAt: at,
    amountCents,
    currency: amountCents === null ? null : "eur",
    paymentIntent: null,
    checkoutSession: null,
    seats: null,
    teamLicenceId: null,
    teamSubscriptionId: null,
    createdAt: at,
  });
}

/**
 * Subscriptions in two currencies over the 14 days to `today` (noon UTC), written as
 * the import writes them (the row, then its MRR at its time) and ended as the vendor's
 * cancel ends them: the figures the Subscriptions page and API must show, hand-computed
 * in `insights/paying-customers.test.ts`. Plans: Monthly €5.00 (Tab Master), Team €20.00
 * a month (Link Keeper), Pro ¥1,200 a month (Tab Master), Suite yearly ¥24,000 (the Suite).
 *
 * - ann: Monthly and Team (the Team one past due), from 20 days ago: paying throughout.
 * - bob: Monthly from 10 days ago, ended 2 days ago.
 * - eve: two Monthly subscriptions from 20 days ago, one ended yesterday: still paying.
 * - cat: Pro and Suite yearly from 3 days ago.
 * - dan: Monthly, trialing: pays nothing yet.
 */
export async function makeRecurringHistory(services: Services, clock: ManualClock, ws: Workspace, today: number): Promise<void> {
  const { db } = services;
  const plans: [string, ProductKind, string, string, number, "month" | "year"][] = [
    ["team-monthly", "tool", "linkkeeper", "eur", 2000, "month"],
    ["pro-jpy", "tool", "tabmaster", "jpy", 1200, "month"],
    ["suite-yearly-jpy", "bundle", "suite", "jpy", 24000, "year"],
  ];
  for (const [id, kind, product, currency, amountCents, interval] of plans) {
    await createPlan(db, clock, {
      workspace: ws.slug,
      ...(kind === "tool" ? { tool: product } : { bundle: product }),
      id,
      name: id,
      billing: "subscription",
      amountCents,
      currency,
      interval,
    });
  }
  const person = async (name: string) => (await ensurePerson(db, ws.workspaceId, "test", `${name}@${ws.slug}.example.com`, today - 30 * DAY_MS)).id;
  const subscribe = async (name: string, kind: ProductKind, product: string, plan: string, daysAgo: number, status = "active") => {
    const at = today - daysAgo * DAY_MS;
    const sub: Subscription = {
      workspaceId: ws.workspaceId,
      env: "test",
      id: stripeId("sub"),
      personId: await person(name),
      productKind: kind,
      productId: product,
      planId: plan,
      status,
      currentPeriodStart: at,
      currentPeriodEnd: at + 30 * DAY_MS,
      cancelAtPeriodEnd: false,
      cancelAt: null,
      endedAt: null,
      seats: null,
      createdAt: at,
    };
    await insertSubscriptions(db, [sub]);
    await recordSubscriptionMrr(db, sub, at);
    return sub;
  };
  const end = async (sub: Subscription, daysAgo: number) => {
    const at = today - daysAgo * DAY_MS;
    clock.set(at);
    await cancelSubscription(services, { id: sub.id, now: true, workspace: ws.slug, env: "test" });
  };
  await subscribe("ann", "tool", "tabmaster", "monthly", 20);
  await subscribe("ann", "tool", "linkkeeper", "team-monthly", 20, "past_due");
  const eve = await subscribe("eve", "tool", "tabmaster", "monthly", 20);
  await subscribe("eve", "tool", "tabmaster", "monthly", 20);
  const bob = await subscribe("bob", "tool", "tabmaster", "monthly", 10);
  await subscribe("dan", "tool", "tabmaster", "monthly", 5, "trialing");
  await subscribe("cat", "tool", "tabmaster", "pro-jpy", 3);
  await subscribe("cat", "bundle", "suite", "suite-yearly-jpy", 3);
  await end(bob, 2);
  await end(eve, 1);
  clock.set(today);
}
