import type { Executor } from "../db/database.js";

/** An owner of a workspace, as its owners page lists them. */
export interface WorkspaceOwner {
  ownerId: string;
  email: string;
  suspendedAt: number | null;
  /** When they became an owner: accepting an invitation, or the workspace's creation for its first owners. */
  addedAt: number;
}

export interface OwnerInvitation {
  id: string;
  workspaceId: string;
  email: string;
  invitedBy: string | null;
  createdAt: number;
  expiresAt: number;
  acceptedAt: number | null;
  withdrawnAt: number | null;
}

export async function listWorkspaceOwnerRows(ex: Executor, workspaceId: string): Promise<WorkspaceOwner[]> {
  const rows = await ex
    .selectFrom("workspace_owners as wo")
    .innerJoin("owners as o", "o.id", "wo.owner_id")
    .innerJoin("workspaces as w", "w.id", "wo.workspace_id")
    .select(["o.id", "o.email", "o.suspended_at", "wo.added_at", "w.created_at"])
    .where("wo.workspace_id", "=", workspaceId)
    .orderBy("o.email_norm")
    .execute();
  return rows.map((r) => ({
    ownerId: r.id,
    email: r.email,
    suspendedAt: r.suspended_at === null ? null : Number(r.suspended_at),
    addedAt: Number(r.added_at ?? r.created_at),
  }));
}

export async function isWorkspaceOwner(ex: Executor, workspaceId: string, ownerId: string): Promise<boolean> {
  const row = await ex
    .selectFrom("workspace_owners")
    .select("owner_id")
    .where("workspace_id", "=", workspaceId)
    .where("owner_id", "=", ownerId)
    .executeTakeFirst();
  return row !== undefined;
}

/** Makes the owner an owner of the workspace; false when they were one already. */
export async function addWorkspaceOwner(ex: Executor, workspaceId: string, ownerId: string, now: number): Promise<boolean> {
  const inserted = await ex
    .insertInto("workspace_owners")
    .values({ workspace_id: workspaceId, owner_id: ownerId, added_at: now })
    .onConflict((oc) => oc.columns(["workspace_id", "owner_id"]).doNothing())
    .returning("owner_id")
    .executeTakeFirst();
  return inserted !== undefined;
}

export async function deleteWorkspaceOwner(ex: Executor, workspaceId: string, ownerId: string): Promise<boolean> {
  const result = await ex.deleteFrom("workspace_owners").where("workspace_id", "=", workspaceId).where("owner_id", "=", ownerId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * Locks the workspace's row until the transaction ends, so that two removals of its last
 * two owners cannot each see the other still there. On PostgreSQL the row is locked FOR
 * UPDATE; SQLite has one writer at a time anyway.
 */
export async function lockWorkspace(ex: Executor, workspaceId: string, rowLocks: boolean): Promise<void> {
  if (rowLocks) await ex.selectFrom("workspaces").select("id").where("id", "=", workspaceId).forUpdate().execute();
}

const INVITATION_COLUMNS = ["id", "workspace_id", "email", "invited_by", "created_at", "expires_at", "accepted_at", "withdrawn_at"] as const;

const toInvitation = (r: {
  id: string;
  workspace_id: string;
  email: string;
  invited_by: string | null;
  created_at: number;
  expires_at: number;
  accepted_at: number | null;
  withdrawn_at: number | null;
}): OwnerInvitation => ({
  id: r.id,
  workspaceId: r.workspace_id,
  email: r.email,
  invitedBy: r.invited_by,
  createdAt: Number(r.created_at),
  expiresAt: Number(r.expires_at),
  acceptedAt: r.accepted_at === null ? null : Number(r.accepted_at),
  withdrawnAt: r.withdrawn_at === null ? null : Number(r.withdrawn_at),
});

export async function insertInvitation(ex: Executor, invitation: OwnerInvitation, emailNorm: string): Promise<void> {
  await ex
    .insertInto("owner_invitations")
    .values({
      id: invitation.id,
      workspace_id: invitation.workspaceId,
      email: invitation.email,
      email_norm: emailNorm,
      invited_by: invitation.invitedBy,
      created_at: invitation.createdAt,
      expires_at: invitation.expiresAt,
      accepted_at: null,
      withdrawn_at: null,
    })
    .execute();
}

/** Invitations still open (not accepted, withdrawn or expired): of an address, in any workspace, or of one workspace. */
export async function listOpenInvitations(ex: Executor, by: { emailNorm: string } | { workspaceId: string }, now: number): Promise<OwnerInvitation[]> {
  let query = ex
    .selectFrom("owner_invitations")
    .select(INVITATION_COLUMNS)
    .where("expires_at", ">", now)
    .where("accepted_at", "is", null)
    .where("withdrawn_at", "is", null);
  query = "emailNorm" in by ? query.where("email_norm", "=", by.emailNorm) : query.where("workspace_id", "=", by.workspaceId);
  const rows = await query.orderBy("created_at").orderBy("id").execute();
  return rows.map(toInvitation);
}

/** Closes the open invitations of an address to a workspace (a newer one replaces them); answers how many. */
export async function withdrawInvitations(ex: Executor, workspaceId: string, emailNorm: string, now: number): Promise<number> {
  const result = await ex
    .updateTable("owner_invitations")
    .set({ withdrawn_at: now })
    .where("workspace_id", "=", workspaceId)
    .where("email_norm", "=", emailNorm)
    .where("accepted_at", "is", null)
    .where("withdrawn_at", "is", null)
    .where("expires_at", ">", now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Marks an open invitation accepted; false when it was closed meanwhile. */
export async function acceptInvitationRow(ex: Executor, id: string, now: number): Promise<boolean> {
  const result = await ex
    .updateTable("owner_invitations")
    .set({ accepted_at: now })
    .where("id", "=", id)
    .where("accepted_at", "is", null)
    .where("withdrawn_at", "is", null)
    .where("expires_at", ">", now)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
