// The hosted Plans page and the checkout's return: the tool's offers (plans.service.ts),
// a choice posted and answered by a 303 to the environment's processor's checkout (Stripe
// Checkout, or Paddle's hosted checkout: the buy button's use case, `startCheckout`, with
// the signed-in person as buyer when there is one; signed out, the processor asks the
// address), and the success page that says what was bought once the processor's event has
// arrived (Stripe's Checkout Session id, or Paddle's transaction id, in `session_id`).
// Also registers the Trial page and the workspace's branding assets.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { sendPage } from "../dashboard/shared/page.js";
import { allowFormTargets, csrfTokenFor, formField, PageRefusal } from "../dashboard/shared/security.js";
import { stripeLocaleOf } from "../i18n/locales.js";
import { checkoutOutcome, startCheckout } from "../payments/checkout.service.js";
import type { Services } from "../services.js";
import { registerBrandingAssets } from "./branding.routes.js";
import {
  customerFrame,
  customerOf,
  ensureBrowserSecret,
  PAGE_PATH,
  pageLocaleOf,
  pageNamesOf,
  pagePath,
  pageScopeOf,
  pageTextOf,
  pageToolName,
} from "./customer-session.js";
import { findOffer, listOffers, type OfferChoice } from "./plans.service.js";
import { plansView, successView } from "./plans.views.js";
import { refusalWords } from "./refusals.views.js";
import { registerTrialPage } from "./trial.routes.js";

/**
 * Where Stripe Checkout lives. The page's policy names it in `form-action`: browsers
 * apply that to the redirect a form's answer makes, and the answer to a choice is a 303
 * there. (A vendor's custom Checkout domain would need naming here too.)
 */
const STRIPE_CHECKOUT_ORIGIN = "https://checkout.stripe.com";
/**
 * Paddle's hosted checkout is the vendor's default payment link, on a domain of theirs
 * that Warden learns only from the transaction it makes: the policy allows any https
 * address as the redirect's target. The form itself still posts only here, and the
 * address it is sent to is the one Paddle's API answered.
 */
const PADDLE_CHECKOUT_TARGETS = ["https:"];
// The shape every processor's checkout id keeps to (Stripe's `cs_…`, Paddle's `txn_…`):
// anything else is refused before any look-up; the environment's processor checks its own.
const CHECKOUT_ID = /^[a-z]{2,4}_[A-Za-z0-9_]{1,260}$/;

const queryOf = (request: FastifyRequest) => request.query as Record<string, string | undefined>;

export function registerPlanPages(app: FastifyInstance, services: Services): void {
  const plansPage = async (request: FastifyRequest, reply: FastifyReply, extra: { chosen: OfferChoice | null; error?: string }) => {
    const scope = pageScopeOf(request);
    const customer = customerOf(request);
    const offers = await listOffers(services, scope, pageNamesOf(request));
    if (offers.takesPayments) allowFormTargets(reply, offers.processor === "paddle" ? PADDLE_CHECKOUT_TARGETS : [STRIPE_CHECKOUT_ORIGIN]);
    // A link naming a plan that is not on sale (mistyped, retired, another tool's) still shows what is.
    const unknown = extra.chosen !== null && extra.error === undefined && findOffer(offers, extra.chosen) === null;
    return plansView({
      frame: customerFrame(request, "plans"),
      toolName: pageToolName(request),
      workspaceName: scope.workspace.name,
      offers,
      csrf: customer?.csrf ?? csrfTokenFor(ensureBrowserSecret(request, reply)),
      chosen: unknown ? null : extra.chosen,
      ...(unknown ? { error: pageTextOf(request).s("plans.unknownPlan", { plan: extra.chosen?.plan ?? "", tool: pageToolName(request) }) } : {}),
      ...(extra.error === undefined ? {} : { error: extra.error }),
    });
  };

  app.get(`${PAGE_PATH}/plans`, async (request, reply) => {
    const { plan, bundle } = queryOf(request);
    const chosen = typeof plan === "string" && plan !== "" ? { plan, bundle: typeof bundle === "string" && bundle !== "" ? bundle : null } : null;
    return sendPage(reply, 200, await plansPage(request, reply, { chosen }));
  });

  app.post(`${PAGE_PATH}/plans`, async (request, reply) => {
    const scope = pageScopeOf(request);
    const customer = customerOf(request);
    const plan = formField(request, "plan");
    const bundle = formField(request, "bundle");
    const base = pagePath(scope, "");
    try {
      const { url } = await startCheckout(services, {
        workspace: scope.workspace,
        tool: scope.tool,
        product: bundle === "" ? { kind: "tool", id: scope.tool.id } : { kind: "bundle", id: bundle },
        plan,
        env: scope.env,
        // A session from a licence key acts for that licence only: it buys as signed out, and Stripe asks the address.
        buyer: customer && customer.licenceId === null ? customer : null,
        // Built on the configured public origin, never on the request's Host. Stripe puts
        // the session's id in place of {CHECKOUT_SESSION_ID}; for Paddle the vendor's payment
        // link page puts the transaction's (README, Connect Paddle).
        successUrl: `${services.config.publicUrl}${base}checkout/success?session_id={CHECKOUT_SESSION_ID}`,
        cancelUrl: `${services.config.publicUrl}${base}plans`,
        // Stripe Checkout speaks the page's language, and its line item names what was bought as the page does.
        locale: stripeLocaleOf(pageLocaleOf(request)),
        names: pageNamesOf(request),
      });
      return reply.redirect(url, 303);
    } catch (error) {
      const message = refusalWords(pageTextOf(request), error, { workspace: scope.workspace.name, tool: pageToolName(request) });
      if (message === null) throw error;
      return sendPage(reply, 400, await plansPage(request, reply, { chosen: { plan, bundle: bundle === "" ? null : bundle }, error: message }));
    }
  });

  app.get(`${PAGE_PATH}/checkout/success`, async (request, reply) => {
    const scope = pageScopeOf(request);
    const sessionId = queryOf(request).session_id;
    const text = pageTextOf(request);
    if (typeof sessionId !== "string" || !CHECKOUT_ID.test(sessionId)) {
      throw new PageRefusal(400, text.s("plans.checkoutUnknown"), text.s("plans.checkoutUnknownText"));
    }
    const customer = customerOf(request);
    const outcome = await checkoutOutcome(services, {
      workspace: scope.workspace,
      env: scope.env,
      tool: scope.tool,
      checkoutSession: sessionId,
      // Signed in by address, the page tells only that person's purchases.
      viewer: customer && customer.licenceId === null ? customer.personId : null,
      names: pageNamesOf(request),
    });
    if (outcome.state === "pending" && outcome.unanswered !== undefined) {
      request.log.warn(
        { checkout: sessionId, processor: outcome.processor, reason: outcome.unanswered },
        "the processor did not answer about a checkout: shown as pending",
      );
    }
    if (outcome.state === "unknown") throw new PageRefusal(404, text.s("plans.checkoutUnknown"), text.s("plans.checkoutUnknownText"));
    const self = `${pagePath(scope, "checkout/success")}?session_id=${encodeURIComponent(sessionId)}`;
    return sendPage(
      reply,
      outcome.state === "elsewhere" ? 404 : 200,
      successView({ frame: customerFrame(request), toolName: pageToolName(request), outcome, self }),
    );
  });

  registerTrialPage(app, services);
  registerBrandingAssets(app, services);
}
