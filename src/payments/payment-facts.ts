// What a payment processor reports, in Warden's words: each adapter (stripe/, paddle/)
// reads its own events and objects into these facts, and apply-fact.service.ts applies
// them to billing/ the same way whichever processor said them (docs/decisions.md,
// Payments: processors).
import type { DisputeReport } from "../billing/dispute.service.js";
import type { Earnings } from "../billing/licence.store.js";
import type { SubscriptionReport } from "../billing/subscription.service.js";
import type { ProductKind } from "../db/schema.js";
import type { Problem, WardenMetadata } from "./fields.js";

/** What a purchase bought, as the processor lists it: each item's price and product. */
export interface BoughtItem {
  price: string | null;
  product: string | null;
}

/** The plan a processor's price or product id is linked to. */
export interface LinkedPlan {
  productKind: ProductKind;
  productId: string;
  planId: string;
}

/**
 * One thing that happened at the processor. A subscription is reported as its state at a
 * time (status, period, cancel fields, quantity), not as a transition: billing derives
 * started, cancel scheduled, resumed, seats changed, past due and ended from the state it
 * holds, which keeps repeats and reordered reports harmless. `payment` is the processor's
 * id of a payment (Stripe's payment intent, Paddle's transaction): what a refund or a
 * dispute names. `earnings` is what the vendor earns of a payment after the processor's
 * fee and tax where the processor reports it (Paddle's transaction totals), null where it
 * does not (Stripe's Checkout Session and invoice carry no fee); `earningsTakenCents` is
 * what a refund or chargeback takes back of those earnings (negative: given back, a
 * chargeback reversed), given once (the first time Warden applies the processor's
 * adjustment), else null.
 */
export type PaymentFact =
  /** A one-time purchase paid. `checkoutId` makes it one licence however often it is told. */
  | {
      fact: "purchase_completed";
      checkoutId: string;
      email: string | null;
      metadata: WardenMetadata | Problem;
      amountCents: number | null;
      currency: string | null;
      earnings: Earnings | null;
      payment: string | null;
      purchasedAt: number;
    }
  /** A subscription's checkout completed: who bought it (its own reports may wait for this). */
  | { fact: "subscription_bought"; subscriptionId: string; checkoutId: string; email: string | null; metadata: WardenMetadata | Problem }
  /** A subscription's state as of `report.at`. */
  | { fact: "subscription_reported"; report: SubscriptionReport; metadata: WardenMetadata | Problem; items: BoughtItem[] }
  /** A subscription's invoice paid (its first payment or a renewal): revenue once per invoice. */
  | {
      fact: "subscription_paid";
      invoiceId: string;
      subscriptionId: string;
      payments: string[];
      amountCents: number | null;
      currency: string | null;
      earnings: Earnings | null;
      paidAt: number;
    }
  /** A payment that paid an invoice, told apart from the invoice (Stripe's invoice_payment.paid). */
  | { fact: "invoice_payment"; invoiceId: string; payment: string }
  /** A payment refunded, `refundedCents` in all so far: in full or in part. */
  | {
      fact: "payment_refunded";
      payment: string | null;
      amountCents: number;
      refundedCents: number;
      inFull: boolean;
      currency: string;
      refundedAt: number;
      earningsTakenCents: number | null;
    }
  | { fact: "dispute_opened"; dispute: DisputeReport & { at: number }; earningsTakenCents: number | null }
  /** `dispute.status`: won, lost or warning_closed close it; anything else is not a close Warden knows. */
  | { fact: "dispute_closed"; dispute: DisputeReport & { at: number }; earningsTakenCents: number | null }
  /** Nothing Warden acts on, and why. */
  | { fact: "nothing"; reason: string };
