import type { Executor } from "../db/database.js";

export type OwnerCodePurpose = "sign-in" | "link" | "confirm";

export interface OwnerCode {
  id: string;
  purpose: OwnerCodePurpose;
  ownerId: string | null;
  email: string;
  binding: string | null;
  codeHash: string;
  /** A confirmation code's action and target, hashed: it confirms that and nothing else. */
  actionHash: string | null;
  attempts: number;
  createdAt: number;
  expiresAt: number;
}

/** Closes the open codes of the same purpose and binding (a newer one replaces them), then writes the new one. */
export async function replaceOwnerCode(ex: Executor, code: OwnerCode, now: number): Promise<void> {
  if (code.binding !== null) {
    await ex
      .updateTable("owner_codes")
      .set({ closed_at: now })
      .where("binding", "=", code.binding)
      .where("purpose", "=", code.purpose)
      .where("closed_at", "is", null)
      .execute();
  }
  await ex
    .insertInto("owner_codes")
    .values({
      id: code.id,
      purpose: code.purpose,
      owner_id: code.ownerId,
      email: code.email,
      binding: code.binding,
      code_hash: code.codeHash,
      action_hash: code.actionHash,
      attempts: code.attempts,
      created_at: code.createdAt,
      expires_at: code.expiresAt,
      closed_at: null,
    })
    .execute();
}

type Row = {
  id: string;
  purpose: OwnerCodePurpose;
  owner_id: string | null;
  email: string;
  binding: string | null;
  code_hash: string;
  action_hash: string | null;
  attempts: number;
  created_at: number;
  expires_at: number;
};

const toCode = (row: Row): OwnerCode => ({
  id: row.id,
  purpose: row.purpose,
  ownerId: row.owner_id,
  email: row.email,
  binding: row.binding,
  codeHash: row.code_hash,
  actionHash: row.action_hash,
  attempts: Number(row.attempts),
  createdAt: Number(row.created_at),
  expiresAt: Number(row.expires_at),
});

const COLUMNS = ["id", "purpose", "owner_id", "email", "binding", "code_hash", "action_hash", "attempts", "created_at", "expires_at"] as const;

/** The newest open code of this binding and purpose that has not expired and has tries left, or null. */
export async function findOpenOwnerCode(ex: Executor, binding: string, purpose: OwnerCodePurpose, maxAttempts: number, now: number): Promise<OwnerCode | null> {
  const row = await ex
    .selectFrom("owner_codes")
    .select(COLUMNS)
    .where("binding", "=", binding)
    .where("purpose", "=", purpose)
    .where("closed_at", "is", null)
    .where("expires_at", ">", now)
    .where("attempts", "<", maxAttempts)
    .orderBy("created_at", "desc")
    .executeTakeFirst();
  return row ? toCode(row) : null;
}

/** An open, unexpired one-time link by the hash of its token. */
export async function findOpenLink(ex: Executor, codeHash: string, now: number): Promise<OwnerCode | null> {
  const row = await ex
    .selectFrom("owner_codes")
    .select(COLUMNS)
    .where("code_hash", "=", codeHash)
    .where("purpose", "=", "link")
    .where("closed_at", "is", null)
    .where("expires_at", ">", now)
    .executeTakeFirst();
  return row ? toCode(row) : null;
}
