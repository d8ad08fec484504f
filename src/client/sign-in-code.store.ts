import type { Executor } from "../db/database.js";
import type { Env } from "../db/schema.js";

export interface SignInCode {
  id: string;
  workspaceId: string;
  env: Env;
  toolId: string;
  email: string;
  emailNorm: string;
  codeHash: string;
  attempts: number;
  createdAt: number;
  expiresAt: number;
  /** The hosted page's browser the code is bound to (the hash of its pre-session cookie), or null for the client API's. */
  browserHash: string | null;
}

/** Which open code to find: the address's (the client API's), or the one asked in a hosted page's browser. */
export type CodeLookup = { workspaceId: string; env: Env } & ({ emailNorm: string } | { browserHash: string });

/** Closes every open code of the address (a newer one replaces them), then writes the new one. */
export async function replaceSignInCode(ex: Executor, code: SignInCode, now: number): Promise<void> {
  await ex
    .updateTable("sign_in_codes")
    .set({ closed_at: now })
    .where("workspace_id", "=", code.workspaceId)
    .where("env", "=", code.env)
    .where("email_norm", "=", code.emailNorm)
    .where("closed_at", "is", null)
    .execute();
  await ex
    .insertInto("sign_in_codes")
    .values({
      id: code.id,
      workspace_id: code.workspaceId,
      env: code.env,
      tool_id: code.toolId,
      email: code.email,
      email_norm: code.emailNorm,
      code_hash: code.codeHash,
      attempts: code.attempts,
      created_at: code.createdAt,
      expires_at: code.expiresAt,
      closed_at: null,
      browser_hash: code.browserHash,
    })
    .execute();
}

/** The open code (of an address, or of a browser) that has not expired and has tries left, or null. */
export async function findOpenSignInCode(ex: Executor, lookup: CodeLookup, maxAttempts: number, now: number): Promise<SignInCode | null> {
  let query = ex
    .selectFrom("sign_in_codes")
    .selectAll()
    .where("workspace_id", "=", lookup.workspaceId)
    .where("env", "=", lookup.env)
    .where("closed_at", "is", null)
    .where("expires_at", ">", now)
    .where("attempts", "<", maxAttempts);
  // A code bound to a browser works in that browser only: never through the client API.
  query =
    "browserHash" in lookup
      ? query.where("browser_hash", "=", lookup.browserHash)
      : query.where("email_norm", "=", lookup.emailNorm).where("browser_hash", "is", null);
  const row = await query.orderBy("created_at", "desc").executeTakeFirst();
  if (!row) return null;
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    env: row.env,
    toolId: row.tool_id,
    email: row.email,
    emailNorm: row.email_norm,
    codeHash: row.code_hash,
    attempts: Number(row.attempts),
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    browserHash: row.browser_hash,
  };
}
