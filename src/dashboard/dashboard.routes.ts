// The vendor dashboard under /dashboard: server-rendered pages over the same use cases
// as the API and the CLI. This plugin sets what every page shares (headers, the form
// parser, the cross-site check, HTML error pages) and registers each screen family.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { MARK } from "../http/mark.js";
import { endOwnerSession } from "../owners/owner-sign-in.service.js";
import type { Services } from "../services.js";
import { auditRoutes } from "./audit/audit.routes.js";
import { brandingRoutes } from "./branding/branding.routes.js";
import { bundleRoutes } from "./catalogue/bundles.routes.js";
import { nameRoutes } from "./catalogue/names.routes.js";
import { toolRoutes } from "./catalogue/tools.routes.js";
import { customerRoutes } from "./customers/customers.routes.js";
import { insightsRoutes } from "./insights/insights.routes.js";
import { keyRoutes } from "./keys/keys.routes.js";
import { overviewRoutes } from "./overview/overview.routes.js";
import { ownerRoutes } from "./owners/owners.routes.js";
import { sessionRoutes } from "./sessions/sessions.routes.js";
import { html } from "./shared/html.js";
import { appPage, cardPage, DASHBOARD, limitNotice, pageHeading, sectionPath } from "./shared/layout.js";
import { clearSessionCookie, errorPageFrame, requireSession, signedInOf } from "./shared/owner-context.js";
import { describePageError, type LimitReached, limitReachedOf, sendPage } from "./shared/page.js";
import { addPageHeaders, servePages } from "./shared/security.js";
import { signInRoutes } from "./sign-in/sign-in.routes.js";
import { stripeRoutes } from "./stripe/stripe.routes.js";
import { eventRoutes } from "./webhooks/events.routes.js";
import { webhookRoutes } from "./webhooks/webhooks.routes.js";

// The stylesheet and the one script are read from the source tree, two folders up from
// this module both in src/dashboard and in dist/dashboard, so tsc needs no copy step.
const ASSETS = join(import.meta.dirname, "..", "..", "src", "dashboard", "assets");
const STYLESHEET = readFileSync(join(ASSETS, "dashboard.css"), "utf8");
const COPY_SCRIPT = readFileSync(join(ASSETS, "copy.js"), "utf8");

/**
 * An error page: inside the signed-in frame when an owner is signed in (their navigation
 * kept, and the workspace of the address when it is theirs), else a card; both link back.
 * Not when the database is away (503): the frame would ask it again.
 */
async function sendErrorPage(
  services: Services,
  request: FastifyRequest,
  reply: FastifyReply,
  error: { status: number; title: string; message: string; limited?: LimitReached | null },
) {
  const { status, title, message } = error;
  const frame = status === 503 ? null : await errorPageFrame(services, request);
  const home = frame?.current ? sectionPath(frame.current.workspace.slug, frame.current.env, "overview") : DASHBOARD;
  const said = error.limited ? limitNotice(error.limited) : html`<p class="lede">${message}</p>`;
  const body = html`${said}<p><a class="button primary" href="${home}">Back to the dashboard</a></p>`;
  return sendPage(
    reply,
    status,
    frame ? appPage(title, frame, html`${pageHeading(title)}${body}`, { trail: [{ label: title }] }) : cardPage(title, html`<h1>${title}</h1>${body}`),
  );
}

/** Errors of the dashboard are pages, with the catalogue's status. */
function renderPageError(services: Services) {
  return (error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) => {
    const described = describePageError(services, error, request, reply, {
      logAs: "dashboard request failed",
      internal: (id) => `The dashboard failed to answer. Try again in a moment; if it keeps failing, give your operator the request id ${id}.`,
    });
    // A limit is named with its figure and when it resets, as the customer pages' notices do.
    const limited = limitReachedOf(error);
    return sendErrorPage(services, request, reply, limited ? { ...described, title: "Limit reached", limited } : described);
  };
}

export async function dashboardRoutes(app: FastifyInstance, options: { services: Services }): Promise<void> {
  const { services } = options;

  servePages(app);
  app.setErrorHandler(renderPageError(services));
  app.setNotFoundHandler((request, reply) => {
    addPageHeaders(reply);
    return sendErrorPage(services, request, reply, { status: 404, title: "Not found", message: "There is no page at this address." });
  });

  app.get("/assets/dashboard.css", async (_request, reply) => {
    return reply.header("Content-Type", "text/css; charset=utf-8").header("Cache-Control", "no-cache").send(STYLESHEET);
  });
  app.get("/assets/warden.svg", async (_request, reply) => {
    return reply.header("Content-Type", "image/svg+xml").header("Cache-Control", "no-cache").send(MARK);
  });
  app.get("/assets/copy.js", async (_request, reply) => {
    return reply.header("Content-Type", "text/javascript; charset=utf-8").header("Cache-Control", "no-cache").send(COPY_SCRIPT);
  });

  await app.register(signInRoutes, { services });
  await app.register(async (owned) => {
    requireSession(owned, services);
    owned.post("/sign-out", async (request, reply) => {
      await endOwnerSession(services, signedInOf(request).session);
      clearSessionCookie(request, reply);
      return reply.redirect(`${DASHBOARD}/sign-in?signed_out=1`, 303);
    });
    await owned.register(overviewRoutes, { services });
    await owned.register(customerRoutes, { services });
    await owned.register(insightsRoutes, { services });
    await owned.register(toolRoutes, { services });
    await owned.register(bundleRoutes, { services });
    await owned.register(nameRoutes, { services });
    await owned.register(stripeRoutes, { services });
    await owned.register(ownerRoutes, { services });
    await owned.register(brandingRoutes, { services });
    await owned.register(keyRoutes, { services });
    await owned.register(webhookRoutes, { services });
    await owned.register(eventRoutes, { services });
    await owned.register(auditRoutes, { services });
    await owned.register(sessionRoutes, { services });
  });
}
