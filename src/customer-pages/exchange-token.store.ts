import type { Executor } from "../db/database.js";
import type { CustomerExchangeTokensTable, Env } from "../db/schema.js";

export type ExchangeKind = CustomerExchangeTokensTable["kind"];

/** A one-time token between the hosted pages and an extension: whose it is and what it may open. */
export interface ExchangeToken {
  id: string;
  kind: ExchangeKind;
  workspaceId: string;
  env: Env;
  toolId: string;
  personId: string;
  licenceId: string | null;
  codeChallenge: string | null;
  expiresAt: number;
}

export async function insertExchangeToken(ex: Executor, token: ExchangeToken & { tokenHash: string; createdAt: number }): Promise<void> {
  await ex
    .insertInto("customer_exchange_tokens")
    .values({
      id: token.id,
      kind: token.kind,
      token_hash: token.tokenHash,
      workspace_id: token.workspaceId,
      env: token.env,
      tool_id: token.toolId,
      person_id: token.personId,
      licence_id: token.licenceId,
      code_challenge: token.codeChallenge,
      created_at: token.createdAt,
      expires_at: token.expiresAt,
      used_at: null,
    })
    .execute();
}

/**
 * Spends the unused token of this kind and hash, whatever comes of the attempt (a wrong
 * verifier burns a hand-off code too), and answers it; null when there is none, or
 * another request spent it first (one statement decides: no token is used twice).
 */
export async function spendExchangeToken(ex: Executor, kind: ExchangeKind, tokenHash: string, now: number): Promise<ExchangeToken | null> {
  const row = await ex
    .updateTable("customer_exchange_tokens")
    .set({ used_at: now })
    .where("token_hash", "=", tokenHash)
    .where("kind", "=", kind)
    .where("used_at", "is", null)
    .returning(["id", "kind", "workspace_id", "env", "tool_id", "person_id", "licence_id", "code_challenge", "expires_at"])
    .executeTakeFirst();
  if (!row) return null;
  return {
    id: row.id,
    kind: row.kind,
    workspaceId: row.workspace_id,
    env: row.env,
    toolId: row.tool_id,
    personId: row.person_id,
    licenceId: row.licence_id,
    codeChallenge: row.code_challenge,
    expiresAt: Number(row.expires_at),
  };
}
