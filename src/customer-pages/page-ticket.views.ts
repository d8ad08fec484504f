import { type Html, html } from "../dashboard/shared/html.js";
import { csrfField } from "../dashboard/shared/layout.js";
import { type CustomerFrame, customerPage } from "./layout.js";

/** The question a page ticket's link asks before it signs the browser in. */
export interface TicketQuestion {
  frame: CustomerFrame;
  toolName: string;
  workspaceName: string;
  /** The held ticket's form token. */
  csrf: string;
  /** The page asked for, to go on to whatever the answer. */
  back: string;
  /** Whom the ticket signs in: an address, or null for a key-activated device's session. */
  ticketEmail: string | null;
  /** Who this browser is signed in as now: null signed out; `licence` for a key-activated device's session (no address shown). */
  current: { email: string } | "licence" | null;
}

/**
 * "Continue as …?": whoever is signed in on the pages buys and starts trials for
 * themselves, so a link that signs a browser in must be the person's own choice. The
 * page says who the link signs in, who is signed in now, and why it asks.
 */
export function ticketQuestionView(view: TicketQuestion): Html {
  const { ticketEmail, current } = view;
  const as = ticketEmail === null ? "with the licence key" : `as ${ticketEmail}`;
  const now =
    current === null
      ? html`It is not signed in there now.`
      : current === "licence"
        ? html`It is signed in with a licence key there now.`
        : html`You are signed in as <strong>${current.email}</strong> there now.`;
  const stay = current === null ? "No, stay signed out" : current === "licence" ? "No, stay with the licence key" : `No, stay as ${current.email}`;
  return customerPage(
    ticketEmail === null ? "Continue with the licence key?" : "Continue?",
    view.frame,
    html`<section class="card customer-card">
<h1>${ticketEmail === null ? "Continue with the licence key?" : html`Continue as ${ticketEmail}?`}</h1>
<p class="lede">${
      ticketEmail === null
        ? html`This link signs this browser in on ${view.workspaceName}'s pages with a licence key of ${view.toolName}: you would see that licence and its devices.`
        : html`This link signs this browser in as <strong>${ticketEmail}</strong> on ${view.workspaceName}'s pages.`
    } ${now}</p>
<p>Continue only if you opened this page from the ${view.toolName} extension yourself. Whoever is signed in here buys plans and starts trials for that account.</p>
<form method="post" action="${view.frame.base}/ticket" class="stack">
${csrfField(view.csrf)}
<input type="hidden" name="return" value="${view.back}">
<button class="button primary wide" type="submit" name="answer" value="continue">Continue ${as}</button>
<button class="button wide" type="submit" name="answer" value="stay">${stay}</button>
</form>
</section>`,
  );
}
