// What a workspace environment uses of its limits now, for the dashboard's overview.
// Every figure is read from the counters and indexes the limits themselves use, so the
// overview costs a few indexed reads and never disagrees with what the API enforces.
import type { Env } from "../db/schema.js";
import { countPassesHeld } from "../grants/pass.store.js";
import type { Services } from "../services.js";
import type { Workspace } from "../workspaces/workspace.types.js";
import type { DailyUsage } from "./limits.service.js";

// Passes of a Pro workspace (no limit) are counted up to this, and shown as "10,000 or more" past it.
const UNLIMITED_COUNT_CAP = 10_000;

export interface WorkspaceUsage {
  passes: { held: number; limit: number | null; atLeast: boolean };
  daily: DailyUsage[];
}

export async function readWorkspaceUsage(services: Services, workspace: Workspace, env: Env): Promise<WorkspaceUsage> {
  const { db, clock, limits } = services;
  const now = clock.now();
  const limit = workspace.plan === "hobby" ? limits.hobbyPasses : null;
  const cap = limit === null ? UNLIMITED_COUNT_CAP : limit + 1;
  const [held, daily] = await Promise.all([
    countPassesHeld(db, workspace.id, env, now, cap),
    limits.readDailyUsage(db, { workspaceId: workspace.id, env }, now),
  ]);
  return { passes: { held, limit, atLeast: limit === null && held >= cap }, daily };
}
