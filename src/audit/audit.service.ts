// The audit log of owners' actions: written by each use case in the transaction of the
// change it records, so that a change and its record stand or fall together.
import type { Executor } from "../db/database.js";
import type { Env } from "../db/schema.js";
import { randomBase62 } from "../ids.js";
import { type Actor, type AuditEntry, insertAuditEntry, listAuditEntries } from "./audit.store.js";

export type { Actor, AuditEntry };

/** What an owner did; `subject` names what it was done to (a key id…). */
export type AuditAction = "signed_in" | "signed_out" | "key.created" | "key.revoked";

export async function recordAction(
  trx: Executor,
  actor: Actor,
  what: { action: AuditAction; workspaceId: string | null; env: Env | null; subject: string | null },
  now: number,
): Promise<void> {
  await insertAuditEntry(trx, { id: `aud_${randomBase62(24)}`, actor, ...what, createdAt: now });
}

// A page of the newest entries; older ones stay in the table.
const AUDIT_PAGE = 200;

/** The newest actions in the owner's workspaces, and the owner's own sign-ins and sign-outs. */
export function listAudit(ex: Executor, ownerId: string, workspaceIds: readonly string[]): Promise<AuditEntry[]> {
  return listAuditEntries(ex, ownerId, workspaceIds, AUDIT_PAGE);
}
