import type { MoneyHistory, MoneyLine, SubscriptionTimeline } from "../../billing/money.service.js";
import type { Customer, CustomerListItem } from "../../customers/customer.schema.js";
import { type CustomerListTotal, LISTED_PER_KIND, SEARCH_MATCHES } from "../../customers/customer.service.js";
import { isEmailShape } from "../../customers/email.js";
import type { HeldDevice, HeldLicence, HeldSubscription, Holdings } from "../../customers/holdings.store.js";
import type { CustomerKind, Env } from "../../db/schema.js";
import type { Grant } from "../../grants/grant.schema.js";
import type { ProcessorName } from "../../payments/payment-processor.js";
import type { CustomerMeter } from "../../usage/usage.service.js";
import type { Feature } from "../../usage/usage.types.js";
import type { Tool } from "../../workspaces/workspace.types.js";
import { type Html, html } from "../shared/html.js";
import {
  appPage,
  csrfField,
  currentSectionPath,
  emptyState,
  envBadge,
  type Frame,
  formatCount,
  formatMoney,
  formError,
  limitNotice,
  notice,
  pageHeading,
  scrollBox,
  sectionPath,
  time,
} from "../shared/layout.js";
import { secondaryId } from "../shared/names.js";
import type { LimitReached } from "../shared/page.js";
import { failureNotice } from "../stripe/stripe-error-words.js";
import type { FailureWords } from "../webhooks/failure-words.js";
import { stripeDashboardLink } from "./stripe-links.js";

export const customersPath = (frame: Frame) => currentSectionPath(frame, "customers");
export const customerPath = (frame: Frame, tool: string, email: string) => `${customersPath(frame)}/${encodeURIComponent(tool)}/${encodeURIComponent(email)}`;

const VIA: Record<string, string> = { licence: "a licence", subscription: "a subscription", trial: "a trial", grant: "a grant" };

function entitledBadge(entitled: boolean, via: string | null): Html {
  return entitled
    ? html`<span class="badge badge-ok">Entitled</span> <span class="state-note">via ${VIA[via ?? ""] ?? via}</span>`
    : html`<span class="badge badge-off">Not entitled</span>`;
}

export type EntitledFilter = "all" | "yes" | "no";

/** A limit that refused the list: the use case's words, and when its window ends. */
/** What each kind of the list is called on the page, for the kinds cut at the newest 2,000. */
const KIND_NAMES: Record<CustomerKind, string> = { holder: "entitled", member: "signed-in but not entitled", none: "lapsed" };

const plural = (n: number, one: string, many: string) => `${formatCount(n)} ${n === 1 ? one : many}`;

/** The list's count, what a search found, and where the list stops. */
function totalLine(total: CustomerListTotal, search: string): Html {
  if (search !== "") {
    return total.moreMatches
      ? html`More than ${formatCount(SEARCH_MATCHES)} customers match “${search}”: ${formatCount(total.count)} of them are listed. Type more of the address to narrow it.`
      : html`${plural(total.count, "customer matches", "customers match")} “${search}”.`;
  }
  return html`${plural(total.count, "customer", "customers")}${total.cut.length > 0 ? " listed, and more" : ""}.`;
}

/** Where the list stops (the newest 2,000 of a kind), and how to find the others. */
function cutNotice(total: CustomerListTotal | null): Html | string {
  if (!total || total.cut.length === 0) return "";
  const kinds = total.cut.map((k) => KIND_NAMES[k]).join(" and the newest 2,000 ");
  return notice(
    "info",
    html`Only the newest ${formatCount(LISTED_PER_KIND)} ${kinds} customers are listed, as in the API. Search by address to find any other, or export the list as CSV: it has them all.`,
  );
}

export function customersView(
  frame: Frame,
  input: {
    tools: Tool[];
    tool: string | null;
    entitled: EntitledFilter;
    search: string;
    customers: CustomerListItem[];
    next: string | null;
    previous: string | null;
    total: CustomerListTotal | null;
    limited?: LimitReached;
    error?: string;
  },
): Html {
  const env = frame.current?.env ?? "test";
  const option = (value: string, label: string, selected: string) =>
    html`<option value="${value}"${value === selected ? html` selected` : ""}>${label}</option>`;
  const tool = input.tool;
  const filters = (extra: Record<string, string> = {}) =>
    new URLSearchParams({ tool: tool ?? "", entitled: input.entitled, ...(input.search === "" ? {} : { q: input.search }), ...extra });
  const openAddress =
    tool !== null && isEmailShape(input.search)
      ? html` <a href="${customerPath(frame, tool, input.search)}">Open the page of ${input.search}</a> to grant access.`
      : "";
  const pager =
    input.next || input.previous
      ? html`<nav class="pager" aria-label="Pages of the list">${input.previous ? html`<a class="button small" href="${input.previous}" rel="prev">← Newer</a>` : ""}${input.next ? html`<a class="button small" href="${input.next}" rel="next">Older →</a>` : ""}</nav>`
      : "";
  const list =
    tool === null
      ? emptyState(
          "No tools yet",
          html`Add a tool under <a href="${sectionPath(frame.current?.workspace.slug ?? "", frame.current?.env ?? "test", "tools")}">Tools and plans</a>; its customers appear here.`,
        )
      : input.limited
        ? emptyState(
            "The list is paused",
            html`It opens again ${time(input.limited.until)}. A customer's page still opens: type their whole address above.${openAddress}`,
          )
        : input.customers.length === 0
          ? emptyState(
              "No customers match",
              input.search === ""
                ? "People appear here once they buy, sign in, start a trial or are granted the tool."
                : html`No address of a customer of this tool contains “${input.search}”.${openAddress}`,
            )
          : html`${cutNotice(input.total)}<div class="table-wrap"${scrollBox("Customers")}><table>
<thead><tr><th>Address</th><th>Access</th><th>Account</th><th>Devices</th><th>Last active</th><th>Since</th></tr></thead>
<tbody>${input.customers.map(
              (c) => html`<tr>
<td><a href="${customerPath(frame, tool, c.email)}">${c.email}</a></td>
<td>${entitledBadge(c.entitled, c.via)}</td>
<td>${c.account ? "Signed in" : html`<span class="muted">None</span>`}</td>
<td class="num">${c.devices}</td>
<td>${c.last_active_at === null ? html`<span class="muted">Never</span>` : time(Date.parse(c.last_active_at))}</td>
<td>${time(Date.parse(c.since))}</td>
</tr>`,
            )}</tbody>
</table></div>
${pager}`;
  return appPage(
    "Customers",
    frame,
    html`${pageHeading("Customers", html`Everyone who holds a tool, has held it, or has signed in to it, newest first. ${envBadge(env)}`)}
${input.error ? notice("error", input.error) : ""}
${input.limited ? limitNotice(input.limited) : ""}
<section class="panel">
<form method="get" action="${customersPath(frame)}" class="inline-form filters" role="search">
<div class="field"><label for="tool">Tool</label>
<select id="tool" name="tool">${input.tools.map((t) => option(t.id, t.name, tool ?? ""))}</select></div>
<div class="field"><label for="entitled">Access</label>
<select id="entitled" name="entitled">${option("all", "Everyone", input.entitled)}${option("yes", "Entitled now", input.entitled)}${option("no", "Not entitled: signed in or lapsed", input.entitled)}</select></div>
<div class="field"><label for="q">Address contains</label><input id="q" name="q" type="search" maxlength="254" placeholder="ada@, @example.com" value="${input.search}"></div>
<button class="button primary" type="submit">Show</button>
</form>
<p class="hint">One or two characters find addresses that start with them; three or more, any part. Pages count against the day's rows read, as the API's do.</p>
</section>
<section class="panel">${
      tool === null || input.limited
        ? ""
        : html`<div class="panel-head"><p class="list-count" role="status">${input.total ? totalLine(input.total, input.search) : ""}</p><a class="button small" href="${customersPath(frame)}/export.csv?${filters().toString()}" download>Export CSV</a></div>`
    }${list}</section>`,
  );
}

/** A customer's page when a lookup limit refused it: which limit, until when, with the navigation kept. */
export function customerLimitedView(frame: Frame, input: { tool: Tool; email: string; limited: LimitReached }): Html {
  return appPage(
    "Customer",
    frame,
    html`${pageHeading(input.email, html`Customer of <strong>${input.tool.name}</strong>`)}
${limitNotice(input.limited)}
<p><a class="button" href="${customersPath(frame)}?${new URLSearchParams({ tool: input.tool.id }).toString()}">Back to the customers</a></p>`,
    { trail: [{ label: input.email }] },
  );
}

function grantRow(frame: Frame, tool: string, email: string, g: Grant): Html {
  const state =
    g.revoked_at !== null
      ? html`<span class="badge badge-off">Revoked</span>`
      : g.live
        ? html`<span class="badge badge-ok">Live</span>`
        : html`<span class="badge badge-off">Ended</span>`;
  return html`<tr>
<td>${g.kind === "trial" ? "Trial" : "Grant"}</td>
<td>${state}</td>
<td>${g.note === null ? html`<span class="muted">No note</span>` : html`<span class="note">${g.note}</span>`}</td>
<td>${time(Date.parse(g.starts_at))}</td>
<td>${g.ends_at === null ? html`<span class="muted">Until revoked</span>` : time(Date.parse(g.ends_at))}</td>
<td class="actions">${
    g.kind === "grant" && g.revoked_at === null
      ? html`<a class="button small danger-outline" href="${customerPath(frame, tool, email)}/grants/${encodeURIComponent(g.id)}/revoke">Revoke…</a>`
      : ""
  }</td>
</tr>`;
}

/**
 * Whether a refund or a cancellation reaches the environment's processor: only when it
 * has the processor's key that acts (Stripe's secret key, Paddle's API key). Without it
 * Warden changes only its own records, and the vendor must make the same change in the
 * processor's dashboard.
 */
export interface ProcessorReach {
  processor: ProcessorName;
  acts: boolean;
}

/** What the summary says of the subscription, from the same rows as the table below it. */
function subscriptionSummary(sub: NonNullable<Customer["subscription"]>, held: readonly HeldSubscription[]): Html {
  const periodEnd = Date.parse(sub.periodEnd);
  const row = held.find((s) => s.status === sub.status && s.currentPeriodEnd === periodEnd);
  if (row?.endedAt != null) return html`${sub.status} · ended ${time(row.endedAt)}`;
  const ends = sub.cancelAt === null ? periodEnd : Date.parse(sub.cancelAt);
  return html`${sub.status} · ${sub.cancelAtPeriodEnd || sub.cancelAt !== null ? "ends" : "renews"} ${time(ends)}`;
}

/** Revoking a grant: what the customer loses, before it is done. */
export function confirmRevokeGrantView(frame: Frame, input: { tool: Tool; email: string; grant: Grant }): Html {
  const { grant: g } = input;
  const back = customerPath(frame, input.tool.id, input.email);
  return appPage(
    "Revoke grant",
    frame,
    html`${pageHeading("Revoke this grant?")}
<section class="panel narrow">
<dl class="facts">
<dt>Customer</dt><dd>${input.email}</dd>
<dt>Tool</dt><dd>${input.tool.name}</dd>
<dt>Note</dt><dd>${g.note === null ? muted("No note") : g.note}</dd>
<dt>Since</dt><dd>${time(Date.parse(g.starts_at))}</dd>
<dt>Ends</dt><dd>${g.ends_at === null ? muted("Until revoked") : time(Date.parse(g.ends_at))}</dd>
</dl>
${notice("error", html`The grant ends now. Unless a licence, a subscription, a trial or another grant entitles them, <strong>${input.email}</strong> loses ${input.tool.name} at their next check. This cannot be undone; you can grant access again.`)}
<form method="post" action="${back}/grants/${encodeURIComponent(g.id)}/revoke" class="row">
${csrfField(frame.csrf)}
<button class="button danger" type="submit">Revoke grant</button>
<a class="button" href="${back}">Keep it</a>
</form>
</section>`,
    { trail: [{ label: input.email, href: back }, { label: "Revoke grant" }] },
  );
}

/** The credits form as typed: shown again with a refusal. */
export interface CreditsForm {
  meter: string;
  change: "add" | "remove";
  amount: string;
  note: string;
  expiresInDays: string;
}

/** A form's refusal: the use case's words, and the parameter it names when it names one. */
export interface FormRefusal<Form> {
  error: string;
  errorParam?: string | undefined;
  form: Form;
}

/** A meter's credits: how many, and until when; several expiries one line each. */
function creditsCell(m: CustomerMeter): Html {
  if (m.usage.credits === 0) return muted("None");
  const line = (c: CustomerMeter["credits"][number]) =>
    html`${formatCount(c.remaining)} ${c.expiresAt === null ? muted("until spent") : html`<span class="state-note">until ${time(c.expiresAt)}</span>`}`;
  const [only] = m.credits;
  if (m.credits.length === 1 && only) return line(only);
  return html`<strong>${formatCount(m.usage.credits)}</strong><ul class="plain-list">${m.credits.map((c) => html`<li>${line(c)}</li>`)}</ul>`;
}

function meterRow(m: CustomerMeter): Html {
  const u = m.usage;
  return html`<tr>
<td>${m.name}${secondaryId(u.meter)}</td>
<td class="num">${formatCount(u.used)}</td>
<td class="num">${u.allowance === 0 ? muted("None") : formatCount(u.allowance)}</td>
<td>${creditsCell(m)}</td>
<td class="num">${formatCount(u.remaining)} <span class="muted">${u.unit}</span></td>
<td>${u.resets_at === null ? muted("No allowance") : time(Date.parse(u.resets_at))}</td>
</tr>`;
}

/** The tool's features (held or not) and meters as the address holds them, and the form that adjusts credits by hand. */
function usageSections(
  frame: Frame,
  input: { tool: Tool; email: string; features: Feature[]; held: readonly string[]; meters: CustomerMeter[]; credits?: FormRefusal<CreditsForm> | undefined },
): Html {
  const { tool, email, meters } = input;
  if (input.features.length === 0 && meters.length === 0) return html``;
  const held = new Set(input.held);
  const features =
    input.features.length === 0
      ? ""
      : html`<h3>Features</h3><ul class="plain-list">${input.features.map(
          (f) =>
            html`<li>${held.has(f.id) ? html`<span class="badge badge-ok">On</span>` : html`<span class="badge badge-off">Off</span>`} ${f.name}${secondaryId(f.id)}</li>`,
        )}</ul>`;
  const table =
    meters.length === 0
      ? ""
      : html`<h3>Meters</h3><div class="table-wrap"${scrollBox("Meters")}><table>
<thead><tr><th>Meter</th><th class="num">Used this period</th><th class="num">Allowance</th><th>Credits</th><th class="num">Left</th><th>Allowance resets</th></tr></thead>
<tbody>${meters.map(meterRow)}</tbody>
</table></div>`;
  const form = input.credits?.form;
  const creditsError = formError(input.credits?.error, input.credits?.errorParam, {
    meter: "credits-meter",
    change: "credits-change",
    amount: "credits-amount",
    note: "credits-note",
    expires_in_days: "credits-expires",
  });
  const option = (value: string, label: string, selected: string | undefined) =>
    html`<option value="${value}"${value === selected ? html` selected` : ""}>${label}</option>`;
  const adjust =
    meters.length === 0
      ? ""
      : html`<section class="panel narrow">
<div class="panel-head"><h2>Adjust credits</h2></div>
${creditsError.notice}
<form method="post" action="${customerPath(frame, tool.id, email)}/credits" class="stack">
${csrfField(frame.csrf)}
<label for="credits-meter">Meter</label>
<select id="credits-meter"${creditsError.on("credits-meter")} name="meter">${meters.map((m) => option(m.usage.meter, m.name, form?.meter))}</select>
<label for="credits-change">Change</label>
<select id="credits-change"${creditsError.on("credits-change")} name="change">${option("add", "Add credits", form?.change)}${option("remove", "Remove credits", form?.change)}</select>
<label for="credits-amount">Credits</label>
<input id="credits-amount"${creditsError.on("credits-amount")} name="amount" inputmode="numeric" pattern="[0-9]*" maxlength="10" required value="${form?.amount ?? ""}">
<label for="credits-expires">Expire after days <span class="muted">(optional, when adding; empty: until spent)</span></label>
<input id="credits-expires"${creditsError.on("credits-expires")} name="expires_in_days" inputmode="numeric" pattern="[0-9]*" maxlength="4" value="${form?.expiresInDays ?? ""}">
<label for="credits-note">Note <span class="muted">(required: why, kept with the credits)</span></label>
<input id="credits-note"${creditsError.on("credits-note")} name="note" maxlength="200" required placeholder="e.g. Sorry for the outage" value="${form?.note ?? ""}">
<p class="hint">A removal takes the credits that expire soonest first, and never more than are left.</p>
<div class="row"><button class="button primary" type="submit">Adjust credits</button></div>
</form>
</section>`;
  return html`<section class="panel">
<div class="panel-head"><h2>Features and meters</h2></div>
${features}
${table}
</section>
${adjust}`;
}

export function customerView(
  frame: Frame,
  input: {
    tool: Tool;
    customer: Customer | null;
    email: string;
    grants: Grant[];
    holdings: Holdings;
    money: MoneyHistory;
    /** The tool's declared features; the customer's answer says which they hold. */
    features: Feature[];
    meters: CustomerMeter[];
    flash: {
      granted?: boolean;
      revoked?: boolean;
      refunded?: MadeAt;
      cancelled?: { when: "period_end" | "now"; at: MadeAt };
      credited?: boolean;
    };
    grant?: FormRefusal<{ days: string; note: string }>;
    credits?: FormRefusal<CreditsForm>;
  },
): Html {
  const grantError = formError(input.grant?.error, input.grant?.errorParam, { days: "days", note: "note" });
  const { customer: c, tool, email } = input;
  const facts = c
    ? html`<dl class="facts">
<dt>Access</dt><dd>${entitledBadge(c.entitled, c.via)}</dd>
<dt>Account</dt><dd>${c.account ? "Signed in to the workspace" : html`<span class="muted">Never signed in</span>`}</dd>
<dt>Plan</dt><dd>${c.plan ? html`${c.plan.name} <span class="muted">${c.plan.billing === "subscription" ? `per ${c.plan.interval ?? "period"}` : "one-time"}</span>` : html`<span class="muted">None</span>`}</dd>
<dt>Paid</dt><dd>${paidFact(c, input.holdings)}</dd>
<dt>Subscription</dt><dd>${c.subscription ? subscriptionSummary(c.subscription, input.holdings.subscriptions) : html`<span class="muted">None</span>`}</dd>
<dt>Trial</dt><dd>${c.trial ? html`${c.trial.active ? "Active, ends" : "Ended"} ${time(Date.parse(c.trial.endsAt))}` : html`<span class="muted">None</span>`}</dd>
</dl>`
    : notice("info", html`No customer with this address for <strong>${tool.name}</strong> yet. Granting access below makes them one.`);
  const grants =
    input.grants.length === 0
      ? emptyState("No grants or trials", "Grant access below: for a number of days, or until you revoke it.")
      : html`<div class="table-wrap"${scrollBox("Grants and trials")}><table>
<thead><tr><th>Kind</th><th>State</th><th>Note</th><th>Starts</th><th>Ends</th><th><span class="sr-only">Actions</span></th></tr></thead>
<tbody>${input.grants.map((g) => grantRow(frame, tool.id, email, g))}</tbody>
</table></div>`;
  return appPage(
    "Customer",
    frame,
    html`${pageHeading(email, html`Customer of <strong>${tool.name}</strong>`)}
${input.flash.granted ? notice("success", "Access granted. The customer holds the tool from their next check.") : ""}
${input.flash.revoked ? notice("success", "Grant revoked. Unless another source entitles them, the customer loses the tool at their next check.") : ""}
${input.flash.refunded ? notice("success", html`Licence refunded: it is revoked and payment.refunded was sent. ${processorOutcome(input.flash.refunded, "refund")}`) : ""}
${input.flash.cancelled?.when === "now" ? notice("success", html`Subscription ended now. Unless another source entitles them, the customer loses the tool at their next check. ${processorOutcome(input.flash.cancelled.at, "end")}`) : ""}
${input.flash.cancelled?.when === "period_end" ? notice("success", html`Subscription set to end at the end of its period. The customer keeps the tool until then. ${processorOutcome(input.flash.cancelled.at, "period_end")}`) : ""}
${input.flash.credited ? notice("success", "Credits adjusted. The meters below show what is left now.") : ""}
<section class="panel">${facts}</section>
${usageSections(frame, { tool, email, features: input.features, held: c?.features ?? [], meters: input.meters, credits: input.credits })}
${moneySection(frame, input.money)}
${holdingsSections(frame, tool.id, email, input.holdings)}
<section class="panel">
<div class="panel-head"><h2>Grants and trials</h2></div>
${grants}
</section>
<section class="panel narrow">
<div class="panel-head"><h2>Grant access</h2></div>
${grantError.notice}
<form method="post" action="${customerPath(frame, tool.id, email)}/grants" class="stack">
${csrfField(frame.csrf)}
<label for="days">Days <span class="muted">(empty or 0: until revoked)</span></label>
<input id="days"${grantError.on("days")} name="days" inputmode="numeric" pattern="[0-9]*" maxlength="4" value="${input.grant?.form.days ?? "30"}">
<label for="note">Note <span class="muted">(optional, for you and the other owners)</span></label>
<input id="note"${grantError.on("note")} name="note" maxlength="200" placeholder="e.g. Conference speaker" value="${input.grant?.form.note ?? ""}">
<div class="row"><button class="button primary" type="submit">Grant ${tool.name}</button></div>
</form>
</section>`,
    { trail: [{ label: email }] },
  );
}

/** Where a refund or a cancellation was made: at the environment's processor too (`asked`), or in Warden only. */
export interface MadeAt {
  processor: ProcessorName;
  asked: boolean;
}

const PROCESSOR_NAME: Record<ProcessorName, string> = { stripe: "Stripe", paddle: "Paddle" };
/** The key without which Warden cannot act at the processor (Configure › Payments). */
const ACTING_KEY: Record<ProcessorName, string> = { stripe: "Stripe secret key", paddle: "Paddle API key" };

type Change = "refund" | "cancel" | "end" | "period_end";
const PROCESSOR_STEP: Record<ProcessorName, Record<Change, string>> = {
  stripe: {
    refund: "refund the payment in Stripe's dashboard (Payments, the payment, Refund)",
    cancel: "make the same cancellation in Stripe's dashboard (Subscriptions, the subscription, Cancel), or Stripe keeps charging",
    end: "cancel the subscription in Stripe's dashboard (Subscriptions, the subscription, Cancel immediately), or Stripe keeps charging",
    period_end: "set the subscription to cancel at the period's end in Stripe's dashboard, or Stripe charges again",
  },
  paddle: {
    refund: "refund the transaction in Paddle's dashboard",
    cancel: "make the same cancellation in Paddle's dashboard, or Paddle keeps charging",
    end: "cancel the subscription in Paddle's dashboard, effective immediately, or Paddle keeps charging",
    period_end: "set the subscription to cancel at the end of its billing period in Paddle's dashboard, or Paddle charges again",
  },
};

/** The result's honest half: the processor did it too (a Paddle refund: asked, approved by Paddle later), or the vendor still must. */
function processorOutcome(at: MadeAt, what: Change): Html {
  const name = PROCESSOR_NAME[at.processor];
  if (!at.asked)
    return html`<strong>${name} was not asked</strong> (this environment has no ${ACTING_KEY[at.processor]}): ${PROCESSOR_STEP[at.processor][what]}.`;
  return at.processor === "paddle" && what === "refund"
    ? html`<strong>Paddle was asked to refund the transaction</strong>; Paddle approves a refund before it is made.`
    : html`<strong>${name} made the change too.</strong>`;
}

/** The confirmation's honest half: whether the environment's processor will be asked. */
function processorPromise(reach: ProcessorReach, what: Change): Html {
  const name = PROCESSOR_NAME[reach.processor];
  return reach.acts
    ? html`Warden asks ${name} first, with this environment's ${reach.processor === "stripe" ? "secret key" : "API key"}; if ${name} refuses, nothing changes.`
    : html`<strong>${name} will not be asked</strong>: this environment has no ${ACTING_KEY[reach.processor]} (Configure › Payments), so only Warden changes. You must then ${PROCESSOR_STEP[reach.processor][what]}.`;
}

/** An amount as the money section writes it, in the currency's own digits (€49.00, ¥4,900). */
const money = (minorUnits: number | null, currency: string | null) => (minorUnits === null || currency === null ? null : formatMoney(minorUnits, currency));

const LICENCE_STATE: Record<HeldLicence["status"], Html> = {
  active: html`<span class="badge badge-ok">Active</span>`,
  suspended: html`<span class="badge badge-pending">Suspended</span> <span class="state-note">by a dispute</span>`,
  revoked: html`<span class="badge badge-off">Revoked</span>`,
};

const muted = (text: string) => html`<span class="muted">${text}</span>`;

function licenceKind(l: HeldLicence): string {
  if (l.seat) return "Team seat";
  if (l.seats !== null && l.seats > 0) return `Team of ${l.seats} seats`;
  return "Single";
}

function licenceRow(frame: Frame, tool: string, email: string, l: HeldLicence): Html {
  const refundable = !l.seat && l.paid && l.status !== "revoked" && l.refundedAt === null;
  return html`<tr>
<td>${l.planName ?? muted("No plan")}${secondaryId(l.id)}</td>
<td>${l.refundedAt === null ? LICENCE_STATE[l.status] : html`<span class="badge badge-off">Refunded</span> <span class="state-note">${time(l.refundedAt)}</span>`}</td>
<td>${time(l.purchasedAt)}</td>
<td class="num">${money(l.amountCents, l.currency) ?? muted(l.seat ? "Paid by the team" : "None")}</td>
<td>${licenceKind(l)}</td>
<td class="actions">${
    refundable
      ? html`<form method="post" action="${customerPath(frame, tool, email)}/licences/${encodeURIComponent(l.id)}/refund">${csrfField(frame.csrf)}<button class="button small danger-outline" type="submit">Refund…</button></form>`
      : ""
  }</td>
</tr>`;
}

function subscriptionRow(frame: Frame, tool: string, email: string, s: HeldSubscription): Html {
  const ends =
    s.endedAt !== null
      ? html`Ended ${time(s.endedAt)}`
      : s.cancelAtPeriodEnd || s.cancelAt !== null
        ? html`Ends ${time(s.cancelAt ?? s.currentPeriodEnd)}`
        : html`Renews ${time(s.currentPeriodEnd)}`;
  return html`<tr>
<td>${s.planName ?? muted("No plan")}${secondaryId(s.id)}</td>
<td><span class="badge ${s.endedAt === null && (s.status === "active" || s.status === "trialing") ? "badge-ok" : "badge-off"}">${s.status}</span></td>
<td>${ends}</td>
<td>${s.seats !== null && s.seats > 0 ? `Team of ${s.seats} seats` : "Single"}</td>
<td class="actions">${
    s.endedAt === null
      ? html`<a class="button small danger-outline" href="${customerPath(frame, tool, email)}/subscriptions/${encodeURIComponent(s.id)}/cancel">Cancel…</a>`
      : ""
  }</td>
</tr>`;
}

function deviceRow(d: HeldDevice): Html {
  return html`<tr>
<td>${d.name}</td>
<td>${d.platform ?? muted("Unknown")}</td>
<td>${d.signedOutAt === null ? html`<span class="badge badge-ok">Signed in</span>` : html`<span class="badge badge-off">Signed out</span> <span class="state-note">${time(d.signedOutAt)}</span>`}</td>
<td>${d.lastActiveAt === null ? muted("Never") : time(d.lastActiveAt)}</td>
<td>${time(d.createdAt)}</td>
</tr>`;
}

function holdingsSections(frame: Frame, tool: string, email: string, h: Holdings): Html {
  const table = (label: string, head: Html, rows: Html[]) =>
    html`<div class="table-wrap"${scrollBox(label)}><table><thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table></div>`;
  return html`<section class="panel">
<div class="panel-head"><h2>Licences</h2></div>
${
  h.licences.length === 0
    ? emptyState("No licences", "One-time purchases of this tool, or of a bundle that includes it, appear here.")
    : table(
        "Licences",
        html`<th>Plan <span class="muted">· licence</span></th><th>State</th><th>Bought</th><th class="num">Amount</th><th>Kind</th><th><span class="sr-only">Actions</span></th>`,
        h.licences.map((l) => licenceRow(frame, tool, email, l)),
      )
}
</section>
<section class="panel">
<div class="panel-head"><h2>Subscriptions</h2></div>
${
  h.subscriptions.length === 0
    ? emptyState("No subscriptions", "Subscriptions to this tool, or to a bundle that includes it, appear here.")
    : table(
        "Subscriptions",
        html`<th>Plan <span class="muted">· subscription</span></th><th>Status</th><th>Period</th><th>Kind</th><th><span class="sr-only">Actions</span></th>`,
        h.subscriptions.map((s) => subscriptionRow(frame, tool, email, s)),
      )
}
</section>
<section class="panel">
<div class="panel-head"><h2>Devices</h2></div>
${
  h.devices.length === 0
    ? emptyState("No devices", "Devices appear once the customer signs in to the tool or activates it.")
    : table("Devices", html`<th>Name</th><th>Platform</th><th>State</th><th>Last active</th><th>Added</th>`, h.devices.map(deviceRow))
}
</section>`;
}

/** Refunding a licence: what will happen, then the fresh code mailed to the owner. */
/** A refund's or cancellation's refusal: Warden's own sentence, or Stripe's failure in words with Stripe's answer under it. */
function refusalNotice(error: string | FailureWords | undefined, nothing: string): Html {
  if (error === undefined) return html``;
  if (typeof error === "string") return notice("error", error);
  return failureNotice(error, { lead: html`<strong>${nothing}.</strong>`, source: "Stripe's answer" });
}

export function confirmRefundView(
  frame: Frame,
  input: { tool: Tool; email: string; licence: HeldLicence; reach: ProcessorReach; error?: string | FailureWords },
): Html {
  const { licence: l } = input;
  const back = customerPath(frame, input.tool.id, input.email);
  return appPage(
    "Refund licence",
    frame,
    html`${pageHeading(
      "Refund this licence?",
      html`${input.reach.acts ? "A refund returns the money through Stripe" : "A refund takes the customer's access away"}, so we emailed a fresh 6-digit code to <strong>${frame.email}</strong>.`,
    )}
<section class="panel narrow">
<dl class="facts">
<dt>Customer</dt><dd>${input.email}</dd>
<dt>Licence</dt><dd>${l.planName ?? muted("No plan")}${secondaryId(l.id)}</dd>
<dt>Bought</dt><dd>${time(l.purchasedAt)}</dd>
<dt>Amount</dt><dd>${money(l.amountCents, l.currency) ?? ""}</dd>
</dl>
${notice("error", html`The licence is revoked and <code>payment.refunded</code> is sent${l.seats !== null && l.seats > 0 ? html`; every seat of the team loses the tool too` : ""}. This cannot be undone.`)}
${notice(input.reach.acts ? "info" : "error", processorPromise(input.reach, "refund"))}
${refusalNotice(input.error, "Nothing was refunded")}
<form method="post" action="${back}/licences/${encodeURIComponent(l.id)}/refund" class="stack">
${csrfField(frame.csrf)}
<input type="hidden" name="confirm" value="1">
<label for="code">Confirmation code</label>
<input id="code" name="code" class="code-input" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required autofocus placeholder="123456">
<div class="row"><button class="button danger" type="submit">Refund ${money(l.amountCents, l.currency) ?? ""}</button><a class="button" href="${back}">Keep it</a></div>
</form>
</section>`,
    { trail: [{ label: input.email, href: back }, { label: "Refund licence" }] },
  );
}

/** Cancelling a subscription: at the period's end (confirmed here) or now (then a fresh code). */
export function confirmCancelView(
  frame: Frame,
  input: { tool: Tool; email: string; subscription: HeldSubscription; reach: ProcessorReach; codeSent?: boolean; error?: string | FailureWords },
): Html {
  const { subscription: s } = input;
  const back = customerPath(frame, input.tool.id, input.email);
  const action = `${back}/subscriptions/${encodeURIComponent(s.id)}/cancel`;
  const scheduled = s.cancelAtPeriodEnd || s.cancelAt !== null;
  const nowForm = input.codeSent
    ? html`<form method="post" action="${action}" class="stack">
${csrfField(frame.csrf)}
<input type="hidden" name="when" value="now">
<input type="hidden" name="confirm" value="1">
<p>Ending it now takes the tool away at once, so we emailed a fresh 6-digit code to <strong>${frame.email}</strong>.</p>
<label for="code">Confirmation code</label>
<input id="code" name="code" class="code-input" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required autofocus placeholder="123456">
<div class="row"><button class="button danger" type="submit">End it now</button><a class="button" href="${back}">Keep it</a></div>
</form>`
    : html`<form method="post" action="${action}" class="stack">
${csrfField(frame.csrf)}
<input type="hidden" name="when" value="now">
<p>Now: the customer loses the tool at their next check${s.seats !== null && s.seats > 0 ? ", and so does every seat of the team" : ""}. We email you a fresh code first.</p>
<div class="row"><button class="button danger-outline" type="submit">End it now…</button></div>
</form>`;
  return appPage(
    "Cancel subscription",
    frame,
    html`${pageHeading("Cancel this subscription?")}
<section class="panel narrow">
<dl class="facts">
<dt>Customer</dt><dd>${input.email}</dd>
<dt>Subscription</dt><dd>${s.planName ?? muted("No plan")} · ${s.status}${secondaryId(s.id)}</dd>
<dt>Period ends</dt><dd>${time(s.currentPeriodEnd)}</dd>
</dl>
${refusalNotice(input.error, "Nothing was cancelled")}
${notice(input.reach.acts ? "info" : "error", processorPromise(input.reach, input.codeSent ? "end" : "cancel"))}
${
  scheduled
    ? notice("info", "It is set to end at the end of its period already.")
    : html`<form method="post" action="${action}" class="stack">
${csrfField(frame.csrf)}
<input type="hidden" name="when" value="period_end">
<p>At the period's end: the customer keeps the tool until ${time(s.currentPeriodEnd)} and is not charged again.</p>
<div class="row"><button class="button primary" type="submit">Cancel at period end</button><a class="button" href="${back}">Keep it</a></div>
</form>`
}
<h2>Or end it now</h2>
${nowForm}
</section>`,
    { trail: [{ label: input.email, href: back }, { label: "Cancel subscription" }] },
  );
}

/** The Paid fact: a lapsed customer whose newest payment was refunded in full is told so first. */
function paidFact(c: Customer, h: Holdings): Html {
  if (c.paid_at === null) return muted("Never");
  const paidAt = Date.parse(c.paid_at);
  const refunded = c.via === "licence" ? undefined : h.licences.find((l) => !l.seat && l.purchasedAt === paidAt && l.refundedAt !== null);
  if (refunded?.refundedAt == null) return time(paidAt);
  return html`Refunded ${time(refunded.refundedAt)} <span class="state-note">paid ${time(paidAt)}</span>`;
}

const amountOf = (line: { amountCents: number | null; currency: string | null }) =>
  line.amountCents === null || line.currency === null ? muted("Not known") : html`${formatMoney(line.amountCents, line.currency)}`;

const DISPUTE_STATE: Record<string, string> = {
  needs_response: "needs your response",
  under_review: "under review",
  warning_needs_response: "inquiry, needs your response",
  warning_under_review: "inquiry under review",
  warning_closed: "closed (inquiry)",
  won: "won",
  lost: "lost",
};

/** What a line is, led by what happened to it: "Refunded …" first for a payment refunded in full, a dispute by its state. */
function lineWhat(line: MoneyLine): Html {
  const of = html`<span class="state-note">${line.source.planName ?? (line.source.kind === "licence" ? "Licence" : "Subscription")}</span>`;
  switch (line.kind) {
    case "payment":
      return line.refundedAt === null ? html`Payment ${of}` : html`<span class="badge badge-off">Refunded ${time(line.refundedAt)}</span> Payment ${of}`;
    case "refund":
      return html`${line.full === true ? "Refund in full" : line.full === false ? "Partial refund" : "Refund"} ${of}`;
    case "dispute":
      return html`<span class="badge ${line.status === "won" || line.status === "warning_closed" ? "badge-ok" : line.status === "lost" ? "badge-off" : "badge-pending"}">Dispute ${DISPUTE_STATE[line.status] ?? line.status}</span>${line.closedAt === null ? "" : html` <span class="state-note">closed ${time(line.closedAt)}</span>`} ${of}`;
  }
}

function processorCell(env: Env, id: string | null): Html {
  if (id === null) return muted("None");
  const link = stripeDashboardLink(env, id);
  return link === null ? html`<code class="id-secondary">${id}</code>` : html`<a href="${link}" rel="noreferrer"><code>${id}</code></a>`;
}

function moneyRow(env: Env, line: MoneyLine): Html {
  return html`<tr>
<td>${line.at === null ? muted("Date not recorded") : time(line.at)}</td>
<td>${lineWhat(line)}</td>
<td class="num">${line.kind === "refund" ? html`−${amountOf(line)}` : amountOf(line)}</td>
<td>${processorCell(env, line.processorId)}</td>
</tr>`;
}

function timelineItem(env: Env, s: SubscriptionTimeline): Html {
  const change = (c: SubscriptionTimeline["changes"][number]) => {
    const words = [
      ...(c.plan ? [html`plan ${c.plan.from ?? "none"} → ${c.plan.to ?? "none"}`] : []),
      ...(c.seats ? [html`seats ${c.seats.from ?? "none"} → ${c.seats.to ?? "none"}`] : []),
    ];
    return html`<li>${time(c.at)}: ${words.map((w, i) => (i === 0 ? w : html`, ${w}`))}</li>
`;
  };
  return html`<li><strong>${s.planName ?? "No plan"}</strong> ${processorCell(env, s.id)}
<ul class="plain-list">
<li>${time(s.startedAt)}: started on ${s.start.planName ?? "no plan"}${s.start.seats !== null && s.start.seats > 0 ? html`, ${s.start.seats} seats` : ""}</li>
${s.changes.map(change)}
${s.endedAt === null ? "" : html`<li>${time(s.endedAt)}: ended</li>`}
</ul></li>`;
}

/** The customer's money for the tool: lifetime value per currency, every payment, refund and dispute, and each subscription's history. */
function moneySection(frame: Frame, money: MoneyHistory): Html {
  const env = frame.current?.env ?? "test";
  if (money.lines.length === 0 && money.subscriptions.length === 0) {
    return html`<section class="panel" aria-labelledby="money-heading">
<div class="panel-head"><h2 id="money-heading">Money</h2></div>
${emptyState("No payments", "Payments, refunds and disputes of this tool, or of a bundle that includes it, appear here.")}
</section>`;
  }
  const lifetime =
    money.lifetime.length === 0
      ? ""
      : html`<dl class="facts">${money.lifetime.map(
          (v) =>
            html`<dt>Lifetime value <span class="muted">${v.currency.toUpperCase()}</span></dt><dd><strong>${formatMoney(v.valueCents, v.currency)}</strong> <span class="state-note">paid ${formatMoney(v.paidCents, v.currency)}, refunded ${formatMoney(v.refundedCents, v.currency)}</span></dd>`,
        )}</dl>`;
  const table =
    money.lines.length === 0
      ? ""
      : html`<h3>Payments, refunds and disputes</h3><div class="table-wrap"${scrollBox("Payments, refunds and disputes")}><table>
<thead><tr><th>Date</th><th>What</th><th class="num">Amount</th><th>In Stripe</th></tr></thead>
<tbody>${money.lines.map((line) => moneyRow(env, line))}</tbody>
</table></div>`;
  const subscriptions =
    money.subscriptions.length === 0
      ? ""
      : html`<h3>Subscription history</h3><ul class="plain-list">${money.subscriptions.map((s) => timelineItem(env, s))}</ul>`;
  return html`<section class="panel" aria-labelledby="money-heading">
<div class="panel-head"><h2 id="money-heading">Money</h2></div>
${lifetime}
${table}
${subscriptions}
</section>`;
}
