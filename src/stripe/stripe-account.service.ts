// `warden admin stripe connect|status|disconnect` and the dashboard's Stripe page: a
// workspace environment's Stripe webhook signing secret and, optionally, its secret key,
// both sealed at rest like webhook endpoint secrets and never shown again in full.
import { type Actor, recordAction } from "../audit/audit.service.js";
import type { Env, StripeEventOutcome } from "../db/schema.js";
import { invalidParameter } from "../errors/errors.js";
import { decodeCursor, encodeCursor } from "../http/cursor.js";
import { findPaddleAccount } from "../paddle/paddle-account.store.js";
import type { Services } from "../services.js";
import { requireEnv, requireWorkspace } from "../workspaces/workspace-lookup.service.js";
import { deleteStripeAccount, findStripeAccount, upsertStripeAccount } from "./stripe-account.store.js";
import { findLastStripeEvent, listStripeEvents, type ReceivedStripeEvent } from "./stripe-event.store.js";

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

/** The secrets as typed, checked for their shape and for the environment they are for; nothing is stored. */
export function checkStripeSecrets(env: Env, input: { webhookSecret: string; secretKey?: string }): { webhookSecret: string; secretKey?: string } {
  const webhookSecret = input.webhookSecret.trim();
  if (!WEBHOOK_SECRET.test(webhookSecret)) {
    throw invalidParameter("webhook-secret", "webhook-secret must be the endpoint's signing secret from Stripe, starting with whsec_.");
  }
  if (input.secretKey === undefined) return { webhookSecret };
  const secretKey = input.secretKey.trim();
  const match = SECRET_KEY.exec(secretKey);
  if (!match) throw invalidParameter("secret-key", "secret-key must be a Stripe secret or restricted key (sk_… or rk_…).");
  if (match[2] !== env) throw invalidParameter("secret-key", `secret-key is a ${match[2]} mode key; the ${env} environment needs a ${env} mode key.`);
  return { webhookSecret, secretKey };
}

export async function connectStripe(
  services: Services,
  input: { workspace: string; env: string; webhookSecret: string; secretKey?: string },
  actor?: Actor,
): Promise<StripeConnection> {
  const workspace = await requireWorkspace(services.db, input.workspace);
  const env = requireEnv(input.env);
  const secrets = checkStripeSecrets(env, input);
  if (await findPaddleAccount(services.db, workspace.id, env)) {
    throw invalidParameter("env", `The ${env} environment of "${workspace.slug}" is connected to Paddle: one processor per environment.`);
  }
  const now = services.clock.now();
  const existing = await findStripeAccount(services.db, workspace.id, env);
  await services.db.transaction().execute(async (trx) => {
    await upsertStripeAccount(trx, {
      workspaceId: workspace.id,
      env,
      webhookSecretSealed: services.secretBox.seal(secrets.webhookSecret),
      secretKeySealed: secrets.secretKey === undefined ? null : services.secretBox.seal(secrets.secretKey),
      createdAt: existing?.createdAt ?? now,
      updatedAt: now,
    });
    const subject = secrets.secretKey === undefined ? "signing secret" : "signing secret, secret key";
    if (actor) await recordAction(trx, actor, { action: "stripe.connected", workspaceId: workspace.id, env, subject }, now);
  });
  const secretKey = secrets.secretKey !== undefined || existing?.secretKeySealed != null;
  return { workspace: workspace.slug, env, webhook_path: stripeWebhookPath(workspace.slug), secret_key: secretKey };
}

/** The last four characters of a secret: enough to tell which one is stored, never enough to use it. */
const lastFour = (secret: string) => secret.slice(-4);

export interface StripeStatus {
  workspace: string;
  env: Env;
  webhookPath: string;
  /** Null when the environment is not connected. */
  connection: {
    webhookSecretLastFour: string;
    /** `sk_test`, `rk_live`…: which kind of key, with its last four; null without one. */
    secretKey: { prefix: string; lastFour: string } | null;
    connectedAt: number;
    updatedAt: number;
  } | null;
  /** The newest Stripe event this environment received (and verified), with how it was handled. */
  lastEvent: { id: string; type: string; receivedAt: number; outcome: StripeEventOutcome; reason: string | null } | null;
}

/** A workspace environment's Stripe connection as an owner may see it: the secrets by their last four characters only. */
export async function stripeStatus(services: Services, input: { workspace: string; env: string }): Promise<StripeStatus> {
  const workspace = await requireWorkspace(services.db, input.workspace);
  const env = requireEnv(input.env);
  const [account, lastEvent] = await Promise.all([
    findStripeAccount(services.db, workspace.id, env),
    findLastStripeEvent(services.db, { workspaceId: workspace.id, env }),
  ]);
  let connection: StripeStatus["connection"] = null;
  if (account) {
    // Opened here, in the use case, so that only the last four characters leave it.
    const secretKey = account.secretKeySealed === null ? null : services.secretBox.open(account.secretKeySealed);
    connection = {
      webhookSecretLastFour: lastFour(services.secretBox.open(account.webhookSecretSealed)),
      secretKey: secretKey === null ? null : { prefix: secretKey.slice(0, 7), lastFour: lastFour(secretKey) },
      connectedAt: account.createdAt,
      updatedAt: account.updatedAt,
    };
  }
  return { workspace: workspace.slug, env, webhookPath: stripeWebhookPath(workspace.slug), connection, lastEvent };
}

const OUTCOMES: readonly StripeEventOutcome[] = ["applied", "ignored", "deferred"];

/**
 * The events Stripe delivered to the environment, newest first, each with what Warden did
 * with it and why (kept for WARDEN_RETENTION_DAYS, like every Stripe event id), 50 a page,
 * of one outcome or all. The cursor is bound to the workspace, environment and outcome.
 */
export async function stripeEventHistory(
  services: Services,
  input: { workspace: string; env: string; outcome?: string; cursor?: string },
): Promise<{ data: ReceivedStripeEvent[]; nextCursor: string | null }> {
  const workspace = await requireWorkspace(services.db, input.workspace);
  const env = requireEnv(input.env);
  const outcome = input.outcome === undefined || input.outcome === "" ? null : (OUTCOMES.find((o) => o === input.outcome) ?? null);
  if (input.outcome && outcome === null) throw invalidParameter("outcome", `outcome must be one of ${OUTCOMES.join(", ")}.`);
  const context = `stripe-events|${workspace.id}|${env}|${outcome ?? ""}`;
  const position = input.cursor ? decodeCursor(services.cursorKey, context, input.cursor) : null;
  const limit = 50;
  const rows = await listStripeEvents(
    services.db,
    { workspaceId: workspace.id, env },
    {
      outcome,
      after: position && { receivedAt: position.at, id: position.id },
      limit: limit + 1,
    },
  );
  const data = rows.slice(0, limit);
  const last = data[data.length - 1];
  return { data, nextCursor: rows.length > limit && last ? encodeCursor(services.cursorKey, context, { at: last.receivedAt, id: last.id }) : null };
}

/**
 * Forgets a workspace environment's Stripe secrets: Stripe's deliveries are refused from
 * the next one (as for an environment never connected), and the buy button can no longer
 * open a checkout. What Stripe's events made (licences, subscriptions) stays.
 */
export async function disconnectStripe(services: Services, input: { workspace: string; env: string }, actor?: Actor): Promise<{ disconnected: boolean }> {
  const workspace = await requireWorkspace(services.db, input.workspace);
  const env = requireEnv(input.env);
  const now = services.clock.now();
  return services.db.transaction().execute(async (trx) => {
    const deleted = await deleteStripeAccount(trx, workspace.id, env);
    if (deleted && actor) await recordAction(trx, actor, { action: "stripe.disconnected", workspaceId: workspace.id, env, subject: null }, now);
    return { disconnected: deleted };
  });
}
