import type { TrialStatus } from "../client/trial.service.js";
import { type Html, html } from "../dashboard/shared/html.js";
import { csrfField, formatTime, notice } from "../dashboard/shared/layout.js";
import { type CustomerFrame, customerPage } from "./layout.js";

export interface TrialPage {
  frame: CustomerFrame;
  toolName: string;
  /** The tool's offer (always known) and, signed in by address, the person's trial. */
  status: Pick<TrialStatus, "trialDays"> & { trial: TrialStatus["trial"] | undefined };
  /** The session came from a licence key: a trial needs an address. */
  keyOnly: boolean;
  started?: boolean;
  /** A start was asked for while the person's trial was already running. */
  running?: boolean;
  error?: string;
}

const when = (ms: number) => html`<time datetime="${new Date(ms).toISOString()}">${formatTime(ms)}</time>`;
const days = (n: number) => `${n} ${n === 1 ? "day" : "days"}`;

export function trialView(page: TrialPage): Html {
  const { frame, status, toolName } = page;
  const base = frame.base;
  let body: Html;
  if (status.trialDays === 0 && !status.trial) {
    body = html`<h1>No trial of ${toolName}</h1>
<p class="lede">${toolName} offers no free trial. See the plans to choose one.</p>
<p><a class="button primary" href="${base}/plans">See the plans</a></p>`;
  } else if (status.trial?.live) {
    body = html`<h1>Your trial of ${toolName}</h1>
${page.started ? notice("success", `Your trial has started: ${toolName} is unlocked. The extension picks it up within seconds.`) : ""}
${page.running && !page.started ? notice("info", html`Your trial is already running, until ${when(status.trial.endsAt)}: a trial is started once.`) : ""}
<p class="lede">Your trial runs until <strong>${when(status.trial.endsAt)}</strong>.</p>
<p>To keep ${toolName} after that, choose a plan before it ends.</p>
<p><a class="button primary" href="${base}/plans">See the plans</a></p>`;
  } else if (status.trial) {
    body = html`<h1>Your trial has ended</h1>
<p class="lede">Your trial of ${toolName} ended on ${when(status.trial.endsAt)}. A trial is given once per person.</p>
<p><a class="button primary" href="${base}/plans">See the plans</a></p>`;
  } else if (frame.customer === null) {
    body = html`<h1>Try ${toolName} free</h1>
<p class="lede">${toolName} is free for ${days(status.trialDays)}, once per person, with no card. Sign in with your email address to start it.</p>
<p><a class="button primary" href="${base}/sign-in?return=${encodeURIComponent(`${base}/trial`)}">Sign in to start the trial</a></p>`;
  } else if (page.keyOnly) {
    body = html`<h1>Try ${toolName} free</h1>
<p class="lede">You are signed in with a licence key, which names no person. A trial is given once per person: sign out, then sign in with your email address to start it.</p>`;
  } else {
    body = html`<h1>Try ${toolName} free</h1>
${page.error ? notice("error", page.error) : ""}
<p class="lede">${toolName} is free for ${days(status.trialDays)} from now, once per person, with no card. Nothing renews on its own.</p>
<form method="post" action="${base}/trial">
${csrfField(frame.customer.csrf)}
<button class="button primary wide" type="submit">Start my ${status.trialDays}-day trial</button>
</form>
<p class="hint">For ${frame.customer.email ?? "your address"}.</p>`;
  }
  return customerPage(`${toolName} trial`, frame, html`<section class="card customer-card">${body}</section>`);
}
