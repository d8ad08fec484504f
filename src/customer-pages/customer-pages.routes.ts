// The hosted customer pages under /c/{workspace}/{test|live}/{tool}: what a vendor's
// customer sees (sign in, plans, trial, manage), served by Warden in the dashboard's
// style and under its policy. This plugin sets what every page shares: the dashboard's
// headers, form parser, cross-site and form-token checks; the page and its signed-in
// person (customer-session.ts); HTML error pages in the shell. Each page family
// registers its routes here.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { html } from "../dashboard/shared/html.js";
import { describePageError, sendPage } from "../dashboard/shared/page.js";
import { addPageHeaders, checkFormToken, formTokenMatches, servePages } from "../dashboard/shared/security.js";
import type { Services } from "../services.js";
import {
  browserSecretOf,
  clearSessionCookie,
  customerFrame,
  customerOf,
  heldTicketSecretOf,
  loadPage,
  PAGE_PATH,
  pagePath,
  pageScopeOf,
  pageWorkspaceOf,
  sessionSecretOf,
} from "./customer-session.js";
import { endCustomerSession } from "./customer-session.service.js";
import { customerPage } from "./layout.js";
import { registerManagePages } from "./manage.routes.js";
import { askAboutHeldTicket, registerTicketAnswer } from "./page-ticket.routes.js";
import { registerPlanPages } from "./plans.routes.js";
import { signInRoutes } from "./sign-in.routes.js";

/** A page of an error, in the shell of the workspace when the address names one. */
function renderPageError(services: Services) {
  return (error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) => {
    const { status, title, message } = describePageError(services, error, request, reply, {
      logAs: "customer page failed",
      internal: (id) => `This page failed to answer. Try again in a moment; if it keeps failing, tell the vendor the request id ${id}.`,
    });
    const frame = customerFrame(request);
    const workspace = pageWorkspaceOf(request);
    return sendPage(
      reply,
      status,
      customerPage(
        title,
        { ...frame, workspaceName: workspace?.name ?? null },
        html`<section class="card customer-card"><h1>${title}</h1><p class="lede">${message}</p>${
          frame.base ? html`<p><a class="button primary" href="${frame.base}/plans">See the plans</a></p>` : ""
        }</section>`,
      ),
    );
  };
}

export async function customerPageRoutes(app: FastifyInstance, options: { services: Services }): Promise<void> {
  const { services } = options;

  servePages(app);
  app.addHook("onRequest", async (request, reply) => {
    await loadPage(services, request, reply);
    // A browser holding a page ticket is asked "Continue as …?" before any page: none is shown, nothing bought, until it answers.
    if (!reply.sent) return askAboutHeldTicket(request, reply);
  });
  // A form's token derives from the session's secret on a signed-in page, from the
  // browser's pre-session secret on a sign-in form, or from the ticket it holds on a
  // ticket's question: each proves the page was ours.
  app.addHook("preHandler", async (request) => {
    if (request.method === "GET" || request.method === "HEAD") return;
    const secrets = [sessionSecretOf(request), browserSecretOf(request), heldTicketSecretOf(request)].filter((s): s is string => s !== null);
    if (!secrets.some((secret) => formTokenMatches(request, secret))) checkFormToken(request, null);
  });
  app.setErrorHandler(renderPageError(services));
  app.setNotFoundHandler((request, reply) => {
    addPageHeaders(reply);
    return sendPage(
      reply,
      404,
      customerPage(
        "Page not found",
        customerFrame(request),
        html`<section class="card customer-card"><h1>Page not found</h1><p class="lede">There is no page at this address: it may be mistyped.</p></section>`,
      ),
    );
  });

  await app.register(signInRoutes, { services });
  registerPlanPages(app, services);
  await registerManagePages(app, services);
  registerTicketAnswer(app, services);

  app.post(`${PAGE_PATH}/sign-out`, async (request, reply) => {
    const scope = pageScopeOf(request);
    const customer = customerOf(request);
    if (customer) await endCustomerSession(services, customer.sessionId);
    clearSessionCookie(request, reply, scope);
    return reply.redirect(`${pagePath(scope, "sign-in")}?signed_out=1`, 303);
  });
}
