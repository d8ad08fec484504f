// Events and deliveries: every event of a workspace environment (by type), every
// delivery (by endpoint, status and event), each keyset-paged with the API's own list
// use cases and cursors, and an event's page with its exact payload and its deliveries.
import type { FastifyInstance, FastifyRequest } from "fastify";
import { toIso } from "../../clock.js";
import { ApiError } from "../../errors/errors.js";
import { describeEventTypes, isEventType } from "../../events/event-types.js";
import type { Services } from "../../services.js";
import { eventSummariesOf, getEvent, listDeliveries, listEndpoints, listEvents } from "../../webhooks/webhook.service.js";
import { contextOf, workspacePage } from "../shared/owner-context.js";
import { sendPage } from "../shared/page.js";
import { PageRefusal } from "../shared/security.js";
import { deliveriesView, eventsView, eventView } from "./events.views.js";
import { eventPath, eventsPath } from "./webhooks.views.js";

const PAGE_SIZE = 25;
const STATUSES = ["pending", "succeeded", "failed"] as const;
type Status = (typeof STATUSES)[number];

const HOUR_MS = 3_600_000;
/** The time filter's choices: created within the last hour, day, week or 30 days. */
const WINDOWS: Record<string, number> = { hour: HOUR_MS, day: 24 * HOUR_MS, week: 7 * 24 * HOUR_MS, month: 30 * 24 * HOUR_MS };

const query = (request: FastifyRequest) => request.query as Record<string, string | undefined>;
const text = (value: string | undefined) => (value ?? "").trim().slice(0, 64);
/** The customer filter: an address is at most 254 characters; a longer one matches nobody, as the API says. */
export function customerOf(q: Record<string, string | undefined>): string {
  const customer = (q.customer ?? "").trim();
  if (customer.length > 254 || /[\u0000-\u001f\u007f]/.test(customer))
    throw new PageRefusal(400, "Request not understood", "A customer is an address of at most 254 characters.");
  return customer;
}

/**
 * The time filter as the API's created_after. A window runs back from the first page's
 * time; its next pages carry that instant (`created_after`), since the cursor is bound to
 * it and "the last hour" a minute later is another list.
 */
function timeFilter(services: Services, q: Record<string, string | undefined>): { within: string; createdAfter: string | undefined } {
  const within = text(q.within);
  if (within === "") return { within, createdAfter: undefined };
  const window = Object.hasOwn(WINDOWS, within) ? WINDOWS[within] : undefined;
  if (window === undefined) throw new PageRefusal(400, "Request not understood", "Choose a time: the last hour, day, week or 30 days.");
  return { within, createdAfter: text(q.created_after) || toIso(services.clock.now() - window) };
}

/** A cursor the API refuses (tampered, or of another filter) is a stale page, not a failure. */
async function paging<T>(list: () => Promise<T>): Promise<T> {
  try {
    return await list();
  } catch (error) {
    if (error instanceof ApiError && error.code === "invalid_parameter") {
      throw new PageRefusal(400, "Request not understood", "This page of the list is out of date or its address was changed. Open the list again.");
    }
    throw error;
  }
}

export async function eventRoutes(app: FastifyInstance, options: { services: Services }): Promise<void> {
  const { services } = options;
  const types = describeEventTypes();
  const base = "/w/:workspace/:env/events";

  app.get(base, async (request, reply) => {
    const page = await workspacePage(services, request, "events");
    const q = query(request);
    const id = text(q.id);
    if (id !== "") return reply.redirect(eventPath(page.frame, id), 303);
    const type = text(q.type);
    if (type !== "" && !isEventType(type)) throw new PageRefusal(400, "Request not understood", `There is no event type "${type}".`);
    const { within, createdAfter } = timeFilter(services, q);
    const customer = customerOf(q);
    const ctx = await contextOf(services, page);
    const listed = await paging(() =>
      listEvents(ctx, { limit: PAGE_SIZE, type: type || undefined, created_after: createdAfter, cursor: q.after, customer: customer || undefined }),
    );
    const summaries = await eventSummariesOf(
      ctx,
      listed.data.map((e) => e.id),
    );
    const kept = { ...(type ? { type } : {}), ...(createdAfter ? { within, created_after: createdAfter } : {}), ...(customer ? { customer } : {}) };
    const next = listed.next_cursor === null ? null : `${eventsPath(page.frame)}?${new URLSearchParams({ ...kept, after: listed.next_cursor })}`;
    return sendPage(reply, 200, eventsView(page.frame, { events: listed.data, summaries, next, filter: { type, within, customer }, types }));
  });

  app.get(`${base}/deliveries`, async (request, reply) => {
    const page = await workspacePage(services, request, "events");
    const ctx = await contextOf(services, page);
    const q = query(request);
    const { within, createdAfter } = timeFilter(services, q);
    const filter = { endpoint: text(q.endpoint), status: text(q.status), event: text(q.event), within, customer: customerOf(q) };
    if (filter.status !== "" && !STATUSES.includes(filter.status as Status))
      throw new PageRefusal(400, "Request not understood", "Choose a status: pending, succeeded or failed.");
    const [listed, endpoints] = await Promise.all([
      paging(() =>
        listDeliveries(ctx, {
          limit: PAGE_SIZE,
          endpoint: filter.endpoint || undefined,
          event: filter.event || undefined,
          status: (filter.status || undefined) as Status | undefined,
          created_after: createdAfter,
          cursor: q.after,
          customer: filter.customer || undefined,
        }),
      ),
      listEndpoints(ctx),
    ]);
    const events = await eventSummariesOf(
      ctx,
      listed.data.map((d) => d.event),
    );
    const kept = { ...Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== "")), ...(createdAfter ? { created_after: createdAfter } : {}) };
    const next = listed.next_cursor === null ? null : `${eventsPath(page.frame)}/deliveries?${new URLSearchParams({ ...kept, after: listed.next_cursor })}`;
    return sendPage(reply, 200, deliveriesView(page.frame, { deliveries: listed.data, events, next, filter, endpoints: endpoints.data }));
  });

  app.get(`${base}/:event`, async (request, reply) => {
    const page = await workspacePage(services, request, "events");
    const ctx = await contextOf(services, page);
    const { event: id } = request.params as { event: string };
    let found: Awaited<ReturnType<typeof getEvent>>;
    try {
      found = await getEvent(ctx, id);
    } catch (error) {
      if (error instanceof ApiError && error.code === "not_found") throw new PageRefusal(404, "Not found", `No event "${id}" in this workspace environment.`);
      throw error;
    }
    // An event goes to a handful of endpoints: one page of its deliveries holds them all.
    const [deliveries, endpoints] = await Promise.all([listDeliveries(ctx, { event: id, limit: 100 }), listEndpoints(ctx)]);
    return sendPage(reply, 200, eventView(page.frame, { ...found, deliveries: deliveries.data, endpoints: endpoints.data }));
  });
}
