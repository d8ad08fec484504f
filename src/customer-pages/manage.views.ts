// The Manage page: the tool's meters (used of the allowance, credits left, the reset, a
// way to buy more), subscriptions (renewal, cancel at the period's end and its undo, the
// billing portal), licences with their keys to copy, trials and grants with their ends,
// a team purchase's seats, devices (the one the page was opened from marked).
// Purchases are panels of facts rather than table rows, so that they read at 390 px.
import { type Html, html } from "../dashboard/shared/html.js";
import {
  copyField,
  csrfField,
  emptyState,
  fieldErrorAttributes,
  fieldErrorNotice,
  formatCount,
  formatMoney,
  notice,
  time,
} from "../dashboard/shared/layout.js";
import { type CustomerFrame, customerPage } from "./layout.js";
import type { ManagedGrant, ManagedMeter, ManagedPurchase, ManageOverview } from "./manage.service.js";

/** What a change answered with a 303 says on the page it lands on (`?done=`). */
export const DONE = {
  cancelled: "Your subscription is set to end at the end of its period. You keep it until then, and you can resume it before.",
  resumed: "Your subscription renews again.",
  "seat-assigned": "Seat handed out: its holder signs in with that address to use it.",
  "seat-revoked": "Seat taken back: its holder loses access at their next check, and the seat is free again.",
  "signed-out": "Device signed out: it loses access within a few seconds (at its next check, if it is offline now).",
} as const;
export type Done = keyof typeof DONE;

export interface ManageView {
  frame: CustomerFrame;
  csrf: string;
  workspaceName: string;
  toolName: string;
  /** The person's address; null for a session from a device activated with a licence key. */
  email: string | null;
  overview: ManageOverview;
  done?: Done;
  /** A refusal of the last action that names no field. */
  error?: string;
  /** A refusal of handing out a seat, shown at that team's address field. */
  seatError?: { team: string; message: string; email: string };
}

const muted = (text: string) => html`<span class="muted">${text}</span>`;

/** The plan's price as bought: per seat for a team purchase (the plan's amount is one seat's). */
function price(p: ManagedPurchase): string | null {
  const plan = p.planDetails;
  if (!plan || plan.amountCents === null) return null;
  const amount = formatMoney(plan.amountCents, plan.currency);
  const every = plan.interval === null ? amount : `${amount} a ${plan.interval}`;
  return p.seats !== null ? `${every} per seat` : every;
}

const title = (p: ManagedPurchase) => (p.planDetails ? `${p.productName} · ${p.planDetails.name}` : p.productName);
// Ids in a page's element ids: purchase ids are the processor's, so only their safe characters.
const idPart = (id: string) => id.replace(/[^A-Za-z0-9_-]/g, "-");

const RUNNING = new Set(["active", "trialing"]);
// The processor's statuses that end a subscription (billing/subscription.service.ts).
const ENDED = new Set(["canceled", "unpaid", "incomplete_expired"]);

function subscriptionState(p: ManagedPurchase): Html {
  if (ENDED.has(p.status)) return html`<span class="badge badge-off">Ended</span>`;
  if (p.ends_at !== null) return html`<span class="badge badge-pending">Ending</span>`;
  if (RUNNING.has(p.status)) return html`<span class="badge badge-ok">Active</span>`;
  return html`<span class="badge badge-pending">${p.status.replace(/_/g, " ")}</span>`;
}

function subscriptionPanel(view: ManageView, p: ManagedPurchase): Html {
  const base = `${view.frame.base}/manage/subscriptions/${encodeURIComponent(p.id)}`;
  const ended = ENDED.has(p.status);
  const period = p.period_end === null ? null : Date.parse(p.period_end);
  const when = ended
    ? html`<dt>Ended</dt><dd>${p.ends_at === null ? muted("Yes") : time(Date.parse(p.ends_at))}</dd>`
    : p.ends_at !== null
      ? html`<dt>Ends</dt><dd>${time(Date.parse(p.ends_at))} <span class="muted">· you keep it until then</span></dd>`
      : period !== null
        ? html`<dt>Renews</dt><dd>${time(period)}</dd>`
        : "";
  const amount = price(p);
  let actions: Html;
  if (ended) actions = html``;
  else if (!view.overview.billingAtStripe) {
    actions = html`<p class="hint">${view.workspaceName} handles the billing of this subscription: to cancel it, or to change how you pay, contact them.</p>`;
  } else {
    const change = p.cancel_at_period_end
      ? html`<form method="post" action="${base}/resume">${csrfField(view.csrf)}<button class="button primary" type="submit">Resume subscription</button></form>`
      : p.ends_at === null
        ? html`<a class="button danger-outline" href="${base}/cancel">Cancel subscription…</a>`
        : html`<p class="hint">${view.workspaceName} set the end of this subscription: contact them to change it.</p>`;
    actions = html`<div class="row manage-actions">${change}<form method="post" action="${base}/billing">${csrfField(view.csrf)}<button class="button" type="submit">Payment method and invoices</button></form></div>`;
  }
  return html`<article class="manage-item" aria-labelledby="sub-${idPart(p.id)}">
<div class="manage-item-head"><h3 id="sub-${idPart(p.id)}">${title(p)}</h3>${subscriptionState(p)}</div>
<dl class="facts">
${amount ? html`<dt>Price</dt><dd>${amount}</dd>` : ""}
${when}
<dt>Since</dt><dd>${time(Date.parse(p.purchased_at))}</dd>
${p.seats !== null ? html`<dt>Team</dt><dd>${p.seats_in_use ?? 0} of ${p.seats} seats handed out</dd>` : ""}
</dl>
${actions}
</article>`;
}

const LICENCE_STATE: Record<string, Html> = {
  active: html`<span class="badge badge-ok">Active</span>`,
  suspended: html`<span class="badge badge-pending">Suspended</span>`,
  revoked: html`<span class="badge badge-off">Revoked</span>`,
};

function licencePanel(view: ManageView, p: ManagedPurchase, index: number): Html {
  // A credit pack sold alone gives no access: its key would open nothing.
  const pack = p.planDetails?.givesAccess === false;
  const kind = pack
    ? "Credit pack"
    : p.team !== null
      ? "A seat of a team purchase"
      : p.seats !== null
        ? `Team of ${p.seats} seats, ${p.seats_in_use ?? 0} handed out`
        : "One-time purchase";
  const amount = price(p);
  return html`<article class="manage-item" aria-labelledby="licence-${index}">
<div class="manage-item-head"><h3 id="licence-${index}">${title(p)}</h3>${LICENCE_STATE[p.status] ?? html`<span class="badge badge-off">${p.status}</span>`}</div>
<dl class="facts">
${amount ? html`<dt>Price</dt><dd>${amount}</dd>` : ""}
<dt>Bought</dt><dd>${time(Date.parse(p.purchased_at))}</dd>
<dt>Kind</dt><dd>${kind}</dd>
</dl>
${
  pack
    ? html`<p class="hint">Its credits are counted in Usage; it gives no access of its own.</p>`
    : p.key === null
      ? p.seats !== null
        ? html`<p class="hint">A team purchase has no key of its own: each seat you hand out below is a licence with its own.</p>`
        : ""
      : html`<div class="manage-key">${copyField(`key-${index}`, "Licence key", p.key)}
<p class="hint">Paste it into ${view.toolName} to use it on a device without signing in (5 devices at most). Keep it to yourself: whoever has it can use your licence.</p></div>`
}
</article>`;
}

function teamPanel(view: ManageView, p: ManagedPurchase): Html {
  const team = view.overview.teams.get(p.id);
  if (!team) return html``;
  const base = `${view.frame.base}/manage/teams/${encodeURIComponent(p.id)}/seats`;
  const field = `seat-email-${idPart(p.id)}`;
  const error = view.seatError?.team === p.id ? view.seatError : undefined;
  const full = team.seats_in_use >= team.seats;
  return html`<article class="manage-item" aria-labelledby="team-${idPart(p.id)}">
<div class="manage-item-head"><h3 id="team-${idPart(p.id)}">${title(p)}</h3><span class="muted">${team.seats_in_use} of ${team.seats} seats handed out</span></div>
${
  team.data.length === 0
    ? html`<p class="panel-text">No seat handed out yet.</p>`
    : html`<ul class="manage-list">${team.data.map(
        (seat) => html`<li><div><span class="manage-name">${seat.email}</span><span class="hint">since ${time(Date.parse(seat.assigned_at))}</span></div>
<form method="post" action="${base}/${encodeURIComponent(seat.id)}/revoke">${csrfField(view.csrf)}<button class="button small danger-outline" type="submit">Take back<span class="sr-only"> the seat of ${seat.email}</span></button></form></li>`,
      )}</ul>`
}
${
  full
    ? html`<p class="hint">Every seat is handed out: take one back to give it to someone else.</p>`
    : html`${fieldErrorNotice(field, error?.message)}<form method="post" action="${base}" class="inline-form manage-seat-form">
${csrfField(view.csrf)}
<div class="field"><label for="${field}">Hand out a seat to</label>
<input id="${field}" name="email" type="email" autocomplete="off" required maxlength="254" placeholder="colleague@example.com" value="${error?.email ?? ""}"${fieldErrorAttributes(field, error?.message)}></div>
<button class="button primary" type="submit">Hand out seat</button>
</form>`
}
</article>`;
}

// A grant starts when it is given (the API and the import write no later start), so one not live has ended or was withdrawn.
const grantState = (g: ManagedGrant): Html =>
  g.live
    ? html`<span class="badge badge-ok">Active</span>`
    : g.revoked_at !== null
      ? html`<span class="badge badge-off">Withdrawn</span>`
      : html`<span class="badge badge-off">Ended</span>`;

/** A trial or a grant: what it gives, since when, and its end ("No end" for a grant without one). */
function grantPanel(g: ManagedGrant): Html {
  const id = `grant-${idPart(g.id)}`;
  const kind = g.kind === "trial" ? "Trial" : "Free access";
  const end = g.revoked_at ?? g.ends_at;
  return html`<article class="manage-item" aria-labelledby="${id}">
<div class="manage-item-head"><h3 id="${id}">${g.toolName} · ${kind}${g.planName === null ? "" : html` (${g.planName})`}</h3>${grantState(g)}</div>
<dl class="facts">
<dt>Since</dt><dd>${time(Date.parse(g.starts_at))}</dd>
<dt>${g.live ? "Ends" : "Ended"}</dt><dd>${end === null ? "No end" : time(Date.parse(end))}</dd>
</dl>
</article>`;
}

/** One meter: a bar of what was used of the allowance (its words beside it for every reader), credits, the reset, Buy more. */
function meterPanel(view: ManageView, m: ManagedMeter): Html {
  const id = `usage-${m.meter}`;
  const bar =
    m.allowance > 0
      ? html`<meter min="0" max="${m.allowance}" low="${Math.floor(m.allowance * 0.8)}" high="${Math.floor(m.allowance * 0.95)}" optimum="0" value="${Math.min(m.used, m.allowance)}" aria-labelledby="${id}" aria-describedby="${id}-text">${formatCount(m.used)} of ${formatCount(m.allowance)}</meter>
<p class="usage-figure" id="${id}-text">${formatCount(m.used)} of ${formatCount(m.allowance)} ${m.unit} used this period</p>`
      : html`<p class="usage-figure" id="${id}-text">No allowance this period: what you use comes from your credits.</p>`;
  return html`<article class="manage-item" aria-labelledby="${id}">
<div class="manage-item-head"><h3 id="${id}">${m.name}</h3><span class="muted">${formatCount(m.remaining)} ${m.unit} left</span></div>
${bar}
<dl class="facts">
${m.allowance > 0 ? html`<dt>Left this period</dt><dd>${formatCount(m.allowance_remaining)} ${m.unit}</dd>` : ""}
<dt>Credits left</dt><dd>${formatCount(m.credits)} ${m.unit}</dd>
${m.resets_at === null ? "" : html`<dt>Resets</dt><dd>${time(Date.parse(m.resets_at))}</dd>`}
</dl>
${m.packOnSale ? html`<p><a class="button" href="${view.frame.base}/plans#packs">Buy more<span class="sr-only"> ${m.unit}</span></a></p>` : ""}
</article>`;
}

function devicesPanel(view: ManageView): Html {
  const { devices } = view.overview;
  return html`<section class="panel" aria-labelledby="devices">
<div class="panel-head"><h2 id="devices">Devices</h2></div>
${
  devices.length === 0
    ? emptyState("No devices", `Devices appear here once you sign in to ${view.toolName} on them, or activate it with a licence key.`)
    : html`<p class="panel-text">Signed in with your account. Signing one out stops its access within a few seconds; sign in there again to use it.</p>
<ul class="manage-list">${devices.map(
        (
          d,
        ) => html`<li><div><span class="manage-name">${d.name}${d.current ? html` <span class="badge badge-ok">This device</span>` : ""}</span><span class="hint">${d.platform ?? "Unknown platform"} · signed in ${time(Date.parse(d.created_at))} · ${
          d.last_active_at === null ? "not used yet" : html`last active ${time(Date.parse(d.last_active_at))}`
        }</span></div>
<form method="post" action="${view.frame.base}/manage/devices/${encodeURIComponent(d.id)}/sign-out">${csrfField(view.csrf)}<button class="button small danger-outline" type="submit">Sign out<span class="sr-only"> ${d.name}</span></button></form></li>`,
      )}</ul>`
}
</section>`;
}

export function manageView(view: ManageView): Html {
  const { overview } = view;
  const teams = [...overview.licences, ...overview.subscriptions].filter((p) => overview.teams.has(p.id));
  return customerPage(
    "Manage",
    view.frame,
    html`<header class="page-head"><h1>Your purchases</h1><p class="lede">${
      view.email === null
        ? html`What you bought from ${view.workspaceName}, as the licence key this device was activated with shows it.`
        : html`Everything you bought from ${view.workspaceName} as <strong>${view.email}</strong>, and the devices you use it on.`
    }</p></header>
${view.done ? notice("success", DONE[view.done]) : ""}
${view.error ? notice("error", view.error) : ""}
${
  view.email === null
    ? notice(
        "info",
        html`You are signed in with a licence key: you see that licence and its devices. <a href="${view.frame.base}/sign-in?return=${encodeURIComponent(`${view.frame.base}/manage`)}">Sign in with your email address</a> to see your subscriptions and team seats.`,
      )
    : ""
}
${
  overview.meters.length === 0
    ? ""
    : html`<section class="panel" aria-labelledby="usage">
<div class="panel-head"><h2 id="usage">Usage</h2></div>
<p class="panel-text">What you can use of ${view.toolName} this period. Your allowance is used first, then your credits.</p>
${overview.meters.map((m) => meterPanel(view, m))}
</section>`
}
${
  view.email === null
    ? ""
    : html`<section class="panel" aria-labelledby="subscriptions">
<div class="panel-head"><h2 id="subscriptions">Subscriptions</h2></div>
${
  overview.subscriptions.length === 0
    ? emptyState("No subscriptions", html`<a href="${view.frame.base}/plans">See the plans</a> to subscribe.`)
    : overview.subscriptions.map((p) => subscriptionPanel(view, p))
}
</section>`
}
${
  overview.grants.length === 0
    ? ""
    : html`<section class="panel" aria-labelledby="grants">
<div class="panel-head"><h2 id="grants">Trials and free access</h2></div>
<p class="panel-text">Given by ${view.workspaceName} rather than bought: nothing is charged, and nothing renews.</p>
${overview.grants.map(grantPanel)}
</section>`
}
<section class="panel" aria-labelledby="licences">
<div class="panel-head"><h2 id="licences">Licences</h2></div>
${overview.licences.length === 0 ? emptyState("No licences", "One-time purchases, and seats handed to you, appear here with their keys.") : overview.licences.map((p, i) => licencePanel(view, p, i + 1))}
</section>
${
  teams.length === 0
    ? ""
    : html`<section class="panel" aria-labelledby="seats">
<div class="panel-head"><h2 id="seats">Team seats</h2></div>
<p class="panel-text">Each seat gives its holder ${view.toolName} under their own address; they sign in with it. Taking a seat back frees it for someone else.</p>
${teams.map((p) => teamPanel(view, p))}
</section>`
}
${devicesPanel(view)}`,
    { copyButtons: overview.licences.some((p) => p.key !== null) },
  );
}

/** Cancelling at the period's end: what happens, asked once more (reversible until then, so no code). */
export function confirmCancelView(view: { frame: CustomerFrame; csrf: string; subscription: ManagedPurchase; toolName: string }): Html {
  const p = view.subscription;
  const back = `${view.frame.base}/manage`;
  const until = p.period_end === null ? null : Date.parse(p.period_end);
  return customerPage(
    "Cancel subscription",
    view.frame,
    html`<section class="card customer-card">
<h1>Cancel ${title(p)}?</h1>
<p class="lede">It stops renewing. ${
      until === null ? "" : html`You keep ${view.toolName} until ${time(until)}, and nothing more is charged.`
    } You can resume it here until then.</p>
<form method="post" action="${back}/subscriptions/${encodeURIComponent(p.id)}/cancel" class="row">
${csrfField(view.csrf)}
<button class="button danger" type="submit">Cancel at period end</button><a class="button" href="${back}">Keep it</a>
</form>
</section>`,
  );
}
