import type { Delivery, WebhookEndpoint } from "../../webhooks/webhook.schema.js";
import type { EventSummary } from "../../webhooks/webhook.service.js";
import { type Html, html } from "../shared/html.js";
import {
  appPage,
  type Crumb,
  copyField,
  csrfField,
  currentSectionPath,
  emptyState,
  envBadge,
  type Frame,
  fieldErrorAttributes,
  fieldErrorNotice,
  formatCount,
  formatMoney,
  notice,
  pageHeading,
  scrollBox,
  time,
} from "../shared/layout.js";
import { dottedName, secondaryId } from "../shared/names.js";
import { deliveryFailureWords, type FailureWords } from "./failure-words.js";

export const RECOVER_CHOICES = [
  { since: "hour", label: "the last hour" },
  { since: "day", label: "the last day" },
  { since: "week", label: "the last week" },
  { since: "month", label: "the last 30 days" },
] as const;
export type RecoverSince = (typeof RECOVER_CHOICES)[number]["since"];

export interface EventTypeChoice {
  type: string;
  description: string;
}

export const webhooksPath = (frame: Frame) => currentSectionPath(frame, "webhooks");
export const endpointPath = (frame: Frame, id: string) => `${webhooksPath(frame)}/${encodeURIComponent(id)}`;
export const eventsPath = (frame: Frame) => currentSectionPath(frame, "events");
export const eventPath = (frame: Frame, id: string) => `${eventsPath(frame)}/${encodeURIComponent(id)}`;
export const deliveryPath = (frame: Frame, id: string) => `${webhooksPath(frame)}/deliveries/${encodeURIComponent(id)}`;
const ms = (iso: string | null) => (iso === null ? null : Date.parse(iso));

/**
 * An endpoint's step in the breadcrumbs: what its owner called it (the description), else
 * its URL, as the endpoint list leads with them; never its id.
 */
export const endpointCrumb = (frame: Frame, e: WebhookEndpoint): Crumb => ({ label: e.description ?? e.url, href: endpointPath(frame, e.id) });
/** The trail of a page below an endpoint's: the endpoint, then the page's own step. */
const belowEndpoint = (frame: Frame, e: WebhookEndpoint, step: string) => ({ trail: [endpointCrumb(frame, e), { label: step }] });

const DISABLED_BECAUSE: Record<string, string> = {
  manual: "turned off by an owner",
  gone: "the receiver answered 410 Gone",
  failing: "5 days without a successful delivery",
};

/** The state of an endpoint in a word, and why when it is not simply working. */
export function endpointState(e: WebhookEndpoint): Html {
  if (!e.enabled) {
    const why = DISABLED_BECAUSE[e.disabled_reason ?? ""] ?? e.disabled_reason ?? "unknown";
    const since = ms(e.disabled_at);
    return html`<span class="badge badge-off">Disabled</span> <span class="state-note">${why}${since === null ? "" : html` · ${time(since)}`}</span>`;
  }
  const failing = ms(e.failing_since);
  if (failing !== null) return html`<span class="badge badge-failing">Failing</span> <span class="state-note">since ${time(failing)}</span>`;
  return html`<span class="badge badge-ok">Enabled</span>`;
}

const eventsOf = (e: WebhookEndpoint) =>
  e.events === null ? html`<span class="muted">All events</span>` : html`${e.events.map((t, i) => html`${i > 0 ? " " : ""}<code>${t}</code>`)}`;

/** What the add and edit forms carry: as typed, with the refusal of one field. */
export interface EndpointForm {
  url?: string;
  checked?: ReadonlySet<string>;
  description?: string;
  error?: { field: "url" | "events" | "description"; message: string };
}

/** The fields an endpoint is added and edited with; `error` tied to the field it names. */
function endpointFields(types: EventTypeChoice[], input: EndpointForm): Html {
  const errorOf = (field: string) => (input.error?.field === field ? input.error.message : undefined);
  return html`${fieldErrorNotice("url", errorOf("url"))}
<label for="url">Endpoint URL</label>
<input id="url" name="url" type="url" maxlength="2048" required${fieldErrorAttributes("url", errorOf("url"))} placeholder="https://example.com/warden/webhooks" value="${input.url ?? ""}">
${fieldErrorNotice("events", errorOf("events"))}
<fieldset class="choices"${errorOf("events") === undefined ? "" : html` aria-describedby="events-error"`}>
<legend>Events to send <span class="muted">(none ticked sends every event, including types added later)</span></legend>
${types.map(
  (t) =>
    html`<label class="choice"><input type="checkbox" name="event:${t.type}" value="1"${input.checked?.has(t.type) ? html` checked` : ""}> <code>${dottedName(t.type)}</code> <span class="muted">${t.description}</span></label>`,
)}
</fieldset>
${fieldErrorNotice("description", errorOf("description"))}
<label for="description">Description <span class="muted">(optional: what it is for, for your own reading)</span></label>
<input id="description" name="description" maxlength="500"${fieldErrorAttributes("description", errorOf("description"))} placeholder="Production fulfilment" value="${input.description ?? ""}">`;
}

function addForm(frame: Frame, types: EventTypeChoice[], input: EndpointForm): Html {
  return html`<form method="post" action="${webhooksPath(frame)}" class="stack">
${csrfField(frame.csrf)}
${endpointFields(types, input)}
<div class="row"><button class="button primary" type="submit">Add endpoint</button></div>
</form>`;
}

export function endpointsView(
  frame: Frame,
  endpoints: WebhookEndpoint[],
  types: EventTypeChoice[],
  form: EndpointForm = {},
  flash: { removed?: boolean } = {},
): Html {
  const env = frame.current?.env ?? "test";
  const table =
    endpoints.length === 0
      ? emptyState(
          `No ${env} endpoints yet`,
          "Add the URL of your server below: Warden sends it a signed POST for every event you choose, and retries for 3 days when it fails.",
        )
      : html`<div class="table-wrap"${scrollBox("Webhook endpoints")}><table>
<thead><tr><th>URL</th><th>Events</th><th>State</th><th>Last success</th><th><span class="sr-only">Open</span></th></tr></thead>
<tbody>${endpoints.map(
          (e) => html`<tr${e.enabled ? "" : html` class="is-revoked"`}>
<td><a class="url" href="${endpointPath(frame, e.id)}">${e.url}</a>${e.description === null ? "" : html`<br><span class="muted">${e.description}</span>`}</td>
<td>${eventsOf(e)}</td>
<td>${endpointState(e)}</td>
<td>${e.last_success_at === null ? html`<span class="muted">Never</span>` : time(ms(e.last_success_at) as number)}</td>
<td class="actions"><a class="button small" href="${endpointPath(frame, e.id)}">Open</a></td>
</tr>`,
        )}</tbody>
</table></div>`;
  return appPage(
    "Webhooks",
    frame,
    html`${pageHeading("Webhooks", html`Endpoints that receive this workspace's ${env} events, signed with Standard Webhooks. ${envBadge(env)}`)}
${flash.removed ? notice("success", html`The endpoint is deleted: Warden sends it nothing more. Its deliveries stay in the <a href="${eventsPath(frame)}">event log</a>.`) : ""}
<section class="panel">
<div class="panel-head"><h2>${endpoints.length === 1 ? "1 endpoint" : `${endpoints.length} endpoints`}</h2></div>
${table}
</section>
<section class="panel">
<div class="panel-head"><h2>Add an endpoint</h2></div>
<p class="panel-text">Its signing secret is shown once, right after you add it; you can reveal it again later with a code we email you.</p>
${addForm(frame, types, form)}
</section>`,
  );
}

type SecretShown = { kind: "added" } | { kind: "revealed" } | { kind: "rotated"; previousExpiresAt: string };

function secretPanel(frame: Frame, endpoint: WebhookEndpoint, secret: string, shown: SecretShown): Html {
  const once = shown.kind !== "revealed";
  const message =
    shown.kind === "added"
      ? html`<strong>Copy the signing secret now.</strong> Put it in your receiver's configuration to verify each delivery's <code>webhook-signature</code>.`
      : shown.kind === "rotated"
        ? html`<strong>Copy the new signing secret now.</strong> Until ${time(Date.parse(shown.previousExpiresAt))} every delivery is signed with it and with the old one, so your receiver keeps verifying whichever it holds; after that only with this one. Put it in your receiver before then.`
        : html`<strong>Keep it secret.</strong> Anyone with it can forge deliveries your receiver will trust.`;
  return html`<section class="panel reveal">
${notice("info", message)}
<p class="panel-text">For <span class="url">${endpoint.url}</span></p>
${copyField("secret", shown.kind === "rotated" ? "New signing secret" : "Signing secret", secret)}
<p><a class="button primary" href="${endpointPath(frame, endpoint.id)}">${once ? "I have stored it · open the endpoint" : "Done · back to the endpoint"}</a></p>
</section>`;
}

export function endpointAddedView(frame: Frame, endpoint: WebhookEndpoint, secret: string): Html {
  return appPage("Endpoint added", frame, html`${pageHeading("Endpoint added")}${secretPanel(frame, endpoint, secret, { kind: "added" })}`, {
    copyButtons: true,
    ...belowEndpoint(frame, endpoint, "Endpoint added"),
  });
}

export function secretRevealedView(frame: Frame, endpoint: WebhookEndpoint, secret: string): Html {
  return appPage("Signing secret", frame, html`${pageHeading("Signing secret")}${secretPanel(frame, endpoint, secret, { kind: "revealed" })}`, {
    copyButtons: true,
    ...belowEndpoint(frame, endpoint, "Signing secret"),
  });
}

export function secretRotatedView(frame: Frame, endpoint: WebhookEndpoint, rotated: { secret: string; previous_secret_expires_at: string }): Html {
  return appPage(
    "Secret rotated",
    frame,
    html`${pageHeading("Signing secret rotated")}${secretPanel(frame, endpoint, rotated.secret, { kind: "rotated", previousExpiresAt: rotated.previous_secret_expires_at })}`,
    { copyButtons: true, ...belowEndpoint(frame, endpoint, "Secret rotated") },
  );
}

/** What a fresh code confirms on an endpoint: revealing its secret, or rotating it. */
export type SecretAction = "reveal" | "rotate";

const SECRET_ACTIONS: Record<SecretAction, { path: string; why: string; button: string }> = {
  reveal: { path: "secret", why: "The signing secret lets anyone forge deliveries", button: "Reveal secret" },
  rotate: {
    path: "secret/rotate",
    why: "Rotating gives the endpoint a new signing secret (the old one keeps signing beside it for 24 hours, then stops)",
    button: "Rotate secret",
  },
};

export function confirmSecretView(frame: Frame, endpoint: WebhookEndpoint, action: SecretAction, error?: string): Html {
  const { path, why, button } = SECRET_ACTIONS[action];
  return appPage(
    "Confirm it is you",
    frame,
    html`${pageHeading("Confirm it is you", html`${why}, so we emailed a fresh 6-digit code to <strong>${frame.email}</strong>.`)}
<section class="panel narrow">
${fieldErrorNotice("code", error)}
${action === "rotate" && endpoint.previous_secret_expires_at !== null ? notice("info", html`This endpoint was rotated less than 24 hours ago: rotating again stops its oldest secret now, and the current one becomes the old one.`) : ""}
<form method="post" action="${endpointPath(frame, endpoint.id)}/${path}" class="stack">
${csrfField(frame.csrf)}
<input type="hidden" name="confirm" value="1">
<label for="code">Confirmation code</label>
<input id="code" name="code" class="code-input" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required${fieldErrorAttributes("code", error, { autofocus: true })} placeholder="123456">
<div class="row"><button class="button primary" type="submit">${button}</button><a class="button" href="${endpointPath(frame, endpoint.id)}">Cancel</a></div>
</form>
</section>`,
    belowEndpoint(frame, endpoint, button),
  );
}

/** Pending after a failed attempt: the schedule tries it again at next_attempt_at. */
const isRetrying = (d: Delivery) => d.status === "pending" && d.attempts.length > 0;

export function deliveryStatus(d: Delivery): Html {
  if (isRetrying(d)) {
    const next = ms(d.next_attempt_at);
    return html`<span class="badge badge-failing">Retrying</span>${next === null ? "" : html` <span class="state-note">next at ${time(next)}</span>`}`;
  }
  const kind = d.status === "succeeded" ? "ok" : d.status === "failed" ? "failing" : "pending";
  return html`<span class="badge badge-${kind}">${d.status === "succeeded" ? "Succeeded" : d.status === "failed" ? "Failed" : "Pending"}</span>`;
}

/** A button that makes one attempt now (the API's resend), on a delivery still being retried. */
const retryNowForm = (frame: Frame, d: Delivery) =>
  html`<form method="post" action="${deliveryPath(frame, d.id)}/resend" class="cell-form">${csrfField(frame.csrf)}<button class="button small" type="submit">Retry now</button></form>`;

export function lastAnswer(d: Delivery): Html {
  const last = d.attempts[d.attempts.length - 1];
  if (!last) return html`<span class="muted">Not tried yet</span>`;
  return attemptOutcome(last);
}

const failureOf = (a: { status_code: number | null; error: string | null }) => deliveryFailureWords({ statusCode: a.status_code, error: a.error });

/** What went wrong in words, the raw detail after it in muted code. */
const failureText = (words: FailureWords) => html`<span class="failure-plain">${words.plain}</span> <code class="raw-detail">${words.raw}</code>`;

/** An attempt's answer: "HTTP 200", or what went wrong. */
function attemptOutcome(a: { status_code: number | null; error: string | null }): Html {
  const failure = failureOf(a);
  return failure === null ? html`HTTP ${a.status_code}` : failureText(failure);
}

/** The customer filter: an address, whose events (and their deliveries) alone are listed. */
export function customerField(customer: string): Html {
  return html`<div class="field"><label for="customer">Customer</label><input id="customer" name="customer" type="email" maxlength="254" placeholder="ada@example.com" value="${customer}"></div>`;
}

export interface EndpointPage {
  endpoint: WebhookEndpoint;
  deliveries: Delivery[];
  /** Each delivery's event (its type, customer and amount), by the event's id. */
  events: ReadonlyMap<string, EventSummary>;
  /** The address of the next page of deliveries, when there is one. */
  next: string | null;
  /** The deliveries' customer filter, as typed; empty: everyone's. */
  customer: string;
  examples: { used: number; limit: number };
  types: EventTypeChoice[];
  flash: { sent?: string; enabled?: boolean; disabled?: boolean; edited?: boolean; recovered?: number };
}

/** An event by its type, linked to its page, its id under it; by its id alone when its type is not known (pruned). */
export function eventName(frame: Frame, id: string, type: string | undefined): Html {
  return type === undefined
    ? html`<a href="${eventPath(frame, id)}"><code>${id}</code></a>`
    : html`<a href="${eventPath(frame, id)}"><code>${dottedName(type)}</code></a>${secondaryId(id)}`;
}

/**
 * An event in a list: its type linked to its page, the customer's address and the amount
 * it names under it (from its payload, or the person it is about), then its id.
 */
export function eventCell(frame: Frame, id: string, summary: EventSummary | undefined): Html {
  if (summary === undefined) return eventName(frame, id, undefined);
  const money = summary.amountCents === null || summary.currency === null ? null : formatMoney(summary.amountCents, summary.currency);
  const gist = [summary.email, money].filter((part): part is string => part !== null).join(" · ");
  return html`<a href="${eventPath(frame, id)}"><code>${dottedName(summary.type)}</code></a>${gist === "" ? "" : html`<span class="event-gist">${gist}</span>`}${secondaryId(id)}`;
}

/** An endpoint deleted since: it has no page, and its URL is not listed any more; its id stays for support. */
export const removedEndpoint = (id: string) => html`<span class="muted">Deleted endpoint</span>${secondaryId(id)}`;

/**
 * Deliveries, newest first, each linked to its event and its attempts; with `endpointUrls`
 * (the list of every endpoint's deliveries) a column says which endpoint each went to.
 */
export function deliveriesTable(
  frame: Frame,
  deliveries: readonly Delivery[],
  next: string | null,
  options: { empty: Html; events: ReadonlyMap<string, EventSummary>; endpointUrls?: ReadonlyMap<string, string>; canRetry?: boolean },
): Html {
  if (deliveries.length === 0) return options.empty;
  const urls = options.endpointUrls;
  const endpointCell = (d: Delivery) => {
    const url = urls?.get(d.endpoint);
    return url === undefined
      ? html`<td>${removedEndpoint(d.endpoint)}</td>`
      : html`<td><a class="url" href="${endpointPath(frame, d.endpoint)}">${url}</a></td>`;
  };
  return html`<div class="table-wrap"${scrollBox("Deliveries")}><table>
<thead><tr><th>Event</th>${urls ? html`<th>Endpoint</th>` : ""}<th>Status</th><th>Attempts</th><th>Last answer</th><th>Created</th><th><span class="sr-only">Open</span></th></tr></thead>
<tbody>${deliveries.map(
    (d) => html`<tr>
<td>${eventCell(frame, d.event, options.events.get(d.event))}</td>
${urls ? endpointCell(d) : ""}
<td>${deliveryStatus(d)}</td>
<td class="num">${d.attempts.length}</td>
<td>${lastAnswer(d)}</td>
<td>${time(Date.parse(d.created_at))}</td>
<td class="actions">${isRetrying(d) && options.canRetry ? retryNowForm(frame, d) : ""}<a class="button small" href="${deliveryPath(frame, d.id)}">Attempts</a></td>
</tr>`,
  )}</tbody>
</table></div>
${next ? html`<p class="pager"><a class="button small" href="${next}">Older deliveries →</a></p>` : ""}`;
}

/** `id` names its field: the page shows the form twice right after the endpoint is enabled, and ids must be unique. */
function recoverForm(frame: Frame, endpoint: WebhookEndpoint, selected: RecoverSince, label: string, id: string): Html {
  return html`<form method="get" action="${endpointPath(frame, endpoint.id)}/recover" class="inline-form">
<div class="field"><label for="${id}">Deliveries from</label>
<select id="${id}" name="since">${RECOVER_CHOICES.map((c) => html`<option value="${c.since}"${c.since === selected ? html` selected` : ""}>${c.label}</option>`)}</select></div>
<button class="button" type="submit">${label}</button>
</form>`;
}

export function endpointView(frame: Frame, page: EndpointPage): Html {
  const { endpoint: e, flash } = page;
  const path = endpointPath(frame, e.id);
  const sent = flash.sent;
  // In a sentence the event is its type alone, linked to its page (which shows its id).
  const sentName = sent ? html`<a href="${eventPath(frame, sent)}"><code>${page.events.get(sent)?.type ?? sent}</code></a>` : "";
  const flashes = html`${sent ? notice("success", html`Test event ${sentName} sent to this endpoint only. Its delivery appears below in a moment.`) : ""}
${flash.edited ? notice("success", "The endpoint is saved. New events go out with its new settings; deliveries already queued go to its URL as it is now.") : ""}
${flash.disabled ? notice("info", "The endpoint is disabled: Warden sends it nothing, and its waiting deliveries are marked failed.") : ""}
${flash.enabled ? notice("success", html`The endpoint is enabled again. <strong>Recover what failed while it was off?</strong> ${recoverForm(frame, e, "day", "Review…", "since-enabled")}`) : ""}
${flash.recovered !== undefined ? notice("success", `${flash.recovered === 1 ? "1 delivery is" : `${formatCount(flash.recovered)} deliveries are`} queued to be sent again now.`) : ""}`;
  const deliveries = deliveriesTable(frame, page.deliveries, page.next, {
    events: page.events,
    empty:
      page.customer === ""
        ? emptyState("No deliveries yet", "Send a test event above to see what your receiver answers.")
        : emptyState(`No deliveries about ${page.customer}`, "Only the deliveries of events about this customer are listed. Clear the filter to see them all."),
    canRetry: e.enabled,
  });
  const exhausted = page.examples.used >= page.examples.limit;
  // Only the types this endpoint listens for: an event of another type never reaches it.
  const testTypes = e.events === null ? page.types : page.types.filter((t) => e.events?.includes(t.type));
  return appPage(
    "Endpoint",
    frame,
    html`${pageHeading("Webhook endpoint", html`<span class="url">${e.url}</span>`)}
${flashes}
<section class="panel">
<dl class="facts">
<dt>State</dt><dd>${endpointState(e)}</dd>
${e.description === null ? "" : html`<dt>Description</dt><dd>${e.description}</dd>`}
<dt>Events</dt><dd>${eventsOf(e)}</dd>
<dt>Last success</dt><dd>${e.last_success_at === null ? html`<span class="muted">Never</span>` : time(Date.parse(e.last_success_at))}</dd>
<dt>Added</dt><dd>${time(Date.parse(e.created_at))}</dd>
${e.previous_secret_expires_at === null ? "" : html`<dt>Signing secret</dt><dd><span class="badge badge-pending">Rotating</span> <span class="state-note">the old secret also signs until ${time(Date.parse(e.previous_secret_expires_at))}</span></dd>`}
<dt>Id</dt><dd><code>${e.id}</code></dd>
</dl>
<div class="row">
<a class="button" href="${path}/edit">Edit…</a>
<form method="post" action="${path}/secret">${csrfField(frame.csrf)}<button class="button" type="submit">Reveal signing secret…</button></form>
<form method="post" action="${path}/secret/rotate">${csrfField(frame.csrf)}<button class="button" type="submit">Rotate signing secret…</button></form>
${
  e.enabled
    ? html`<a class="button danger-outline" href="${path}/disable">Disable…</a>`
    : html`<form method="post" action="${path}/enable">${csrfField(frame.csrf)}<button class="button primary" type="submit">Enable</button></form>`
}
<a class="button danger-outline" href="${path}/delete">Delete…</a>
</div>
</section>
<div class="columns">
<section class="panel">
<div class="panel-head"><h2>Send a test event</h2><span class="panel-sub">${formatCount(page.examples.used)} of ${formatCount(page.examples.limit)} today</span></div>
<p class="panel-text">An example event, signed, logged and retried like a real one, sent to this endpoint only, of a type it listens for.</p>
<form method="post" action="${path}/test" class="inline-form">
${csrfField(frame.csrf)}
<div class="field"><label for="type">Event type</label>
<select id="type" name="type">${testTypes.map((t) => html`<option value="${t.type}">${t.type}</option>`)}</select></div>
<button class="button primary" type="submit"${exhausted || !e.enabled ? html` disabled` : ""}>Send test event</button>
</form>
${exhausted ? html`<p class="hint">Today's example events are used up; the count starts again at midnight UTC.</p>` : ""}
${e.enabled ? "" : html`<p class="hint">Enable the endpoint to send it events.</p>`}
</section>
<section class="panel">
<div class="panel-head"><h2>Recover deliveries</h2></div>
<p class="panel-text">Sends once more every delivery to this endpoint that failed in the window, and if you choose, those still being retried. You see how many of each before anything is sent.</p>
${e.enabled ? recoverForm(frame, e, "day", "Review…", "since") : html`<p class="hint">Enable the endpoint first: Warden sends nothing to a disabled endpoint.</p>`}
</section>
</div>
<section class="panel">
<div class="panel-head"><h2>Deliveries</h2><span class="panel-sub">newest first</span></div>
<form method="get" action="${path}" class="inline-form filters">
${customerField(page.customer)}
<button class="button" type="submit">Filter</button>
</form>
${deliveries}
</section>`,
    { trail: [{ label: endpointCrumb(frame, e).label }] },
  );
}

const deliveriesWord = (n: number) => (n === 1 ? "1 delivery" : `${formatCount(n)} deliveries`);

export function recoverConfirmView(frame: Frame, endpoint: WebhookEndpoint, since: RecoverSince, counts: { failed: number; retrying: number }): Html {
  const label = RECOVER_CHOICES.find((c) => c.since === since)?.label ?? since;
  const path = endpointPath(frame, endpoint.id);
  const { failed, retrying } = counts;
  const nothing = failed === 0 && retrying === 0;
  return appPage(
    "Recover deliveries",
    frame,
    html`${pageHeading("Recover deliveries?", html`<span class="url">${endpoint.url}</span>`)}
<section class="panel narrow">
<p class="panel-text">Deliveries to this endpoint created in ${label}:</p>
<dl class="facts">
<dt>Failed</dt><dd>${deliveriesWord(failed)} <span class="muted">(no attempt left, or failed when the endpoint was disabled)</span></dd>
<dt>Still being retried</dt><dd>${deliveriesWord(retrying)} <span class="muted">(failed so far; Warden tries them again on its schedule)</span></dd>
</dl>
${
  nothing
    ? html`${notice("info", `No delivery to this endpoint created in ${label} failed or is being retried: there is nothing to send again.`)}<p><a class="button" href="${path}">Back to the endpoint</a></p>`
    : html`<form method="post" action="${path}/recover" class="stack">
${csrfField(frame.csrf)}
<input type="hidden" name="since" value="${since}">
${failed > 0 ? html`<p class="panel-text">The failed ones are sent once more, in the order they were created, with their original <code>webhook-id</code> so your receiver can recognise repeats.</p>` : ""}
${
  retrying > 0
    ? html`<label class="choice"><input type="checkbox" name="include_retrying" value="1"${failed === 0 ? html` checked` : ""}> Also try the ${deliveriesWord(retrying)} still being retried, now</label>
<p class="hint">One attempt each; if it fails, its next scheduled retry stays as it was.</p>`
    : ""
}
<div class="row"><button class="button primary" type="submit">Recover</button><a class="button" href="${path}">Cancel</a></div>
</form>`
}
</section>`,
    belowEndpoint(frame, endpoint, "Recover deliveries"),
  );
}

/** Edit an endpoint: the same fields as adding one, filled in. */
export function editEndpointView(frame: Frame, endpoint: WebhookEndpoint, types: EventTypeChoice[], form: EndpointForm): Html {
  const path = endpointPath(frame, endpoint.id);
  return appPage(
    "Edit endpoint",
    frame,
    html`${pageHeading("Edit endpoint", html`<span class="url">${endpoint.url}</span>`)}
<section class="panel">
<form method="post" action="${path}/edit" class="stack">
${csrfField(frame.csrf)}
${endpointFields(types, form)}
<p class="hint">A new URL is checked as when adding an endpoint. Deliveries already queued go to the URL saved here; the signing secret stays the same.</p>
<div class="row"><button class="button primary" type="submit">Save endpoint</button><a class="button" href="${path}">Cancel</a></div>
</form>
</section>`,
    belowEndpoint(frame, endpoint, "Edit endpoint"),
  );
}

/** What disabling or deleting an endpoint does, before it is done. */
export function endpointActionConfirmView(frame: Frame, endpoint: WebhookEndpoint, action: "disable" | "delete", waiting: number): Html {
  const path = endpointPath(frame, endpoint.id);
  const failing =
    waiting === 0
      ? "No delivery is waiting to be sent to it now."
      : action === "disable"
        ? `${deliveriesWord(waiting)} waiting to be sent to it (first attempts and retries) will be marked failed. After enabling it again you can recover them.`
        : `${deliveriesWord(waiting)} waiting to be sent to it (first attempts and retries) will be marked failed, and stay in the log.`;
  const what =
    action === "disable"
      ? html`Warden stops sending events to <span class="url">${endpoint.url}</span> until you enable it again. Events meanwhile are logged but not delivered to it.`
      : html`Warden stops sending events to <span class="url">${endpoint.url}</span> for good. Its deliveries stay in the event log; its signing secret is gone. This cannot be undone.`;
  return appPage(
    action === "disable" ? "Disable endpoint" : "Delete endpoint",
    frame,
    html`${pageHeading(action === "disable" ? "Disable this endpoint?" : "Delete this endpoint?", html`<span class="url">${endpoint.url}</span>`)}
<section class="panel narrow">
<p class="panel-text">${what}</p>
${notice(waiting === 0 ? "info" : "error", failing)}
<form method="post" action="${path}/${action}" class="row">
${csrfField(frame.csrf)}
<button class="button danger" type="submit">${action === "disable" ? "Disable endpoint" : "Delete endpoint"}</button>
<a class="button" href="${path}">Keep it</a>
</form>
</section>`,
    belowEndpoint(frame, endpoint, action === "disable" ? "Disable endpoint" : "Delete endpoint"),
  );
}

export function deliveryView(
  frame: Frame,
  d: Delivery,
  context: { endpoint: WebhookEndpoint | null; eventType: string | undefined },
  flash: { resent?: boolean },
): Html {
  const { endpoint } = context;
  const attempts =
    d.attempts.length === 0
      ? emptyState("Not attempted yet", "The delivery worker picks it up within a few seconds.")
      : html`<ol class="attempts">${d.attempts.map(
          (a, i, _, failure = failureOf(a)) => html`<li class="attempt">
<div class="attempt-head">
<strong>Attempt ${i + 1}</strong>${a.manual ? html` <span class="badge badge-pending">Resent</span>` : ""}
<span>${time(Date.parse(a.attempted_at))}</span>
<span class="muted">${formatCount(a.duration_ms)} ms</span>
${failure === null ? html`<span class="badge badge-ok">HTTP ${a.status_code}</span>` : html`<span class="badge badge-failing">Failed</span>`}
</div>
${failure === null ? "" : html`<p class="attempt-failure">${failureText(failure)}</p>`}
${a.response_body === null || a.response_body === "" ? html`<p class="muted">No answer body.</p>` : html`<pre class="payload" tabindex="0">${a.response_body}</pre>`}
</li>`,
        )}</ol>`;
  const canResend = endpoint?.enabled === true;
  // A delivery has no name: what it carried names it, its id stays under the heading.
  const title = context.eventType === undefined ? "Delivery" : `Delivery of ${context.eventType}`;
  return appPage(
    title,
    frame,
    html`${pageHeading(title, html`<code>${d.id}</code>`)}
${flash.resent ? notice("success", "Resend queued: one more attempt goes out now, with the same webhook-id.") : ""}
<section class="panel">
<dl class="facts">
<dt>Status</dt><dd>${deliveryStatus(d)}</dd>
<dt>Endpoint</dt><dd>${endpoint ? html`<a class="url" href="${endpointPath(frame, endpoint.id)}">${endpoint.url}</a>` : removedEndpoint(d.endpoint)}</dd>
<dt>Event</dt><dd>${eventName(frame, d.event, context.eventType)}</dd>
<dt>Created</dt><dd>${time(Date.parse(d.created_at))}</dd>
<dt>Next retry</dt><dd>${d.next_attempt_at === null ? html`<span class="muted">None</span>` : time(Date.parse(d.next_attempt_at))}</dd>
</dl>
<form method="post" action="${deliveryPath(frame, d.id)}/resend" class="row">
${csrfField(frame.csrf)}
<button class="button primary" type="submit"${canResend ? "" : html` disabled`}>${isRetrying(d) ? "Retry now" : "Resend"}</button>
${canResend ? html`<span class="hint">One more attempt now, with the same webhook-id${d.status === "pending" ? "; its scheduled retries stay as they are" : ""}.</span>` : html`<span class="hint">The endpoint is disabled or removed: enable it to resend.</span>`}
</form>
</section>
<section class="panel">
<div class="panel-head"><h2>Attempts</h2><span class="panel-sub">the first 4 KiB of each answer</span></div>
${attempts}
</section>`,
    endpoint ? belowEndpoint(frame, endpoint, title) : {},
  );
}
