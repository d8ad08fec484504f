// A page ticket's question (docs/decisions.md, "Page tickets"): a browser that opened a
// ticket's link and holds its ticket in a cookie is shown "Continue as …?" on whichever
// page it asks for, and only this page's form, posted with its token (of the held ticket,
// which only this browser's cookie carries) from Warden's own page, spends the ticket.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { sendPage } from "../dashboard/shared/page.js";
import { checkFormToken, csrfTokenFor, formField } from "../dashboard/shared/security.js";
import type { Services } from "../services.js";
import {
  clearHeldTicketCookie,
  customerFrame,
  customerOf,
  heldTicketOf,
  heldTicketSecretOf,
  PAGE_PATH,
  pagePath,
  pageScopeOf,
  pageToolName,
  safeReturn,
  setSessionCookie,
} from "./customer-session.js";
import { endCustomerSession } from "./customer-session.service.js";
import { answerHeldPageTicket } from "./hand-off.service.js";
import { ticketQuestionView } from "./page-ticket.views.js";

/** The question instead of the page asked for, when this browser holds a ticket (the plugin's onRequest hook, after loadPage). */
export function askAboutHeldTicket(request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined {
  const held = heldTicketOf(request);
  if (held === null) return undefined;
  const scope = pageScopeOf(request);
  const customer = customerOf(request);
  return sendPage(
    reply,
    200,
    ticketQuestionView({
      frame: customerFrame(request),
      toolName: pageToolName(request),
      workspaceName: scope.workspace.name,
      csrf: csrfTokenFor(held.secret),
      back: request.url,
      ticketEmail: held.email,
      current: customer === null ? null : customer.licenceId === null ? { email: customer.email } : "licence",
    }),
  );
}

export function registerTicketAnswer(app: FastifyInstance, services: Services): void {
  app.post(`${PAGE_PATH}/ticket`, async (request, reply) => {
    const scope = pageScopeOf(request);
    const held = heldTicketSecretOf(request);
    // Bound to the held ticket: a form token of this browser's session or sign-in form is not an answer to this question.
    checkFormToken(request, held);
    const token = held === null ? null : await answerHeldPageTicket(services, scope, held, formField(request, "answer") === "continue");
    clearHeldTicketCookie(request, reply, scope);
    if (token !== null) {
      // The person chose to switch: the session they leave is ended, not left open behind the new cookie.
      const customer = customerOf(request);
      if (customer) await endCustomerSession(services, customer.sessionId);
      setSessionCookie(request, reply, scope, token);
    }
    return reply.redirect(safeReturn(scope, formField(request, "return")) ?? pagePath(scope, "plans"), 303);
  });
}
