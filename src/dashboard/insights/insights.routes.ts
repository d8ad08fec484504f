// Insights of a workspace environment: one page per group (revenue, subscriptions,
// people, use), for one tool or all, over a range; each table also as CSV. The pages
// call the use cases `GET /api/v1/insights/…` calls, which read the daily roll-ups.
import type { FastifyInstance, FastifyRequest } from "fastify";
import { peopleInsights, revenueInsights, subscriptionInsights, useInsights } from "../../insights/insights.service.js";
import type { InsightsQuery } from "../../insights/insights.types.js";
import { connectedProcessor } from "../../payments/processors.js";
import type { Services } from "../../services.js";
import { listBundles, listTools } from "../../workspaces/workspace.service.js";
import { workspacePage } from "../shared/owner-context.js";
import { sendPage } from "../shared/page.js";
import { PageRefusal } from "../shared/security.js";
import { type CsvTable, csvFile, peopleTables, revenueTables, subscriptionTables, useTables } from "./insights.csv.js";
import { parseRange } from "./insights.range.js";
import { GROUPS, type Group, type GroupData, insightsView, type Selection } from "./insights.views.js";

const query = (request: FastifyRequest) => request.query as Record<string, string | undefined>;
const isGroup = (value: string): value is Group => (GROUPS as readonly string[]).includes(value);

export async function insightsRoutes(app: FastifyInstance, options: { services: Services }): Promise<void> {
  const { services } = options;
  const base = "/w/:workspace/:env/insights";

  /** The page's workspace, its tools, and what the address asks to show; an unknown tool is 404, as a mistyped address. */
  async function selectionOf(request: FastifyRequest) {
    const page = await workspacePage(services, request, "insights");
    const tools = await listTools(services.db, { workspace: page.workspace.slug });
    const q = query(request);
    const toolParam = q.tool ?? "all";
    if (toolParam !== "all" && !tools.some((t) => t.id === toolParam)) throw new PageRefusal(404, "Not found", "No such tool in this workspace.");
    const { range, refusal } = parseRange(q, services.clock.now());
    const selection: Selection = { tool: toolParam === "all" ? null : toolParam, range, typed: { from: q.from ?? "", to: q.to ?? "" }, refusal };
    const insightsQuery: InsightsQuery = {
      workspaceId: page.workspace.id,
      env: page.env,
      toolId: selection.tool,
      from: range.from,
      to: range.to,
      grain: range.grain,
    };
    return { page, tools, selection, insightsQuery };
  }

  async function groupData(group: Group, q: InsightsQuery): Promise<GroupData> {
    switch (group) {
      case "revenue":
        return {
          group,
          data: await revenueInsights(services.db, q),
          processor: await connectedProcessor(services, { workspaceId: q.workspaceId, env: q.env }),
        };
      case "subscriptions":
        return { group, data: await subscriptionInsights(services.db, q) };
      case "people":
        return { group, data: await peopleInsights(services.db, q) };
      case "use":
        return { group, data: await useInsights(services, q, new Date(services.clock.now())) };
    }
  }

  function tablesOf(shown: GroupData): CsvTable[] {
    switch (shown.group) {
      case "revenue":
        return revenueTables(shown.data);
      case "subscriptions":
        return subscriptionTables(shown.data);
      case "people":
        return peopleTables(shown.data);
      case "use":
        return useTables(shown.data);
    }
  }

  // The section's own address (the workspace switcher's link) opens its first page, with the same choices.
  app.get(base, async (request, reply) => {
    await workspacePage(services, request, "insights");
    const search = request.url.includes("?") ? request.url.slice(request.url.indexOf("?")) : "";
    return reply.redirect(`${request.url.split("?")[0]}/revenue${search}`, 303);
  });

  app.get(`${base}/:group`, async (request, reply) => {
    const { group } = request.params as { group: string };
    if (!isGroup(group)) throw new PageRefusal(404, "Not found", "There is no such page of Insights.");
    const { page, tools, selection, insightsQuery } = await selectionOf(request);
    const [shown, bundles] = await Promise.all([groupData(group, insightsQuery), listBundles(services.db, { workspace: page.workspace.slug })]);
    return sendPage(reply, selection.refusal ? 400 : 200, insightsView(page.frame, { tools, bundles, selection, shown }));
  });

  app.get(`${base}/:group/:table`, async (request, reply) => {
    const { group, table } = request.params as { group: string; table: string };
    const name = table.endsWith(".csv") ? table.slice(0, -4) : null;
    if (!isGroup(group) || name === null) throw new PageRefusal(404, "Not found", "There is no such page of Insights.");
    const { page, selection, insightsQuery } = await selectionOf(request);
    if (selection.refusal) throw new PageRefusal(400, "Request not understood", selection.refusal.error);
    const found = tablesOf(await groupData(group, insightsQuery)).find((t) => t.name === name);
    // A currency with no figures in the range has no table: the page offered no link to it.
    if (!found) throw new PageRefusal(404, "Not found", "There is no such table in this range.");
    const file = `insights-${page.workspace.slug}-${page.env}-${selection.tool ?? "all"}-${name}-${selection.range.from}-to-${selection.range.to}.csv`;
    return reply
      .status(200)
      .header("Content-Type", "text/csv; charset=utf-8")
      .header("Content-Disposition", `attachment; filename="${file}"`)
      .send(csvFile(found));
  });
}
