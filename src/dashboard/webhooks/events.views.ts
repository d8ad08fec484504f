import type { Delivery, WebhookEndpoint, WebhookEvent } from "../../webhooks/webhook.schema.js";
import type { EventSummary } from "../../webhooks/webhook.service.js";
import { type Html, html } from "../shared/html.js";
import { appPage, emptyState, envBadge, type Frame, notice, pageHeading, scrollBox, time } from "../shared/layout.js";
import { dottedName } from "../shared/names.js";
import {
  customerField,
  deliveriesTable,
  deliveryPath,
  deliveryStatus,
  type EventTypeChoice,
  endpointPath,
  eventCell,
  eventPath,
  eventsPath,
  lastAnswer,
  removedEndpoint,
} from "./webhooks.views.js";

function tabs(frame: Frame, on: "events" | "deliveries"): Html {
  const tab = (which: "events" | "deliveries", label: string, href: string) =>
    html`<a class="tab" href="${href}"${which === on ? html` aria-current="page"` : ""}>${label}</a>`;
  return html`<nav class="tabs" aria-label="Log">${tab("events", "Events", eventsPath(frame))}${tab("deliveries", "Deliveries", `${eventsPath(frame)}/deliveries`)}</nav>`;
}

/** The time filter's choices; the routes turn one into the API's created_after. */
function withinField(within: string): Html {
  const choices = [
    ["", "Any time"],
    ["hour", "Last hour"],
    ["day", "Last 24 hours"],
    ["week", "Last 7 days"],
    ["month", "Last 30 days"],
  ] as const;
  return html`<div class="field"><label for="within">Created</label>
<select id="within" name="within">${choices.map(([value, label]) => html`<option value="${value}"${value === within ? html` selected` : ""}>${label}</option>`)}</select></div>`;
}

export interface EventsFilter {
  type: string;
  within: string;
  /** A customer's address, as typed; empty: everyone. */
  customer: string;
}

export function eventsView(
  frame: Frame,
  input: {
    events: WebhookEvent[];
    summaries: ReadonlyMap<string, EventSummary>;
    next: string | null;
    filter: EventsFilter;
    types: EventTypeChoice[];
    error?: string;
  },
): Html {
  const env = frame.current?.env ?? "test";
  const { filter } = input;
  const list =
    input.events.length === 0
      ? emptyState(
          filter.customer
            ? `No events about ${filter.customer}`
            : filter.type
              ? `No ${filter.type} events`
              : filter.within
                ? "No events in this time"
                : "No events yet",
          "Events appear here as customers buy, subscribe, refund and dispute; send a test event from a webhook endpoint to see one now.",
        )
      : html`<div class="table-wrap"${scrollBox("Events")}><table>
<thead><tr><th>Event</th><th>Created</th><th><span class="sr-only">Open</span></th></tr></thead>
<tbody>${input.events.map(
          (e) => html`<tr>
<td>${eventCell(frame, e.id, input.summaries.get(e.id) ?? { type: e.type, email: null, amountCents: null, currency: null })}</td>
<td>${time(e.created * 1000)}</td>
<td class="actions"><a class="button small" href="${eventPath(frame, e.id)}">Open</a></td>
</tr>`,
        )}</tbody>
</table></div>
${input.next ? html`<p class="pager"><a class="button small" href="${input.next}">Older events →</a></p>` : ""}`;
  return appPage(
    "Events",
    frame,
    html`${pageHeading("Events", html`Every event of this workspace's ${env} data, listened to or not, newest first. ${envBadge(env)}`)}
${tabs(frame, "events")}
${input.error ? notice("error", input.error) : ""}
<section class="panel">
<form method="get" action="${eventsPath(frame)}" class="inline-form filters">
<div class="field"><label for="type">Type</label>
<select id="type" name="type"><option value="">Every type</option>${input.types.map((t) => html`<option value="${t.type}"${t.type === filter.type ? html` selected` : ""}>${t.type}</option>`)}</select></div>
${withinField(filter.within)}
${customerField(filter.customer)}
<div class="field"><label for="id">Event id</label><input id="id" name="id" maxlength="64" placeholder="evt_…"></div>
<button class="button" type="submit">Filter</button>
</form>
</section>
<section class="panel">${list}</section>`,
  );
}

export interface DeliveriesFilter {
  endpoint: string;
  status: string;
  event: string;
  within: string;
  customer: string;
}

export function deliveriesView(
  frame: Frame,
  input: {
    deliveries: Delivery[];
    events: ReadonlyMap<string, EventSummary>;
    next: string | null;
    filter: DeliveriesFilter;
    endpoints: WebhookEndpoint[];
    error?: string;
  },
): Html {
  const env = frame.current?.env ?? "test";
  const { filter } = input;
  const list = deliveriesTable(frame, input.deliveries, input.next, {
    events: input.events,
    empty: emptyState("No deliveries match", "Deliveries are made for each event to every endpoint listening for its type."),
    endpointUrls: new Map(input.endpoints.map((e) => [e.id, e.url])),
  });
  const option = (value: string, label: string, selected: string) =>
    html`<option value="${value}"${value === selected ? html` selected` : ""}>${label}</option>`;
  return appPage(
    "Deliveries",
    frame,
    html`${pageHeading("Deliveries", html`Each event's delivery to each endpoint, newest first. ${envBadge(env)}`)}
${tabs(frame, "deliveries")}
${input.error ? notice("error", input.error) : ""}
<section class="panel">
<form method="get" action="${eventsPath(frame)}/deliveries" class="inline-form filters">
<div class="field"><label for="endpoint">Endpoint</label>
<select id="endpoint" name="endpoint">${option("", "Every endpoint", filter.endpoint)}${input.endpoints.map((e) => option(e.id, e.url, filter.endpoint))}</select></div>
<div class="field"><label for="status">Status</label>
<select id="status" name="status">${option("", "Any status", filter.status)}${option("pending", "Pending", filter.status)}${option("succeeded", "Succeeded", filter.status)}${option("failed", "Failed", filter.status)}</select></div>
<div class="field"><label for="event">Event id</label><input id="event" name="event" maxlength="64" placeholder="evt_…" value="${filter.event}"></div>
${withinField(filter.within)}
${customerField(filter.customer)}
<button class="button" type="submit">Filter</button>
</form>
</section>
<section class="panel">${list}</section>`,
  );
}

export function eventView(
  frame: Frame,
  input: { event: WebhookEvent; body: string; example: boolean; deliveries: Delivery[]; endpoints: WebhookEndpoint[] },
): Html {
  const { event } = input;
  const urls = new Map(input.endpoints.map((e) => [e.id, e.url]));
  // Pretty-printed for reading; what was signed and sent is the stored text itself.
  const pretty = JSON.stringify(JSON.parse(input.body), null, 2);
  const deliveries =
    input.deliveries.length === 0
      ? emptyState("Delivered nowhere", "No endpoint listened for this event's type when it happened.")
      : html`<div class="table-wrap"${scrollBox("Deliveries of this event")}><table>
<thead><tr><th>Endpoint</th><th>Status</th><th>Attempts</th><th>Last answer</th><th><span class="sr-only">Open</span></th></tr></thead>
<tbody>${input.deliveries.map(
          (d) => html`<tr>
<td>${urls.has(d.endpoint) ? html`<a class="url" href="${endpointPath(frame, d.endpoint)}">${urls.get(d.endpoint)}</a>` : removedEndpoint(d.endpoint)}</td>
<td>${deliveryStatus(d)}</td>
<td class="num">${d.attempts.length}</td>
<td>${lastAnswer(d)}</td>
<td class="actions"><a class="button small" href="${deliveryPath(frame, d.id)}">Attempts</a></td>
</tr>`,
        )}</tbody>
</table></div>`;
  // An event has no name but its type: the type heads the page and ends the breadcrumbs, the id under it.
  return appPage(
    event.type,
    frame,
    html`${pageHeading(event.type, html`<code>${event.id}</code>`)}
<section class="panel">
<dl class="facts">
<dt>Type</dt><dd><code>${dottedName(event.type)}</code>${input.example ? html` <span class="badge badge-pending">Example</span>` : ""}</dd>
<dt>Created</dt><dd>${time(event.created * 1000)}</dd>
</dl>
</section>
<section class="panel">
<div class="panel-head"><h2>Deliveries</h2></div>
${deliveries}
</section>
<section class="panel">
<div class="panel-head"><h2>Payload</h2><span class="panel-sub">the JSON body every endpoint received, indented for reading</span></div>
<pre class="payload" tabindex="0">${pretty}</pre>
</section>`,
  );
}
