import type { TrialStatus } from "../client/trial.service.js";
import { type Html, html } from "../dashboard/shared/html.js";
import { csrfField, notice } from "../dashboard/shared/layout.js";
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

export function trialView(page: TrialPage): Html {
  const { frame, status, toolName: tool } = page;
  const { t, s, date } = frame.text;
  const base = frame.base;
  const plans = html`<p><a class="button primary" href="${base}/plans">${t("error.seePlans")}</a></p>`;
  let body: Html;
  if (status.trialDays === 0 && !status.trial) {
    body = html`<h1>${t("trial.noneHeading", { tool })}</h1>
<p class="lede">${t("trial.noneLede", { tool })}</p>
${plans}`;
  } else if (status.trial?.live) {
    body = html`<h1>${t("trial.heading", { tool })}</h1>
${page.started ? notice("success", t("trial.started", { tool })) : ""}
${page.running && !page.started ? notice("info", t("trial.running", { date: date(status.trial.endsAt) })) : ""}
<p class="lede">${t("trial.until", { date: date(status.trial.endsAt) })}</p>
<p>${t("trial.keep", { tool })}</p>
${plans}`;
  } else if (status.trial) {
    body = html`<h1>${t("trial.endedHeading")}</h1>
<p class="lede">${t("trial.endedLede", { tool, date: date(status.trial.endsAt) })}</p>
${plans}`;
  } else if (frame.customer === null) {
    body = html`<h1>${t("trial.tryHeading", { tool })}</h1>
<p class="lede">${t("trial.signedOutLede", { tool, days: status.trialDays })}</p>
<p><a class="button primary" href="${base}/sign-in?return=${encodeURIComponent(`${base}/trial`)}">${t("trial.signInToStart")}</a></p>`;
  } else if (page.keyOnly) {
    body = html`<h1>${t("trial.tryHeading", { tool })}</h1>
<p class="lede">${t("trial.keyLede")}</p>`;
  } else {
    body = html`<h1>${t("trial.tryHeading", { tool })}</h1>
${page.error ? notice("error", page.error) : ""}
<p class="lede">${t("trial.lede", { tool, days: status.trialDays })}</p>
<form method="post" action="${base}/trial">
${csrfField(frame.customer.csrf)}
<button class="button primary wide" type="submit">${t("trial.start", { days: status.trialDays })}</button>
</form>
<p class="hint">${frame.customer.email ? t("trial.for", { email: frame.customer.email }) : t("trial.forYourAddress")}</p>`;
  }
  return customerPage(s("trial.title", { tool }), frame, html`<section class="card customer-card">${body}</section>`);
}
