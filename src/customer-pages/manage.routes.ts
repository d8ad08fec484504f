// The Manage page of the hosted pages: a signed-in person's subscriptions, licences,
// team seats and devices, and what they may change there. Every action calls the client
// API's use case (client/purchase.service.ts, client/client.service.ts) for the session's
// person, so the page and the API refuse the same things the same way: anything not
// theirs is a 404 page. Plain forms: POST, then 303 back to the page with what was done.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { signOut } from "../client/client.service.js";
import { assignTeamSeat, changeOwnSubscription, openBillingPortal, unassignTeamSeat } from "../client/purchase.service.js";
import { sendPage } from "../dashboard/shared/page.js";
import { allowFormTargets, formField } from "../dashboard/shared/security.js";
import { notFound } from "../errors/errors.js";
import type { ProcessorName } from "../payments/payment-processor.js";
import type { Services } from "../services.js";
import {
  type Customer,
  customerFrame,
  PAGE_PATH,
  pageNamesOf,
  pagePath,
  pageScopeOf,
  pageToolName,
  requireCustomer,
  signedInCustomer,
} from "./customer-session.js";
import { manageOverview } from "./manage.service.js";
import { confirmCancelView, DONE, type Done, type ManageView, manageView } from "./manage.views.js";
import { refusalWords } from "./refusals.views.js";

const MANAGE = `${PAGE_PATH}/manage`;
// Where the processors' billing portals live: the page's forms may lead there (form-action
// covers a post's redirect). Paddle's customer portal has a sandbox of its own.
const BILLING_PORTALS: Record<ProcessorName, string[]> = {
  stripe: ["https://billing.stripe.com"],
  paddle: ["https://customer-portal.paddle.com", "https://sandbox-customer-portal.paddle.com"],
};

type IdParams = { id: string };

/** A refusal the person can act on, in the page's language (shown on the page), or null for one that is an error page (404, 401, a failure). */
const refusalOf = (request: FastifyRequest, error: unknown) =>
  refusalWords(customerFrame(request).text, error, { workspace: pageScopeOf(request).workspace.name, tool: pageToolName(request) });

export async function registerManagePages(app: FastifyInstance, services: Services): Promise<void> {
  const render = async (request: FastifyRequest, reply: FastifyReply, status: number, extra: Pick<ManageView, "done" | "error" | "seatError"> = {}) => {
    const customer = signedInCustomer(request);
    const scope = pageScopeOf(request);
    const overview = await manageOverview(services, customer, scope, customer.deviceId, pageNamesOf(request));
    if (overview.billingAtProcessor && overview.subscriptions.length > 0) allowFormTargets(reply, BILLING_PORTALS[overview.processor]);
    const view: ManageView = {
      frame: customerFrame(request, "manage"),
      csrf: customer.csrf,
      workspaceName: scope.workspace.name,
      toolName: pageToolName(request),
      // A key-activated session never shows its holder's address (docs/decisions.md, "Hosted pages").
      email: customer.licenceId === null ? customer.email : null,
      overview,
      ...extra,
    };
    return sendPage(reply, status, manageView(view));
  };
  const done = (request: FastifyRequest, reply: FastifyReply, what: Done) => reply.redirect(`${pagePath(pageScopeOf(request), "manage")}?done=${what}`, 303);
  /** Runs a change; a refusal the person can act on shows the page again with it (400). */
  const act = async (request: FastifyRequest, reply: FastifyReply, what: Done, change: (customer: Customer) => Promise<unknown>) => {
    try {
      await change(signedInCustomer(request));
    } catch (error) {
      const message = refusalOf(request, error);
      if (message === null) throw error;
      return render(request, reply, 400, { error: message });
    }
    return done(request, reply, what);
  };

  app.get(MANAGE, { preHandler: requireCustomer }, async (request, reply) => {
    const wanted = (request.query as Record<string, unknown>).done;
    return render(request, reply, 200, typeof wanted === "string" && Object.hasOwn(DONE, wanted) ? { done: wanted as Done } : {});
  });

  app.get<{ Params: IdParams }>(`${MANAGE}/subscriptions/:id/cancel`, { preHandler: requireCustomer }, async (request, reply) => {
    const customer = signedInCustomer(request);
    const subscription = (await manageOverview(services, customer, pageScopeOf(request), customer.deviceId, pageNamesOf(request))).subscriptions.find(
      (s) => s.id === request.params.id,
    );
    if (!subscription) throw notFound(`No subscription "${request.params.id}" of yours.`);
    return sendPage(
      reply,
      200,
      confirmCancelView({ frame: customerFrame(request, "manage"), csrf: customer.csrf, subscription, toolName: pageToolName(request) }),
    );
  });

  app.post<{ Params: IdParams }>(`${MANAGE}/subscriptions/:id/cancel`, { preHandler: requireCustomer }, async (request, reply) =>
    act(request, reply, "cancelled", (customer) => changeOwnSubscription(services, customer, request.params.id, true)),
  );

  app.post<{ Params: IdParams }>(`${MANAGE}/subscriptions/:id/resume`, { preHandler: requireCustomer }, async (request, reply) =>
    act(request, reply, "resumed", (customer) => changeOwnSubscription(services, customer, request.params.id, false)),
  );

  // The processor's billing portal: a session made now for the subscription's customer there (Stripe's comes back here).
  app.post<{ Params: IdParams }>(`${MANAGE}/subscriptions/:id/billing`, { preHandler: requireCustomer }, async (request, reply) => {
    const back = `${services.config.publicUrl}${pagePath(pageScopeOf(request), "manage")}`;
    let portal: { url: string };
    try {
      portal = await openBillingPortal(services, signedInCustomer(request), request.params.id, back);
    } catch (error) {
      const message = refusalOf(request, error);
      if (message === null) throw error;
      return render(request, reply, 400, { error: message });
    }
    return reply.redirect(portal.url, 303);
  });

  app.post<{ Params: IdParams }>(`${MANAGE}/teams/:id/seats`, { preHandler: requireCustomer }, async (request, reply) => {
    const email = formField(request, "email").trim();
    try {
      await assignTeamSeat(services, signedInCustomer(request), request.params.id, email);
    } catch (error) {
      const message = refusalOf(request, error);
      if (message === null) throw error;
      return render(request, reply, 400, { seatError: { team: request.params.id, message, email } });
    }
    return done(request, reply, "seat-assigned");
  });

  app.post<{ Params: IdParams & { seat: string } }>(`${MANAGE}/teams/:id/seats/:seat/revoke`, { preHandler: requireCustomer }, async (request, reply) =>
    act(request, reply, "seat-revoked", (customer) => unassignTeamSeat(services, customer, request.params.id, request.params.seat)),
  );

  app.post<{ Params: IdParams }>(`${MANAGE}/devices/:id/sign-out`, { preHandler: requireCustomer }, async (request, reply) =>
    act(request, reply, "signed-out", (customer) => signOut(services, customer, request.params.id)),
  );
}
