// The overview of a workspace environment, and `/dashboard` itself, which opens the
// owner's first workspace in its test environment (the safe one to land in).
import type { FastifyInstance } from "fastify";
import { listWorkspaceKeys } from "../../auth/key.service.js";
import { recentActivity } from "../../billing/recent-activity.service.js";
import { overviewInsights } from "../../insights/insights.service.js";
import { readWorkspaceUsage } from "../../limits/usage.service.js";
import type { Services } from "../../services.js";
import { listEndpoints } from "../../webhooks/webhook.service.js";
import { setupChecklist } from "../../workspaces/setup.service.js";
import { listTools } from "../../workspaces/workspace.service.js";
import { sectionPath } from "../shared/layout.js";
import { contextOf, ownerFrame, workspacePage } from "../shared/owner-context.js";
import { sendPage } from "../shared/page.js";
import { noWorkspaceView, overviewView } from "./overview.views.js";

export async function overviewRoutes(app: FastifyInstance, options: { services: Services }): Promise<void> {
  const { services } = options;

  app.get("/", async (request, reply) => {
    const { frame } = await ownerFrame(services, request, "overview");
    const [first] = frame.workspaces;
    if (!first) return sendPage(reply, 200, noWorkspaceView(frame));
    return reply.redirect(sectionPath(first.slug, "test", "overview"), 303);
  });

  app.get("/w/:workspace/:env", async (request, reply) => {
    const page = await workspacePage(services, request, "overview");
    const scope = { workspaceId: page.workspace.id, env: page.env };
    const ctx = await contextOf(services, page);
    const [usage, keys, endpoints, figures, steps, activity, tools] = await Promise.all([
      readWorkspaceUsage(services, page.workspace, page.env),
      listWorkspaceKeys(services, scope),
      listEndpoints(ctx),
      overviewInsights(services, scope, new Date(services.clock.now())),
      setupChecklist(services, scope),
      recentActivity(services, scope),
      listTools(services.db, { workspace: page.workspace.slug }),
    ]);
    // What needs the vendor's attention: deliveries are not arriving at these.
    const troubled = endpoints.data.filter((e) => !e.enabled || e.failing_since !== null);
    return sendPage(reply, 200, overviewView(page.frame, { workspace: page.workspace, usage, keys, troubled, figures, steps, activity, tools }));
  });
}
