import type { Env } from "../db/schema.js";
import type { Services } from "../services.js";
import { setupFacts } from "./setup.store.js";

// What a workspace still has to set up before it sells and counts: the overview's checklist.

export type SetupStep = "catalogue" | "payments" | "webhook" | "live-key" | "library";

/** The steps in the order they are taken, each done or not, for the environment on screen (the key: a live one, which going live needs). */
export async function setupChecklist(
  services: Pick<Services, "db" | "activity">,
  where: { workspaceId: string; env: Env },
): Promise<{ step: SetupStep; done: boolean }[]> {
  // This process's access checks are written first (within a second otherwise), so the library's step sees its own.
  await services.activity.flush();
  const facts = await setupFacts(services.db, where.workspaceId, where.env);
  return [
    { step: "catalogue", done: facts.plan },
    // Connected is not enough: an event received proves the processor sends to the URL Warden gave.
    { step: "payments", done: (facts.stripe && facts.stripeEvent) || (facts.paddle && facts.paddleEvent) },
    { step: "webhook", done: facts.endpoint },
    { step: "live-key", done: facts.liveKey },
    { step: "library", done: facts.accessCheck },
  ];
}
