// Configure › Payments, Paddle's part: how to connect Paddle Billing to the environment
// (the steps, with this workspace's real webhook URL, and the form for its secrets), and,
// once connected, its status, its last notification, the plans' Paddle price links (each
// edited on its plan's page), the secrets replaced and disconnect. The same use cases as
// `warden admin paddle connect|disconnect`, whose commands the page shows second.
import type { Env } from "../../db/schema.js";
import type { PaddleStatus } from "../../paddle/paddle-account.service.js";
import type { PaddleLinkRow } from "../../paddle/paddle-plan-link.service.js";
import type { ProcessorName } from "../../payments/payment-processor.js";
import { type Html, html } from "../shared/html.js";
import { appPage, copyField, csrfField, emptyState, envBadge, type Frame, formError, pageHeading, scrollBox, time } from "../shared/layout.js";
import { reasonWords } from "./reason-words.js";

// Paddle's sandbox is the test environment's; its live account the live one's.
const place = (env: Env) => (env === "test" ? "Paddle's sandbox (sandbox-vendors.paddle.com)" : "your live Paddle account (vendors.paddle.com)");
const apiKeyShape = (env: Env) => (env === "test" ? "pdl_sdbx_apikey_…" : "pdl_live_apikey_…");

export interface PaddlePart {
  /** The Payments page's path, and the form's CSRF token. */
  path: string;
  csrf: string;
  status: PaddleStatus;
  /** Where Paddle sends notifications, on the configured public origin. */
  webhookUrl: string;
  links: PaddleLinkRow[];
  /** A linked plan's page, where its Paddle prices are edited. */
  planPath: (link: PaddleLinkRow) => string;
  events: readonly string[];
  /** The secrets form as refused, if it was. */
  form?: PaddleSecretsForm;
}

/** The form for Paddle's secrets; what was typed is never sent back in it, only the error. */
export interface PaddleSecretsForm {
  error?: string;
  errorParam?: string;
}

function secretsForm(part: PaddlePart, env: Env, form: PaddleSecretsForm, label: string): Html {
  const error = formError(form.error, form.errorParam, { "webhook-secret": "paddle_webhook_secret", "api-key": "paddle_api_key" });
  return html`<form method="post" action="${part.path}/paddle" class="stack" autocomplete="off">
${csrfField(part.csrf)}
${error.notice}
<div class="field"><label for="paddle_webhook_secret">Secret key of the notification destination</label>
<input id="paddle_webhook_secret"${error.on("paddle_webhook_secret")} name="webhook_secret" type="password" autocomplete="off" required spellcheck="false" placeholder="pdl_ntfset_…">
<p class="hint">Shown on the destination in Paddle, under <strong>Developer tools › Notifications</strong>.</p></div>
<div class="field"><label for="paddle_api_key">API key <span class="muted">(optional)</span></label>
<input id="paddle_api_key"${error.on("paddle_api_key")} name="api_key" type="password" autocomplete="off" spellcheck="false" placeholder="${apiKeyShape(env)}">
<p class="hint">A ${env === "test" ? "sandbox" : "live"} key. Lets the Plans page open Paddle's checkout, and sends the refunds and cancellations you make here to Paddle. Leaving it empty keeps the one stored.</p></div>
<p class="hint">We email you a code to confirm the secrets before they are stored.</p>
<div class="row"><button class="button primary" type="submit">${label}</button></div>
</form>`;
}

/** The same connection from the server's shell, for whoever scripts it. */
const connectCommand = (part: PaddlePart, env: Env) =>
  html`<p class="hint">Or on the server: <code>warden admin paddle connect --workspace ${part.status.workspace} --env ${env} --webhook-secret pdl_ntfset_… --api-key ${apiKeyShape(env)}</code></p>`;

/** The steps to connect Paddle, with this workspace's URL; the form in step 2 while not connected. */
function steps(part: PaddlePart, env: Env, form: Html | null): Html {
  const ws = part.status.workspace;
  return html`<ol class="setup-steps">
<li><p>In ${place(env)}, open <strong>Developer tools › Notifications › New destination</strong>, of type webhook, at this URL:</p>
${copyField("paddle-webhook-url", "Notification destination URL", part.webhookUrl)}
<p>with these events: ${part.events.map((t, i) => html`${i > 0 ? ", " : ""}<code>${t}</code>`)}.</p></li>
<li><p>Copy the destination's secret key (<code>pdl_ntfset_…</code>), and under <strong>Developer tools › Authentication</strong> make an API key (<code>${apiKeyShape(env)}</code>): with it Warden opens Paddle's checkout and makes refunds and cancellations in Paddle too. ${form ? "Paste them here:" : html`Paste them under <a href="#paddle-secrets">Replace the secrets</a>.`}</p>
${form ?? ""}
${connectCommand(part, env)}
<p class="hint">Warden keeps them sealed and shows their last four characters here.</p></li>
<li><p>In Paddle's catalogue, make each plan's price, then link it on the plan's page, under <strong>Paddle prices</strong> (Paddle's sandbox and live have ids of their own), or on the server:</p>
<pre class="payload" tabindex="0"><code>warden admin plan update --workspace ${ws} --tool TOOL --id PLAN --env ${env} --paddle-price pri_…</code></pre></li>
<li><p>Set a default payment link under <strong>Checkout › Checkout settings</strong> (Paddle's hosted checkout opens there), and send a test notification from the destination: it shows here once its signature checks out.</p></li>
</ol>`;
}

function linksPanel(part: PaddlePart): Html {
  const body =
    part.links.length === 0
      ? emptyState(
          "No plan is linked to a Paddle price",
          "Paddle's checkout sells a plan's linked price, and a Paddle purchase buys a plan only through one: link each on its plan's page (step 3).",
        )
      : html`<div class="table-wrap"${scrollBox("Plans' Paddle prices")}><table>
<thead><tr><th>Product</th><th>Plan</th><th>Paddle price or product</th></tr></thead>
<tbody>${part.links.map(
          (l) =>
            html`<tr><td>${l.productKind} <code>${l.productId}</code></td><td><a href="${part.planPath(l)}#paddle-prices"><code>${l.planId}</code></a></td><td><code>${l.paddleId}</code></td></tr>`,
        )}</tbody>
</table></div>`;
  return html`<section class="panel" id="paddle-prices">
<div class="panel-head"><h2>Plans' Paddle prices</h2></div>
${body}
<p class="hint">Link or unlink a price on its plan's page (a tool's or bundle's plans, under Catalogue).</p>
</section>`;
}

/** Why Warden did not act, in words, the recorded reason after it in muted code. */
function reasonText(reason: string): Html {
  const words = reasonWords("paddle", reason);
  return html`<span class="failure-plain">${words.plain}</span> <code class="raw-detail">${words.raw}</code>`;
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
<dt>Result</dt><dd>${OUTCOME[e.outcome] ?? e.outcome}${e.reason ? html` <span class="state-note">${reasonText(e.reason)}</span>` : ""}</dd>
</dl>`
    : ""
}
</section>
${linksPanel(part)}
<section class="panel" id="paddle-secrets">
<div class="panel-head"><h2>Replace the secrets</h2></div>
<p class="panel-text">After rolling the destination's secret key in Paddle, or to add or change the API key.</p>
${secretsForm(part, env, part.form ?? {}, "Save secrets")}
${connectCommand(part, env)}
</section>
<section class="panel">
<div class="panel-head"><h2>How Paddle is connected</h2></div>
${steps(part, env, null)}
<p class="panel-text">Stripe cannot be connected to this environment while Paddle is: one processor per environment.</p>
</section>
<section class="panel narrow">
<div class="panel-head"><h2>Disconnect</h2></div>
<p class="panel-text">Forget both secrets: Paddle's notifications are refused until you connect again. Licences and subscriptions already made stay.</p>
<a class="button danger-outline" href="${part.path}/paddle/disconnect">Disconnect…</a>
</section>`;
}

/** No processor yet: Paddle's way in, beside Stripe's form. */
export function paddleConnectPanel(part: PaddlePart, env: Env): Html {
  return html`<section class="panel" id="paddle">
<div class="panel-head"><h2>Or connect Paddle</h2><span class="badge badge-off">Not connected</span></div>
<p class="panel-text">Paddle Billing sells as merchant of record: it charges and remits the buyers' VAT and sales tax. Its purchases make the same licences, subscriptions and events as Stripe's.</p>
${steps(part, env, secretsForm(part, env, part.form ?? {}, "Connect Paddle"))}
</section>`;
}

/** The line under the page's title: which processor the environment's payments come from. */
export function processorLine(processor: ProcessorName | null, env: Env): string {
  if (processor === "paddle") return `Payments of the ${env} environment come from Paddle Billing (${env === "test" ? "its sandbox" : "live"}).`;
  if (processor === "stripe") return `Payments of the ${env} environment come from your Stripe account's ${env} mode.`;
  return `No payment processor is connected to the ${env} environment yet: connect Stripe or Paddle, one per environment.`;
}

/** What disconnecting does, before it is done (live: a fresh code follows). */
export function paddleDisconnectView(frame: Frame, path: string, env: Env): Html {
  return appPage(
    "Disconnect Paddle",
    frame,
    html`${pageHeading("Disconnect Paddle?", html`The ${env} environment of this workspace. ${envBadge(env)}`)}
<section class="panel narrow">
<ul class="consequences">
<li>Warden forgets the destination's secret key and the API key.</li>
<li>Paddle's next notifications are refused. Paddle retries a refused notification for a while (up to three days for a live account), so connecting again soon with the same secret key loses nothing; with an API key, <code>warden admin paddle reconcile</code> applies what was missed.</li>
<li>The Plans page can no longer open Paddle's checkout in ${env === "test" ? "the sandbox" : "live"}.</li>
<li>Licences, subscriptions, customers and the plans' Paddle prices stay as they are.</li>
</ul>
<form method="post" action="${path}/paddle/disconnect" class="row">
${csrfField(frame.csrf)}
<button class="button danger" type="submit">Disconnect</button>
<a class="button" href="${path}">Stay connected</a>
</form>
</section>`,
  );
}
