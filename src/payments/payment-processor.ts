// What Warden asks of a payment processor beyond reading its webhooks (payment-facts.ts):
// open a checkout, cancel at the period's end or at once, take a cancellation back, open
// the processor's own customer portal, refund a payment. Stripe (stripe/stripe-processor.ts)
// and Paddle (paddle/paddle-processor.ts) implement it; which one a workspace environment
// uses is the one connected there (processors.ts), so pages, commands and the client API
// ask that, never a processor by name.
import type { Env, ProductKind } from "../db/schema.js";
import type { Services } from "../services.js";
import type { PageNames } from "../workspaces/translated-names.service.js";
import type { Plan, Tool, Workspace } from "../workspaces/workspace.types.js";

export type ProcessorName = "stripe" | "paddle";

export type PaymentScope = { workspaceId: string; env: Env };

export interface CreatedCheckout {
  url: string;
  /** The processor's id of what the buyer pays (a Stripe Checkout Session, a Paddle transaction). */
  checkout_session: string;
}

/** Who buys, when signed in: a device's session or a hosted page's; only these fields are read. */
export interface CheckoutBuyer {
  workspaceId: string;
  env: Env;
  personId: string;
}

/** A checkout asked for, its workspace and tool already found. */
export interface CheckoutRequest {
  workspace: Workspace;
  tool: Tool;
  /** The tool's own plans, or a bundle's that gives the tool. */
  product: { kind: ProductKind; id: string };
  plan: string;
  env: Env;
  seats?: number;
  email?: string;
  buyer: CheckoutBuyer | null;
  successUrl: string;
  cancelUrl?: string;
  /** The checkout's language (one of Stripe's locales, or `auto`): the hosted page's; the processor's own choice when none is given. */
  locale?: string;
  /** The vendor's names in that language (the hosted page's), for the line item Warden prices inline; the names as given without. */
  names?: PageNames;
}

/** A checkout request checked against the catalogue (checkout.service.ts), for the processor to open. */
export interface CheckedCheckout {
  request: CheckoutRequest;
  /** The plan, its name in the buyer's language where the vendor gave one. */
  plan: Plan & { amountCents: number };
  /** The name the buyer sees: the bundle's, else the tool's (in the buyer's language where the vendor gave one). */
  productName: string;
  /** The buyer's address to pre-fill, if known. */
  email: string | undefined;
  /** Warden's metadata (`warden_tool`|`warden_bundle`, `warden_plan`, `warden_seats`, `warden_account`). */
  metadata: Record<string, string>;
}

/** A payment to refund: the processor's id of it, and the licence it bought (an idempotency key). */
export interface RefundedPayment {
  payment: string;
  licenceId: string;
}

/** A checkout as the processor holds it, before Warden has stored what it bought: the metadata Warden gave it (`warden_*`). */
export interface FoundCheckout {
  metadata: unknown;
}

export interface PaymentProcessor {
  readonly name: ProcessorName;
  /** Whether an id has the shape of this processor's checkout (a Stripe Checkout Session `cs_…`, a Paddle transaction `txn_…`). */
  isCheckoutId(id: string): boolean;
  /**
   * The checkout as the processor holds it in this environment, for the success page of a
   * person signed in (`viewer`) while its purchase has not arrived: "unknown" when it is
   * not a checkout Warden opened for that person there, or the processor holds none;
   * `unanswered` (why) when the processor could not be asked or failed; null when Warden
   * does not ask (no API key; Stripe, whose session ids reach the page only in Stripe's own
   * redirect).
   */
  findCheckout(services: Services, scope: PaymentScope, checkoutId: string, viewer: string): Promise<FoundCheckout | "unknown" | { unanswered: string } | null>;
  /** Whether Warden can act at the processor for this environment (an API key is connected). */
  canAct(services: Services, scope: PaymentScope): Promise<boolean>;
  /** Opens the processor's checkout page for a checked request; refused (invalid_parameter) when the environment takes no payments. */
  startCheckout(services: Services, checked: CheckedCheckout): Promise<CreatedCheckout>;
  /** Refunds the payment in full; false when Warden cannot ask (no key, a payment the processor never saw). */
  refund(services: Services, scope: PaymentScope, payment: RefundedPayment): Promise<boolean>;
  /** Cancels at once or at the period's end; false when Warden cannot ask or the processor does not hold it. */
  cancel(services: Services, scope: PaymentScope, subscriptionId: string, now: boolean): Promise<boolean>;
  /** Sets the subscription to end at its period's end, or takes that back; false as for `cancel`. */
  setCancelAtPeriodEnd(services: Services, scope: PaymentScope, subscriptionId: string, cancel: boolean): Promise<boolean>;
  /** The processor's own customer portal for the subscription's customer; null when Warden cannot ask or it does not hold it. */
  customerPortal(services: Services, scope: PaymentScope, subscriptionId: string, returnUrl: string): Promise<string | null>;
}
