// Which processor a workspace environment uses: the one connected there (Paddle, else
// Stripe: one processor per environment, paddle/paddle-account.service.ts). An
// environment connected to neither is Stripe's, whose actions then answer that Warden
// cannot act (no secret key), as before Paddle existed.
import { findPaddleAccount } from "../paddle/paddle-account.store.js";
import { PADDLE_PROCESSOR } from "../paddle/paddle-processor.js";
import type { Services } from "../services.js";
import { findStripeAccount } from "../stripe/stripe-account.store.js";
import { STRIPE_PROCESSOR } from "../stripe/stripe-processor.js";
import type { PaymentProcessor, PaymentScope, ProcessorName } from "./payment-processor.js";

export async function processorOf(services: Services, scope: PaymentScope): Promise<PaymentProcessor> {
  return (await findPaddleAccount(services.db, scope.workspaceId, scope.env)) ? PADDLE_PROCESSOR : STRIPE_PROCESSOR;
}

/**
 * The processor connected in the environment, or null when none is yet: what the dashboard
 * says (Configure's payments page, Insights' revenue), where `processorOf`'s fallback to
 * Stripe would claim a connection there is not.
 */
export async function connectedProcessor(services: Pick<Services, "db">, scope: PaymentScope): Promise<ProcessorName | null> {
  const [paddle, stripe] = await Promise.all([
    findPaddleAccount(services.db, scope.workspaceId, scope.env),
    findStripeAccount(services.db, scope.workspaceId, scope.env),
  ]);
  return paddle ? "paddle" : stripe ? "stripe" : null;
}
