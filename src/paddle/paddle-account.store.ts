import type { Executor } from "../db/database.js";
import type { Env } from "../db/schema.js";

/** A workspace environment's Paddle connection; the secrets stay sealed here. */
export interface PaddleAccount {
  workspaceId: string;
  env: Env;
  webhookSecretSealed: string;
  apiKeySealed: string | null;
  createdAt: number;
  updatedAt: number;
}

export async function findPaddleAccount(ex: Executor, workspaceId: string, env: Env): Promise<PaddleAccount | null> {
  const r = await ex.selectFrom("paddle_accounts").selectAll().where("workspace_id", "=", workspaceId).where("env", "=", env).executeTakeFirst();
  return r
    ? {
        workspaceId: r.workspace_id,
        env: r.env,
        webhookSecretSealed: r.webhook_secret_sealed,
        apiKeySealed: r.api_key_sealed,
        createdAt: Number(r.created_at),
        updatedAt: Number(r.updated_at),
      }
    : null;
}

/** The environments with a Paddle API key, for the scheduled reconcile. */
export async function listPaddleScopesWithApiKey(ex: Executor): Promise<{ workspaceId: string; env: Env; slug: string }[]> {
  const rows = await ex
    .selectFrom("paddle_accounts")
    .innerJoin("workspaces", "workspaces.id", "paddle_accounts.workspace_id")
    .select(["paddle_accounts.workspace_id", "paddle_accounts.env", "workspaces.slug"])
    .where("paddle_accounts.api_key_sealed", "is not", null)
    .orderBy("paddle_accounts.workspace_id")
    .orderBy("paddle_accounts.env")
    .execute();
  return rows.map((r) => ({ workspaceId: r.workspace_id, env: r.env, slug: r.slug }));
}

/** Stores the connection; an API key left out keeps the one stored before. */
export async function upsertPaddleAccount(ex: Executor, account: PaddleAccount): Promise<void> {
  const update = {
    webhook_secret_sealed: account.webhookSecretSealed,
    updated_at: account.updatedAt,
    ...(account.apiKeySealed === null ? {} : { api_key_sealed: account.apiKeySealed }),
  };
  await ex
    .insertInto("paddle_accounts")
    .values({
      workspace_id: account.workspaceId,
      env: account.env,
      webhook_secret_sealed: account.webhookSecretSealed,
      api_key_sealed: account.apiKeySealed,
      created_at: account.createdAt,
      updated_at: account.updatedAt,
    })
    .onConflict((oc) => oc.columns(["workspace_id", "env"]).doUpdateSet(update))
    .execute();
}

/** True when a connection was there to forget. */
export async function deletePaddleAccount(ex: Executor, workspaceId: string, env: Env): Promise<boolean> {
  const result = await ex.deleteFrom("paddle_accounts").where("workspace_id", "=", workspaceId).where("env", "=", env).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
