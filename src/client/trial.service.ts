// Trials from the client: a signed-in person starts the trial a tool offers, once. It is
// a grant of kind `trial` (a pass, and an addition), so retrieve-a-customer shows it in
// `trial` and list-grants lists it.

import { DAY_MS, toIso } from "../clock.js";
import { syncCustomer, toolScope } from "../customers/customer.service.js";
import { grantLive } from "../customers/entitlement.js";
import { findPersonById } from "../customers/person.store.js";
import { ApiError, invalidParameter, notFound } from "../errors/errors.js";
import type { Grant } from "../grants/grant.schema.js";
import { presentGrant } from "../grants/grant.service.js";
import { insertGrant, listGrantsOf, type StoredGrant } from "../grants/grant.store.js";
import { countPassesBeforeAdding } from "../grants/pass.store.js";
import { newId } from "../ids.js";
import type { Services } from "../services.js";
import { findTool, findWorkspaceById, listOwnerIds } from "../workspaces/workspace.store.js";
import { requireSignedIn } from "./client.service.js";
import type { PersonScope } from "./device-session.store.js";

/** What the Trial page shows: the tool's offer and the person's trial, if one was started. */
export interface TrialStatus {
  toolName: string;
  trialDays: number;
  trial: { startsAt: number; endsAt: number; live: boolean } | null;
}

export async function trialStatus(services: Services, person: PersonScope, toolId: string): Promise<TrialStatus> {
  const { db, clock } = services;
  const tool = await findTool(db, person.workspaceId, toolId);
  if (!tool) throw notFound(`No tool "${toolId}" in this workspace.`);
  const trial = (await listGrantsOf(db, toolId, person.personId)).find((g) => g.kind === "trial");
  return {
    toolName: tool.name,
    trialDays: tool.trialDays,
    trial: trial ? { startsAt: trial.startsAt, endsAt: trial.revokedAt ?? trial.endsAt ?? trial.startsAt, live: grantLive(trial, clock.now()) } : null,
  };
}

/** Starts the person's trial of the tool; a trial still running answers itself (created false). */
export async function startTrial(services: Services, session: PersonScope, toolId: string): Promise<{ created: boolean; grant: Grant }> {
  const { db, clock, limits } = services;
  requireSignedIn(session, "start a trial");
  if (toolId !== session.toolId) throw notFound(`This device is signed in to tool "${session.toolId}", not "${toolId}".`);
  const tool = await findTool(db, session.workspaceId, toolId);
  if (!tool) throw notFound(`No tool "${toolId}" in this workspace.`);
  if (tool.trialDays === 0) throw invalidParameter("tool", `${tool.name} offers no trial.`, { reason: "trial_none" });

  return db.transaction().execute(async (trx) => {
    const now = clock.now();
    // People are stored by normalised address, so every spelling of one Gmail inbox is one person: one trial.
    const earlier = (await listGrantsOf(trx, toolId, session.personId)).find((g) => g.kind === "trial");
    if (earlier) {
      if (grantLive(earlier, now)) return { created: false, grant: presentGrant(earlier, now) };
      const ended = earlier.revokedAt ?? earlier.endsAt ?? now;
      throw invalidParameter("tool", `The trial of ${tool.name} for this address ended at ${toIso(ended)}; a trial is started once.`, {
        reason: "trial_ended",
        facts: { at: ended },
      });
    }
    const workspace = await findWorkspaceById(trx, session.workspaceId);
    if (!workspace) throw notFound("No such workspace.");
    const ownerIds = await listOwnerIds(trx, session.workspaceId);
    // Counted before the write, like a grant; the counter rows stay locked until commit,
    // which serialises trials of the workspace and keeps the pass count exact.
    await limits.countAddition(trx, { workspaceId: session.workspaceId, env: session.env, ownerIds }, now);
    if (workspace.plan === "hobby") {
      const cap = limits.hobbyPasses;
      if ((await countPassesBeforeAdding(trx, session.workspaceId, session.env, now, cap)) >= cap) {
        throw new ApiError("plan_limit", `The workspace's plan holds at most ${cap} passes at once; no trial can start now.`, {
          limit: "hobby-passes",
          reason: "passes_full",
        });
      }
    }
    const person = await findPersonById(trx, session.workspaceId, session.env, session.personId);
    if (!person) throw notFound("No such person.");
    const trial: StoredGrant = {
      id: newId("gr"),
      toolId,
      personId: person.id,
      email: person.email,
      kind: "trial",
      startsAt: now,
      endsAt: now + tool.trialDays * DAY_MS,
      revokedAt: null,
      note: null,
      createdAt: now,
      // A trial names no plan: it gives the tool's top terms (every feature).
      planId: null,
    };
    await insertGrant(trx, { ...trial, workspaceId: session.workspaceId, env: session.env });
    await syncCustomer(trx, toolScope(session.workspaceId, session.env, toolId), person.id, now);
    return { created: true, grant: presentGrant(trial, now) };
  });
}
