// Configure › Webhooks: the endpoints of a workspace environment, each endpoint's page
// (edit, reveal or rotate the secret, enable/disable, delete, test event, recovery, its
// deliveries) and a delivery's page with every attempt. Every action calls the use case
// the API's /webhooks routes call, under the owner as actor, so that it is audited. In
// live, adding, editing, enabling, disabling and deleting an endpoint ask for a fresh
// code (a live endpoint receives every buyer's address); revealing or rotating a secret
// asks in both environments. A new or rotated secret is shown once, on the page the POST
// redirects to (shared/shown-once.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ApiError } from "../../errors/errors.js";
import { describeEventTypes } from "../../events/event-types.js";
import type { Services } from "../../services.js";
import {
  addEndpoint,
  countRecoverable,
  countWaitingDeliveries,
  eventSummariesOf,
  eventTypesOf,
  getDelivery,
  getEndpoint,
  listDeliveries,
  listEndpoints,
  recoverEndpoint,
  removeEndpoint,
  resendDelivery,
  revealSecret,
  rotateSecret,
  sendExample,
  setEnabled,
  updateEndpoint,
} from "../../webhooks/webhook.service.js";
import { confirmCodeView, passCodeGate } from "../shared/fresh-code.js";
import { html } from "../shared/html.js";
import { contextOf, workspacePage } from "../shared/owner-context.js";
import { sendPage } from "../shared/page.js";
import { formField, PageRefusal } from "../shared/security.js";
import { showOnce, takeShown } from "../shared/shown-once.js";
import { customerOf } from "./events.routes.js";
import {
  confirmSecretView,
  deliveryPath,
  deliveryView,
  type EndpointForm,
  editEndpointView,
  endpointActionConfirmView,
  endpointAddedView,
  endpointPath,
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
const FORM_FIELDS = ["url", "events", "description"] as const;
/** A use case's refusal of one of the endpoint form's fields, tied to that field (the URL when it names none). */
const formError = (error: unknown): NonNullable<EndpointForm["error"]> | null => {
  if (!(error instanceof ApiError) || error.code !== "invalid_parameter") return null;
  const field = FORM_FIELDS.find((f) => f === error.param) ?? "url";
  return { field, message: error.message };
};
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

  /** The endpoint form as posted: URL, one checkbox per type (the form parser keeps one value a name), description. */
  function postedEndpoint(request: FastifyRequest) {
    const url = formField(request, "url").trim();
    const chosen = types.map((t) => t.type).filter((type) => formField(request, `event:${type}`) === "1");
    const description = formField(request, "description");
    const form: EndpointForm = { url, checked: new Set(chosen), description };
    const refusal = url === "" ? "Enter the URL Warden should send events to." : url.length > URL_MAX ? `The URL is longer than ${URL_MAX} characters.` : null;
    return { url, chosen, description, form, refusal };
  }

  app.get(base, async (request, reply) => {
    const page = await workspacePage(services, request, "webhooks");
    const { data } = await listEndpoints(await contextOf(services, page));
    return sendPage(reply, 200, endpointsView(page.frame, data, types, {}, { removed: query(request).removed === "1" }));
  });

  app.post(base, async (request, reply) => {
    const page = await workspacePage(services, request, "webhooks");
    const ctx = await contextOf(services, page);
    const { url, chosen, description, form, refusal } = postedEndpoint(request);
    const again = async (status: number, error: NonNullable<EndpointForm["error"]>) =>
      sendPage(reply, status, endpointsView(page.frame, (await listEndpoints(ctx)).data, types, { ...form, error }));
    if (refusal !== null) return again(400, { field: "url", message: refusal });
    if (page.env === "live") {
      const passed = await passCodeGate(services, request, reply, page.owner.session, {
        confirms: { action: `add the live webhook endpoint ${url} to ${page.workspace.name}`, target: [page.workspace.id, page.env, url, ...chosen] },
        page: (error) =>
          confirmCodeView(page.frame, {
            title: "Add endpoint",
            what: html`A live endpoint receives every live event, with your buyers' addresses, at <strong>${url}</strong>.`,
            postTo: webhooksPath(page.frame),
            fields: { url, description, ...Object.fromEntries(chosen.map((type) => [`event:${type}`, "1"])) },
            submit: "Add endpoint",
            cancel: webhooksPath(page.frame),
            error,
          }),
      });
      if (!passed) return reply;
    }
    try {
      const { endpoint, secret } = await addEndpoint(ctx, { url, events: chosen.length === 0 ? undefined : chosen, description });
      const shown = await showOnce(services, page, { kind: "endpoint-added", endpoint: endpoint.id, secret });
      return reply.redirect(`${endpointPath(page.frame, endpoint.id)}/new-secret/${shown}`, 303);
    } catch (error) {
      const refused = formError(error);
      if (refused === null) throw error;
      return again(400, refused);
    }
  });

  // The one page that shows a new endpoint's secret: once, then never again.
  app.get(`${base}/:endpoint/new-secret/:shown`, async (request, reply) => {
    const { page, endpoint } = await openEndpoint(request);
    const kept = await takeShown(services, page, (request.params as { shown: string }).shown, "endpoint-added");
    if (kept.endpoint !== endpoint.id) throw new PageRefusal(404, "Not found", "No such secret for this endpoint.");
    return sendPage(reply, 200, endpointAddedView(page.frame, endpoint, kept.secret));
  });

  app.get(`${base}/:endpoint/edit`, async (request, reply) => {
    const { page, endpoint } = await openEndpoint(request);
    const form: EndpointForm = { url: endpoint.url, checked: new Set(endpoint.events ?? []), description: endpoint.description ?? "" };
    return sendPage(reply, 200, editEndpointView(page.frame, endpoint, types, form));
  });

  app.post(`${base}/:endpoint/edit`, async (request, reply) => {
    const { page, ctx, endpoint } = await openEndpoint(request);
    const { url, chosen, description, form, refusal } = postedEndpoint(request);
    const path = endpointPath(page.frame, endpoint.id);
    if (refusal !== null) return sendPage(reply, 400, editEndpointView(page.frame, endpoint, types, { ...form, error: { field: "url", message: refusal } }));
    // A live endpoint's URL or types decide where buyers' addresses go: as adding one, a fresh code.
    if (page.env === "live") {
      const passed = await passCodeGate(services, request, reply, page.owner.session, {
        confirms: {
          action: `edit the live webhook endpoint ${endpoint.url} in ${page.workspace.name}`,
          target: [page.workspace.id, page.env, endpoint.id, url, description, ...chosen],
        },
        page: (error) =>
          confirmCodeView(page.frame, {
            title: "Edit endpoint",
            what: html`A live endpoint receives every live event it listens for, with your buyers' addresses, at <strong>${url}</strong>.`,
            postTo: `${path}/edit`,
            fields: { url, description, ...Object.fromEntries(chosen.map((type) => [`event:${type}`, "1"])) },
            submit: "Save endpoint",
            cancel: path,
            error,
          }),
      });
      if (!passed) return reply;
    }
    try {
      await updateEndpoint(ctx, endpoint.id, { url, events: chosen.length === 0 ? null : chosen, description });
    } catch (error) {
      const refused = formError(error);
      if (refused === null) throw error;
      return sendPage(reply, 400, editEndpointView(page.frame, endpoint, types, { ...form, error: refused }));
    }
    return reply.redirect(`${path}?edited=1`, 303);
  });

  // Disabling and deleting say first how many waiting deliveries they fail; the POST does it.
  for (const action of ["disable", "delete"] as const) {
    app.get(`${base}/:endpoint/${action}`, async (request, reply) => {
      const { page, ctx, endpoint } = await openEndpoint(request);
      if (action === "disable" && !endpoint.enabled) return reply.redirect(endpointPath(page.frame, endpoint.id), 303);
      return sendPage(reply, 200, endpointActionConfirmView(page.frame, endpoint, action, await countWaitingDeliveries(ctx, endpoint.id)));
    });
  }

  app.post(`${base}/:endpoint/delete`, async (request, reply) => {
    const { page, ctx, endpoint } = await openEndpoint(request);
    const path = endpointPath(page.frame, endpoint.id);
    if (page.env === "live") {
      const passed = await passCodeGate(services, request, reply, page.owner.session, {
        confirms: { action: `delete the live webhook endpoint ${endpoint.url} in ${page.workspace.name}`, target: [page.workspace.id, page.env, endpoint.id] },
        page: (error) =>
          confirmCodeView(page.frame, {
            title: "Delete endpoint",
            what: html`A deleted endpoint receives no live events at <strong>${endpoint.url}</strong> ever again.`,
            postTo: `${path}/delete`,
            fields: {},
            submit: "Delete endpoint",
            cancel: path,
            danger: true,
            error,
          }),
      });
      if (!passed) return reply;
    }
    await removeEndpoint(ctx, endpoint.id);
    return reply.redirect(`${webhooksPath(page.frame)}?removed=1`, 303);
  });

  app.get(`${base}/:endpoint`, async (request, reply) => {
    const { page, ctx, endpoint } = await openEndpoint(request);
    const q = query(request);
    const customer = customerOf(q);
    let deliveries: Awaited<ReturnType<typeof listDeliveries>>;
    try {
      deliveries = await listDeliveries(ctx, { endpoint: endpoint.id, limit: 20, cursor: q.after, customer: customer || undefined });
    } catch (error) {
      if (fieldError(error) === null) throw error;
      throw new PageRefusal(400, "Request not understood", "This page of deliveries is out of date. Open the endpoint again.");
    }
    // The events listed (type, customer, amount), and the test event just sent (named by its type in the notice).
    const events = await eventSummariesOf(ctx, [...deliveries.data.map((d) => d.event), ...(q.sent ? [q.sent] : [])]);
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
        events,
        next: deliveries.next_cursor === null ? null : `${path}?${new URLSearchParams({ ...(customer ? { customer } : {}), after: deliveries.next_cursor })}`,
        customer,
        examples: { used: examples.used, limit: examples.limit },
        types,
        flash: {
          sent: q.sent,
          edited: q.edited === "1",
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
    const { page, endpoint } = opened;
    const rotated = await rotateSecret(opened.ctx, endpoint.id);
    const shown = await showOnce(services, page, {
      kind: "secret-rotated",
      endpoint: endpoint.id,
      secret: rotated.secret,
      previousExpiresAt: rotated.previous_secret_expires_at,
    });
    return reply.redirect(`${endpointPath(page.frame, endpoint.id)}/rotated-secret/${shown}`, 303);
  });

  app.get(`${base}/:endpoint/rotated-secret/:shown`, async (request, reply) => {
    const { page, endpoint } = await openEndpoint(request);
    const kept = await takeShown(services, page, (request.params as { shown: string }).shown, "secret-rotated");
    if (kept.endpoint !== endpoint.id) throw new PageRefusal(404, "Not found", "No such secret for this endpoint.");
    return sendPage(reply, 200, secretRotatedView(page.frame, endpoint, { secret: kept.secret, previous_secret_expires_at: kept.previousExpiresAt }));
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
                : html`A disabled endpoint receives no live events at <strong>${endpoint.url}</strong> until it is enabled again; what waits to be sent to it is marked failed.`,
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
      sent = await sendExample(ctx, type, { endpoint: endpoint.id });
    } catch (error) {
      const message = fieldError(error);
      if (message === null) throw error;
      throw new PageRefusal(400, "Request not understood", message);
    }
    return reply.redirect(`${endpointPath(page.frame, endpoint.id)}?sent=${encodeURIComponent(sent.event.id)}`, 303);
  });

  // A GET shows how many deliveries recovery would resend; only the POST resends them.
  app.get(`${base}/:endpoint/recover`, async (request, reply) => {
    const { page, ctx, endpoint } = await openEndpoint(request);
    const since = sinceOf(query(request).since);
    if (!endpoint.enabled)
      throw new PageRefusal(400, "Endpoint disabled", "Enable the endpoint before recovering its deliveries: Warden sends nothing to a disabled endpoint.");
    const counts = await countRecoverable(ctx, endpoint.id);
    return sendPage(reply, 200, recoverConfirmView(page.frame, endpoint, since, { failed: counts[since], retrying: counts.retrying[since] }));
  });

  app.post(`${base}/:endpoint/recover`, async (request, reply) => {
    const { page, ctx, endpoint } = await openEndpoint(request);
    const since = sinceOf(formField(request, "since"));
    let queued: number;
    try {
      ({ queued } = await recoverEndpoint(ctx, endpoint.id, since, { includeRetrying: formField(request, "include_retrying") === "1" }));
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
    const { page, ctx, delivery, endpoint } = await openDelivery(request);
    const eventType = (await eventTypesOf(ctx, [delivery.event])).get(delivery.event);
    return sendPage(reply, 200, deliveryView(page.frame, delivery, { endpoint, eventType }, { resent: query(request).resent === "1" }));
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
