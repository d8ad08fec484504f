// Configure › Payments, Paddle's part: how to connect Paddle Billing to the environment
// (the steps, with this workspace's real webhook URL and the commands to run), and, once
// connected, its status, its last notification and the plans' Paddle price links. Read
// only: Paddle's secrets are given to `warden admin paddle connect` on the server, and its
// price links to `warden admin plan update … --paddle-price`.
import type { Env } from "../../db/schema.js";
import type { PaddleStatus } from "../../paddle/paddle-account.service.js";
import type { PaddleLinkRow } from "../../paddle/paddle-plan-link.service.js";
import type { ProcessorName } from "../../payments/payment-processor.js";
import { type Html, html } from "../shared/html.js";
import { copyField, emptyState, scrollBox, time } from "../shared/layout.js";

// Paddle's sandbox is the test environment's; its live account the live one's.
const place = (env: Env) => (env === "test" ? "Paddle's sandbox (sandbox-vendors.paddle.com)" : "your live Paddle account (vendors.paddle.com)");
const apiKeyShape = (env: Env) => (env === "test" ? "pdl_sdbx_apikey_…" : "pdl_live_apikey_…");

export interface PaddlePart {
  status: PaddleStatus;
  /** Where Paddle sends notifications, on the configured public origin. */
  webhookUrl: string;
  links: PaddleLinkRow[];
  events: readonly string[];
}

/** The steps to connect Paddle, each command written for this workspace and environment. */
function steps(part: PaddlePart, env: Env, connected: boolean): Html {
  const ws = part.status.workspace;
  return html`<ol class="setup-steps">
<li><p>In ${place(env)}, open <strong>Developer tools › Notifications › New destination</strong>, of type webhook, at this URL:</p>
${copyField("paddle-webhook-url", "Notification destination URL", part.webhookUrl)}
<p>with these events: ${part.events.map((t, i) => html`${i > 0 ? ", " : ""}<code>${t}</code>`)}.</p></li>
<li><p>Copy the destination's secret key (<code>pdl_ntfset_…</code>), and under <strong>Developer tools › Authentication</strong> make an API key (<code>${apiKeyShape(env)}</code>): with it Warden opens Paddle's checkout and makes refunds and cancellations in Paddle too. On the server, ${connected ? "to replace them, run" : "run"}:</p>
<pre class="payload" tabindex="0"><code>warden admin paddle connect --workspace ${ws} --env ${env} --webhook-secret pdl_ntfset_… --api-key ${apiKeyShape(env)}</code></pre>
<p class="hint">The secrets are typed on the server, never in a browser; Warden keeps them sealed and shows their last four characters here.</p></li>
<li><p>In Paddle's catalogue, make each plan's price, then link it to its plan (Paddle's sandbox and live have ids of their own):</p>
<pre class="payload" tabindex="0"><code>warden admin plan update --workspace ${ws} --tool TOOL --id PLAN --env ${env} --paddle-price pri_…</code></pre></li>
<li><p>Set a default payment link under <strong>Checkout › Checkout settings</strong> (Paddle's hosted checkout opens there), and send a test notification from the destination: it shows here once its signature checks out.</p></li>
</ol>`;
}

function linksPanel(part: PaddlePart): Html {
  const body =
    part.links.length === 0
      ? emptyState(
          "No plan is linked to a Paddle price",
          "Paddle's checkout sells a plan's linked price, and a Paddle purchase buys a plan only through one: link each plan (step 3).",
        )
      : html`<div class="table-wrap"${scrollBox("Plans' Paddle prices")}><table>
<thead><tr><th>Product</th><th>Plan</th><th>Paddle price or product</th></tr></thead>
<tbody>${part.links.map((l) => html`<tr><td>${l.productKind} <code>${l.productId}</code></td><td><code>${l.planId}</code></td><td><code>${l.paddleId}</code></td></tr>`)}</tbody>
</table></div>`;
  return html`<section class="panel" id="paddle-prices">
<div class="panel-head"><h2>Plans' Paddle prices</h2></div>
${body}
</section>`;
}

const OUTCOME: Record<string, Html> = {
  applied: html`<span class="badge badge-ok">Applied</span>`,
  ignored: html`<span class="badge badge-off">Ignored</span>`,
};

/** Paddle in use here: the connection, its last notification, the price links, and how to change the secrets. */
export function paddleConnectedPanels(part: PaddlePart, env: Env): Html {
  const c = part.status.connection;
  const e = part.status.lastEvent;
  if (!c) return html``;
  return html`<section class="panel" id="paddle">
<div class="panel-head"><h2>Paddle connection</h2></div>
<dl class="facts wide">
<dt>Receiving events</dt><dd>${
    e
      ? html`<span class="badge badge-ok">Yes</span> <span class="state-note">last one ${time(e.receivedAt)}</span>`
      : html`<span class="badge badge-pending">Not yet</span> <span class="state-note">the secret key is stored, but no notification has arrived: send a test notification from Paddle</span>`
  }</dd>
<dt>Can act in Paddle</dt><dd>${
    c.apiKeyLastFour !== null
      ? html`<span class="badge badge-ok">Yes</span> <span class="state-note">the Plans page opens Paddle's checkout; refunds and cancellations made in Warden are made in Paddle too</span>`
      : html`<span class="badge badge-off">No</span> <span class="state-note">no API key: the Plans page cannot open a checkout, and refunds and cancellations made in Warden change Warden only</span>`
  }</dd>
<dt>Secret key</dt><dd><code class="key">pdl_ntfset_…${c.webhookSecretLastFour}</code></dd>
<dt>API key</dt><dd>${c.apiKeyLastFour !== null ? html`<code class="key">${apiKeyShape(env)}${c.apiKeyLastFour}</code>` : html`<span class="muted">None</span>`}</dd>
<dt>Connected</dt><dd>${time(c.connectedAt)}</dd>
<dt>Last changed</dt><dd>${time(c.updatedAt)}</dd>
</dl>
${
  e
    ? html`<h3>Last event from Paddle</h3><dl class="facts wide">
<dt>Received</dt><dd>${time(e.receivedAt)}</dd>
<dt>Event</dt><dd><code>${e.type}</code> <span class="muted">${e.id}</span></dd>
<dt>Result</dt><dd>${OUTCOME[e.outcome] ?? e.outcome}${e.reason ? html` <span class="state-note"><code class="raw-detail">${e.reason}</code></span>` : ""}</dd>
</dl>`
    : ""
}
</section>
${linksPanel(part)}
<section class="panel">
<div class="panel-head"><h2>How Paddle is connected</h2></div>
${steps(part, env, true)}
<p class="panel-text">Stripe cannot be connected to this environment while Paddle is: one processor per environment.</p>
</section>`;
}

/** No processor yet: Paddle's way in, beside Stripe's form. */
export function paddleConnectPanel(part: PaddlePart, env: Env): Html {
  return html`<section class="panel" id="paddle">
<div class="panel-head"><h2>Or connect Paddle</h2><span class="badge badge-off">Not connected</span></div>
<p class="panel-text">Paddle Billing sells as merchant of record: it charges and remits the buyers' VAT and sales tax. Its purchases make the same licences, subscriptions and events as Stripe's.</p>
${steps(part, env, false)}
</section>`;
}

/** The line under the page's title: which processor the environment's payments come from. */
export function processorLine(processor: ProcessorName | null, env: Env): string {
  if (processor === "paddle") return `Payments of the ${env} environment come from Paddle Billing (${env === "test" ? "its sandbox" : "live"}).`;
  if (processor === "stripe") return `Payments of the ${env} environment come from your Stripe account's ${env} mode.`;
  return `No payment processor is connected to the ${env} environment yet: connect Stripe or Paddle, one per environment.`;
}
