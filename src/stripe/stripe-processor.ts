// Stripe behind the processor boundary (payments/payment-processor.ts): what it did
// before the boundary existed, unchanged (stripe-checkout.ts, stripe-actions.ts).
import type { PaymentProcessor } from "../payments/payment-processor.js";
import { billingPortalAtStripe, canActAtStripe, cancelAtStripe, refundAtStripe, setCancelAtPeriodEndAtStripe } from "./stripe-actions.js";
import { startStripeCheckout } from "./stripe-checkout.js";

// Stripe's Checkout Session ids: `cs_test_…` or `cs_live_…`, letters and digits.
const CHECKOUT_SESSION = /^cs_(test|live)_[A-Za-z0-9]{1,250}$/;

export const STRIPE_PROCESSOR: PaymentProcessor = {
  name: "stripe",
  isCheckoutId: (id) => CHECKOUT_SESSION.test(id),
  // The success page waits for Stripe's event, as it always has: Warden does not ask Stripe.
  findCheckout: async () => null,
  canAct: canActAtStripe,
  startCheckout: startStripeCheckout,
  refund: (services, scope, payment) => refundAtStripe(services, scope, { paymentIntent: payment.payment, licenceId: payment.licenceId }),
  cancel: cancelAtStripe,
  setCancelAtPeriodEnd: setCancelAtPeriodEndAtStripe,
  customerPortal: billingPortalAtStripe,
};
