import type { Executor } from "../db/database.js";
import type { Env } from "../db/schema.js";

/** A workspace environment's Stripe connection; the secrets stay sealed here. */
export interface StripeAccount {
  workspaceId: string;
  env: Env;
  webhookSecretSealed: string;
  secretKeySealed: string | null;
  createdAt: number;
  updatedAt: number;
}

export async function findStripeAccount(ex: Executor, workspaceId: string, env: Env): Promise<StripeAccount | null> {
  const r = await ex.selectFrom("stripe_accounts").selectAll().where("workspace_id", "=", workspaceId).where("env", "=", env).executeTakeFirst();
  return r
    ? {
        workspaceId: r.workspace_id,
        env: r.env,
        webhookSecretSealed: r.webhook_secret_sealed,
        secretKeySealed: r.secret_key_sealed,
        createdAt: Number(r.created_at),
        updatedAt: Number(r.updated_at),
      }
    : null;
}

/** Stores the connection; a secret key left out keeps the one stored before. */
export async function upsertStripeAccount(ex: Executor, account: StripeAccount): Promise<void> {
  const update = {
    webhook_secret_sealed: account.webhookSecretSealed,
    updated_at: account.updatedAt,
    ...(account.secretKeySealed === null ? {} : { secret_key_sealed: account.secretKeySealed }),
  };
  await ex
    .insertInto("stripe_accounts")
    .values({
      workspace_id: account.workspaceId,
      env: account.env,
      webhook_secret_sealed: account.webhookSecretSealed,
      secret_key_sealed: account.secretKeySealed,
      created_at: account.createdAt,
      updated_at: account.updatedAt,
    })
    .onConflict((oc) => oc.columns(["workspace_id", "env"]).doUpdateSet(update))
    .execute();
}

/** Forgets the connection; false when there was none. */
export async function deleteStripeAccount(ex: Executor, workspaceId: string, env: Env): Promise<boolean> {
  const result = await ex.deleteFrom("stripe_accounts").where("workspace_id", "=", workspaceId).where("env", "=", env).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
