// Configure › Webhooks: the endpoints of a workspace environment, each endpoint's page
// (reveal or rotate the secret, enable/disable, test event, recovery, its deliveries) and a delivery's page
// with every attempt. Every action calls the use case the API's /webhooks routes call,
// under the owner as actor, so that it is audited. In live, adding, enabling and
// disabling an endpoint ask for a fresh code (a new endpoint receives every buyer's
// address); revealing or rotating a secret asks in both environments.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ApiError } from "../../errors/errors.js";
import { describeEventTypes } from "../../events/event-types.js";
import type { Services } from "../../services.js";
import {
  addEndpoint,
  countRecoverable,
  getDelivery,
  getEndpoint,
  listDeliveries,
  listEndpoints,
  recoverEndpoint,
  resendDelivery,
  revealSecret,
  rotateSecret,
  sendExample,
  setEnabled,
} from "../../webhooks/webhook.service.js";
import { confirmCodeView, passCodeGate } from "../shared/fresh-code.js";
import { html } from "../shared/html.js";
import { contextOf, workspacePage } from "../shared/owner-context.js";
import { sendPage } from "../shared/page.js";
import { formField, PageRefusal } from "../shared/security.js";
import {
  confirmSecretView,
  deliveryPath,
  deliveryView,
  endpointAddedView,
  endpointsView,
  endpointView,
  RECOVER_CHOICES,
  type RecoverSince,
  recoverConfirmView,
  type SecretAction,
  secretRevealedView,
  secretRotatedView,
  webhooksPath,
} from "./webhooks.views.js";

const fieldError = (error: unknown) => (error instanceof ApiError && error.code === "invalid_parameter" ? error.message : null);
const notFoundError = (error: unknown) => error instanceof ApiError && error.code === "not_found";

const query = (request: FastifyRequest) => request.query as Record<string, string | undefined>;

// As the API's body schema: a URL of at most 2048 characters.
const URL_MAX = 2048;

function sinceOf(value: string | undefined): RecoverSince {
  const found = RECOVER_CHOICES.find((c) => c.since === value);
  if (!found) throw new PageRefusal(400, "Request not understood", "Choose a window to recover: the last hour, day, week or 30 days.");
  return found.since;
}

export async function webhookRoutes(app: FastifyInstance, options: { services: Services }): Promise<void> {
  const { services } = options;
  const types = describeEventTypes();
  const base = "/w/:workspace/:env/webhooks";

  /** The endpoint a page's address names, in the workspace environment on screen; 404 as the API's. */
  async function openEndpoint(request: FastifyRequest) {
    const page = await workspacePage(services, request, "webhooks");
    const ctx = await contextOf(services, page);
    const { endpoint: id } = request.params as { endpoint: string };
    try {
      return { page, ctx, endpoint: await getEndpoint(ctx, id) };
    } catch (error) {
      if (notFoundError(error)) throw new PageRefusal(404, "Not found", "No such webhook endpoint in this workspace environment.");
      throw error;
    }
  }

  app.get(base, async (request, reply) => {
    const page = await workspacePage(services, request, "webhooks");
    const { data } = await listEndpoints(await contextOf(services, page));
    return sendPage(reply, 200, endpointsView(page.frame, data, types));
  });

  app.post(base, async (request, reply) => {
    const page = await workspacePage(services, request, "webhooks");
    const ctx = await contextOf(services, page);
    const url = formField(request, "url").trim();
    // One checkbox per type, each its own field (the form parser keeps one value a name).
    const chosen = types.map((t) => t.type).filter((type) => formField(request, `event:${type}`) === "1");
    const again = async (status: number, error: string) =>
      sendPage(reply, status, endpointsView(page.frame, (await listEndpoints(ctx)).data, types, { url, checked: new Set(chosen), error }));
    if (url === "") return again(400, "Enter the URL Warden should send events to.");
    if (url.length > URL_MAX) return again(400, `The URL is longer than ${URL_MAX} characters.`);
    if (page.env === "live") {
      const passed = await passCodeGate(services, request, reply, page.owner.session, {
        confirms: { action: `add the live webhook endpoint ${url} to ${page.workspace.name}`, target: [page.workspace.id, page.env, url, ...chosen] },
        page: (error) =>
          confirmCodeView(page.frame, {
            title: "Add endpoint",
            what: html`A live endpoint receives every live event, with your buyers' addresses, at <strong>${url}</strong>.`,
            postTo: webhooksPath(page.frame),
            fields: { url, ...Object.fromEntries(chosen.map((type) => [`event:${type}`, "1"])) },
            submit: "Add endpoint",
            cancel: webhooksPath(page.frame),
            error,
          }),
      });
      if (!passed) return reply;
    }
    try {
      const { endpoint, secret } = await addEndpoint(ctx, { url, events: chosen.length === 0 ? undefined : chosen });
      // The secret is in this answer, not after a redirect: no reload or history entry shows it again.
      return sendPage(reply, 201, endpointAddedView(page.frame, endpoint, secret));
    } catch (error) {
      const message = fieldError(error);
      if (message === null) throw error;
      return again(400, message);
    }
  });

  app.get(`${base}/:endpoint`, async (request, reply) => {
    const { page, ctx, endpoint } = await openEndpoint(request);
    const q = query(request);
    let deliveries: Awaited<ReturnType<typeof listDeliveries>>;
    try {
      deliveries = await listDeliveries(ctx, { endpoint: endpoint.id, limit: 20, cursor: q.after });
    } catch (error) {
      if (fieldError(error) === null) throw error;
      throw new PageRefusal(400, "Request not understood", "This page of deliveries is out of date. Open the endpoint again.");
    }
    const usage = await services.limits.readDailyUsage(services.db, { workspaceId: page.workspace.id, env: page.env }, services.clock.now());
    const examples = usage.find((u) => u.what.startsWith("Example webhook events")) ?? { used: 0, limit: 0 };
    const recovered = q.recovered === undefined ? undefined : Number.parseInt(q.recovered, 10);
    const path = `${webhooksPath(page.frame)}/${encodeURIComponent(endpoint.id)}`;
    return sendPage(
      reply,
      200,
      endpointView(page.frame, {
        endpoint,
        deliveries: deliveries.data,
        next: deliveries.next_cursor === null ? null : `${path}?after=${encodeURIComponent(deliveries.next_cursor)}`,
        examples: { used: examples.used, limit: examples.limit },
        types,
        flash: {
          sent: q.sent,
          to: q.to === undefined ? undefined : Number.parseInt(q.to, 10),
          enabled: q.enabled === "1",
          disabled: q.disabled === "1",
          recovered: recovered !== undefined && Number.isSafeInteger(recovered) ? recovered : undefined,
        },
      }),
    );
  });

  /**
   * Revealing or rotating the secret asks for a fresh mailed code, as creating a live key
   * does: the first POST mails it, the second (confirm=1) checks it. Answers whether the
   * code was good, having sent the page to show otherwise.
   */
  async function confirmed(request: FastifyRequest, reply: FastifyReply, opened: Awaited<ReturnType<typeof openEndpoint>>, action: SecretAction) {
    const { page, endpoint } = opened;
    const what = action === "reveal" ? "reveal the signing secret" : "rotate the signing secret";
    return passCodeGate(services, request, reply, page.owner.session, {
      confirms: { action: `${what} of ${endpoint.url} in ${page.workspace.name} (${page.env})`, target: [page.workspace.id, page.env, endpoint.id] },
      page: (error) => confirmSecretView(page.frame, endpoint, action, error),
    });
  }

  app.post(`${base}/:endpoint/secret`, async (request, reply) => {
    const opened = await openEndpoint(request);
    if (!(await confirmed(request, reply, opened, "reveal"))) return reply;
    const { secret } = await revealSecret(opened.ctx, opened.endpoint.id);
    return sendPage(reply, 200, secretRevealedView(opened.page.frame, opened.endpoint, secret));
  });

  // The new secret is in the answer to the POST, as a new endpoint's is: no GET shows it.
  app.post(`${base}/:endpoint/secret/rotate`, async (request, reply) => {
    const opened = await openEndpoint(request);
    if (!(await confirmed(request, reply, opened, "rotate"))) return reply;
    const rotated = await rotateSecret(opened.ctx, opened.endpoint.id);
    return sendPage(reply, 200, secretRotatedView(opened.page.frame, opened.endpoint, rotated));
  });

  for (const [action, enabled] of [
    ["enable", true],
    ["disable", false],
  ] as const) {
    app.post(`${base}/:endpoint/${action}`, async (request, reply) => {
      const { page, ctx, endpoint } = await openEndpoint(request);
      const path = `${webhooksPath(page.frame)}/${encodeURIComponent(endpoint.id)}`;
      // Enabling a live endpoint sends it every live event again; disabling one silences the vendor's own server.
      if (page.env === "live") {
        const passed = await passCodeGate(services, request, reply, page.owner.session, {
          confirms: {
            action: `${action} the live webhook endpoint ${endpoint.url} in ${page.workspace.name}`,
            target: [page.workspace.id, page.env, endpoint.id],
          },
          page: (error) =>
            confirmCodeView(page.frame, {
              title: enabled ? "Enable endpoint" : "Disable endpoint",
              what: enabled
                ? html`An enabled live endpoint receives every live event, with your buyers' addresses, at <strong>${endpoint.url}</strong>.`
                : html`A disabled endpoint receives no live events at <strong>${endpoint.url}</strong> until it is enabled again.`,
              postTo: `${path}/${action}`,
              fields: {},
              submit: enabled ? "Enable" : "Disable",
              cancel: path,
              danger: !enabled,
              error,
            }),
        });
        if (!passed) return reply;
      }
      await setEnabled(ctx, endpoint.id, enabled);
      return reply.redirect(`${path}?${enabled ? "enabled" : "disabled"}=1`, 303);
    });
  }

  app.post(`${base}/:endpoint/test`, async (request, reply) => {
    const { page, ctx, endpoint } = await openEndpoint(request);
    const type = formField(request, "type");
    let sent: Awaited<ReturnType<typeof sendExample>>;
    try {
      sent = await sendExample(ctx, type);
    } catch (error) {
      const message = fieldError(error);
      if (message === null) throw error;
      throw new PageRefusal(400, "Request not understood", message);
    }
    return reply.redirect(
      `${webhooksPath(page.frame)}/${encodeURIComponent(endpoint.id)}?sent=${encodeURIComponent(sent.event.id)}&to=${sent.deliveries}`,
      303,
    );
  });

  // A GET shows how many deliveries recovery would resend; only the POST resends them.
  app.get(`${base}/:endpoint/recover`, async (request, reply) => {
    const { page, ctx, endpoint } = await openEndpoint(request);
    const since = sinceOf(query(request).since);
    if (!endpoint.enabled)
      throw new PageRefusal(400, "Endpoint disabled", "Enable the endpoint before recovering its deliveries: Warden sends nothing to a disabled endpoint.");
    return sendPage(reply, 200, recoverConfirmView(page.frame, endpoint, since, (await countRecoverable(ctx, endpoint.id))[since]));
  });

  app.post(`${base}/:endpoint/recover`, async (request, reply) => {
    const { page, ctx, endpoint } = await openEndpoint(request);
    const since = sinceOf(formField(request, "since"));
    let queued: number;
    try {
      ({ queued } = await recoverEndpoint(ctx, endpoint.id, since));
    } catch (error) {
      const message = fieldError(error);
      if (message === null) throw error;
      throw new PageRefusal(400, "Endpoint disabled", message);
    }
    return reply.redirect(`${webhooksPath(page.frame)}/${encodeURIComponent(endpoint.id)}?recovered=${queued}`, 303);
  });

  /** The delivery a page's address names, with its endpoint (null once removed). */
  async function openDelivery(request: FastifyRequest) {
    const page = await workspacePage(services, request, "webhooks");
    const ctx = await contextOf(services, page);
    const { delivery: id } = request.params as { delivery: string };
    try {
      const delivery = await getDelivery(ctx, id);
      const endpoint = await getEndpoint(ctx, delivery.endpoint).catch((error: unknown) => {
        if (notFoundError(error)) return null;
        throw error;
      });
      return { page, ctx, delivery, endpoint };
    } catch (error) {
      if (notFoundError(error)) throw new PageRefusal(404, "Not found", "No such delivery in this workspace environment.");
      throw error;
    }
  }

  app.get(`${base}/deliveries/:delivery`, async (request, reply) => {
    const { page, delivery, endpoint } = await openDelivery(request);
    return sendPage(reply, 200, deliveryView(page.frame, delivery, endpoint, { resent: query(request).resent === "1" }));
  });

  app.post(`${base}/deliveries/:delivery/resend`, async (request, reply) => {
    const { page, ctx, delivery } = await openDelivery(request);
    try {
      await resendDelivery(ctx, delivery.id);
    } catch (error) {
      const message = fieldError(error);
      if (message === null) throw error;
      throw new PageRefusal(400, "Cannot resend yet", message);
    }
    return reply.redirect(`${deliveryPath(page.frame, delivery.id)}?resent=1`, 303);
  });
}
