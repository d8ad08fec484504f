import { createHash } from "node:crypto";
import { recordOwnerAction } from "../audit/audit.service.js";
import { DAY_MS, toIso } from "../clock.js";
import { requireToolScope, syncCustomer } from "../customers/customer.service.js";
import { isEmailShape } from "../customers/email.js";
import { grantLive } from "../customers/entitlement.js";
import { ensurePerson, findPersonByEmail } from "../customers/person.store.js";
import { ApiError, invalidParameter, notFound } from "../errors/errors.js";
import { newId } from "../ids.js";
import type { RequestContext } from "../services.js";
import { findPlan } from "../workspaces/workspace.store.js";
import type { CreateGrantBody, Grant, RevokedGrant } from "./grant.schema.js";
import { findGrant, insertGrant, listGrantsOf, revokeGrantRow, type StoredGrant } from "./grant.store.js";
import { claimOrReplay } from "./idempotency.js";
import { completeIdempotencyKey } from "./idempotency.store.js";
import { countPassesBeforeAdding } from "./pass.store.js";

export function presentGrant(grant: StoredGrant, now: number): Grant {
  return {
    id: grant.id,
    tool: grant.toolId,
    email: grant.email,
    kind: grant.kind,
    starts_at: toIso(grant.startsAt),
    ends_at: grant.endsAt === null ? null : toIso(grant.endsAt),
    revoked_at: grant.revokedAt === null ? null : toIso(grant.revokedAt),
    note: grant.note,
    plan: grant.planId,
    created_at: toIso(grant.createdAt),
    live: grantLive(grant, now),
  };
}

export async function listGrants(ctx: RequestContext, toolId: string, email: string): Promise<{ data: Grant[] }> {
  const { db, clock, limits } = ctx.services;
  const scope = await requireToolScope(ctx, toolId);
  // List grants is a lookup by address and is counted with retrieve-a-customer, before the read.
  await limits.countLookup(db, ctx.principal, clock.now());
  const person = await findPersonByEmail(db, scope.workspaceId, scope.env, email);
  if (!person) return { data: [] };
  const grants = await listGrantsOf(db, toolId, person.id);
  const now = clock.now();
  return { data: grants.map((g) => presentGrant(g, now)) };
}

export interface CreatedGrant {
  /** False when an Idempotency-Key replayed an earlier creation. */
  created: boolean;
  grant: Grant;
}

export async function createGrant(ctx: RequestContext, toolId: string, body: CreateGrantBody, idempotencyKey: string | undefined): Promise<CreatedGrant> {
  const { db, clock, limits } = ctx.services;
  const { principal } = ctx;
  if (!isEmailShape(body.email)) throw invalidParameter("email", "email must be an email address such as person@example.com.");
  const scope = await requireToolScope(ctx, toolId);
  // The plan is hashed only when named: a key used before grants named plans hashes the same.
  const requestHash = createHash("sha256")
    .update(JSON.stringify([toolId, body.email, body.days ?? 0, body.note ?? null, ...(body.plan === undefined ? [] : [body.plan])]))
    .digest("hex");
  const planId = body.plan === undefined ? null : await requireGrantPlan(ctx, toolId, body.plan);

  return db.transaction().execute(async (trx) => {
    const now = clock.now();
    const idempotency = idempotencyKey === undefined ? null : { workspaceId: principal.workspaceId, env: principal.env, key: idempotencyKey };
    const earlier = idempotency ? await claimOrReplay<Grant>(trx, idempotency, requestHash, now) : null;
    if (earlier) return { created: false, grant: earlier };

    // Counted before the write; the counters' rows stay locked until commit, which also
    // serialises grant creation per workspace and so keeps the pass count exact.
    await limits.countGrantCreation(trx, principal, toolId, now);
    if (principal.plan === "hobby") {
      const cap = limits.hobbyPasses;
      if ((await countPassesBeforeAdding(trx, principal.workspaceId, principal.env, now, cap)) >= cap) {
        throw new ApiError("plan_limit", `The Hobby plan holds at most ${cap} passes at once; revoke one or upgrade the workspace.`, { limit: "hobby-passes" });
      }
    }

    const person = await ensurePerson(trx, principal.workspaceId, principal.env, body.email, now);
    const days = body.days ?? 0;
    const stored: StoredGrant = {
      id: newId("gr"),
      toolId,
      personId: person.id,
      email: person.email,
      kind: "grant",
      startsAt: now,
      endsAt: days === 0 ? null : now + days * DAY_MS,
      revokedAt: null,
      note: body.note ?? null,
      createdAt: now,
      planId,
    };
    await insertGrant(trx, { ...stored, workspaceId: principal.workspaceId, env: principal.env });
    await syncCustomer(trx, scope, person.id, now);
    const grant = presentGrant(stored, now);
    if (idempotency) await completeIdempotencyKey(trx, idempotency, 201, JSON.stringify(grant));
    await recordOwnerAction(trx, ctx, "grant.created", stored.id, now);
    return { created: true, grant };
  });
}

/**
 * A plan a grant may name: one of the tool's own (product kind tool), retired ones too
 * (a vendor may give what they no longer sell), never a credit pack (it gives no access).
 */
async function requireGrantPlan(ctx: RequestContext, toolId: string, planId: string): Promise<string> {
  const plan = await findPlan(ctx.services.db, ctx.principal.workspaceId, "tool", toolId, planId);
  if (!plan) throw invalidParameter("plan", `Tool "${toolId}" has no plan "${planId}".`);
  if (!plan.givesAccess) throw invalidParameter("plan", `Plan "${planId}" is a credit pack: it gives no access, so a grant cannot name it.`);
  return plan.id;
}

export async function revokeGrant(ctx: RequestContext, toolId: string, grantId: string): Promise<RevokedGrant> {
  const { db, clock } = ctx.services;
  const scope = await requireToolScope(ctx, toolId);
  return db.transaction().execute(async (trx) => {
    const now = clock.now();
    const grant = await findGrant(trx, scope, grantId);
    if (!grant) throw notFound(`No grant "${grantId}" for tool "${toolId}".`);
    if (grant.revokedAt === null) {
      await revokeGrantRow(trx, grant.id, now);
      await syncCustomer(trx, scope, grant.personId, now);
      await recordOwnerAction(trx, ctx, "grant.revoked", grant.id, now);
    }
    return { id: grant.id, tool: toolId, revoked_at: toIso(grant.revokedAt ?? now), live: false };
  });
}
