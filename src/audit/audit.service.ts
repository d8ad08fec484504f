// The audit log of owners' actions: written by each use case in the transaction of the
// change it records, so that a change and its record stand or fall together. The
// actions owners must hear of are mailed to every owner from here, in that transaction
// too (owners/owner-notification.ts).
import type { Executor } from "../db/database.js";
import type { Env } from "../db/schema.js";
import { randomBase62 } from "../ids.js";
import { notifyOwners } from "../owners/owner-notification.js";
import type { RequestContext } from "../services.js";
import { type Actor, type ActorOrigin, type AuditEntry, insertAuditEntry, listAuditEntries } from "./audit.store.js";

export type { Actor, ActorOrigin, AuditEntry };

/** What an owner did; `subject` names what it was done to (a key id…). */
export type AuditAction =
  | "signed_in"
  | "signed_out"
  | "session.ended"
  | "key.created"
  | "key.revoked"
  | "endpoint.added"
  | "endpoint.updated"
  | "endpoint.removed"
  | "endpoint.secret_revealed"
  | "endpoint.secret_rotated"
  | "endpoint.enabled"
  | "endpoint.disabled"
  | "endpoint.recovered"
  | "event.example_sent"
  | "delivery.resent"
  | "grant.created"
  | "grant.revoked"
  | "licence.refunded"
  | "subscription.set_to_cancel"
  | "subscription.ended"
  | "tool.created"
  | "tool.updated"
  | "plan.created"
  | "plan.renamed"
  | "plan.retired"
  | "plan.stripe_linked"
  | "bundle.created"
  | "bundle.tools_changed"
  | "stripe.connected"
  | "stripe.disconnected"
  | "stripe.reconciled"
  | "owner.invited"
  | "owner.invitation_withdrawn"
  | "owner.joined"
  | "owner.removed"
  | "workspace.branding_changed";

export async function recordAction(
  trx: Executor,
  actor: Actor,
  what: { action: AuditAction; workspaceId: string | null; env: Env | null; subject: string | null },
  now: number,
): Promise<void> {
  await insertAuditEntry(trx, { id: `aud_${randomBase62(24)}`, actor, ...what, createdAt: now });
  await notifyOwners(trx, actor, what, now);
}

/**
 * Records a change made through a use case shared with the API: audited when an owner
 * made it in the dashboard (the context carries them), not when a key did; the owners'
 * notification is queued either way.
 */
export async function recordOwnerAction(trx: Executor, ctx: RequestContext, action: AuditAction, subject: string, now: number): Promise<void> {
  if (ctx.actor === undefined) {
    // Not audited, but owners hear of what a key did that could hand the workspace to someone else.
    const what = { action, workspaceId: ctx.principal.workspaceId, env: ctx.principal.env, subject };
    await notifyOwners(trx, { keyId: ctx.principal.keyId, ...(ctx.from ? { from: ctx.from } : {}) }, what, now);
    return;
  }
  await recordAction(trx, ctx.actor, { action, workspaceId: ctx.principal.workspaceId, env: ctx.principal.env, subject }, now);
}

// A page of the newest entries; older ones stay in the table.
const AUDIT_PAGE = 200;

/** The newest actions in the owner's workspaces, and the owner's own sign-ins and sign-outs. */
export function listAudit(ex: Executor, ownerId: string, workspaceIds: readonly string[]): Promise<AuditEntry[]> {
  return listAuditEntries(ex, ownerId, workspaceIds, AUDIT_PAGE);
}
