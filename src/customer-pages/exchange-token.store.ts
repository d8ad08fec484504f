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
  /** The device that asked for a page ticket; null for a hand-off code. */
  deviceId: string | null;
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
      device_id: token.deviceId,
      created_at: token.createdAt,
      expires_at: token.expiresAt,
      used_at: null,
    })
    .execute();
}

const COLUMNS = ["id", "kind", "workspace_id", "env", "tool_id", "person_id", "licence_id", "code_challenge", "device_id", "expires_at"] as const;

const toToken = (row: Pick<CustomerExchangeTokensTable, (typeof COLUMNS)[number]>): ExchangeToken => ({
  id: row.id,
  kind: row.kind,
  workspaceId: row.workspace_id,
  env: row.env,
  toolId: row.tool_id,
  personId: row.person_id,
  licenceId: row.licence_id,
  codeChallenge: row.code_challenge,
  deviceId: row.device_id,
  expiresAt: Number(row.expires_at),
});

/** The unused, unexpired token of this kind and hash, without spending it (a page asks before it spends a ticket); null when none. */
export async function findOpenExchangeToken(ex: Executor, kind: ExchangeKind, tokenHash: string, now: number): Promise<ExchangeToken | null> {
  const row = await ex
    .selectFrom("customer_exchange_tokens")
    .select(COLUMNS)
    .where("token_hash", "=", tokenHash)
    .where("kind", "=", kind)
    .where("used_at", "is", null)
    .where("expires_at", ">", now)
    .executeTakeFirst();
  return row ? toToken(row) : null;
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
    .returning(COLUMNS)
    .executeTakeFirst();
  return row ? toToken(row) : null;
}
