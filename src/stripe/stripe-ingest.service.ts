// Stripe's events in: verified over the raw bytes against the workspace environment's
// signing secret (stripe-signature.ts) before anything parses them, then applied once per
// Stripe event id in one transaction (under the payment lock, with the events they
// cause), whatever order they arrive in.
// Each event is read into a processor-neutral fact (stripe-objects.ts, stripeFactOf) that
// payments/apply-fact.service.ts applies; which event is which fact and what it changes is
// in this folder's README.
import { type BillingTx, inBillingTransaction } from "../billing/billing.context.js";
import type { Env, StripeEventOutcome } from "../db/schema.js";
import { invalidParameter, notFound } from "../errors/errors.js";
import { applyPaymentFact, type Handled, type ProcessorRecords } from "../payments/apply-fact.service.js";
import { isProblem } from "../payments/fields.js";
import type { Services } from "../services.js";
import { findWorkspaceBySlug } from "../workspaces/workspace.store.js";
import { findStripeAccount } from "./stripe-account.store.js";
import { claimStripeEvent, listDeferredEvents, setStripeEventOutcome } from "./stripe-event.store.js";
import { readEvent, type StripeEvent, stripeFactOf } from "./stripe-objects.js";
import { planOfItems } from "./stripe-plan-link.service.js";
import { verifyStripeSignature } from "./stripe-signature.js";

export interface IngestResult {
  event: string;
  type: string;
  /** duplicate: handled before (a retry); deferred: held until its subscription's buyer is known. */
  outcome: StripeEventOutcome | "duplicate";
  reason: string | null;
}

/**
 * Verifies and applies one delivery. The signature is checked over the raw bytes before
 * they are parsed, against each connected environment's secret; the one that verifies is
 * the event's environment, and its `livemode` must agree. A bad or stale signature, a
 * verified body that is not an event, or a workspace not connected to Stripe is refused
 * (400/404) and changes nothing. An event Warden cannot use, malformed data in it
 * included, is acknowledged with its reason, to be logged.
 */
export async function ingestStripeEvent(services: Services, input: { slug: string; rawBody: Buffer; signature: string | undefined }): Promise<IngestResult> {
  const workspace = await findWorkspaceBySlug(services.db, input.slug);
  if (!workspace) throw notFound(`No workspace "${input.slug}".`);
  const connected: { env: Env; secret: string }[] = [];
  for (const env of ["test", "live"] as const) {
    const account = await findStripeAccount(services.db, workspace.id, env);
    if (account) connected.push({ env, secret: services.secretBox.open(account.webhookSecretSealed) });
  }
  if (connected.length === 0) throw invalidParameter("livemode", "Stripe is not connected for this workspace (warden admin stripe connect).");
  const { env } = verifyStripeSignature(input.rawBody, input.signature, connected, services.clock.now());
  const rawBody = input.rawBody.toString("utf8");
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawBody);
  } catch {
    throw invalidParameter("body", "The body is not a Stripe event (not JSON).");
  }
  const event = readEvent(parsed);
  if (isProblem(event)) throw invalidParameter("body", `The body is not a Stripe event: ${event.problem}.`);
  const eventEnv: Env = event.livemode ? "live" : "test";
  if (eventEnv !== env) {
    const other = connected.some((c) => c.env === eventEnv);
    throw invalidParameter(
      "livemode",
      other
        ? `A ${eventEnv} event signed with the ${env} environment's secret: each environment's events are signed with its own.`
        : `Stripe is not connected for the ${eventEnv} environment of this workspace (warden admin stripe connect).`,
    );
  }

  const result = await inBillingTransaction(services, { workspaceId: workspace.id, env }, async (tx): Promise<IngestResult> => {
    const claimed = await claimStripeEvent(tx.trx, tx, { id: event.id, type: event.type, stripeCreated: event.created, receivedAt: tx.now });
    if (!claimed) return { event: event.id, type: event.type, outcome: "duplicate", reason: null };
    const handled = await applyStripeEvent(tx, event);
    if (handled.outcome !== "applied" || handled.reason !== null) {
      await setStripeEventOutcome(tx.trx, tx, event.id, {
        ...handled,
        ...(handled.outcome === "deferred" ? { payload: rawBody } : {}),
      });
    }
    return { event: event.id, type: event.type, outcome: handled.outcome, reason: handled.reason };
  }).catch((error: unknown) => {
    services.metrics.countStripeEvent(event.type, "error");
    throw error;
  });
  // Only verified events are counted: their types are Stripe's, a closed set.
  services.metrics.countStripeEvent(result.type, result.outcome);
  return result;
}

/**
 * The event types to choose on the Stripe endpoint (the dashboard's Stripe page lists
 * them): those applyStripeEvent() acts on, with invoice.paid alone of the two invoice types that
 * say the same thing. invoice_payment.paid names a subscription invoice's payment intents
 * in current API versions, whose invoice.paid does not. Stripe sends anything else only
 * if chosen, and it is ignored.
 */
export const STRIPE_EVENT_TYPES = [
  "checkout.session.completed",
  "checkout.session.async_payment_succeeded",
  "customer.subscription.created",
  "customer.subscription.updated",
  "customer.subscription.deleted",
  "customer.subscription.paused",
  "customer.subscription.resumed",
  "invoice.paid",
  "invoice_payment.paid",
  "charge.refunded",
  "charge.dispute.created",
  "charge.dispute.closed",
] as const;

/**
 * Applies one Stripe event inside an open payment transaction: the webhook's deliveries
 * and the reconcile's reading of Stripe's objects (stripe-reconcile.service.ts) both come
 * through here, so the same fact makes the same change and derives the same event ids.
 */
export async function applyStripeEvent(tx: BillingTx, event: StripeEvent): Promise<Handled> {
  return applyPaymentFact(tx, stripeFactOf(event), STRIPE_RECORDS);
}

/** Stripe's plan links and its held-back events (in stripe_events, with their payloads). */
const STRIPE_RECORDS: ProcessorRecords = {
  planOfItems,
  heldBack: async (tx, subscriptionId) =>
    (await listDeferredEvents(tx.trx, tx, subscriptionId)).map((held) => {
      const event = readEvent(JSON.parse(held.payload));
      return { id: held.id, fact: isProblem(event) ? { fact: "nothing", reason: "held-back event no longer reads as an event" } : stripeFactOf(event) };
    }),
  settle: (tx, id, handled) => setStripeEventOutcome(tx.trx, tx, id, handled),
};
