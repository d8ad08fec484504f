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
  const { t, s } = view.frame.text;
  const names = { workspace: view.workspaceName, tool: view.toolName };
  const now = current === null ? t("ticket.nowSignedOut") : current === "licence" ? t("ticket.nowKey") : t("ticket.now", { email: current.email });
  const stay = current === null ? t("ticket.staySignedOut") : current === "licence" ? t("ticket.stayKey") : t("ticket.stay", { email: current.email });
  return customerPage(
    ticketEmail === null ? s("ticket.titleKey") : s("ticket.title"),
    view.frame,
    html`<section class="card customer-card">
<h1>${ticketEmail === null ? t("ticket.titleKey") : t("ticket.heading", { email: ticketEmail })}</h1>
<p class="lede">${ticketEmail === null ? t("ticket.ledeKey", names) : t("ticket.lede", { ...names, email: ticketEmail })} ${now}</p>
<p>${t("ticket.warning", names)}</p>
<form method="post" action="${view.frame.base}/ticket" class="stack">
${csrfField(view.csrf)}
<input type="hidden" name="return" value="${view.back}">
<button class="button primary wide" type="submit" name="answer" value="continue">${
      ticketEmail === null ? t("ticket.continueKey") : t("ticket.continue", { email: ticketEmail })
    }</button>
<button class="button wide" type="submit" name="answer" value="stay">${stay}</button>
</form>
</section>`,
  );
}
