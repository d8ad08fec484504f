// The hosted customer pages under /c/{workspace}/{test|live}/{tool}: what a vendor's
// customer sees (sign in, plans, trial, manage), served by Warden in the dashboard's
// style and under its policy. This plugin sets what every page shares: the dashboard's
// headers, form parser, cross-site and form-token checks; the page and its signed-in
// person (customer-session.ts); HTML error pages in the shell. Each page family
// registers its routes here.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { html } from "../dashboard/shared/html.js";
import { describePageError, sendPage } from "../dashboard/shared/page.js";
import { addPageHeaders, checkFormToken, formTokenMatches, PageRefusal, servePages } from "../dashboard/shared/security.js";
import { toApiError } from "../http/error.handler.js";
import type { MessageKey } from "../i18n/catalogues/index.js";
import type { Services } from "../services.js";
import {
  browserSecretOf,
  clearSessionCookie,
  customerFrame,
  customerOf,
  heldTicketSecretOf,
  keepLanguage,
  loadPage,
  loadPageFrame,
  PAGE_PATH,
  pagePath,
  pageScopeOf,
  pageTextOf,
  pageWorkspaceOf,
  sessionSecretOf,
} from "./customer-session.js";
import { endCustomerSession } from "./customer-session.service.js";
import { customerPage, type PageText } from "./layout.js";
import { registerManagePages } from "./manage.routes.js";
import { askAboutHeldTicket, registerTicketAnswer } from "./page-ticket.routes.js";
import { registerPlanPages } from "./plans.routes.js";
import { signInRoutes } from "./sign-in.routes.js";

const ERROR_TITLES: Record<number, MessageKey> = {
  400: "error.400",
  403: "error.403",
  404: "error.404",
  405: "error.405",
  413: "error.413",
  415: "error.415",
  429: "error.429",
  503: "error.503",
};

/**
 * What an error page says in the page's language: a refusal of these pages is in it
 * already (PageRefusal, made with the page's words); for the others, the title by status,
 * and the catalogue's words for what names nothing of the person's own (a 404 of a thing
 * not theirs, the database away, a failure). A use case's other refusals are the API's
 * words, in English (docs/decisions.md, "The buyer's language").
 */
function pageErrorWords(text: PageText, error: FastifyError | Error, described: { status: number; title: string; message: string }) {
  const { status } = described;
  if (error instanceof PageRefusal) {
    if (error.reason === "cross-site") return { status, title: text.s("error.403"), message: text.s("error.crossSite") };
    if (error.reason === "form-expired") return { status, title: text.s("error.formExpired"), message: text.s("error.formExpiredText") };
    return described;
  }
  const code = toApiError(error).code;
  if (code === "database_unavailable") return { status, title: text.s("error.unavailable"), message: text.s("error.unavailableText") };
  if (code === "internal") return { status, title: text.s("error.other"), message: described.message };
  const title = text.s(ERROR_TITLES[status] ?? "error.other");
  if (status === 404) return { status, title, message: text.s("error.notYours") };
  return { status, title, message: described.message };
}

const isCrossSite = (error: unknown) => error instanceof PageRefusal && error.reason === "cross-site";

/**
 * The page a refused form belongs to: its own address when it is a page (sign-in, Plans),
 * else the nearest page above it (a Manage form's, Manage), else Plans; null off a page.
 */
function pageOfForm(app: FastifyInstance, request: FastifyRequest): string | null {
  const base = customerFrame(request).base;
  if (base === null) return null;
  const pattern = (request.routeOptions.url ?? "").split("/");
  const path = request.url.split("?")[0]?.split("/") ?? [];
  const pageDepth = base.split("/").length;
  if (pattern.length === path.length) {
    for (let depth = pattern.length; depth > pageDepth; depth--) {
      if (app.hasRoute({ method: "GET", url: pattern.slice(0, depth).join("/") })) return path.slice(0, depth).join("/");
    }
  }
  return `${base}/plans`;
}

/** A page of an error, in the shell of the workspace when the address names one. */
function renderPageError(app: FastifyInstance, services: Services) {
  return async (error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) => {
    // Refused before the page was read (servePages' check runs first): read what its words and frame need, if the database answers.
    if (isCrossSite(error)) await loadPageFrame(services, request).catch(() => {});
    const text = pageTextOf(request);
    const { status, title, message } = pageErrorWords(
      text,
      error,
      describePageError(services, error, request, reply, {
        logAs: "customer page failed",
        internal: (id) => text.s("error.internal", { id }),
      }),
    );
    keepLanguage(request, reply);
    const frame = customerFrame(request);
    const workspace = pageWorkspaceOf(request);
    // A form from another site: back to the page it belongs to, where the buyer can send it themself.
    const back = isCrossSite(error) ? pageOfForm(app, request) : null;
    const link = back
      ? html`<a class="button primary" href="${back}">${text.t("error.openPageAgain")}</a>`
      : frame.base
        ? html`<a class="button primary" href="${frame.base}/plans">${text.t("error.seePlans")}</a>`
        : null;
    return sendPage(
      reply,
      status,
      customerPage(
        title,
        { ...frame, workspaceName: workspace?.name ?? null },
        html`<section class="card customer-card"><h1>${title}</h1><p class="lede">${message}</p>${link ? html`<p>${link}</p>` : ""}</section>`,
      ),
    );
  };
}

export async function customerPageRoutes(app: FastifyInstance, options: { services: Services }): Promise<void> {
  const { services } = options;

  servePages(app);
  app.addHook("onRequest", async (request, reply) => {
    // The page first: its workspace's default language is one of the choices (a refusal here says the language on its error page).
    await loadPage(services, request, reply);
    if (reply.sent) return;
    keepLanguage(request, reply);
    // A browser holding a page ticket is asked "Continue as …?" before any page: none is shown, nothing bought, until it answers.
    return askAboutHeldTicket(request, reply);
  });
  // A form's token derives from the session's secret on a signed-in page, from the
  // browser's pre-session secret on a sign-in form, or from the ticket it holds on a
  // ticket's question: each proves the page was ours.
  app.addHook("preHandler", async (request) => {
    if (request.method === "GET" || request.method === "HEAD") return;
    const secrets = [sessionSecretOf(request), browserSecretOf(request), heldTicketSecretOf(request)].filter((s): s is string => s !== null);
    if (!secrets.some((secret) => formTokenMatches(request, secret))) checkFormToken(request, null);
  });
  app.setErrorHandler(renderPageError(app, services));
  app.setNotFoundHandler((request, reply) => {
    addPageHeaders(reply);
    const { t, s } = pageTextOf(request);
    return sendPage(
      reply,
      404,
      customerPage(
        s("error.404"),
        customerFrame(request),
        html`<section class="card customer-card"><h1>${t("error.404")}</h1><p class="lede">${t("error.notFoundText")}</p></section>`,
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
