// The audit log of owners' actions: written by each use case in the transaction of the
// change it records, so that a change and its record stand or fall together. The
// actions owners must hear of are mailed to every owner from here, in that transaction
// too (owners/owner-notification.ts).
import type { Executor } from "../db/database.js";
import type { Env } from "../db/schema.js";
import { invalidParameter } from "../errors/errors.js";
import { decodeCursor, encodeCursor } from "../http/cursor.js";
import { randomBase62 } from "../ids.js";
import { notifyOwners } from "../owners/owner-notification.js";
import type { RequestContext, Services } from "../services.js";
import { requireEnv, requireWorkspace } from "../workspaces/workspace-lookup.service.js";
import {
  type Actor,
  type ActorOrigin,
  type AuditEntry,
  type AuditFilter,
  insertAuditEntry,
  listAuditEntries,
  listWorkspaceAuditEntries,
} from "./audit.store.js";

export type { Actor, ActorOrigin, AuditEntry };

/** What an owner did; `subject` names what it was done to (a key id…). The list is the log filter's choices. */
export const AUDIT_ACTIONS = [
  "signed_in",
  "signed_out",
  "session.ended",
  "key.created",
  "key.revoked",
  "endpoint.added",
  "endpoint.updated",
  "endpoint.removed",
  "endpoint.secret_revealed",
  "endpoint.secret_rotated",
  "endpoint.enabled",
  "endpoint.disabled",
  "endpoint.recovered",
  "event.example_sent",
  "delivery.resent",
  "grant.created",
  "grant.revoked",
  "licence.refunded",
  "subscription.set_to_cancel",
  "subscription.ended",
  "tool.created",
  "tool.updated",
  "plan.created",
  "plan.renamed",
  "plan.retired",
  "plan.stripe_linked",
  "plan.paddle_linked",
  "plan.terms_changed",
  "feature.added",
  "feature.renamed",
  "meter.added",
  "meter.updated",
  "credits.adjusted",
  "bundle.created",
  "bundle.tools_changed",
  "stripe.connected",
  "stripe.disconnected",
  "stripe.reconciled",
  "paddle.connected",
  "paddle.disconnected",
  "owner.invited",
  "owner.invitation_withdrawn",
  "owner.joined",
  "owner.removed",
  "workspace.branding_changed",
  "names.translated",
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

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

/** A page of a workspace environment's log. */
const WORKSPACE_AUDIT_PAGE = 50;
const DAY_MS = 86_400_000;

/** What the log's filters and pager send, as typed: every value a string, empty meaning "any". */
export interface WorkspaceAuditQuery {
  workspace: string;
  env: string;
  owner?: string | undefined;
  action?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
  older?: string | undefined;
  newer?: string | undefined;
}

/** A `YYYY-MM-DD` day's first instant in UTC, or null for a value that is not one. */
function utcDay(value: string): number | null {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return null;
  const at = Date.parse(`${value}T00:00:00Z`);
  return Number.isNaN(at) || new Date(at).toISOString().slice(0, 10) !== value ? null : at;
}

/**
 * A workspace environment's log, with its workspace-wide entries, newest first, 50 a page:
 * narrowed to who acted (an owner id), an action, and UTC days `from`..`to` inclusive.
 * `older`/`newer` are the cursors of the page's ends; a cursor is sealed to its filters.
 */
export async function listWorkspaceAudit(
  services: Services,
  input: WorkspaceAuditQuery,
): Promise<{ data: AuditEntry[]; olderCursor: string | null; newerCursor: string | null }> {
  const workspace = await requireWorkspace(services.db, input.workspace);
  const env = requireEnv(input.env);
  const filter = parseAuditFilter(input);
  const context = `audit|${workspace.id}|${env}|${filter.ownerId ?? ""}|${filter.action ?? ""}|${filter.from ?? ""}|${filter.until ?? ""}`;
  if (input.older && input.newer) throw invalidParameter("cursor", "Ask for older or newer entries, not both.");
  const direction = input.newer ? "newer" : "older";
  const cursor = input.newer || input.older;
  const position = cursor ? decodeCursor(services.cursorKey, `${context}|${direction}`, cursor) : null;
  const rows = await listWorkspaceAuditEntries(services.db, { workspaceId: workspace.id, env }, filter, {
    position,
    direction,
    limit: WORKSPACE_AUDIT_PAGE + 1,
  });
  const more = rows.length > WORKSPACE_AUDIT_PAGE;
  const page = rows.slice(0, WORKSPACE_AUDIT_PAGE);
  const data = direction === "older" ? page : page.reverse();
  const newest = data[0];
  const oldest = data[data.length - 1];
  // Going older, the page came from newer entries (when it had a cursor); going newer, from older ones.
  const hasOlder = direction === "older" ? more : true;
  const hasNewer = direction === "older" ? position !== null : more;
  const seal = (direction: "older" | "newer", entry: AuditEntry) =>
    encodeCursor(services.cursorKey, `${context}|${direction}`, { at: entry.createdAt, id: entry.id });
  return {
    data,
    olderCursor: hasOlder && oldest ? seal("older", oldest) : null,
    newerCursor: hasNewer && newest ? seal("newer", newest) : null,
  };
}

function parseAuditFilter(input: WorkspaceAuditQuery): AuditFilter {
  const action = input.action ? (AUDIT_ACTIONS.find((a) => a === input.action) ?? null) : null;
  if (input.action && action === null) throw invalidParameter("action", "Choose an action from the list.");
  const owner = input.owner ? input.owner : null;
  if (owner !== null && !/^[A-Za-z0-9_]{1,64}$/.test(owner)) throw invalidParameter("owner", "Choose an owner from the list.");
  const from = input.from ? utcDay(input.from) : null;
  if (input.from && from === null) throw invalidParameter("from", "Enter the first day as a date, like 2026-11-01.");
  const to = input.to ? utcDay(input.to) : null;
  if (input.to && to === null) throw invalidParameter("to", "Enter the last day as a date, like 2026-11-30.");
  if (from !== null && to !== null && to < from) throw invalidParameter("to", "The last day must be the first day or after it.");
  return { ownerId: owner, action, from, until: to === null ? null : to + DAY_MS };
}
