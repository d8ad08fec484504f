// Scenario 9: the Insights pages (issue 34, point 3) through the whole server. A second
// workspace of the benchmark's owner gets as many people as the largest size (the
// benchmark's customers are beside it when another scenario seeded them) and ten times as
// many person-days of access checks
// (1,000,000 and 10,000,000 at `--size full`), with two years of daily roll-ups
// (insights-history.ts); then every Insights page, for every tool and for one, over the
// last 30 days and the last 12 months, is timed as scenario 7 times the dashboard's.
import { systemClock } from "../src/clock.js";
import type { Storage } from "../src/db/database.js";
import { createWorkspace } from "../src/workspaces/workspace.service.js";
import { BENCH } from "./customer-mix.js";
import { type PageRun, type PageSpec, type PageTiming, timePages } from "./dashboard-pages.js";
import { seedInsightsHistory } from "./insights-history.js";

export const INSIGHTS_WORKSPACE = "insights";
/** Person-days of access checks per person seeded: the 10M at a million. */
export const ACTIVE_DAYS_PER_PERSON = 10;

export interface InsightsSeed {
  people: number;
  activeDays: number;
  seconds: number;
}

export interface InsightsResult {
  /** The benchmark's own customers beside the Insights workspace (0 when no other scenario seeded them). */
  customers: number;
  seed: InsightsSeed;
  pages: PageTiming[];
  peakRssMb: number;
}

/** The owner's second workspace and its history, ending today (UTC), in the live environment. */
export async function seedInsightsWorkspace(storage: Storage, people: number, log: (line: string) => void): Promise<InsightsSeed> {
  const started = performance.now();
  const workspace = await createWorkspace(storage.db, systemClock, { slug: INSIGHTS_WORKSPACE, name: "Insights", ownerEmail: BENCH.ownerEmail, plan: "pro" });
  const today = Date.parse(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`);
  const activeDays = people * ACTIVE_DAYS_PER_PERSON;
  await seedInsightsHistory(
    storage.db,
    storage.dialect === "postgres",
    { workspaceId: workspace.id, env: "live", people, activeDays, today, skewed: false, idPrefix: "ins_" },
    log,
  );
  return { people, activeDays, seconds: (performance.now() - started) / 1000 };
}

/**
 * The Overview of this workspace, which reads the last 60 days of the same roll-ups (scenario
 * 7's workspace has none), then each group's page for every tool and for tool0, over 30
 * days (by day) and 12 months (by month).
 */
export function measureInsights(options: PageRun): Promise<PageTiming[]> {
  const here = `/dashboard/w/${INSIGHTS_WORKSPACE}/live/insights`;
  const pages: PageSpec[] = [{ name: "Overview (two years of roll-ups)", path: () => `/dashboard/w/${INSIGHTS_WORKSPACE}/live` }];
  for (const group of ["revenue", "subscriptions", "people", "use"]) {
    for (const [range, label] of [
      ["30d", "30 days"],
      ["12m", "12 months"],
    ]) {
      for (const tool of ["all", "tool0"]) {
        pages.push({
          name: `${group[0]?.toUpperCase()}${group.slice(1)}, ${label}, ${tool === "all" ? "every tool" : "one tool"}`,
          path: () => `${here}/${group}?range=${range}&tool=${tool}`,
        });
      }
    }
  }
  return timePages(options, pages);
}
