// Catalogue › Tools and plans: the workspace's tools (add, rename, set the trial) and
// each tool's plans (add, rename, retire). Every action calls the use case that
// `warden admin tool …` and `warden admin plan …` call, with the owner as actor so it is
// audited; what the CLI refuses, these pages refuse with the same message.
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Services } from "../../services.js";
import { createTool, listPlans, listTools, updateTool } from "../../workspaces/workspace.service.js";
import { requireTool } from "../../workspaces/workspace-lookup.service.js";
import { workspacePage } from "../shared/owner-context.js";
import { fieldRefusal, sendPage } from "../shared/page.js";
import { formField } from "../shared/security.js";
import { planRoutes } from "./plans.routes.js";
import { productPath } from "./plans.views.js";
import { toolsView, toolView } from "./tools.views.js";

const flag = (request: FastifyRequest, name: string) => (request.query as Record<string, string | undefined>)[name];

export async function toolRoutes(app: FastifyInstance, options: { services: Services }): Promise<void> {
  const { services } = options;
  const { db, clock } = services;
  const base = "/w/:workspace/:env/tools";

  app.get(base, async (request, reply) => {
    const page = await workspacePage(services, request, "tools");
    const [tools, plans] = await Promise.all([listTools(db, { workspace: page.workspace.slug }), listPlans(db, { workspace: page.workspace.slug })]);
    return sendPage(reply, 200, toolsView(page.frame, tools, plans));
  });

  app.post(base, async (request, reply) => {
    const page = await workspacePage(services, request, "tools");
    const form = { id: formField(request, "id").trim(), name: formField(request, "name"), trialDays: formField(request, "trial_days").trim() };
    try {
      const tool = await createTool(
        db,
        clock,
        { workspace: page.workspace.slug, id: form.id, name: form.name, trialDays: form.trialDays === "" ? undefined : form.trialDays },
        page.owner.session.actor,
      );
      return reply.redirect(`${productPath(page.frame, { kind: "tool", id: tool.id })}?created=1`, 303);
    } catch (error) {
      const refusal = fieldRefusal(error);
      if (refusal === null) throw error;
      const [tools, plans] = await Promise.all([listTools(db, { workspace: page.workspace.slug }), listPlans(db, { workspace: page.workspace.slug })]);
      return sendPage(reply, 400, toolsView(page.frame, tools, plans, { ...form, ...refusal }));
    }
  });

  const toolPage = async (request: FastifyRequest) => {
    const page = await workspacePage(services, request, "tools");
    const { tool: toolId } = request.params as { tool: string };
    const { tool } = await requireTool(db, { workspace: page.workspace.slug, id: toolId });
    const plans = await listPlans(db, { workspace: page.workspace.slug, tool: tool.id });
    return { page, tool, plans };
  };

  app.get(`${base}/:tool`, async (request, reply) => {
    const { page, tool, plans } = await toolPage(request);
    return sendPage(reply, 200, toolView(page.frame, { tool, plans, saved: flag(request, "saved") === "1", added: flag(request, "plan_added") }));
  });

  app.post(`${base}/:tool`, async (request, reply) => {
    const { page, tool, plans } = await toolPage(request);
    const details = { name: formField(request, "name"), trialDays: formField(request, "trial_days").trim() };
    try {
      await updateTool(db, clock, { workspace: page.workspace.slug, id: tool.id, name: details.name, trialDays: details.trialDays }, page.owner.session.actor);
      return reply.redirect(`${productPath(page.frame, { kind: "tool", id: tool.id })}?saved=1`, 303);
    } catch (error) {
      const refusal = fieldRefusal(error);
      if (refusal === null) throw error;
      return sendPage(reply, 400, toolView(page.frame, { tool, plans, details: { ...details, ...refusal } }));
    }
  });

  await app.register(planRoutes, {
    services,
    kind: "tool",
    async open(request) {
      const { page, tool, plans } = await toolPage(request);
      return { page, product: { kind: "tool", id: tool.id, name: tool.name }, plans, render: (planForm) => toolView(page.frame, { tool, plans, planForm }) };
    },
  });
}
