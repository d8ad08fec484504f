// Which processor a workspace environment uses: the one connected there (Paddle, else
// Stripe: one processor per environment, paddle/paddle-account.service.ts). An
// environment connected to neither is Stripe's, whose actions then answer that Warden
// cannot act (no secret key), as before Paddle existed.
import { findPaddleAccount } from "../paddle/paddle-account.store.js";
import { PADDLE_PROCESSOR } from "../paddle/paddle-processor.js";
import type { Services } from "../services.js";
import { STRIPE_PROCESSOR } from "../stripe/stripe-processor.js";
import type { PaymentProcessor, PaymentScope } from "./payment-processor.js";

export async function processorOf(services: Services, scope: PaymentScope): Promise<PaymentProcessor> {
  return (await findPaddleAccount(services.db, scope.workspaceId, scope.env)) ? PADDLE_PROCESSOR : STRIPE_PROCESSOR;
}
