import type { KeySummary } from "../../auth/key.service.js";
import type { WorkspaceUsage } from "../../limits/usage.service.js";
import type { WebhookEndpoint } from "../../webhooks/webhook.schema.js";
import type { Workspace } from "../../workspaces/workspace.types.js";
import { type Html, html } from "../shared/html.js";
import { appPage, emptyState, type Frame, formatCount, formatTime, pageHeading, scrollBox, sectionPath } from "../shared/layout.js";
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

function gettingStarted(frame: Frame, keys: KeySummary[]): Html {
  const here = frame.current;
  if (!here || keys.length > 0) return html``;
  return html`<section class="panel steps">
<div class="panel-head"><h2>Get started</h2></div>
<ol>
<li><strong>Create a ${here.env} API key</strong> for your server. <a href="${sectionPath(here.workspace.slug, here.env, "keys")}">Create a key</a></li>
<li><strong>Ask Warden about a customer</strong>: <code>GET /api/v1/tools/&lt;tool&gt;/customers/&lt;email&gt;</code> with the key as a bearer token.</li>
<li><strong>Read the reference</strong> of every call in the <a href="/api/v1/docs">API documentation</a>.</li>
</ol>
</section>`;
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

export function overviewView(frame: Frame, input: { workspace: Workspace; usage: WorkspaceUsage; keys: KeySummary[]; troubled: WebhookEndpoint[] }): Html {
  const { workspace, usage, keys } = input;
  const env = frame.current?.env ?? "test";
  return appPage(
    "Overview",
    frame,
    html`${pageHeading(workspace.name, html`Workspace <code>${workspace.slug}</code> · ${workspace.plan === "hobby" ? "Hobby" : "Pro"} plan · ${env === "test" ? "test" : "live"} environment`)}
${gettingStarted(frame, keys)}
${troubledEndpoints(frame, input.troubled)}
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
