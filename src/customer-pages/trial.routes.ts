// The hosted Trial page: the tool's trial (its length, or that it has none), started once
// per person by the client API's use case (`startTrial`), then its end date. Signed out,
// the page says how long the trial is and sends to sign-in, which comes back here.
import type { FastifyInstance } from "fastify";
import { startTrial, trialStatus } from "../client/trial.service.js";
import { sendPage } from "../dashboard/shared/page.js";
import type { Services } from "../services.js";
import {
  type Customer,
  customerFrame,
  customerOf,
  PAGE_PATH,
  pagePath,
  pageScopeOf,
  pageToolName,
  requireCustomer,
  signedInCustomer,
} from "./customer-session.js";
import { refusalWords } from "./refusals.views.js";
import { type TrialPage, trialView } from "./trial.views.js";

export function registerTrialPage(app: FastifyInstance, services: Services): void {
  const page = async (request: Parameters<typeof pageScopeOf>[0], extra: Pick<TrialPage, "started" | "running" | "error"> = {}) => {
    const scope = pageScopeOf(request);
    const customer = customerOf(request);
    // A session from a licence key is that licence's, not a person's to start trials with.
    const person: Customer | null = customer && customer.licenceId === null ? customer : null;
    const status = person ? await trialStatus(services, person, scope.tool.id) : { trialDays: scope.tool.trialDays, trial: undefined };
    return trialView({
      frame: customerFrame(request, "trial"),
      toolName: pageToolName(request),
      status,
      keyOnly: customer !== null && customer.licenceId !== null,
      ...extra,
    });
  };

  app.get(`${PAGE_PATH}/trial`, async (request, reply) => {
    const query = request.query as Record<string, string | undefined>;
    return sendPage(reply, 200, await page(request, { started: query.started === "1", running: query.running === "1" }));
  });

  app.post(`${PAGE_PATH}/trial`, { preHandler: requireCustomer }, async (request, reply) => {
    const scope = pageScopeOf(request);
    let created: boolean;
    try {
      ({ created } = await startTrial(services, signedInCustomer(request), scope.tool.id));
    } catch (error) {
      const message = refusalWords(customerFrame(request).text, error, { workspace: scope.workspace.name, tool: pageToolName(request) });
      if (message === null) throw error;
      return sendPage(reply, 400, await page(request, { error: message }));
    }
    // A trial already running (a second tab, a form posted twice) is said to be so, not started again.
    return reply.redirect(`${pagePath(scope, "trial")}?${created ? "started" : "running"}=1`, 303);
  });
}
