import type { Env } from "../../db/schema.js";
import type { ProcessorName } from "../../payments/payment-processor.js";
import type { StripeStatus } from "../../stripe/stripe-account.service.js";
import type { ReceivedStripeEvent } from "../../stripe/stripe-event.store.js";
import { type Html, html } from "../shared/html.js";
import {
  appPage,
  copyField,
  csrfField,
  currentSectionPath,
  emptyState,
  envBadge,
  type Frame,
  formError,
  notice,
  pageHeading,
  scrollBox,
  time,
} from "../shared/layout.js";
import { type PaddlePart, paddleConnectedPanels, paddleConnectPanel, processorLine } from "./paddle.views.js";
import { reasonWords } from "./reason-words.js";

export const stripePath = (frame: Frame) => currentSectionPath(frame, "stripe");

const mode = (env: Env) => (env === "test" ? "test mode" : "live mode");

export interface SecretsForm {
  webhookSecret?: string;
  error?: string;
  errorParam?: string;
}

/** The form for the secrets. What was typed is never sent back in it (a secret key least of all), only the error. */
function secretsForm(frame: Frame, env: Env, form: SecretsForm, label: string): Html {
  const error = formError(form.error, form.errorParam, { "webhook-secret": "webhook_secret", "secret-key": "secret_key" });
  return html`<form method="post" action="${stripePath(frame)}" class="stack" autocomplete="off">
${csrfField(frame.csrf)}
${error.notice}
<div class="field"><label for="webhook_secret">Signing secret of the endpoint</label>
<input id="webhook_secret"${error.on("webhook_secret")} name="webhook_secret" type="password" autocomplete="off" required spellcheck="false" placeholder="whsec_…">
<p class="hint">On the endpoint's page in Stripe: Signing secret › Reveal.</p></div>
<div class="field"><label for="secret_key">Secret key <span class="muted">(optional)</span></label>
<input id="secret_key"${error.on("secret_key")} name="secret_key" type="password" autocomplete="off" spellcheck="false" placeholder="sk_${env}_… or rk_${env}_…">
<p class="hint">Lets your buy button open Stripe Checkout, and sends the refunds and cancellations you make here to Stripe. A restricted key needs write access to Checkout Sessions, Refunds and Subscriptions.</p></div>
<p class="hint">We email you a code to confirm the secrets before they are stored.</p>
<div class="row"><button class="button primary" type="submit">${label}</button></div>
</form>`;
}

/** Why Warden did not act, in words, the recorded reason after it in muted code. */
function reasonText(reason: string): Html {
  const words = reasonWords("stripe", reason);
  return html`<span class="failure-plain">${words.plain}</span> <code class="raw-detail">${words.raw}</code>`;
}

const OUTCOME: Record<string, Html> = {
  applied: html`<span class="badge badge-ok">Applied</span>`,
  ignored: html`<span class="badge badge-off">Ignored</span>`,
  deferred: html`<span class="badge badge-pending">Waiting</span>`,
};

function lastEventPanel(frame: Frame, status: StripeStatus): Html {
  const e = status.lastEvent;
  const body = e
    ? html`<dl class="facts wide">
<dt>Received</dt><dd>${time(e.receivedAt)}</dd>
<dt>Event</dt><dd><code>${e.type}</code> <span class="muted">${e.id}</span></dd>
<dt>Result</dt><dd>${OUTCOME[e.outcome] ?? e.outcome}${e.reason ? html` <span class="state-note">${reasonText(e.reason)}</span>` : ""}</dd>
</dl>`
    : emptyState(
        "No event received yet",
        html`In Stripe's dashboard, open the endpoint and choose <strong>Send test event</strong>: once its signature checks out, it shows here.`,
      );
  return html`<section class="panel">
<div class="panel-head"><h2>Last event from Stripe</h2>${e ? html`<a class="button small" href="${stripePath(frame)}/events">Every event received</a>` : ""}</div>
${body}
</section>`;
}

/** Configure › Stripe › events: every event Stripe delivered here, newest first, with what Warden did and why. */
export function stripeEventsView(frame: Frame, input: { events: ReceivedStripeEvent[]; outcome: string; next: string | null }): Html {
  const env = frame.current?.env ?? "test";
  const choices: [string, string][] = [
    ["", "Every result"],
    ["applied", "Applied"],
    ["ignored", "Ignored"],
    ["deferred", "Waiting"],
  ];
  const list =
    input.events.length === 0
      ? emptyState(
          input.outcome ? "No events with this result" : "No event received yet",
          "Events appear here as Stripe delivers them to the address on the Stripe page; they are kept as long as webhook events (WARDEN_RETENTION_DAYS).",
        )
      : html`<div class="table-wrap"${scrollBox("Events from Stripe")}><table>
<thead><tr><th>Received</th><th>Type</th><th>Result</th><th>Why</th><th>Stripe's id</th></tr></thead>
<tbody>${input.events.map(
          (e) => html`<tr>
<td>${time(e.receivedAt)}</td>
<td><code>${e.type}</code></td>
<td>${OUTCOME[e.outcome] ?? e.outcome}</td>
<td>${e.reason ? reasonText(e.reason) : html`<span class="muted">—</span>`}</td>
<td><code>${e.id}</code></td>
</tr>`,
        )}</tbody>
</table></div>
${input.next ? html`<p class="pager"><a class="button small" href="${input.next}">Older events →</a></p>` : ""}`;
  return appPage(
    "Events from Stripe",
    frame,
    html`${pageHeading("Events from Stripe", html`What Stripe delivered to this workspace's ${env} address, newest first, and what Warden did with each. ${envBadge(env)}`)}
<p><a class="button small" href="${stripePath(frame)}">← Payments</a></p>
<section class="panel">
<form method="get" action="${stripePath(frame)}/events" class="inline-form filters">
<div class="field"><label for="outcome">Result</label>
<select id="outcome" name="outcome">${choices.map(([value, label]) => html`<option value="${value}"${value === input.outcome ? html` selected` : ""}>${label}</option>`)}</select></div>
<button class="button" type="submit">Filter</button>
</form>
</section>
<section class="panel">${list}</section>`,
  );
}

export function stripeView(
  frame: Frame,
  input: {
    status: StripeStatus;
    webhookUrl: string;
    events: readonly string[];
    form?: SecretsForm;
    flash?: "connected" | "disconnected" | "paddle-connected" | "paddle-disconnected";
    /** The reconcile panel, shown while connected. */
    reconcile: Html;
    /** When Stripe last refused the secret key stored now (a reconcile's failure), or null. */
    keyRefusedAt: number | null;
    /** The processor connected in this environment, or null: the page shows that one's part, or both ways in. */
    processor: ProcessorName | null;
    paddle: PaddlePart;
  },
): Html {
  const { status, webhookUrl, form = {} } = input;
  const env = status.env;
  const c = status.connection;
  const url = copyField("webhook-url", "Endpoint URL", webhookUrl);
  const eventList = html`<ul class="event-list">${input.events.map((t) => html`<li><code>${t}</code></li>`)}</ul>`;
  const flash =
    input.flash === "connected"
      ? notice(
          "success",
          c?.secretKey
            ? "Stripe is connected: Warden receives its events and can act in Stripe. Send a test event from Stripe's dashboard to see it arrive below."
            : "Warden now receives Stripe's events. Without a secret key it cannot act in Stripe: refunds and cancellations made here change Warden only. Send a test event from Stripe's dashboard to see it arrive below.",
        )
      : input.flash === "disconnected"
        ? notice("info", "Stripe is disconnected: its secrets are forgotten and its deliveries refused.")
        : input.flash === "paddle-connected"
          ? notice(
              "success",
              input.paddle.status.connection?.apiKeyLastFour
                ? "Paddle is connected: Warden receives its notifications and can act in Paddle. Send a test notification from Paddle to see it arrive below."
                : "Warden now receives Paddle's notifications. Without an API key it cannot act in Paddle: the Plans page cannot open a checkout, and refunds and cancellations made here change Warden only.",
            )
          : input.flash === "paddle-disconnected"
            ? notice("info", "Paddle is disconnected: its secrets are forgotten and its notifications refused.")
            : "";
  const stripePart = c
    ? html`<section class="panel">
<div class="panel-head"><h2>Connection</h2></div>
<dl class="facts wide">
<dt>Receiving events</dt><dd>${
        status.lastEvent
          ? html`<span class="badge badge-ok">Yes</span> <span class="state-note">last one ${time(status.lastEvent.receivedAt)}</span>`
          : html`<span class="badge badge-pending">Not yet</span> <span class="state-note">the signing secret is stored, but no event has arrived: send a test event from Stripe's dashboard</span>`
      }</dd>
<dt>Can act in Stripe</dt><dd>${
        c.secretKey && input.keyRefusedAt !== null
          ? html`<span class="badge badge-failing">Key refused</span> <span class="state-note">Stripe refused this secret key ${time(input.keyRefusedAt)}, so refunds and cancellations made here fail until you <a href="#secrets">store the current one</a></span>`
          : c.secretKey
            ? html`<span class="badge badge-ok">Yes</span> <span class="state-note">refunds and cancellations made in Warden are made in Stripe too; the buy button opens Stripe Checkout</span>`
            : html`<span class="badge badge-off">No</span> <span class="state-note">no secret key: refunds and cancellations made in Warden change Warden only (make them in Stripe's dashboard too), and the buy button cannot open a checkout</span>`
      }</dd>
<dt>Signing secret</dt><dd><code class="key">whsec_…${c.webhookSecretLastFour}</code></dd>
<dt>Secret key</dt><dd>${c.secretKey ? html`<code class="key">${c.secretKey.prefix}_…${c.secretKey.lastFour}</code>` : html`<span class="muted">None</span>`}</dd>
<dt>Connected</dt><dd>${time(c.connectedAt)}</dd>
<dt>Last changed</dt><dd>${time(c.updatedAt)}</dd>
</dl>
${url}
<p class="hint">The address of this workspace's Stripe endpoint in ${mode(env)}. It receives these events: ${input.events.map((t, i) => html`${i > 0 ? ", " : ""}<code>${t}</code>`)}.</p>
</section>
${lastEventPanel(frame, status)}
${input.reconcile}
<section class="panel" id="secrets">
<div class="panel-head"><h2>Replace the secrets</h2></div>
<p class="panel-text">After rolling the endpoint's signing secret in Stripe, or to add or change the secret key. Leaving the key empty keeps the one stored.</p>
${secretsForm(frame, env, form, "Save secrets")}
</section>
<section class="panel narrow">
<div class="panel-head"><h2>Disconnect</h2></div>
<p class="panel-text">Forget both secrets: Stripe's deliveries are refused until you connect again. Licences and subscriptions already made stay.</p>
<a class="button danger-outline" href="${stripePath(frame)}/disconnect">Disconnect…</a>
</section>`
    : html`<section class="panel">
<div class="panel-head"><h2>Connect Stripe</h2><span class="badge badge-off">Not receiving events</span></div>
<ol class="setup-steps">
<li><p>In Stripe's dashboard, switch to <strong>${mode(env)}</strong> and open <strong>Developers › Webhooks › Add endpoint</strong>. Paste this URL:</p>
${url}</li>
<li><p>Select these events:</p>${eventList}</li>
<li><p>Create the endpoint, then paste its signing secret here, and your secret key if your buy button is to open Stripe Checkout.</p>
${secretsForm(frame, env, form, "Connect Stripe")}</li>
</ol>
</section>
${status.lastEvent ? lastEventPanel(frame, status) : ""}`;
  // One processor per environment: Paddle's part replaces Stripe's where Paddle is connected, and both ways in show where neither is.
  const body =
    input.processor === "paddle"
      ? paddleConnectedPanels(input.paddle, env)
      : input.processor === "stripe"
        ? // A Paddle form posted anyway (an old tab) is refused in words above Stripe's part, where it is read.
          html`${input.paddle.form?.error ? notice("error", input.paddle.form.error) : ""}${stripePart}`
        : html`${stripePart}${paddleConnectPanel(input.paddle, env)}`;
  return appPage(
    "Payments",
    frame,
    html`${pageHeading("Payments", html`${processorLine(input.processor, env)} ${envBadge(env)}`)}
${flash}
${body}`,
    { copyButtons: true },
  );
}

/** Asks for the mailed code before the secrets are stored; they ride in the form, as typed, in this answer only. */
export function confirmSecretKeyView(frame: Frame, input: { webhookSecret: string; secretKey: string; error?: string }): Html {
  return appPage(
    "Confirm it is you",
    frame,
    html`${pageHeading(
      "Confirm it is you",
      html`Whoever holds the signing secret can make purchases up, and a secret key can take payments and refund them, so we emailed a fresh 6-digit code to <strong>${frame.email}</strong>. It confirms these secrets and nothing else.`,
    )}
<section class="panel narrow">
${input.error ? notice("error", input.error) : ""}
<form method="post" action="${stripePath(frame)}" class="stack" autocomplete="off">
${csrfField(frame.csrf)}
<input type="hidden" name="webhook_secret" value="${input.webhookSecret}">
<input type="hidden" name="secret_key" value="${input.secretKey}">
<input type="hidden" name="confirm" value="1">
<label for="code">Confirmation code</label>
<input id="code" name="code" class="code-input" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required autofocus placeholder="123456">
<div class="row"><button class="button primary" type="submit">Save the secrets</button><a class="button" href="${stripePath(frame)}">Cancel</a></div>
</form>
</section>`,
  );
}

export function disconnectView(frame: Frame, env: Env): Html {
  return appPage(
    "Disconnect Stripe",
    frame,
    html`${pageHeading("Disconnect Stripe?", html`The ${env} environment of this workspace. ${envBadge(env)}`)}
<section class="panel narrow">
<ul class="consequences">
<li>Warden forgets the signing secret and the secret key.</li>
<li>Stripe's next deliveries are refused. Stripe retries a refused delivery for a while (up to three days in live mode), so connecting again soon with the same signing secret loses nothing.</li>
<li>Your buy button can no longer open a checkout in ${mode(env)}.</li>
<li>Licences, subscriptions and customers stay as they are.</li>
</ul>
<form method="post" action="${stripePath(frame)}/disconnect" class="row">
${csrfField(frame.csrf)}
<button class="button danger" type="submit">Disconnect</button>
<a class="button" href="${stripePath(frame)}">Stay connected</a>
</form>
</section>`,
  );
}
