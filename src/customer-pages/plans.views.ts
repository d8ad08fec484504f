import { type Html, html } from "../dashboard/shared/html.js";
import { csrfField, formatCount, formatMoney, formatTime, notice } from "../dashboard/shared/layout.js";
import type { CheckoutOutcome } from "../stripe/checkout.service.js";
import type { Meter } from "../usage/usage.types.js";
import { type CustomerFrame, customerPage } from "./layout.js";
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

/** `€49.00 once`, `€5.00 a month`: the price in its currency's format, and how often it is paid. */
function priceOf(plan: Offer["plan"]): Html {
  const per = plan.billing === "one_time" ? "once" : `a ${plan.interval ?? "month"}`;
  return html`<span class="offer-amount">${formatMoney(plan.amountCents, plan.currency)}</span> <span class="offer-per">${per}</span>`;
}

/** `500 summaries a month`, with the meter's name when its unit does not say it. */
function units(meter: Meter, n: number, per: string): Html {
  const named = meter.name.toLowerCase() === meter.unit.toLowerCase() ? "" : html`${meter.name}: `;
  return html`<li>${named}${formatCount(n)} ${meter.unit}${per}</li>`;
}

/** What the plan gives the tool: the features it unlocks, each meter's allowance per period, the credits it adds. */
function termsOf(page: PlansPage, offer: Offer): Html {
  const { terms, plan } = offer;
  const { features, meters } = page.offers;
  // An allowance runs per billing period for a subscription, per calendar month for the rest (docs/decisions.md, "Usage").
  const per = ` a ${plan.billing === "subscription" ? (plan.interval ?? "month") : "month"}`;
  const unlocked = features.filter((f) => terms.features.includes(f.id));
  const allowances = meters.filter((m) => terms.allowances[m.id] !== undefined);
  const credits = meters.filter((m) => terms.credits[m.id] !== undefined);
  const list = (label: string, items: Html[]) =>
    items.length === 0 ? "" : html`<p class="offer-gives-label">${label}</p><ul class="offer-gives">${items}</ul>`;
  const expiry =
    credits.length === 0
      ? ""
      : html`<p class="offer-billing">${
          terms.creditsExpireDays === null
            ? "Credits last until you spend them."
            : `Credits last ${terms.creditsExpireDays} ${terms.creditsExpireDays === 1 ? "day" : "days"} from purchase.`
        }</p>`;
  return html`${list(
    "Unlocks",
    unlocked.map((f) => html`<li>${f.name}</li>`),
  )}${list(
    "Includes",
    allowances.map((m) => units(m, terms.allowances[m.id] as number, per)),
  )}${list(
    "Adds",
    credits.map((m) => units(m, terms.credits[m.id] as number, "")),
  )}${expiry}`;
}

function offerCard(page: PlansPage, offer: Offer, index: number, level: "h2" | "h3"): Html {
  const { plan } = offer;
  const chosen = page.chosen !== null && findOffer(page.offers, page.chosen) === offer;
  const headingId = `offer-${index}`;
  const label = plan.billing === "subscription" ? "Subscribe" : "Buy";
  const action = page.offers.takesPayments
    ? html`<form method="post" action="${page.frame.base}/plans">
${csrfField(page.csrf)}
<input type="hidden" name="plan" value="${plan.id}">
${offer.productKind === "bundle" ? html`<input type="hidden" name="bundle" value="${offer.productId}">` : ""}
<button class="button primary wide" type="submit" aria-describedby="${headingId}"${chosen ? html` autofocus` : ""}>${label}</button>
</form>`
    : "";
  const name = offer.productKind === "bundle" ? html`${offer.productName}: ${plan.name}` : html`${plan.name}`;
  const pack = Object.keys(offer.terms.credits).length > 0;
  const billing =
    plan.billing === "subscription"
      ? `Renews every ${plan.interval ?? "month"} until you cancel.`
      : pack
        ? "Pay once; buy it again whenever you need more."
        : "Pay once, keep it.";
  return html`<li class="${chosen ? "offer is-chosen" : "offer"}">
${level === "h2" ? html`<h2 class="offer-name" id="${headingId}">${name}</h2>` : html`<h3 class="offer-name" id="${headingId}">${name}</h3>`}
${chosen ? html`<p class="offer-flag">Your choice</p>` : offer.recommended ? html`<p class="offer-flag">Recommended</p>` : ""}
<p class="offer-price">${priceOf(plan)}</p>
<p class="offer-billing">${billing}</p>
<div class="offer-what">
${
  offer.gives.length === 0
    ? ""
    : html`<p class="offer-gives-label">Gives you</p>
<ul class="offer-gives">${offer.gives.map((name) => html`<li>${name}</li>`)}</ul>`
}
${termsOf(page, offer)}
</div>
${action}
</li>`;
}

export function plansView(page: PlansPage): Html {
  const { offers, frame } = page;
  const signedIn = frame.customer;
  const trial =
    offers.trialDays > 0
      ? html`<p class="trial-offer">Not sure yet? <a href="${frame.base}/trial">Try ${page.toolName} free for ${offers.trialDays} ${offers.trialDays === 1 ? "day" : "days"}</a>, no card needed.</p>`
      : "";
  const buyer = !offers.takesPayments
    ? notice("info", `${page.workspaceName} takes no payments here yet: nothing can be bought until they connect their payments. Come back later.`)
    : signedIn?.email
      ? html`<p class="hint">You are signed in as <strong>${signedIn.email}</strong>: what you buy is yours, whatever address you give at checkout.</p>`
      : html`<p class="hint">Payment is by Stripe, which asks your email address. <a href="${frame.base}/sign-in?return=${encodeURIComponent(`${frame.base}/plans`)}">Sign in</a> first to buy for the address you use in ${page.toolName}.</p>`;
  const list =
    offers.offers.length === 0
      ? offers.packs.length === 0
        ? html`<p class="empty-title">No plans on sale</p><p>${page.workspaceName} sells no plan of ${page.toolName} at the moment.</p>`
        : ""
      : html`<ul class="offer-list">${offers.offers.map((offer, i) => offerCard(page, offer, i, "h2"))}</ul>`;
  // Ids go on from the plans' so that each is the page's only one; Manage's "Buy more" links to #packs.
  const packs =
    offers.packs.length === 0
      ? ""
      : html`<section class="offer-section" id="packs" aria-labelledby="packs-title">
<h2 id="packs-title">Credit packs</h2>
<p class="hint">Credits add to what your plan gives: they are spent once its allowance for the period is used up.</p>
<ul class="offer-list">${offers.packs.map((offer, i) => offerCard(page, offer, offers.offers.length + i, "h3"))}</ul>
</section>`;
  return customerPage(
    `${page.toolName} plans`,
    frame,
    html`<header class="customer-head"><h1>${page.toolName} plans</h1>
<p class="lede">Choose how you want ${page.toolName}: checkout is on Stripe's secure page, and you come back here.</p></header>
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

function bought(outcome: Extract<CheckoutOutcome, { state: "confirmed" }>): Html {
  const plan = outcome.planName ? html` (${outcome.planName})` : "";
  const seats = outcome.seats ? html`, ${outcome.seats} seats to hand out from Manage` : "";
  const renews =
    outcome.periodEnd !== null
      ? html`<p>It renews on <time datetime="${new Date(outcome.periodEnd).toISOString()}">${formatTime(outcome.periodEnd)}</time>.</p>`
      : "";
  return html`<p class="lede">You bought <strong>${outcome.productName}${plan}</strong>${outcome.billing === "subscription" ? " as a subscription" : ", paid once"}${seats}.</p>${renews}`;
}

export function successView(page: SuccessPage): Html {
  const { outcome, frame } = page;
  const body =
    outcome.state === "confirmed"
      ? html`<h1>Thank you</h1>
${bought(outcome)}
<p>${page.toolName} is unlocked: the extension picks it up within a few seconds, with nothing to do. A receipt comes from Stripe by mail.</p>
<p><a class="button primary" href="${frame.base}/manage">See what you have</a></p>`
      : outcome.state === "pending"
        ? html`<h1>Confirming your payment</h1>
<p class="lede">Stripe has sent you back; we are waiting for its confirmation, which usually comes within seconds.</p>
<p>Once it arrives, ${page.toolName} unlocks on its own: the extension picks it up without you doing anything. If you paid and this page still says so in a few minutes, tell the vendor.</p>
<p><a class="button primary" href="${page.self}">Check again</a></p>`
        : html`<h1>Not a purchase of ${page.toolName}</h1>
<p class="lede">This checkout bought something else. Open the page of the tool you bought, or see your purchases under Manage.</p>
<p><a class="button" href="${frame.base}/manage">Manage</a></p>`;
  return customerPage(
    outcome.state === "confirmed" ? "Thank you" : "Confirming your payment",
    frame,
    html`<section class="card customer-card">${body}</section>`,
  );
}
