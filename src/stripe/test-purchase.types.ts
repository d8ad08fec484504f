// The ids `warden admin stripe trigger purchase` makes up for a test purchase that Stripe
// never saw: what reads them (a refund, the Overview's setup step) must tell them from
// Stripe's own, as Stripe would refuse them and they prove nothing of Stripe reaching Warden.

export const TEST_PURCHASE_EVENT = "evt_warden_test_";
export const TEST_PURCHASE_PAYMENT = "pi_warden_test_";

export const isTestPurchasePayment = (paymentIntent: string): boolean => paymentIntent.startsWith(TEST_PURCHASE_PAYMENT);
