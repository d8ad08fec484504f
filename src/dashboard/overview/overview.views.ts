import type { KeySummary } from "../../auth/key.service.js";
import type { RecentActivity } from "../../billing/recent-activity.service.js";
import type { Change, OverviewInsights } from "../../insights/insights.types.js";
import type { WorkspaceUsage } from "../../limits/usage.service.js";
import type { WebhookEndpoint } from "../../webhooks/webhook.schema.js";
import type { SetupStep } from "../../workspaces/setup.service.js";
import type { Tool, Workspace } from "../../workspaces/workspace.types.js";
import { customerPath, customersPath } from "../customers/customers.views.js";
import { changeOf } from "../shared/charts.js";
import { type Html, html } from "../shared/html.js";
import { appPage, emptyState, type Frame, formatCount, formatMoney, formatTime, pageHeading, scrollBox, sectionPath, time } from "../shared/layout.js";
import { endpointPath, endpointState, webhooksPath } from "../webhooks/webhooks.views.js";

function passesCard(usage: WorkspaceUsage, workspace: Workspace): Html {
  const { held, limit, atLeast } = usage.passes;
  const figure = atLeast ? `${formatCount(held)}+` : formatCount(held);
  return html`<section class="stat">
<p class="stat-label">Access held now</p>
<p class="stat-value">${figure}${limit !== null ? html`<span class="stat-of"> of ${formatCount(limit)}</span>` : ""}</p>
${limit !== null ? html`<meter min="0" max="${limit}" low="${Math.floor(limit * 0.8)}" high="${Math.floor(limit * 0.95)}" optimum="0" value="${Math.min(held, limit)}">${figure} of ${limit}</meter>` : ""}
<p class="stat-note">${
    workspace.plan === "hobby"
      ? "Hobby plan: each live grant, trial, licence and subscription seat counts once. Past the limit, new grants are refused."
      : "Pro plan: no limit on live grants, trials, licences and subscription seats."
  }</p>
</section>`;
}

function keysCard(frame: Frame, keys: KeySummary[]): Html {
  const here = frame.current;
  if (!here) throw new Error("an overview has a workspace");
  const active = keys.filter((k) => k.revokedAt === null);
  const lastUsed = Math.max(0, ...active.map((k) => k.lastUsedAt ?? 0));
  return html`<section class="stat">
<p class="stat-label">Active API keys</p>
<p class="stat-value">${active.length}</p>
<p class="stat-note">${lastUsed > 0 ? `Last request ${formatTime(lastUsed)}.` : "No request yet."} <a href="${sectionPath(here.workspace.slug, here.env, "keys")}">Manage keys</a></p>
</section>`;
}

function usageTable(usage: WorkspaceUsage): Html {
  return html`<div class="table-wrap"${scrollBox("Today's usage")}><table class="usage">
<thead><tr><th>Limit</th><th class="num">Used</th><th class="num">Of</th><th>Use</th><th>Starts again</th></tr></thead>
<tbody>${usage.daily.map(
    (d) => html`<tr>
<td>${d.what}</td>
<td class="num">${formatCount(d.used)}</td>
<td class="num">${formatCount(d.limit)}</td>
<td><meter min="0" max="${d.limit}" low="${Math.floor(d.limit * 0.8)}" high="${Math.floor(d.limit * 0.95)}" optimum="0" value="${Math.min(d.used, d.limit)}">${d.used} of ${d.limit}</meter></td>
<td>${d.resetsAt === null ? html`<span class="muted">Nothing counted yet</span>` : formatTime(d.resetsAt)}</td>
</tr>`,
  )}</tbody>
</table></div>`;
}

/** Endpoints disabled or failing, each with why and since when; nothing when all are well. */
function troubledEndpoints(frame: Frame, endpoints: WebhookEndpoint[]): Html {
  if (endpoints.length === 0) return html``;
  return html`<section class="panel">
<div class="panel-head"><h2>Webhook endpoints that need attention</h2><p class="panel-sub">Events are not reaching them. <a href="${webhooksPath(frame)}">All endpoints</a></p></div>
<div class="table-wrap"${scrollBox("Webhook endpoints that need attention")}><table>
<thead><tr><th>Endpoint</th><th>State</th><th><span class="sr-only">Open</span></th></tr></thead>
<tbody>${endpoints.map(
    (e) => html`<tr>
<td><a class="url" href="${endpointPath(frame, e.id)}">${e.url}</a></td>
<td>${endpointState(e)}</td>
<td class="actions"><a class="button small" href="${endpointPath(frame, e.id)}">Open</a></td>
</tr>`,
  )}</tbody>
</table></div>
</section>`;
}

const here = (frame: Frame) => {
  const current = frame.current;
  if (!current) throw new Error("an overview has a workspace");
  return current;
};

/** Each step: what it is, why, where it is done (the live keys whatever the environment on screen: going live needs one). */
function stepOf(frame: Frame, step: SetupStep): { title: string; text: Html; href: string | null; action: string } {
  const { workspace, env } = here(frame);
  const at = (section: Parameters<typeof sectionPath>[2], e = env) => sectionPath(workspace.slug, e, section);
  switch (step) {
    case "catalogue":
      return { title: "Add a tool and a plan", text: html`What you sell: a tool, and a plan with its price.`, href: at("tools"), action: "Tools and plans" };
    case "payments":
      return {
        title: `Connect payments (${env}) and receive an event`,
        text: html`Purchases, renewals and refunds reach Warden as your payment processor's events (Stripe or Paddle); done once the first one arrives.`,
        href: at("stripe"),
        action: "Payments",
      };
    case "webhook":
      return {
        title: `Add a webhook endpoint (${env})`,
        text: html`Your server hears of each purchase, cancellation and refund.`,
        href: at("webhooks"),
        action: "Webhooks",
      };
    case "live-key":
      return {
        title: "Create a live API key",
        text: html`Your server asks Warden about customers with it once you go live.`,
        href: at("keys", "live"),
        action: "Live API keys",
      };
    case "library":
      return {
        title: "Add the library to your extension",
        text: html`<code>@warden/extension</code> checks a person's access: see the README, section "The extension's side: the client API", and <code>packages/extension/README.md</code>. Done at the first access check seen in ${env}.`,
        href: null,
        action: "",
      };
  }
}

/** The steps a workspace has yet to take, with the ones done ticked; nothing once all are done. */
function setupChecklist(frame: Frame, steps: { step: SetupStep; done: boolean }[]): Html {
  if (steps.every((s) => s.done)) return html``;
  const left = steps.filter((s) => !s.done).length;
  return html`<section class="panel" aria-labelledby="setup-head">
<div class="panel-head"><h2 id="setup-head">Set up this workspace</h2><p class="panel-sub">${left} of ${steps.length} steps left; this list goes once every step is done.</p></div>
<ol class="checklist">${steps.map(({ step, done }) => {
    const s = stepOf(frame, step);
    return html`<li class="checklist-step" id="step-${step}">${done ? html`<span class="badge badge-ok">Done</span>` : html`<span class="badge badge-pending">To do</span>`}
<div class="checklist-text"><p class="checklist-title">${s.title}</p>${done ? "" : html`<p class="checklist-note">${s.text}</p>`}</div>
${!done && s.href !== null ? html`<a class="button small" href="${s.href}">${s.action}</a>` : ""}</li>`;
  })}</ol>
</section>`;
}

const insightsHref = (frame: Frame, page: "revenue" | "subscriptions" | "people" | "use", range: "7d" | "30d") =>
  `${sectionPath(here(frame).workspace.slug, here(frame).env, "insights")}/${page}?tool=all&range=${range}`;

/** A figure as a card that opens its Insights page. */
function figureCard(href: string, label: string, value: string, note: Html | string): Html {
  return html`<a class="stat stat-link" href="${href}"><span class="stat-label">${label}</span><span class="stat-value">${value}</span><span class="stat-note">${note}</span></a>`;
}

/** A figure against the period before: "+12% from €40.00 in the 30 days before", "up from none 30 days ago", "no change: 3 in the 30 days before". */
const against = (c: Change, format: (v: number) => string, before: string) =>
  c.value === c.previous
    ? `no change: ${format(c.previous)} ${before}`
    : c.previous === 0
      ? `${changeOf(c.value, c.previous)} ${before}`
      : `${changeOf(c.value, c.previous)} from ${format(c.previous)} ${before}`;

function figures(frame: Frame, f: OverviewInsights): Html {
  const money = (currency: string) => (v: number) => formatMoney(v, currency);
  const subscriptions = insightsHref(frame, "subscriptions", "30d");
  const revenue = insightsHref(frame, "revenue", "30d");
  const people = insightsHref(frame, "people", "30d");
  const use = insightsHref(frame, "use", "7d");
  const mrr =
    f.mrr.length === 0
      ? [figureCard(subscriptions, "MRR", "None", "No subscription has paid yet.")]
      : f.mrr.map((m) =>
          figureCard(subscriptions, `MRR, ${m.currency.toUpperCase()}`, formatMoney(m.value, m.currency), against(m, money(m.currency), "30 days ago")),
        );
  const net =
    f.netRevenue.length === 0
      ? [figureCard(revenue, "Net revenue, 30 days", "None", "No sale or refund in the last 60 days.")]
      : f.netRevenue.map((r) =>
          figureCard(
            revenue,
            `Net revenue, 30 days, ${r.currency.toUpperCase()}`,
            formatMoney(r.value, r.currency),
            against(r, money(r.currency), "in the 30 days before"),
          ),
        );
  return html`<section class="overview-figures" aria-labelledby="figures-head">
<h2 id="figures-head" class="section-head">The last 30 days <span class="muted">(${f.from} to ${f.to}, UTC; every tool)</span></h2>
<div class="stats">
${mrr}
${net}
${figureCard(people, "New customers, 30 days", formatCount(f.newCustomers.value), against(f.newCustomers, formatCount, "in the 30 days before"))}
${figureCard(people, "Trials started, 30 days", formatCount(f.trials.started), `${formatCount(f.trials.converted)} converted: paid within the trial or the 30 days after`)}
${figureCard(use, "People active today", formatCount(f.activeToday), `${formatCount(f.activeThisWeek)} in the last 7 days`)}
</div>
</section>`;
}

const KIND_WORDS: Record<RecentActivity["kind"], string> = { purchase: "Purchase", cancellation: "Cancellation", refund: "Refund" };

function activityTable(frame: Frame, activity: RecentActivity[], tools: Tool[]): Html {
  const isTool = new Set(tools.map((t) => t.id));
  // A customer's page is a tool's; a bundle's buyer is found by the customer list's search.
  const customerHref = (a: RecentActivity, email: string) =>
    isTool.has(a.productId) ? customerPath(frame, a.productId, email) : `${customersPath(frame)}?${new URLSearchParams({ q: email })}`;
  const what = (a: RecentActivity) =>
    a.kind === "cancellation" ? html`${KIND_WORDS[a.kind]} <span class="state-note">${a.endedNow ? "ended" : "at period end"}</span>` : KIND_WORDS[a.kind];
  return html`<section class="panel" aria-labelledby="activity-head">
<div class="panel-head"><h2 id="activity-head">Recent activity</h2><p class="panel-sub">The latest purchases, cancellations and refunds, newest first.</p></div>
${
  activity.length === 0
    ? emptyState("Nothing yet", "Purchases, cancellations and refunds appear here as Stripe reports them.")
    : html`<div class="table-wrap"${scrollBox("Recent activity")}><table>
<thead><tr><th scope="col">When</th><th scope="col">What</th><th scope="col">Customer</th><th scope="col">Product</th><th scope="col" class="num">Amount</th></tr></thead>
<tbody>${activity.map(
        (a) => html`<tr>
<td>${time(a.at)}</td>
<td>${what(a)}</td>
<td>${a.email === null ? html`<span class="muted">Unknown</span>` : html`<a href="${customerHref(a, a.email)}">${a.email}</a>`}</td>
<td><code>${a.plan === "" ? a.productId : a.plan}</code></td>
<td class="num">${a.amountCents === null || a.currency === null ? html`<span class="muted">None yet</span>` : formatMoney(a.amountCents, a.currency)}</td>
</tr>`,
      )}</tbody>
</table></div>`
}
</section>`;
}

export interface OverviewInput {
  workspace: Workspace;
  usage: WorkspaceUsage;
  keys: KeySummary[];
  troubled: WebhookEndpoint[];
  figures: OverviewInsights;
  steps: { step: SetupStep; done: boolean }[];
  activity: RecentActivity[];
  tools: Tool[];
}

export function overviewView(frame: Frame, input: OverviewInput): Html {
  const { workspace, usage, keys } = input;
  const env = frame.current?.env ?? "test";
  return appPage(
    "Overview",
    frame,
    html`${pageHeading(workspace.name, html`Workspace <code>${workspace.slug}</code> · ${workspace.plan === "hobby" ? "Hobby" : "Pro"} plan · ${env === "test" ? "test" : "live"} environment`)}
${setupChecklist(frame, input.steps)}
${troubledEndpoints(frame, input.troubled)}
${figures(frame, input.figures)}
${activityTable(frame, input.activity, input.tools)}
<div class="stats">
${passesCard(usage, workspace)}
${keysCard(frame, keys)}
</div>
<section class="panel">
<div class="panel-head"><h2>Today's usage</h2><p class="panel-sub">Counted for this workspace's ${env} environment, as the API counts it.</p></div>
${usageTable(usage)}
</section>`,
  );
}

export function noWorkspaceView(frame: Frame): Html {
  return appPage(
    "No workspace",
    frame,
    html`${pageHeading("Welcome to Warden")}
<section class="panel">
${emptyState(
  "You own no workspace yet",
  html`Ask your operator to create one for you: <code>warden admin workspace create --slug acme --name "Acme" --owner ${frame.email}</code>. It appears here at once. To join an existing one, ask one of its owners to invite this address, then follow the link in their mail.`,
)}
</section>`,
  );
}
