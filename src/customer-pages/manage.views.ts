// The Manage page: the tool's meters (used of the allowance, credits left, the reset, a
// way to buy more), subscriptions (renewal, cancel at the period's end and its undo, the
// billing portal), licences with their keys to copy, trials and grants with their ends,
// a team purchase's seats, devices (the one the page was opened from marked).
// Purchases are panels of facts rather than table rows, so that they read at 390 px.
import { type Html, html } from "../dashboard/shared/html.js";
import { copyField, csrfField, emptyState, fieldErrorAttributes, fieldErrorNotice, notice } from "../dashboard/shared/layout.js";
import { type CustomerFrame, customerPage, linkTo, type PageText } from "./layout.js";
import type { ManagedGrant, ManagedMeter, ManagedPurchase, ManageOverview } from "./manage.service.js";

/** What a change answered with a 303 says on the page it lands on (`?done=`). */
export const DONE = {
  cancelled: "manage.done.cancelled",
  resumed: "manage.done.resumed",
  "seat-assigned": "manage.done.seatAssigned",
  "seat-revoked": "manage.done.seatRevoked",
  "signed-out": "manage.done.signedOut",
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

const muted = (text: Html) => html`<span class="muted">${text}</span>`;

/** The plan's price as bought: per seat for a team purchase (the plan's amount is one seat's). */
function price(text: PageText, p: ManagedPurchase): Html | null {
  const plan = p.planDetails;
  if (!plan || plan.amountCents === null) return null;
  return text.t("manage.price", {
    price: text.money(plan.amountCents, plan.currency),
    seat: p.seats !== null ? "yes" : "no",
    interval: plan.interval ?? "none",
  });
}

const title = (text: PageText, p: ManagedPurchase): Html | string =>
  p.planDetails ? text.t("manage.productPlan", { product: p.productName, plan: p.planDetails.name }) : p.productName;
// Ids in a page's element ids: purchase ids are the processor's, so only their safe characters.
const idPart = (id: string) => id.replace(/[^A-Za-z0-9_-]/g, "-");

const RUNNING = new Set(["active", "trialing"]);
// The processor's statuses that end a subscription (billing/subscription.service.ts).
const ENDED = new Set(["canceled", "unpaid", "incomplete_expired"]);

function subscriptionState(text: PageText, p: ManagedPurchase): Html {
  const { t } = text;
  if (ENDED.has(p.status)) return html`<span class="badge badge-off">${t("manage.state.ended")}</span>`;
  if (p.ends_at !== null) return html`<span class="badge badge-pending">${t("manage.state.ending")}</span>`;
  if (RUNNING.has(p.status)) return html`<span class="badge badge-ok">${t("manage.state.active")}</span>`;
  // Stripe's other statuses: past_due, or waiting for a payment (incomplete, paused).
  return html`<span class="badge badge-pending">${p.status === "past_due" ? t("manage.state.pastDue") : t("manage.state.other")}</span>`;
}

function subscriptionPanel(view: ManageView, p: ManagedPurchase): Html {
  const text = view.frame.text;
  const { t, date } = text;
  const workspace = view.workspaceName;
  const base = `${view.frame.base}/manage/subscriptions/${encodeURIComponent(p.id)}`;
  const ended = ENDED.has(p.status);
  const period = p.period_end === null ? null : Date.parse(p.period_end);
  const when = ended
    ? html`<dt>${t("manage.fact.ended")}</dt><dd>${p.ends_at === null ? muted(t("manage.yes")) : date(Date.parse(p.ends_at))}</dd>`
    : p.ends_at !== null
      ? html`<dt>${t("manage.fact.ends")}</dt><dd>${t("manage.keepUntil", { date: date(Date.parse(p.ends_at)) })}</dd>`
      : period !== null
        ? html`<dt>${t("manage.fact.renews")}</dt><dd>${date(period)}</dd>`
        : "";
  const amount = price(text, p);
  let actions: Html;
  if (ended) actions = html``;
  else if (!view.overview.billingAtProcessor) {
    actions = html`<p class="hint">${t("manage.vendorBills", { workspace })}</p>`;
  } else {
    const change = p.cancel_at_period_end
      ? html`<form method="post" action="${base}/resume">${csrfField(view.csrf)}<button class="button primary" type="submit">${t("manage.resume")}</button></form>`
      : p.ends_at === null
        ? html`<a class="button danger-outline" href="${base}/cancel">${t("manage.cancel")}</a>`
        : html`<p class="hint">${t("manage.vendorSetEnd", { workspace })}</p>`;
    actions = html`<div class="row manage-actions">${change}<form method="post" action="${base}/billing">${csrfField(view.csrf)}<button class="button" type="submit">${t("manage.billing")}</button></form></div>`;
  }
  return html`<article class="manage-item" aria-labelledby="sub-${idPart(p.id)}">
<div class="manage-item-head"><h3 id="sub-${idPart(p.id)}">${title(text, p)}</h3>${subscriptionState(text, p)}</div>
<dl class="facts">
${amount ? html`<dt>${t("manage.fact.price")}</dt><dd>${amount}</dd>` : ""}
${when}
<dt>${t("manage.fact.since")}</dt><dd>${date(Date.parse(p.purchased_at))}</dd>
${p.seats !== null ? html`<dt>${t("manage.fact.team")}</dt><dd>${t("manage.seatsHandedOut", { used: text.count(p.seats_in_use ?? 0), seats: text.count(p.seats) })}</dd>` : ""}
</dl>
${actions}
</article>`;
}

function licenceState(text: PageText, status: string): Html {
  if (status === "active") return html`<span class="badge badge-ok">${text.t("manage.state.active")}</span>`;
  if (status === "suspended") return html`<span class="badge badge-pending">${text.t("manage.state.suspended")}</span>`;
  return html`<span class="badge badge-off">${text.t("manage.state.revoked")}</span>`;
}

function licencePanel(view: ManageView, p: ManagedPurchase, index: number): Html {
  const text = view.frame.text;
  const { t, s, date } = text;
  // A credit pack sold alone gives no access: its key would open nothing.
  const pack = p.planDetails?.givesAccess === false;
  const kind = pack
    ? t("manage.kind.pack")
    : p.team !== null
      ? t("manage.kind.seat")
      : p.seats !== null
        ? t("manage.kind.team", { seats: text.count(p.seats), used: text.count(p.seats_in_use ?? 0) })
        : t("manage.kind.once");
  const amount = price(text, p);
  return html`<article class="manage-item" aria-labelledby="licence-${index}">
<div class="manage-item-head"><h3 id="licence-${index}">${title(text, p)}</h3>${licenceState(text, p.status)}</div>
<dl class="facts">
${amount ? html`<dt>${t("manage.fact.price")}</dt><dd>${amount}</dd>` : ""}
<dt>${t("manage.fact.bought")}</dt><dd>${date(Date.parse(p.purchased_at))}</dd>
<dt>${t("manage.fact.kind")}</dt><dd>${kind}</dd>
</dl>
${
  pack
    ? html`<p class="hint">${t("manage.packHint")}</p>`
    : p.key === null
      ? p.seats !== null
        ? html`<p class="hint">${t("manage.teamNoKey")}</p>`
        : ""
      : html`<div class="manage-key">${copyField(`key-${index}`, s("manage.licenceKey"), p.key, { copy: s("shell.copy"), copied: s("shell.copied") })}
<p class="hint">${t("manage.keyHint", { tool: view.toolName })}</p></div>`
}
</article>`;
}

function teamPanel(view: ManageView, p: ManagedPurchase): Html {
  const team = view.overview.teams.get(p.id);
  if (!team) return html``;
  const text = view.frame.text;
  const { t, s, date } = text;
  const base = `${view.frame.base}/manage/teams/${encodeURIComponent(p.id)}/seats`;
  const field = `seat-email-${idPart(p.id)}`;
  const error = view.seatError?.team === p.id ? view.seatError : undefined;
  const full = team.seats_in_use >= team.seats;
  return html`<article class="manage-item" aria-labelledby="team-${idPart(p.id)}">
<div class="manage-item-head"><h3 id="team-${idPart(p.id)}">${title(text, p)}</h3><span class="muted">${t("manage.seatsHandedOut", { used: text.count(team.seats_in_use), seats: text.count(team.seats) })}</span></div>
${
  team.data.length === 0
    ? html`<p class="panel-text">${t("manage.noSeats")}</p>`
    : html`<ul class="manage-list">${team.data.map(
        (
          seat,
        ) => html`<li><div><span class="manage-name">${seat.email}</span><span class="hint">${t("manage.seatSince", { date: date(Date.parse(seat.assigned_at)) })}</span></div>
<form method="post" action="${base}/${encodeURIComponent(seat.id)}/revoke">${csrfField(view.csrf)}<button class="button small danger-outline" type="submit">${t("manage.takeBack", { email: seat.email })}</button></form></li>`,
      )}</ul>`
}
${
  full
    ? html`<p class="hint">${t("manage.allSeats")}</p>`
    : html`${fieldErrorNotice(field, error?.message)}<form method="post" action="${base}" class="inline-form manage-seat-form">
${csrfField(view.csrf)}
<div class="field"><label for="${field}">${t("manage.seatTo")}</label>
<input id="${field}" name="email" type="email" autocomplete="off" required maxlength="254" placeholder="${s("manage.seatPlaceholder")}" value="${error?.email ?? ""}"${fieldErrorAttributes(field, error?.message)}></div>
<button class="button primary" type="submit">${t("manage.handOut")}</button>
</form>`
}
</article>`;
}

// A grant starts when it is given (the API and the import write no later start), so one not live has ended or was withdrawn.
const grantState = (text: PageText, g: ManagedGrant): Html =>
  g.live
    ? html`<span class="badge badge-ok">${text.t("manage.state.active")}</span>`
    : g.revoked_at !== null
      ? html`<span class="badge badge-off">${text.t("manage.state.withdrawn")}</span>`
      : html`<span class="badge badge-off">${text.t("manage.state.ended")}</span>`;

/** A trial or a grant: what it gives, since when, and its end ("No end" for a grant without one). */
function grantPanel(text: PageText, g: ManagedGrant): Html {
  const { t, date } = text;
  const id = `grant-${idPart(g.id)}`;
  const end = g.revoked_at ?? g.ends_at;
  const heading =
    g.planName === null
      ? t("manage.grantTitle", { tool: g.toolName, kind: g.kind })
      : t("manage.grantTitlePlan", { tool: g.toolName, kind: g.kind, plan: g.planName });
  return html`<article class="manage-item" aria-labelledby="${id}">
<div class="manage-item-head"><h3 id="${id}">${heading}</h3>${grantState(text, g)}</div>
<dl class="facts">
<dt>${t("manage.fact.since")}</dt><dd>${date(Date.parse(g.starts_at))}</dd>
<dt>${g.live ? t("manage.fact.ends") : t("manage.fact.ended")}</dt><dd>${end === null ? t("manage.noEnd") : date(Date.parse(end))}</dd>
</dl>
</article>`;
}

/** One meter: a bar of what was used of the allowance (its words beside it for every reader), credits, the reset, Buy more. */
function meterPanel(view: ManageView, m: ManagedMeter): Html {
  const text = view.frame.text;
  const { t, date, count } = text;
  const id = `usage-${m.meter}`;
  const used = count(m.used);
  const allowance = count(m.allowance);
  const bar =
    m.allowance > 0
      ? html`<meter min="0" max="${m.allowance}" low="${Math.floor(m.allowance * 0.8)}" high="${Math.floor(m.allowance * 0.95)}" optimum="0" value="${Math.min(m.used, m.allowance)}" aria-labelledby="${id}" aria-describedby="${id}-text">${t("manage.meterBar", { used, allowance })}</meter>
<p class="usage-figure" id="${id}-text">${t("manage.meterUsed", { used, allowance, unit: m.unit })}</p>`
      : html`<p class="usage-figure" id="${id}-text">${t("manage.noAllowance")}</p>`;
  return html`<article class="manage-item" aria-labelledby="${id}">
<div class="manage-item-head"><h3 id="${id}">${m.name}</h3><span class="muted">${t("manage.meterLeft", { count: count(m.remaining), unit: m.unit })}</span></div>
${bar}
<dl class="facts">
${m.allowance > 0 ? html`<dt>${t("manage.fact.leftThisPeriod")}</dt><dd>${t("manage.units", { count: count(m.allowance_remaining), unit: m.unit })}</dd>` : ""}
<dt>${t("manage.fact.creditsLeft")}</dt><dd>${t("manage.units", { count: count(m.credits), unit: m.unit })}</dd>
${m.resets_at === null ? "" : html`<dt>${t("manage.fact.resets")}</dt><dd>${date(Date.parse(m.resets_at))}</dd>`}
</dl>
${m.packOnSale ? html`<p><a class="button" href="${view.frame.base}/plans#packs">${t("manage.buyMore", { unit: m.unit })}</a></p>` : ""}
</article>`;
}

function devicesPanel(view: ManageView): Html {
  const { devices } = view.overview;
  const { t, date } = view.frame.text;
  return html`<section class="panel" aria-labelledby="devices">
<div class="panel-head"><h2 id="devices">${t("manage.devices")}</h2></div>
${
  devices.length === 0
    ? emptyState(view.frame.text.s("manage.noDevices"), t("manage.noDevicesText", { tool: view.toolName }))
    : html`<p class="panel-text">${t("manage.devicesText")}</p>
<ul class="manage-list">${devices.map((d) => {
        const platform = d.platform ?? t("manage.unknownPlatform");
        const signedIn = date(Date.parse(d.created_at));
        const used =
          d.last_active_at === null
            ? t("manage.deviceUnused", { platform, signedIn })
            : t("manage.deviceUsed", { platform, signedIn, lastActive: date(Date.parse(d.last_active_at)) });
        return html`<li><div><span class="manage-name">${d.name}${d.current ? html` <span class="badge badge-ok">${t("manage.thisDevice")}</span>` : ""}</span><span class="hint">${used}</span></div>
<form method="post" action="${view.frame.base}/manage/devices/${encodeURIComponent(d.id)}/sign-out">${csrfField(view.csrf)}<button class="button small danger-outline" type="submit">${t("manage.signOutDevice", { device: d.name })}</button></form></li>`;
      })}</ul>`
}
</section>`;
}

export function manageView(view: ManageView): Html {
  const { overview } = view;
  const { t, s } = view.frame.text;
  const workspace = view.workspaceName;
  const tool = view.toolName;
  const teams = [...overview.licences, ...overview.subscriptions].filter((p) => overview.teams.has(p.id));
  return customerPage(
    s("manage.title"),
    view.frame,
    html`<header class="page-head"><h1>${t("manage.heading")}</h1><p class="lede">${
      view.email === null ? t("manage.ledeKey", { workspace }) : t("manage.lede", { workspace, email: view.email })
    }</p></header>
${view.done ? notice("success", t(DONE[view.done])) : ""}
${view.error ? notice("error", view.error) : ""}
${
  view.email === null
    ? notice("info", t("manage.keySession", { link: linkTo(`${view.frame.base}/sign-in?return=${encodeURIComponent(`${view.frame.base}/manage`)}`) }))
    : ""
}
${
  overview.meters.length === 0
    ? ""
    : html`<section class="panel" aria-labelledby="usage">
<div class="panel-head"><h2 id="usage">${t("manage.usage")}</h2></div>
<p class="panel-text">${t("manage.usageText", { tool })}</p>
${overview.meters.map((m) => meterPanel(view, m))}
</section>`
}
${
  view.email === null
    ? ""
    : html`<section class="panel" aria-labelledby="subscriptions">
<div class="panel-head"><h2 id="subscriptions">${t("manage.subscriptions")}</h2></div>
${
  overview.subscriptions.length === 0
    ? emptyState(s("manage.noSubscriptions"), t("manage.noSubscriptionsText", { link: linkTo(`${view.frame.base}/plans`) }))
    : overview.subscriptions.map((p) => subscriptionPanel(view, p))
}
</section>`
}
${
  overview.grants.length === 0
    ? ""
    : html`<section class="panel" aria-labelledby="grants">
<div class="panel-head"><h2 id="grants">${t("manage.grants")}</h2></div>
<p class="panel-text">${t("manage.grantsText", { workspace })}</p>
${overview.grants.map((g) => grantPanel(view.frame.text, g))}
</section>`
}
<section class="panel" aria-labelledby="licences">
<div class="panel-head"><h2 id="licences">${t("manage.licences")}</h2></div>
${overview.licences.length === 0 ? emptyState(s("manage.noLicences"), t("manage.noLicencesText")) : overview.licences.map((p, i) => licencePanel(view, p, i + 1))}
</section>
${
  teams.length === 0
    ? ""
    : html`<section class="panel" aria-labelledby="seats">
<div class="panel-head"><h2 id="seats">${t("manage.seats")}</h2></div>
<p class="panel-text">${t("manage.seatsText", { tool })}</p>
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
  const text = view.frame.text;
  const { t, s } = text;
  const back = `${view.frame.base}/manage`;
  const until = p.period_end === null ? null : Date.parse(p.period_end);
  return customerPage(
    s("cancel.title"),
    view.frame,
    html`<section class="card customer-card">
<h1>${t("cancel.heading", { name: title(text, p) })}</h1>
<p class="lede">${until === null ? t("cancel.lede") : t("cancel.ledeUntil", { tool: view.toolName, date: text.date(until) })}</p>
<form method="post" action="${back}/subscriptions/${encodeURIComponent(p.id)}/cancel" class="row">
${csrfField(view.csrf)}
<button class="button danger" type="submit">${t("cancel.confirm")}</button><a class="button" href="${back}">${t("cancel.keep")}</a>
</form>
</section>`,
  );
}
