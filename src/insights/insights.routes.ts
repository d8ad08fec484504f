import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { Static } from "@sinclair/typebox";
import { principalOf } from "../auth/auth.hook.js";
import { utcDayOf } from "../clock.js";
import { requireToolScope } from "../customers/customer.service.js";
import { commonErrors } from "../http/common.schema.js";
import type { RequestContext, Services } from "../services.js";
import { InsightsQuerystring, PeopleInsightsBody, RevenueInsightsBody, SubscriptionInsightsBody, UseInsightsBody } from "./insights.schema.js";
import { peopleInsights, revenueInsights, subscriptionInsights, useInsights } from "./insights.service.js";
import type { InsightsQuery } from "./insights.types.js";

const DAY = 86_400_000;

/** The query of the key's workspace environment; a named tool must be the workspace's. */
async function queryOf(ctx: RequestContext, q: Static<typeof InsightsQuerystring>): Promise<InsightsQuery> {
  if (q.tool !== undefined) await requireToolScope(ctx, q.tool);
  const to = q.to ?? utcDayOf(ctx.services.clock.now());
  const from = q.from ?? utcDayOf(Date.parse(`${to}T00:00:00Z`) - 29 * DAY);
  return { workspaceId: ctx.principal.workspaceId, env: ctx.principal.env, toolId: q.tool ?? null, from, to, grain: q.grain ?? "day" };
}

const describe = (what: string) =>
  `${what} Figures of the key's environment, from daily roll-ups; the range is UTC days, at most 800, with the period of equal length before it for comparison.`;

export const insightsRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const ctx = (request: Parameters<typeof principalOf>[0]) => ({ services, principal: principalOf(request) });

  app.get(
    "/insights/revenue",
    {
      schema: {
        operationId: "revenueInsights",
        summary: "Revenue",
        description: describe("Gross, refunds (lost disputes included) and net per currency, one-time and subscription apart, by plan and bundle."),
        tags: ["Insights"],
        querystring: InsightsQuerystring,
        response: { 200: RevenueInsightsBody, ...commonErrors },
      },
    },
    async (request) => revenueInsights(services.db, await queryOf(ctx(request), request.query)),
  );

  app.get(
    "/insights/subscriptions",
    {
      schema: {
        operationId: "subscriptionInsights",
        summary: "Subscriptions",
        description: describe("Paying subscriptions (active or past due) and MRR at the end of each point, and MRR's movements."),
        tags: ["Insights"],
        querystring: InsightsQuerystring,
        response: { 200: SubscriptionInsightsBody, ...commonErrors },
      },
    },
    async (request) => subscriptionInsights(services.db, await queryOf(ctx(request), request.query)),
  );

  app.get(
    "/insights/people",
    {
      schema: {
        operationId: "peopleInsights",
        summary: "People",
        description: describe("New customers, trials started and their conversion, grants."),
        tags: ["Insights"],
        querystring: InsightsQuerystring,
        response: { 200: PeopleInsightsBody, ...commonErrors },
      },
    },
    async (request) => peopleInsights(services.db, await queryOf(ctx(request), request.query)),
  );

  app.get(
    "/insights/use",
    {
      schema: {
        operationId: "useInsights",
        summary: "Use",
        description: describe(
          "People and devices with an access check per day, 7 and 30 days; paying people gone quiet; the most active people who do not pay.",
        ),
        tags: ["Insights"],
        querystring: InsightsQuerystring,
        response: { 200: UseInsightsBody, ...commonErrors },
      },
    },
    async (request) => useInsights(services, await queryOf(ctx(request), request.query), new Date(services.clock.now())),
  );
};
