// A workspace environment's Paddle Billing connection: the notification destination's
// secret key (verifies Paddle's webhooks) and, optionally, an API key; both sealed at rest
// with the secret box like Stripe's (stripe/stripe-account.service.ts). One processor per
// workspace environment: Paddle is refused while Stripe is connected there.
import { type Actor, recordAction } from "../audit/audit.service.js";
import type { Env } from "../db/schema.js";
import { invalidParameter } from "../errors/errors.js";
import type { Services } from "../services.js";
import { findStripeAccount } from "../stripe/stripe-account.store.js";
import { requireEnv, requireWorkspace } from "../workspaces/workspace-lookup.service.js";
import { deletePaddleAccount, findPaddleAccount, upsertPaddleAccount } from "./paddle-account.store.js";
import { findLastPaddleEvent } from "./paddle-event.store.js";

// Paddle's formats: a notification destination's secret key `pdl_ntfset_…`; an API key
// `pdl_sdbx_apikey_…` (sandbox) or `pdl_live_apikey_…` (live).
const WEBHOOK_SECRET = /^pdl_ntfset_[A-Za-z0-9_]{8,200}$/;
const API_KEY = /^pdl_(sdbx|live)_apikey_[A-Za-z0-9_]{8,200}$/;

export const paddleWebhookPath = (slug: string) => `/processor/paddle/${slug}`;

export interface PaddleConnection {
  workspace: string;
  env: Env;
  /** Where Paddle sends this workspace's notifications, on the service's address. */
  webhook_path: string;
  api_key: boolean;
}

/**
 * The secrets' shapes for the environment: a key of the wrong kind (not Paddle's, or
 * sandbox for live) is refused before anything else, so the dashboard tells it before
 * mailing a confirmation code.
 */
export function checkPaddleSecrets(env: Env, input: { webhookSecret: string; apiKey?: string }): { webhookSecret: string; apiKey?: string } {
  const webhookSecret = input.webhookSecret.trim();
  if (!WEBHOOK_SECRET.test(webhookSecret)) {
    throw invalidParameter("webhook-secret", "webhook-secret must be the notification destination's secret key from Paddle, starting with pdl_ntfset_.");
  }
  if (input.apiKey === undefined) return { webhookSecret };
  const apiKey = input.apiKey.trim();
  const match = API_KEY.exec(apiKey);
  if (!match) throw invalidParameter("api-key", "api-key must be a Paddle API key (pdl_sdbx_apikey_… or pdl_live_apikey_…).");
  const keyEnv: Env = match[1] === "live" ? "live" : "test";
  if (keyEnv !== env)
    throw invalidParameter(
      "api-key",
      `api-key is a ${match[1] === "live" ? "live" : "sandbox"} key; the ${env} environment needs a ${env === "live" ? "live" : "sandbox"} key.`,
    );
  return { webhookSecret, apiKey };
}

export async function connectPaddle(
  services: Services,
  input: { workspace: string; env: string; webhookSecret: string; apiKey?: string },
  actor?: Actor,
): Promise<PaddleConnection> {
  const workspace = await requireWorkspace(services.db, input.workspace);
  const env = requireEnv(input.env);
  const secrets = checkPaddleSecrets(env, input);
  if (await findStripeAccount(services.db, workspace.id, env)) {
    throw invalidParameter(
      "env",
      `The ${env} environment of "${workspace.slug}" is connected to Stripe: one processor per environment (disconnect Stripe first).`,
    );
  }
  const now = services.clock.now();
  const existing = await findPaddleAccount(services.db, workspace.id, env);
  await services.db.transaction().execute(async (trx) => {
    await upsertPaddleAccount(trx, {
      workspaceId: workspace.id,
      env,
      webhookSecretSealed: services.secretBox.seal(secrets.webhookSecret),
      apiKeySealed: secrets.apiKey === undefined ? null : services.secretBox.seal(secrets.apiKey),
      createdAt: existing?.createdAt ?? now,
      updatedAt: now,
    });
    const subject = secrets.apiKey === undefined ? "secret key" : "secret key, API key";
    if (actor) await recordAction(trx, actor, { action: "paddle.connected", workspaceId: workspace.id, env, subject }, now);
  });
  return {
    workspace: workspace.slug,
    env,
    webhook_path: paddleWebhookPath(workspace.slug),
    api_key: secrets.apiKey !== undefined || existing?.apiKeySealed != null,
  };
}

/** Forgets the environment's Paddle secrets: its notifications are refused from the next one. */
export async function disconnectPaddle(services: Services, input: { workspace: string; env: string }, actor?: Actor): Promise<{ disconnected: boolean }> {
  const workspace = await requireWorkspace(services.db, input.workspace);
  const env = requireEnv(input.env);
  const now = services.clock.now();
  return services.db.transaction().execute(async (trx) => {
    const deleted = await deletePaddleAccount(trx, workspace.id, env);
    if (deleted && actor) await recordAction(trx, actor, { action: "paddle.disconnected", workspaceId: workspace.id, env, subject: null }, now);
    return { disconnected: deleted };
  });
}

/** The last four characters of a secret: enough to tell which one is stored, never enough to use it. */
const lastFour = (secret: string) => secret.slice(-4);

export interface PaddleStatus {
  workspace: string;
  env: Env;
  webhookPath: string;
  /** Null when the environment is not connected. */
  connection: { webhookSecretLastFour: string; apiKeyLastFour: string | null; connectedAt: number; updatedAt: number } | null;
  /** The newest Paddle event this environment received (and verified), with how it was handled. */
  lastEvent: { id: string; type: string; receivedAt: number; outcome: "applied" | "ignored"; reason: string | null } | null;
}

/** A workspace environment's Paddle connection as an owner may see it: the secrets by their last four characters only. */
export async function paddleStatus(services: Services, input: { workspace: string; env: string }): Promise<PaddleStatus> {
  const workspace = await requireWorkspace(services.db, input.workspace);
  const env = requireEnv(input.env);
  const [account, lastEvent] = await Promise.all([
    findPaddleAccount(services.db, workspace.id, env),
    findLastPaddleEvent(services.db, { workspaceId: workspace.id, env }),
  ]);
  // Opened here, in the use case, so that only the last four characters leave it.
  const connection = account
    ? {
        webhookSecretLastFour: lastFour(services.secretBox.open(account.webhookSecretSealed)),
        apiKeyLastFour: account.apiKeySealed === null ? null : lastFour(services.secretBox.open(account.apiKeySealed)),
        connectedAt: account.createdAt,
        updatedAt: account.updatedAt,
      }
    : null;
  return { workspace: workspace.slug, env, webhookPath: paddleWebhookPath(workspace.slug), connection, lastEvent };
}
