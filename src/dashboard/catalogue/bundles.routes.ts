// Catalogue › Bundles: add a bundle of tools, change the tools it names (after a page
// that says who gains or loses access, counted by the use case), and its plans. The use
// cases are those of `warden admin bundle …` and `warden admin plan …`.
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Services } from "../../services.js";
import { changeBundleTools } from "../../workspaces/bundle.service.js";
import { createBundle, listBundles, listPlans, listTools } from "../../workspaces/workspace.service.js";
import { requireBundle } from "../../workspaces/workspace-lookup.service.js";
import { workspacePage } from "../shared/owner-context.js";
import { fieldError, fieldRefusal, sendPage } from "../shared/page.js";
import { formField } from "../shared/security.js";
import { bundleChangeView, bundlesView, bundleView } from "./bundles.views.js";
import { planRoutes } from "./plans.routes.js";
import { productPath } from "./plans.views.js";

/** The tools ticked in a form or a query: one `tool:<id>` field each. */
function tickedTools(fields: unknown): string[] {
  if (fields === null || typeof fields !== "object") return [];
  return Object.entries(fields as Record<string, unknown>)
    .filter(([name, value]) => name.startsWith("tool:") && value === "1")
    .map(([name]) => name.slice("tool:".length));
}

export async function bundleRoutes(app: FastifyInstance, options: { services: Services }): Promise<void> {
  const { services } = options;
  const { db, clock } = services;
  const base = "/w/:workspace/:env/bundles";

  const catalogue = async (slug: string) => {
    const [bundles, tools, plans] = await Promise.all([
      listBundles(db, { workspace: slug }),
      listTools(db, { workspace: slug }),
      listPlans(db, { workspace: slug }),
    ]);
    return { bundles, tools, plans };
  };

  app.get(base, async (request, reply) => {
    const page = await workspacePage(services, request, "bundles");
    return sendPage(reply, 200, bundlesView(page.frame, await catalogue(page.workspace.slug)));
  });

  app.post(base, async (request, reply) => {
    const page = await workspacePage(services, request, "bundles");
    const toolIds = tickedTools(request.body);
    const form = { id: formField(request, "id").trim(), name: formField(request, "name"), tools: new Set(toolIds) };
    try {
      const bundle = await createBundle(db, clock, { workspace: page.workspace.slug, id: form.id, name: form.name, toolIds }, page.owner.session.actor);
      return reply.redirect(`${productPath(page.frame, { kind: "bundle", id: bundle.id })}?created=1`, 303);
    } catch (error) {
      const refusal = fieldRefusal(error);
      if (refusal === null) throw error;
      return sendPage(reply, 400, bundlesView(page.frame, { ...(await catalogue(page.workspace.slug)), form: { ...form, ...refusal } }));
    }
  });

  const bundlePage = async (request: FastifyRequest) => {
    const page = await workspacePage(services, request, "bundles");
    const { bundle: bundleId } = request.params as { bundle: string };
    const { bundle } = await requireBundle(db, { workspace: page.workspace.slug, id: bundleId });
    const [tools, plans] = await Promise.all([
      listTools(db, { workspace: page.workspace.slug }),
      listPlans(db, { workspace: page.workspace.slug, bundle: bundle.id }),
    ]);
    return { page, bundle, tools, plans };
  };

  app.get(`${base}/:bundle`, async (request, reply) => {
    const { page, bundle, tools, plans } = await bundlePage(request);
    const query = request.query as Record<string, string | undefined>;
    return sendPage(
      reply,
      200,
      bundleView(page.frame, { bundle, tools, plans, created: query.created === "1", changed: query.changed === "1", added: query.plan_added }),
    );
  });

  // The confirmation page: a GET, since it changes nothing (the use case counts in a transaction it rolls back).
  app.get(`${base}/:bundle/change`, async (request, reply) => {
    const { page, bundle, tools, plans } = await bundlePage(request);
    const toolIds = tickedTools(request.query);
    try {
      const change = await changeBundleTools(services, { workspace: page.workspace.slug, id: bundle.id, toolIds, apply: false });
      return sendPage(reply, 200, bundleChangeView(page.frame, change, tools));
    } catch (error) {
      const message = fieldError(error);
      if (message === null) throw error;
      return sendPage(reply, 400, bundleView(page.frame, { bundle, tools, plans, toolsError: { checked: new Set(toolIds), error: message } }));
    }
  });

  app.post(`${base}/:bundle/change`, async (request, reply) => {
    const { page, bundle, tools, plans } = await bundlePage(request);
    const toolIds = tickedTools(request.body);
    try {
      await changeBundleTools(services, { workspace: page.workspace.slug, id: bundle.id, toolIds, apply: true }, page.owner.session.actor);
      return reply.redirect(`${productPath(page.frame, { kind: "bundle", id: bundle.id })}?changed=1`, 303);
    } catch (error) {
      const message = fieldError(error);
      if (message === null) throw error;
      return sendPage(reply, 400, bundleView(page.frame, { bundle, tools, plans, toolsError: { checked: new Set(toolIds), error: message } }));
    }
  });

  await app.register(planRoutes, {
    services,
    kind: "bundle",
    async open(request) {
      const { page, bundle, tools, plans } = await bundlePage(request);
      return {
        page,
        product: { kind: "bundle", id: bundle.id, name: bundle.name },
        plans,
        render: (planForm) => bundleView(page.frame, { bundle, tools, plans, planForm }),
      };
    },
  });
}
