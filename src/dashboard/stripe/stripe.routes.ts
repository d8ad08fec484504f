// Configure › Stripe, per environment: connect (the endpoint's signing secret, and a
// secret key only after a fresh mailed code), the URL to paste into Stripe, the last
// event received and how it was handled, disconnect. The use cases are those of
// `warden admin stripe connect|status|disconnect`; the secrets never come back in full.
import type { FastifyInstance, FastifyRequest } from "fastify";
import { requestConfirmationCode, verifyConfirmationCode } from "../../owners/owner-sign-in.service.js";
import type { Services } from "../../services.js";
import { checkStripeSecrets, connectStripe, disconnectStripe, stripeStatus } from "../../stripe/stripe-account.service.js";
import { STRIPE_EVENT_TYPES } from "../../stripe/stripe-ingest.service.js";
import { type WorkspacePage, workspacePage } from "../shared/owner-context.js";
import { fieldError, sendPage } from "../shared/page.js";
import { formField } from "../shared/security.js";
import { confirmSecretKeyView, disconnectView, type SecretsForm, stripePath, stripeView } from "./stripe.views.js";

export async function stripeRoutes(app: FastifyInstance, options: { services: Services }): Promise<void> {
  const { services } = options;
  const base = "/w/:workspace/:env/stripe";

  const render = async (request: FastifyRequest, page: WorkspacePage, extra: { form?: SecretsForm; flash?: "connected" | "disconnected" } = {}) => {
    const status = await stripeStatus(services, { workspace: page.workspace.slug, env: page.env });
    // The address Stripe must call is this dashboard's own origin (behind a proxy, as WARDEN_TRUST_PROXY lets Fastify see it).
    const webhookUrl = `${request.protocol}://${request.host}${status.webhookPath}`;
    return stripeView(page.frame, { status, webhookUrl, events: STRIPE_EVENT_TYPES, ...extra });
  };

  app.get(base, async (request, reply) => {
    const page = await workspacePage(services, request, "stripe");
    const flash = (request.query as Record<string, string | undefined>).done;
    return sendPage(reply, 200, await render(request, page, { flash: flash === "connected" || flash === "disconnected" ? flash : undefined }));
  });

  app.post(base, async (request, reply) => {
    const page = await workspacePage(services, request, "stripe");
    const { session } = page.owner;
    const webhookSecret = formField(request, "webhook_secret");
    const secretKey = formField(request, "secret_key").trim();
    const input = { workspace: page.workspace.slug, env: page.env, webhookSecret, ...(secretKey === "" ? {} : { secretKey }) };
    try {
      // Checked before any code is mailed: a mistyped secret is told at once.
      checkStripeSecrets(page.env, input);
      if (secretKey !== "") {
        if (formField(request, "confirm") !== "1") {
          await requestConfirmationCode(services, session, { action: `store a Stripe secret key for ${page.workspace.name} (${page.env})` });
          return sendPage(reply, 200, confirmSecretKeyView(page.frame, { webhookSecret, secretKey }));
        }
        try {
          await verifyConfirmationCode(services, session, formField(request, "code"));
        } catch (error) {
          const message = fieldError(error);
          if (message === null) throw error;
          return sendPage(reply, 400, confirmSecretKeyView(page.frame, { webhookSecret, secretKey, error: message }));
        }
      }
      await connectStripe(services, input, session.actor);
      return reply.redirect(`${stripePath(page.frame)}?done=connected`, 303);
    } catch (error) {
      const message = fieldError(error);
      if (message === null) throw error;
      return sendPage(reply, 400, await render(request, page, { form: { error: message } }));
    }
  });

  app.get(`${base}/disconnect`, async (request, reply) => {
    const page = await workspacePage(services, request, "stripe");
    return sendPage(reply, 200, disconnectView(page.frame, page.env));
  });

  app.post(`${base}/disconnect`, async (request, reply) => {
    const page = await workspacePage(services, request, "stripe");
    await disconnectStripe(services, { workspace: page.workspace.slug, env: page.env }, page.owner.session.actor);
    return reply.redirect(`${stripePath(page.frame)}?done=disconnected`, 303);
  });
}
