// Configure › Payments, per environment: which processor is connected (Stripe, Paddle or
// none yet). Paddle's part (paddle.views.ts): connect (the destination's secret key and an
// API key, after a fresh mailed code as Stripe's), disconnect (live: after a fresh code),
// its last notification, the plans' Paddle prices (each edited on its plan's page); the use
// cases of `warden admin paddle connect|status|disconnect`. Stripe's: connect (the endpoint's signing secret and a
// secret key, after a fresh mailed code in both environments: whoever holds the signing
// secret can forge purchases), the URL to paste into Stripe, the last event received and
// how it was handled, reconcile with Stripe (a dry run or for real; the run goes on after
// the answer, its row tells how far it got), disconnect (live: after a fresh code). The
// use cases are those of `warden admin stripe connect|status|reconcile|disconnect`; the
// secrets never come back in full.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { checkPaddleSecrets, connectPaddle, disconnectPaddle, paddleStatus, paddleWebhookPath } from "../../paddle/paddle-account.service.js";
import { PADDLE_EVENT_TYPES } from "../../paddle/paddle-objects.js";
import { paddleLinksOfEnv } from "../../paddle/paddle-plan-link.service.js";
import { connectedProcessor } from "../../payments/processors.js";
import type { Services } from "../../services.js";
import { checkStripeSecrets, connectStripe, disconnectStripe, stripeEventHistory, stripeStatus } from "../../stripe/stripe-account.service.js";
import { STRIPE_EVENT_TYPES } from "../../stripe/stripe-ingest.service.js";
import { findReconcile, listReconciles, startReconcile } from "../../stripe/stripe-reconcile.service.js";
import { planPath } from "../catalogue/plans.views.js";
import { confirmCodeView, passCodeGate } from "../shared/fresh-code.js";
import { html } from "../shared/html.js";
import { type WorkspacePage, workspacePage } from "../shared/owner-context.js";
import { fieldRefusal, sendPage } from "../shared/page.js";
import { formField } from "../shared/security.js";
import { type PaddleSecretsForm, paddleDisconnectView } from "./paddle.views.js";
import { reconcilePanel } from "./reconcile.views.js";
import { confirmSecretKeyView, disconnectView, type SecretsForm, stripeEventsView, stripePath, stripeView } from "./stripe.views.js";
import { reconcileErrorWords } from "./stripe-error-words.js";

const FLASHES = ["connected", "disconnected", "paddle-connected", "paddle-disconnected"] as const;
type Flash = (typeof FLASHES)[number];

export async function stripeRoutes(app: FastifyInstance, options: { services: Services }): Promise<void> {
  const { services } = options;
  const base = "/w/:workspace/:env/stripe";

  const render = async (
    page: WorkspacePage,
    extra: { form?: SecretsForm; paddleForm?: PaddleSecretsForm; flash?: Flash; run?: string; reconcileError?: string } = {},
  ) => {
    const scope = { workspace: page.workspace.slug, env: page.env };
    const [status, paddle, paddleLinks, processor] = await Promise.all([
      stripeStatus(services, scope),
      paddleStatus(services, scope),
      paddleLinksOfEnv(services, scope),
      connectedProcessor(services, { workspaceId: page.workspace.id, env: page.env }),
    ]);
    // The address Stripe must call, on the configured public origin (never the request's Host).
    const webhookUrl = `${services.config.publicUrl}${status.webhookPath}`;
    const runs = await listReconciles(services, scope);
    const asked = extra.run === undefined ? null : await findReconcile(services, { ...scope, id: extra.run }).catch(() => null);
    const reconcile = reconcilePanel(page.frame, {
      canRead: status.connection?.secretKey != null,
      runs,
      shown: asked ?? runs[0] ?? null,
      ...(extra.reconcileError ? { error: extra.reconcileError } : {}),
    });
    // The newest run failed on the key stored now: "can act in Stripe" would be a promise Stripe does not keep.
    const newest = runs[0];
    const keyRefusedAt =
      newest?.status === "failed" &&
      newest.error !== null &&
      reconcileErrorWords(newest.error).keyRefused &&
      (status.connection?.updatedAt ?? Number.POSITIVE_INFINITY) <= (newest.finishedAt ?? newest.startedAt)
        ? (newest.finishedAt ?? newest.startedAt)
        : null;
    const { paddleForm, ...rest } = extra;
    return stripeView(page.frame, {
      status,
      webhookUrl,
      events: STRIPE_EVENT_TYPES,
      ...rest,
      reconcile,
      keyRefusedAt,
      processor,
      paddle: {
        path: stripePath(page.frame),
        csrf: page.frame.csrf,
        ...(paddleForm ? { form: paddleForm } : {}),
        planPath: (link) => planPath(page.frame, { kind: link.productKind, id: link.productId }, link.planId),
        status: paddle,
        webhookUrl: `${services.config.publicUrl}${paddleWebhookPath(page.workspace.slug)}`,
        links: paddleLinks,
        events: PADDLE_EVENT_TYPES,
      },
    });
  };

  /** Either processor's disconnect: in live, only with a fresh code (false: the confirmation page was sent); in test, at once. */
  const liveDisconnectConfirmed = async (page: WorkspacePage, request: FastifyRequest, reply: FastifyReply, name: "Stripe" | "Paddle", postTo: string) =>
    page.env !== "live" ||
    passCodeGate(services, request, reply, page.owner.session, {
      confirms: { action: `disconnect ${name} from ${page.workspace.name} (live)`, target: [page.workspace.id, page.env] },
      page: (error) =>
        confirmCodeView(page.frame, {
          title: `Disconnect ${name}`,
          what: html`Disconnecting live ${name} stops every purchase from entitling anyone.`,
          postTo,
          fields: {},
          submit: "Disconnect",
          cancel: stripePath(page.frame),
          danger: true,
          error,
        }),
    });

  app.get(`${base}/events`, async (request, reply) => {
    const page = await workspacePage(services, request, "stripe");
    const query = request.query as Record<string, string | undefined>;
    const outcome = query.outcome ?? "";
    const history = await stripeEventHistory(services, { workspace: page.workspace.slug, env: page.env, outcome, cursor: query.cursor });
    const next = history.nextCursor && `${stripePath(page.frame)}/events?${new URLSearchParams({ outcome, cursor: history.nextCursor })}`;
    return sendPage(reply, 200, stripeEventsView(page.frame, { events: history.data, outcome, next }));
  });

  app.get(base, async (request, reply) => {
    const page = await workspacePage(services, request, "stripe");
    const query = request.query as Record<string, string | undefined>;
    const flash = FLASHES.find((f) => f === query.done);
    return sendPage(reply, 200, await render(page, { ...(flash ? { flash } : {}), ...(query.run ? { run: query.run } : {}) }));
  });

  app.post(`${base}/reconcile`, async (request, reply) => {
    const page = await workspacePage(services, request, "stripe");
    const dryRun = formField(request, "dry_run") !== "0";
    try {
      const started = await startReconcile(services, { workspace: page.workspace.slug, env: page.env, dryRun }, page.owner.session.actor);
      // The run goes on after this answer; the page reads its row.
      started.done.catch((error: unknown) => request.log.warn({ err: error, reconcile: started.id }, "a reconcile with Stripe failed"));
      return reply.redirect(`${stripePath(page.frame)}?run=${started.id}#reconcile`, 303);
    } catch (error) {
      const refusal = fieldRefusal(error);
      if (refusal === null) throw error;
      const message = refusal.error;
      return sendPage(reply, 400, await render(page, { reconcileError: message }));
    }
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
    if (!(await liveDisconnectConfirmed(page, request, reply, "Stripe", `${stripePath(page.frame)}/disconnect`))) return reply;
    await disconnectStripe(services, { workspace: page.workspace.slug, env: page.env }, page.owner.session.actor);
    return reply.redirect(`${stripePath(page.frame)}?done=disconnected`, 303);
  });

  // Paddle's secrets, as Stripe's: checked before any code is mailed, then stored only with
  // a fresh code bound to both as typed (whoever holds the secret key can forge purchases).
  app.post(`${base}/paddle`, async (request, reply) => {
    const page = await workspacePage(services, request, "stripe");
    const { session } = page.owner;
    const webhookSecret = formField(request, "webhook_secret");
    const apiKey = formField(request, "api_key").trim();
    const input = { workspace: page.workspace.slug, env: page.env, webhookSecret, ...(apiKey === "" ? {} : { apiKey }) };
    try {
      checkPaddleSecrets(page.env, input);
      const passed = await passCodeGate(services, request, reply, session, {
        confirms: {
          action: `change the Paddle secrets of ${page.workspace.name} (${page.env})`,
          target: [page.workspace.id, page.env, webhookSecret, apiKey],
        },
        page: (error) =>
          confirmCodeView(page.frame, {
            title: "Confirm it is you",
            what: html`Whoever holds the destination's secret key can make purchases up, and an API key can take payments and refund them.`,
            postTo: `${stripePath(page.frame)}/paddle`,
            fields: { webhook_secret: webhookSecret, api_key: apiKey },
            submit: "Save the secrets",
            cancel: stripePath(page.frame),
            ...(error ? { error } : {}),
          }),
      });
      if (!passed) return reply;
      await connectPaddle(services, input, session.actor);
      return reply.redirect(`${stripePath(page.frame)}?done=paddle-connected`, 303);
    } catch (error) {
      const refusal = fieldRefusal(error);
      if (refusal === null) throw error;
      return sendPage(reply, 400, await render(page, { paddleForm: refusal }));
    }
  });

  app.get(`${base}/paddle/disconnect`, async (request, reply) => {
    const page = await workspacePage(services, request, "stripe");
    return sendPage(reply, 200, paddleDisconnectView(page.frame, stripePath(page.frame), page.env));
  });

  app.post(`${base}/paddle/disconnect`, async (request, reply) => {
    const page = await workspacePage(services, request, "stripe");
    if (!(await liveDisconnectConfirmed(page, request, reply, "Paddle", `${stripePath(page.frame)}/paddle/disconnect`))) return reply;
    await disconnectPaddle(services, { workspace: page.workspace.slug, env: page.env }, page.owner.session.actor);
    return reply.redirect(`${stripePath(page.frame)}?done=paddle-disconnected`, 303);
  });
}
