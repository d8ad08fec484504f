// Catalogue › Tools and plans: the workspace's tools (add, rename, set the trial) and
// each tool's plans (add, rename, retire). Every action calls the use case that
// `warden admin tool …` and `warden admin plan …` call, with the owner as actor so it is
// audited; what the CLI refuses, these pages refuse with the same message.
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Services } from "../../services.js";
import { addFeature, addMeter, readToolTerms } from "../../usage/terms.service.js";
import { createTool, listPlans, listTools, updateTool } from "../../workspaces/workspace.service.js";
import { requireTool } from "../../workspaces/workspace-lookup.service.js";
import { workspacePage } from "../shared/owner-context.js";
import { fieldRefusal, sendPage } from "../shared/page.js";
import { formField } from "../shared/security.js";
import { planRoutes } from "./plans.routes.js";
import { productPath } from "./plans.views.js";
import { type DeclareForm, usagePanel } from "./terms.views.js";
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
    const [plans, declared] = await Promise.all([
      listPlans(db, { workspace: page.workspace.slug, tool: tool.id }),
      readToolTerms(db, { workspace: page.workspace.slug, tool: tool.id }),
    ]);
    const usage = (form?: DeclareForm, added?: string) => usagePanel(page.frame, tool.id, declared, form, added);
    return { page, tool, plans, usage };
  };

  app.get(`${base}/:tool`, async (request, reply) => {
    const { page, tool, plans, usage } = await toolPage(request);
    return sendPage(
      reply,
      200,
      toolView(page.frame, {
        tool,
        plans,
        usage: usage(undefined, flag(request, "declared")),
        saved: flag(request, "saved") === "1",
        added: flag(request, "plan_added"),
      }),
    );
  });

  // A feature or a meter declared from the tool's page, by the use cases of `warden admin feature|meter add`.
  const declare = (
    kind: DeclareForm["kind"],
    fields: string[],
    run: (page: Awaited<ReturnType<typeof toolPage>>, values: Record<string, string>) => Promise<{ id: string }>,
  ) =>
    app.post(`${base}/:tool/${kind}s`, async (request, reply) => {
      const opened = await toolPage(request);
      const values = Object.fromEntries(fields.map((f) => [f, formField(request, f).trim()]));
      try {
        const made = await run(opened, values);
        return reply.redirect(`${productPath(opened.page.frame, { kind: "tool", id: opened.tool.id })}?declared=${encodeURIComponent(made.id)}#usage`, 303);
      } catch (error) {
        const refusal = fieldRefusal(error);
        if (refusal === null) throw error;
        const form: DeclareForm = { kind, values, error: refusal.error, errorParam: refusal.errorParam };
        return sendPage(reply, 400, toolView(opened.page.frame, { tool: opened.tool, plans: opened.plans, usage: opened.usage(form) }));
      }
    });
  declare("feature", ["id", "name"], ({ page, tool }, v) =>
    addFeature(db, clock, { workspace: page.workspace.slug, tool: tool.id, id: v.id ?? "", name: v.name ?? "" }, page.owner.session.actor),
  );
  declare("meter", ["id", "name", "unit", "free"], ({ page, tool }, v) =>
    addMeter(
      db,
      clock,
      { workspace: page.workspace.slug, tool: tool.id, id: v.id ?? "", name: v.name ?? "", unit: v.unit ?? "", freeAllowance: v.free === "" ? null : v.free },
      page.owner.session.actor,
    ),
  );

  app.post(`${base}/:tool`, async (request, reply) => {
    const { page, tool, plans, usage } = await toolPage(request);
    const details = { name: formField(request, "name"), trialDays: formField(request, "trial_days").trim() };
    try {
      await updateTool(db, clock, { workspace: page.workspace.slug, id: tool.id, name: details.name, trialDays: details.trialDays }, page.owner.session.actor);
      return reply.redirect(`${productPath(page.frame, { kind: "tool", id: tool.id })}?saved=1`, 303);
    } catch (error) {
      const refusal = fieldRefusal(error);
      if (refusal === null) throw error;
      return sendPage(reply, 400, toolView(page.frame, { tool, plans, usage: usage(), details: { ...details, ...refusal } }));
    }
  });

  await app.register(planRoutes, {
    services,
    kind: "tool",
    async open(request) {
      const { page, tool, plans, usage } = await toolPage(request);
      return {
        page,
        product: { kind: "tool", id: tool.id, name: tool.name },
        plans,
        render: (planForm) => toolView(page.frame, { tool, plans, usage: usage(), planForm }),
      };
    },
  });
}
