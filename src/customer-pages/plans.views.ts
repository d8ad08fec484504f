import { type Html, html } from "../dashboard/shared/html.js";
import { csrfField, notice } from "../dashboard/shared/layout.js";
import type { CheckoutOutcome } from "../payments/checkout.service.js";
import type { ProcessorName } from "../payments/payment-processor.js";
import type { Meter } from "../usage/usage.types.js";
import { type CustomerFrame, customerPage, linkTo, type PageText } from "./layout.js";
import { findOffer, type Offer, type OfferChoice, type Offers } from "./plans.service.js";

export interface PlansPage {
  frame: CustomerFrame;
  toolName: string;
  workspaceName: string;
  offers: Offers;
  /** The form token: the session's, or the browser's before sign-in (anyone may buy; Stripe asks the address). */
  csrf: string;
  /** The offer the address asked for (`?plan=`, with `&bundle=` for a bundle's plan). */
  chosen: OfferChoice | null;
  /** Why the last choice could not open a checkout, or why the asked-for plan is not shown. */
  error?: string;
}

/** `€49.00 once`, `€5.00 a month`: the price in its currency's format in the page's locale, and how often it is paid. */
function priceOf(text: PageText, plan: Offer["plan"]): Html {
  const interval = plan.billing === "one_time" ? "once" : (plan.interval ?? "month");
  return text.t("plans.price", { price: text.money(plan.amountCents, plan.currency), interval });
}

/** `500 summaries a month`, with the meter's name when its unit does not say it; `interval` null for credits, which do not renew. */
function units(text: PageText, meter: Meter, n: number, interval: string | null): Html {
  const named = meter.name.toLowerCase() !== meter.unit.toLowerCase();
  const values = { meter: meter.name, count: text.count(n), unit: meter.unit, interval: interval ?? "month" };
  const key = interval === null ? (named ? "plans.namedUnits" : "plans.units") : named ? "plans.namedUnitsPer" : "plans.unitsPer";
  return html`<li>${text.t(key, values)}</li>`;
}

/** What the plan gives the tool: the features it unlocks, each meter's allowance per period, the credits it adds. */
function termsOf(page: PlansPage, offer: Offer): Html {
  const { terms, plan } = offer;
  const { features, meters } = page.offers;
  const text = page.frame.text;
  // An allowance runs per billing period for a subscription, per calendar month for the rest (docs/decisions.md, "Usage").
  const per = plan.billing === "subscription" ? (plan.interval ?? "month") : "month";
  const unlocked = features.filter((f) => terms.features.includes(f.id));
  const allowances = meters.filter((m) => terms.allowances[m.id] !== undefined);
  const credits = meters.filter((m) => terms.credits[m.id] !== undefined);
  const list = (label: Html, items: Html[]) => (items.length === 0 ? "" : html`<p class="offer-gives-label">${label}</p><ul class="offer-gives">${items}</ul>`);
  const expiry =
    credits.length === 0
      ? ""
      : html`<p class="offer-billing">${
          terms.creditsExpireDays === null ? text.t("plans.creditsForever") : text.t("plans.creditsExpire", { days: terms.creditsExpireDays })
        }</p>`;
  return html`${list(
    text.t("plans.unlocks"),
    unlocked.map((f) => html`<li>${f.name}</li>`),
  )}${list(
    text.t("plans.includes"),
    allowances.map((m) => units(text, m, terms.allowances[m.id] as number, per)),
  )}${list(
    text.t("plans.adds"),
    credits.map((m) => units(text, m, terms.credits[m.id] as number, null)),
  )}${expiry}`;
}

function offerCard(page: PlansPage, offer: Offer, index: number, level: "h2" | "h3"): Html {
  const { plan } = offer;
  const { t } = page.frame.text;
  const chosen = page.chosen !== null && findOffer(page.offers, page.chosen) === offer;
  const headingId = `offer-${index}`;
  const label = plan.billing === "subscription" ? t("plans.subscribe") : t("plans.buy");
  const action = page.offers.takesPayments
    ? html`<form method="post" action="${page.frame.base}/plans">
${csrfField(page.csrf)}
<input type="hidden" name="plan" value="${plan.id}">
${offer.productKind === "bundle" ? html`<input type="hidden" name="bundle" value="${offer.productId}">` : ""}
<button class="button primary wide" type="submit" aria-describedby="${headingId}"${chosen ? html` autofocus` : ""}>${label}</button>
</form>`
    : "";
  const name = offer.productKind === "bundle" ? t("plans.bundlePlan", { bundle: offer.productName, plan: plan.name }) : html`${plan.name}`;
  const pack = Object.keys(offer.terms.credits).length > 0;
  const billing = plan.billing === "subscription" ? t("plans.renews", { interval: plan.interval ?? "month" }) : pack ? t("plans.packOnce") : t("plans.once");
  return html`<li class="${chosen ? "offer is-chosen" : "offer"}">
${level === "h2" ? html`<h2 class="offer-name" id="${headingId}">${name}</h2>` : html`<h3 class="offer-name" id="${headingId}">${name}</h3>`}
${chosen ? html`<p class="offer-flag">${t("plans.chosen")}</p>` : offer.recommended ? html`<p class="offer-flag">${t("plans.recommended")}</p>` : ""}
<p class="offer-price">${priceOf(page.frame.text, plan)}</p>
<p class="offer-billing">${billing}</p>
<div class="offer-what">
${
  offer.gives.length === 0
    ? ""
    : html`<p class="offer-gives-label">${t("plans.gives")}</p>
<ul class="offer-gives">${offer.gives.map((name) => html`<li>${name}</li>`)}</ul>`
}
${termsOf(page, offer)}
</div>
${action}
</li>`;
}

/** The processors' names as their buyers see them (brands: the same in every language). */
const PROCESSOR_NAMES: Record<ProcessorName, string> = { stripe: "Stripe", paddle: "Paddle" };

export function plansView(page: PlansPage): Html {
  const { offers, frame } = page;
  const { t, s } = frame.text;
  const tool = page.toolName;
  const processor = PROCESSOR_NAMES[offers.processor];
  const signedIn = frame.customer;
  const trial =
    offers.trialDays > 0 ? html`<p class="trial-offer">${t("plans.trial", { tool, days: offers.trialDays, link: linkTo(`${frame.base}/trial`) })}</p>` : "";
  const buyer = !offers.takesPayments
    ? notice("info", t("plans.noPayments", { workspace: page.workspaceName }))
    : signedIn?.email
      ? html`<p class="hint">${t("plans.signedInAs", { email: signedIn.email })}</p>`
      : html`<p class="hint">${t("plans.signInFirst", { tool, processor, link: linkTo(`${frame.base}/sign-in?return=${encodeURIComponent(`${frame.base}/plans`)}`) })}</p>`;
  const list =
    offers.offers.length === 0
      ? offers.packs.length === 0
        ? html`<p class="empty-title">${t("plans.noneTitle")}</p><p>${t("plans.none", { workspace: page.workspaceName, tool })}</p>`
        : ""
      : html`<ul class="offer-list">${offers.offers.map((offer, i) => offerCard(page, offer, i, "h2"))}</ul>`;
  // Ids go on from the plans' so that each is the page's only one; Manage's "Buy more" links to #packs.
  const packs =
    offers.packs.length === 0
      ? ""
      : html`<section class="offer-section" id="packs" aria-labelledby="packs-title">
<h2 id="packs-title">${t("plans.packs")}</h2>
<p class="hint">${t("plans.packsHint")}</p>
<ul class="offer-list">${offers.packs.map((offer, i) => offerCard(page, offer, offers.offers.length + i, "h3"))}</ul>
</section>`;
  return customerPage(
    s("plans.title", { tool }),
    frame,
    html`<header class="customer-head"><h1>${t("plans.title", { tool })}</h1>
<p class="lede">${t("plans.lede", { tool, processor })}</p></header>
${page.error ? notice("error", page.error) : ""}
${trial}
${buyer}
${list}
${packs}`,
  );
}

export interface SuccessPage {
  frame: CustomerFrame;
  toolName: string;
  outcome: CheckoutOutcome;
  /** This page's own address, to look again. */
  self: string;
}

function bought(text: PageText, outcome: Extract<CheckoutOutcome, { state: "confirmed" }>): Html {
  const product = outcome.planName ? text.t("success.productPlan", { product: outcome.productName, plan: outcome.planName }) : outcome.productName;
  const renews = outcome.periodEnd !== null ? html`<p>${text.t("success.renews", { date: text.date(outcome.periodEnd) })}</p>` : "";
  const key = outcome.billing === "subscription" ? "success.subscription" : "success.once";
  return html`<p class="lede">${text.t(key, { product, seats: outcome.seats ?? 0 })}</p>${renews}`;
}

export function successView(page: SuccessPage): Html {
  const { outcome, frame } = page;
  const { t, s } = frame.text;
  const tool = page.toolName;
  const processor = PROCESSOR_NAMES[outcome.processor];
  const body =
    outcome.state === "confirmed"
      ? html`<h1>${t("success.title")}</h1>
${bought(frame.text, outcome)}
<p>${t("success.unlocked", { tool, processor })}</p>
<p><a class="button primary" href="${frame.base}/manage">${t("success.seeWhatYouHave")}</a></p>`
      : outcome.state === "pending"
        ? html`<h1>${t("success.pendingTitle")}</h1>
<p class="lede">${t("success.pendingLede", { processor })}</p>
<p>${t("success.pendingText", { tool })}</p>
<p><a class="button primary" href="${page.self}">${t("success.checkAgain")}</a></p>`
        : html`<h1>${t("success.elsewhereTitle", { tool })}</h1>
<p class="lede">${t("success.elsewhereLede")}</p>
<p><a class="button" href="${frame.base}/manage">${t("shell.manage")}</a></p>`;
  return customerPage(
    outcome.state === "confirmed" ? s("success.title") : s("success.pendingTitle"),
    frame,
    html`<section class="card customer-card">${body}</section>`,
  );
}
