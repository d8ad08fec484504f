// `warden admin stripe trigger purchase`: a test purchase sent to Warden's own Stripe
// webhook as Stripe would send it (as `stripe trigger checkout.session.completed` does
// with a real account), so that a vendor sees a sale go through before connecting one.
// The event is made here and signed with the environment's own signing secret; the
// command posts it and this file reads back what it bought.

import { createHmac } from "node:crypto";
import { findLicenceByCheckoutSession } from "../billing/licence.store.js";
import { isEmailShape } from "../customers/email.js";
import { findPersonById } from "../customers/person.store.js";
import { invalidParameter, notFound } from "../errors/errors.js";
import { randomBase62 } from "../ids.js";
import type { Services } from "../services.js";
import { findPlan } from "../workspaces/workspace.store.js";
import { requireEnv, requireWorkspace } from "../workspaces/workspace-lookup.service.js";
import { stripeWebhookPath } from "./stripe-account.service.js";
import { findStripeAccount } from "./stripe-account.store.js";
import { TEST_PURCHASE_EVENT, TEST_PURCHASE_PAYMENT } from "./test-purchase.types.js";

export interface TestPurchase {
  /** The Warden's own Stripe webhook URL for the workspace (WARDEN_PUBLIC_URL's origin). */
  url: string;
  body: string;
  /** The Stripe-Signature header: `t=…,v1=…`, as Stripe signs. */
  signature: string;
  event: string;
  checkoutSession: string;
}

/**
 * A paid `checkout.session.completed` of a one-time plan in the test environment, with
 * the metadata Warden's own checkout puts on a session. Only one-time plans: a licence
 * needs nothing from Stripe's API (the ingest reads the session alone), while a
 * subscription is its own Stripe object, with renewals and invoices that no stand-in
 * sends (docs/decisions.md, "A test purchase from the command line").
 */
export async function testPurchase(
  services: Services,
  input: { workspace: string; env: string; email: string; product: { kind: "tool" | "bundle"; id: string }; plan: string },
): Promise<TestPurchase> {
  const workspace = await requireWorkspace(services.db, input.workspace);
  const env = requireEnv(input.env);
  if (env !== "test") {
    throw invalidParameter("env", "A test purchase is sent to the test environment only: live purchases come from Stripe, with real money.");
  }
  if (!isEmailShape(input.email)) throw invalidParameter("email", `"${input.email}" is not an email address.`);
  const plan = await findPlan(services.db, workspace.id, input.product.kind, input.product.id, input.plan);
  if (plan === null) throw notFound(`No plan "${input.plan}" of ${input.product.kind} "${input.product.id}" in workspace "${workspace.slug}".`);
  if (plan.billing !== "one_time") {
    throw invalidParameter(
      "plan",
      `Plan ${plan.id} is a subscription; a test purchase buys a one-time plan (a licence). Try a subscription with Stripe's test mode: warden admin stripe connect --secret-key sk_test_…, then buy it on the hosted Plans page with card 4242 4242 4242 4242.`,
    );
  }
  const account = await findStripeAccount(services.db, workspace.id, env);
  if (account === null) {
    throw invalidParameter(
      "env",
      `${workspace.slug} (test) is not connected to Stripe: warden admin stripe connect --workspace ${workspace.slug} --env test --webhook-secret whsec_… first.`,
    );
  }
  const secret = services.secretBox.open(account.webhookSecretSealed);
  const seconds = Math.floor(services.clock.now() / 1000);
  const checkoutSession = `cs_test_${randomBase62(24)}`;
  const event = `${TEST_PURCHASE_EVENT}${randomBase62(24)}`;
  const amount = plan.amountCents ?? 0;
  const session = {
    id: checkoutSession,
    object: "checkout.session",
    mode: "payment",
    status: "complete",
    payment_status: amount === 0 ? "no_payment_required" : "paid",
    amount_subtotal: amount,
    amount_total: amount,
    currency: plan.currency,
    customer: null,
    customer_email: input.email,
    customer_details: { email: input.email, name: null },
    payment_intent: amount === 0 ? null : `${TEST_PURCHASE_PAYMENT}${randomBase62(24)}`,
    subscription: null,
    livemode: false,
    metadata: { [plan.productKind === "tool" ? "warden_tool" : "warden_bundle"]: plan.productId, warden_plan: plan.id },
    created: seconds,
  };
  const body = JSON.stringify({
    id: event,
    object: "event",
    type: "checkout.session.completed",
    created: seconds,
    livemode: false,
    api_version: "2026-10-28.endive",
    data: { object: session },
  });
  // Stripe's scheme: HMAC-SHA256 of `t.body` with the endpoint's signing secret, in hex.
  const signature = `t=${seconds},v1=${createHmac("sha256", secret).update(`${seconds}.${body}`).digest("hex")}`;
  return { url: `${services.config.publicUrl}${stripeWebhookPath(workspace.slug)}`, body, signature, event, checkoutSession };
}

/** The licence a test purchase's Checkout Session bought, with its holder; null when none was made. */
export async function testPurchaseLicence(
  services: Services,
  input: { workspace: string; checkoutSession: string },
): Promise<{ id: string; email: string; person: string; status: string } | null> {
  const workspace = await requireWorkspace(services.db, input.workspace);
  const licence = await findLicenceByCheckoutSession(services.db, { workspaceId: workspace.id, env: "test" }, input.checkoutSession);
  if (licence === null) return null;
  const person = await findPersonById(services.db, workspace.id, "test", licence.personId);
  return { id: licence.id, email: person?.email ?? "", person: licence.personId, status: licence.status };
}
