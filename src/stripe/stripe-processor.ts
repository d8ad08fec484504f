// Stripe behind the processor boundary (payments/payment-processor.ts): what it did
// before the boundary existed, unchanged (stripe-checkout.ts, stripe-actions.ts).
import type { PaymentProcessor } from "../payments/payment-processor.js";
import { billingPortalAtStripe, canActAtStripe, cancelAtStripe, refundAtStripe, setCancelAtPeriodEndAtStripe } from "./stripe-actions.js";
import { startStripeCheckout } from "./stripe-checkout.js";

export const STRIPE_PROCESSOR: PaymentProcessor = {
  name: "stripe",
  canAct: canActAtStripe,
  startCheckout: startStripeCheckout,
  refund: (services, scope, payment) => refundAtStripe(services, scope, { paymentIntent: payment.payment, licenceId: payment.licenceId }),
  cancel: cancelAtStripe,
  setCancelAtPeriodEnd: setCancelAtPeriodEndAtStripe,
  customerPortal: billingPortalAtStripe,
};
