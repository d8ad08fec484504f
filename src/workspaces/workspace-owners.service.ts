// A workspace's owners: an owner (or the operator) invites an address to co-own it; the
// invitation is accepted when that address signs in to the dashboard, with a mailed code
// like any owner, before it expires (7 days); an owner is removed, never the last. The
// dashboard's Owners page and `warden admin owner invite|remove|withdraw` call these.
import { type Actor, recordAction } from "../audit/audit.service.js";
import { toIso } from "../clock.js";
import { isEmailShape, normaliseEmail } from "../customers/email.js";
import type { Executor } from "../db/database.js";
import { invalidParameter, notFound } from "../errors/errors.js";
import { newId, randomBase62 } from "../ids.js";
import { queueMails } from "../mail/mail.service.js";
import type { Services } from "../services.js";
import { findOwnerByEmail, findWorkspaceById, insertOwner } from "./workspace.store.js";
import { requireWorkspace } from "./workspace-lookup.service.js";
import {
  acceptInvitationRow,
  addWorkspaceOwner,
  deleteWorkspaceOwner,
  insertInvitation,
  isWorkspaceOwner,
  listOpenInvitations,
  listWorkspaceOwnerRows,
  lockWorkspace,
  type OwnerInvitation,
  type WorkspaceOwner,
  withdrawInvitations,
} from "./workspace-owners.store.js";

export type { OwnerInvitation, WorkspaceOwner };

/** How long an invitation waits to be accepted. */
export const INVITATION_TTL_MS = 7 * 24 * 3_600_000;

/** The workspace's owners and its open invitations. */
export async function listWorkspaceOwners(
  services: Services,
  input: { workspace: string },
): Promise<{ owners: WorkspaceOwner[]; invitations: OwnerInvitation[] }> {
  const workspace = await requireWorkspace(services.db, input.workspace);
  const [owners, invitations] = await Promise.all([
    listWorkspaceOwnerRows(services.db, workspace.id),
    listOpenInvitations(services.db, { workspaceId: workspace.id }, services.clock.now()),
  ]);
  return { owners, invitations };
}

/**
 * What inviting an address would refuse, told before anything is asked or sent (the
 * dashboard checks this before it mails a confirmation code): not an address, or an
 * owner of this workspace already. Whether the address owns or is suspended from another
 * workspace is told only to the operator (no `actor`): an owner learns nothing of others.
 */
export async function checkOwnerInvitation(services: Services, input: { workspace: string; email: string }, actor?: Actor) {
  const { db } = services;
  const workspace = await requireWorkspace(db, input.workspace);
  const email = input.email.trim();
  if (!isEmailShape(email)) throw invalidParameter("email", "email must be an email address.");
  const emailNorm = normaliseEmail(email);
  const existing = await findOwnerByEmail(db, emailNorm);
  if (existing && (await isWorkspaceOwner(db, workspace.id, existing.id)))
    throw invalidParameter("email", `${existing.email} is an owner of this workspace already.`);
  if (!actor && existing && existing.suspendedAt !== null)
    throw invalidParameter("email", `${existing.email} is a suspended owner; the operator must lift the suspension first.`);
  return { workspace, email, emailNorm, existing };
}

/**
 * Invites an address to co-own the workspace and mails it how to accept: sign in to the
 * dashboard at `baseUrl` before the invitation expires. The address becomes an owner
 * (an identity with no workspace yet) if it was none, so that it can ask for a sign-in
 * code; inviting it again replaces the open invitation with a fresh one. An owner's
 * invitation of a suspended address is kept as any other but not mailed: it is accepted
 * only by signing in, which a suspended owner cannot.
 */
export async function inviteOwner(services: Services, input: { workspace: string; email: string; baseUrl: string }, actor?: Actor): Promise<OwnerInvitation> {
  const { db, clock } = services;
  const { workspace, email, emailNorm, existing } = await checkOwnerInvitation(services, input, actor);
  const now = clock.now();
  const invitation: OwnerInvitation = {
    id: `inv_${randomBase62(24)}`,
    workspaceId: workspace.id,
    email,
    invitedBy: actor?.ownerId ?? null,
    createdAt: now,
    expiresAt: now + INVITATION_TTL_MS,
    acceptedAt: null,
    withdrawnAt: null,
  };
  const by = actor ? `${actor.email} invited you` : "You are invited";
  await db.transaction().execute(async (trx) => {
    if (!existing) await insertOwner(trx, { id: newId("own"), email, suspendedAt: null, createdAt: now }, emailNorm);
    await withdrawInvitations(trx, workspace.id, emailNorm, now);
    await insertInvitation(trx, invitation, emailNorm);
    if (actor) await recordAction(trx, actor, { action: "owner.invited", workspaceId: workspace.id, env: null, subject: email }, now);
    // A suspended address's invitation is kept but not mailed (see above).
    if (existing && existing.suspendedAt !== null) return;
    const mail = {
      kind: "owner-invitation" as const,
      to: email,
      subject: `You are invited to co-own ${workspace.name} on Warden`,
      text: `${by} to co-own the workspace "${workspace.name}" in the Warden dashboard.\n\nTo accept, sign in with this address at ${input.baseUrl.replace(/\/$/, "")}/dashboard/invitations before ${toIso(invitation.expiresAt)}: we mail you a code, no password needed.\n\nIf you did not expect this, ignore this mail: the invitation expires by itself.`,
    };
    await queueMails(trx, services.secretBox, [mail], now);
  });
  services.signals.wakeMail();
  return invitation;
}

/** Withdraws the open invitation of an address; answers how many were open (0 or 1). */
export async function withdrawInvitation(services: Services, input: { workspace: string; email: string }, actor?: Actor): Promise<{ withdrawn: number }> {
  const { db, clock } = services;
  const workspace = await requireWorkspace(db, input.workspace);
  const now = clock.now();
  return db.transaction().execute(async (trx) => {
    const withdrawn = await withdrawInvitations(trx, workspace.id, normaliseEmail(input.email.trim()), now);
    if (withdrawn > 0 && actor) {
      await recordAction(trx, actor, { action: "owner.invitation_withdrawn", workspaceId: workspace.id, env: null, subject: input.email.trim() }, now);
    }
    return { withdrawn };
  });
}

/**
 * Removes an owner from the workspace: their sessions are refused its pages from the
 * next request (every page checks ownership). Never the last owner, who alone could
 * invite another.
 */
export async function removeOwner(
  services: Services,
  input: { workspace: string; email: string },
  actor?: Actor,
): Promise<{ email: string; ownersLeft: number }> {
  const { db, clock, dialect } = services;
  const workspace = await requireWorkspace(db, input.workspace);
  const owner = await findOwnerByEmail(db, normaliseEmail(input.email.trim()));
  const now = clock.now();
  return db.transaction().execute(async (trx) => {
    await lockWorkspace(trx, workspace.id, dialect === "postgres");
    const owners = await listWorkspaceOwnerRows(trx, workspace.id);
    if (!owner || !owners.some((o) => o.ownerId === owner.id)) throw notFound(`${input.email.trim()} is not an owner of workspace "${workspace.slug}".`);
    if (owners.length === 1) throw invalidParameter("email", `${owner.email} is the workspace's only owner: invite another owner before removing this one.`);
    await deleteWorkspaceOwner(trx, workspace.id, owner.id);
    if (actor) await recordAction(trx, actor, { action: "owner.removed", workspaceId: workspace.id, env: null, subject: owner.email }, now);
    return { email: owner.email, ownersLeft: owners.length - 1 };
  });
}

/**
 * Accepts the open invitations of the owner's address: each makes them an owner of its
 * workspace, recorded as joined. Runs in the transaction that opens their session (a
 * sign-in proves the address), or when a signed-in owner accepts from the dashboard.
 */
export async function acceptOwnerInvitations(trx: Executor, actor: Actor, now: number): Promise<string[]> {
  const joined: string[] = [];
  for (const invitation of await listOpenInvitations(trx, { emailNorm: normaliseEmail(actor.email) }, now)) {
    if (!(await acceptInvitationRow(trx, invitation.id, now))) continue;
    // Already an owner (added another way since): nothing more to record.
    if (await addWorkspaceOwner(trx, invitation.workspaceId, actor.ownerId, now)) {
      await recordAction(trx, actor, { action: "owner.joined", workspaceId: invitation.workspaceId, env: null, subject: actor.email }, now);
      joined.push(invitation.workspaceId);
    }
  }
  return joined;
}

/** A signed-in owner's open invitations, with the name of each workspace. */
export async function listInvitationsOf(services: Services, actor: Actor): Promise<(OwnerInvitation & { workspaceName: string })[]> {
  const { db, clock } = services;
  const open = await listOpenInvitations(db, { emailNorm: normaliseEmail(actor.email) }, clock.now());
  const named: (OwnerInvitation & { workspaceName: string })[] = [];
  for (const invitation of open) {
    const workspace = await findWorkspaceById(db, invitation.workspaceId);
    if (workspace) named.push({ ...invitation, workspaceName: workspace.name });
  }
  return named;
}

/** A signed-in owner accepts their open invitations from the dashboard. */
export async function acceptInvitations(services: Services, actor: Actor): Promise<string[]> {
  const now = services.clock.now();
  return services.db.transaction().execute((trx) => acceptOwnerInvitations(trx, actor, now));
}
