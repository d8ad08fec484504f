// `warden admin stripe connect`: a workspace environment's Stripe webhook signing secret
// and, optionally, its secret key, both sealed at rest like webhook endpoint secrets.
import type { Env } from "../db/schema.js";
import { invalidParameter } from "../errors/errors.js";
import type { Services } from "../services.js";
import { requireEnv, requireWorkspace } from "../workspaces/workspace.service.js";
import { findStripeAccount, upsertStripeAccount } from "./stripe-account.store.js";

const WEBHOOK_SECRET = /^whsec_[A-Za-z0-9+/=_-]{8,200}$/;
const SECRET_KEY = /^(sk|rk)_(test|live)_[A-Za-z0-9]{8,200}$/;

export interface StripeConnection {
  workspace: string;
  env: Env;
  /** Where Stripe sends this workspace's events, on the service's address. */
  webhook_path: string;
  secret_key: boolean;
}

export const stripeWebhookPath = (slug: string) => `/processor/stripe/${slug}`;

export async function connectStripe(
  services: Services,
  input: { workspace: string; env: string; webhookSecret: string; secretKey?: string },
): Promise<StripeConnection> {
  const workspace = await requireWorkspace(services.db, input.workspace);
  const env = requireEnv(input.env);
  if (!WEBHOOK_SECRET.test(input.webhookSecret)) {
    throw invalidParameter("webhook-secret", "webhook-secret must be the endpoint's signing secret from Stripe, starting with whsec_.");
  }
  if (input.secretKey !== undefined) {
    const match = SECRET_KEY.exec(input.secretKey);
    if (!match) throw invalidParameter("secret-key", "secret-key must be a Stripe secret or restricted key (sk_… or rk_…).");
    if (match[2] !== env) throw invalidParameter("secret-key", `secret-key is a ${match[2]} mode key; the ${env} environment needs a ${env} mode key.`);
  }
  const now = services.clock.now();
  const existing = await findStripeAccount(services.db, workspace.id, env);
  await upsertStripeAccount(services.db, {
    workspaceId: workspace.id,
    env,
    webhookSecretSealed: services.secretBox.seal(input.webhookSecret),
    secretKeySealed: input.secretKey === undefined ? null : services.secretBox.seal(input.secretKey),
    createdAt: existing?.createdAt ?? now,
    updatedAt: now,
  });
  const secretKey = input.secretKey !== undefined || existing?.secretKeySealed != null;
  return { workspace: workspace.slug, env, webhook_path: stripeWebhookPath(workspace.slug), secret_key: secretKey };
}
