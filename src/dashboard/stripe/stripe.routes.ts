// Configure › Stripe, per environment: connect (the endpoint's signing secret and a
// secret key, after a fresh mailed code in both environments: whoever holds the signing
// secret can forge purchases), the URL to paste into Stripe, the last event received and
// how it was handled, disconnect (live: after a fresh code). The use cases are those of
// `warden admin stripe connect|status|disconnect`; the secrets never come back in full.
import type { FastifyInstance } from "fastify";
import type { Services } from "../../services.js";
import { checkStripeSecrets, connectStripe, disconnectStripe, stripeStatus } from "../../stripe/stripe-account.service.js";
import { STRIPE_EVENT_TYPES } from "../../stripe/stripe-ingest.service.js";
import { confirmCodeView, passCodeGate } from "../shared/fresh-code.js";
import { html } from "../shared/html.js";
import { type WorkspacePage, workspacePage } from "../shared/owner-context.js";
import { fieldRefusal, sendPage } from "../shared/page.js";
import { formField } from "../shared/security.js";
import { confirmSecretKeyView, disconnectView, type SecretsForm, stripePath, stripeView } from "./stripe.views.js";

export async function stripeRoutes(app: FastifyInstance, options: { services: Services }): Promise<void> {
  const { services } = options;
  const base = "/w/:workspace/:env/stripe";

  const render = async (page: WorkspacePage, extra: { form?: SecretsForm; flash?: "connected" | "disconnected" } = {}) => {
    const status = await stripeStatus(services, { workspace: page.workspace.slug, env: page.env });
    // The address Stripe must call, on the configured public origin (never the request's Host).
    const webhookUrl = `${services.config.publicUrl}${status.webhookPath}`;
    return stripeView(page.frame, { status, webhookUrl, events: STRIPE_EVENT_TYPES, ...extra });
  };

  app.get(base, async (request, reply) => {
    const page = await workspacePage(services, request, "stripe");
    const flash = (request.query as Record<string, string | undefined>).done;
    return sendPage(reply, 200, await render(page, { flash: flash === "connected" || flash === "disconnected" ? flash : undefined }));
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
      // Bound to both secrets as typed: a code mailed for one pair never stores another.
      const passed = await passCodeGate(services, request, reply, session, {
        confirms: {
          action: `change the Stripe secrets of ${page.workspace.name} (${page.env})`,
          target: [page.workspace.id, page.env, webhookSecret, secretKey],
        },
        page: (error) => confirmSecretKeyView(page.frame, { webhookSecret, secretKey, error }),
      });
      if (!passed) return reply;
      await connectStripe(services, input, session.actor);
      return reply.redirect(`${stripePath(page.frame)}?done=connected`, 303);
    } catch (error) {
      const refusal = fieldRefusal(error);
      if (refusal === null) throw error;
      return sendPage(reply, 400, await render(page, { form: refusal }));
    }
  });

  app.get(`${base}/disconnect`, async (request, reply) => {
    const page = await workspacePage(services, request, "stripe");
    return sendPage(reply, 200, disconnectView(page.frame, page.env));
  });

  app.post(`${base}/disconnect`, async (request, reply) => {
    const page = await workspacePage(services, request, "stripe");
    if (page.env === "live") {
      const passed = await passCodeGate(services, request, reply, page.owner.session, {
        confirms: { action: `disconnect Stripe from ${page.workspace.name} (live)`, target: [page.workspace.id, page.env] },
        page: (error) =>
          confirmCodeView(page.frame, {
            title: "Disconnect Stripe",
            what: html`Disconnecting live Stripe stops every purchase from entitling anyone.`,
            postTo: `${stripePath(page.frame)}/disconnect`,
            fields: {},
            submit: "Disconnect",
            cancel: stripePath(page.frame),
            danger: true,
            error,
          }),
      });
      if (!passed) return reply;
    }
    await disconnectStripe(services, { workspace: page.workspace.slug, env: page.env }, page.owner.session.actor);
    return reply.redirect(`${stripePath(page.frame)}?done=disconnected`, 303);
  });
}
