// Plans, on the page of the tool or bundle they are for: the table, the form that adds
// one, a plan's own page (rename) and the confirmation before retiring it.
import type { ProductKind } from "../../db/schema.js";
import type { Plan } from "../../workspaces/workspace.types.js";
import { type Html, html } from "../shared/html.js";
import {
  appPage,
  csrfField,
  emptyState,
  envBadge,
  type Frame,
  fieldErrorAttributes,
  fieldErrorNotice,
  formatMoney,
  formError,
  notice,
  pageHeading,
  scrollBox,
  sectionPath,
  time,
} from "../shared/layout.js";

/** The tool or bundle a plan belongs to, as its pages show and address it. */
export interface Product {
  kind: ProductKind;
  id: string;
  name: string;
}

export function productPath(frame: Frame, product: Pick<Product, "kind" | "id">): string {
  const here = frame.current;
  if (!here) throw new Error("a catalogue page has a workspace");
  return `${sectionPath(here.workspace.slug, here.env, product.kind === "tool" ? "tools" : "bundles")}/${encodeURIComponent(product.id)}`;
}

export const planPath = (frame: Frame, product: Pick<Product, "kind" | "id">, planId: string) =>
  `${productPath(frame, product)}/plans/${encodeURIComponent(planId)}`;

/**
 * `€49.00 once, per seat`, `$5.00 a month, per seat`: any plan may be bought for a team, and
 * Stripe then charges the amount once for each seat (docs/decisions.md, "Checkout's price"),
 * so the amount is one seat's. A plan without an amount has no price to pay.
 */
export function planPrice(plan: Plan): Html {
  if (plan.amountCents === null) return html`<span class="muted">No price</span>`;
  const amount = formatMoney(plan.amountCents, plan.currency);
  return html`<span class="price">${amount}</span> <span class="muted">${plan.billing === "one_time" ? "once" : `a ${plan.interval ?? "month"}`}, per seat</span>`;
}

const billingLabel = (plan: Plan) => (plan.billing === "one_time" ? "One-time" : plan.interval === "year" ? "Subscription, yearly" : "Subscription, monthly");

function planState(plan: Plan): Html {
  if (plan.retiredAt !== null) return html`<span class="badge badge-off">Retired</span> <span class="state-note">since ${time(plan.retiredAt)}</span>`;
  return html`<span class="badge badge-ok">Offered</span>${plan.isDefault ? html` <span class="badge badge-pending">Default</span>` : ""}`;
}

/** "Plan Lifetime lifetime added": the plan by its name, its id after it (the id is what the redirect carries). */
export function planAdded(plans: Plan[], id: string): Html {
  const name = plans.find((p) => p.id === id)?.name;
  return name === undefined ? html`Plan <code>${id}</code> added.` : html`Plan <strong>${name}</strong> <code class="muted">${id}</code> added.`;
}

export interface PlanForm {
  id?: string;
  name?: string;
  billing?: string;
  amount?: string;
  currency?: string;
  interval?: string;
  isDefault?: boolean;
  error?: string;
  errorParam?: string;
}

function addPlanForm(frame: Frame, product: Product, form: PlanForm): Html {
  const billing = form.billing ?? "one_time";
  const error = formError(form.error, form.errorParam, {
    name: "plan-name",
    id: "plan-id",
    "amount-cents": "plan-amount",
    currency: "plan-currency",
    interval: "plan-interval",
  });
  const radio = (value: string, label: string, hint: string) =>
    html`<label class="choice"><input type="radio" name="billing" value="${value}"${billing === value ? html` checked` : ""}> <span><strong>${label}</strong> <span class="muted">${hint}</span></span></label>`;
  const option = (value: string, label: string) => html`<option value="${value}"${(form.interval ?? "") === value ? html` selected` : ""}>${label}</option>`;
  return html`<form method="post" action="${productPath(frame, product)}/plans" class="stack" id="add-plan">
${csrfField(frame.csrf)}
${error.notice}
<div class="grid-2">
<div class="field"><label for="plan-name">Name</label>
<input id="plan-name"${error.on("plan-name")} name="name" maxlength="200" required placeholder="e.g. Lifetime" value="${form.name ?? ""}"></div>
<div class="field"><label for="plan-id">ID</label>
<input id="plan-id"${error.on("plan-id")} name="id" maxlength="64" required pattern="[A-Za-z0-9][A-Za-z0-9_.\\-]{0,63}" placeholder="e.g. lifetime" value="${form.id ?? ""}">
<p class="hint">What your buy button sends as <code>plan</code>. It never changes.</p></div>
</div>
<fieldset class="choices">
<legend>Billing</legend>
${radio("one_time", "One-time", "paid once; a licence for good")}
${radio("subscription", "Subscription", "renews every month or year until cancelled")}
</fieldset>
<div class="grid-3">
<fieldset class="field price-field"><legend>Price</legend>
<div class="amount-pair">
<div><label for="plan-amount">Amount</label>
<input id="plan-amount"${error.on("plan-amount")} name="amount" inputmode="decimal" placeholder="49.00" value="${form.amount ?? ""}"></div>
<div><label for="plan-currency">Currency</label>
<input id="plan-currency"${error.on("plan-currency")} name="currency" maxlength="3" required placeholder="eur" value="${form.currency ?? "eur"}"></div>
</div>
<p class="hint">In the currency's main unit: 49.00 euros, 500 yen. The currency as Stripe names it: eur, usd, jpy. Leave the amount empty for a plan with no price.</p></fieldset>
<div class="field"><label for="plan-interval">Renews every</label>
<select id="plan-interval"${error.on("plan-interval")} name="interval">${option("", "— (one-time)")}${option("month", "Month")}${option("year", "Year")}</select></div>
</div>
<label class="choice"><input type="checkbox" name="default" value="1"${form.isDefault ? html` checked` : ""}> <span>Make it the default plan <span class="muted">(a purchase that names no plan gets it; it replaces the current default)</span></span></label>
<div class="row"><button class="button primary" type="submit">Add plan</button></div>
</form>`;
}

/** The plans panels of a tool's or bundle's page: the table and the form. */
export function plansPanels(frame: Frame, product: Product, plans: Plan[], form: PlanForm): Html {
  const offered = plans.filter((p) => p.retiredAt === null).length;
  const table =
    plans.length === 0
      ? emptyState(
          "No plans yet",
          product.kind === "tool"
            ? "Add a plan below to sell this tool: one-time for a licence, or a subscription. Your buy button names the plan's id."
            : "Add a plan below to sell this bundle. A purchase of the bundle entitles the buyer to every tool it names.",
        )
      : html`<div class="table-wrap"${scrollBox("Plans")}><table>
<thead><tr><th>Plan</th><th>ID</th><th>Billing</th><th class="num">Price</th><th>State</th><th><span class="sr-only">Actions</span></th></tr></thead>
<tbody>${plans.map(
          (p) => html`<tr${p.retiredAt !== null ? html` class="is-revoked"` : ""}>
<td><a href="${planPath(frame, product, p.id)}">${p.name}</a></td>
<td><code>${p.id}</code></td>
<td>${billingLabel(p)}</td>
<td class="num">${planPrice(p)}</td>
<td>${planState(p)}</td>
<td class="actions"><a class="button small" href="${planPath(frame, product, p.id)}">Edit</a></td>
</tr>`,
        )}</tbody>
</table></div>`;
  return html`<section class="panel" id="plans">
<div class="panel-head"><h2>Plans</h2><span class="panel-sub">${offered === 1 ? "1 offered" : `${offered} offered`}${plans.length > offered ? ` · ${plans.length - offered} retired` : ""}</span></div>
${table}
</section>
<section class="panel">
<div class="panel-head"><h2>Add a plan</h2></div>
<p class="panel-text">A plan is a price. Its id, billing and amount are fixed once created, since purchases name it; to change a price, add a new plan and retire the old one.</p>
${addPlanForm(frame, product, form)}
</section>`;
}

interface PaddleLinks {
  ids: string[];
  linked?: boolean;
  error?: string;
  typed?: string;
}

/** A plan's linked processor ids, each with its Unlink button posting to `path`. */
function linkedIds(frame: Frame, path: string, ids: readonly string[], none: string): Html {
  if (ids.length === 0) return html`<p class="panel-text muted">${none}</p>`;
  return html`<ul class="event-list">${ids.map(
    (id) => html`<li><code>${id}</code>
<form method="post" action="${path}" class="inline-form">${csrfField(frame.csrf)}<input type="hidden" name="unlink" value="${id}"><button class="button small" type="submit" aria-label="Unlink ${id}">Unlink</button></form></li>`,
  )}</ul>`;
}

/** The form that links one more id: what was typed kept, with its refusal, after an error. */
function linkForm(frame: Frame, path: string, input: { field: string; placeholder: string; error: string | undefined; typed: string | undefined }): Html {
  return html`<form method="post" action="${path}" class="stack">
${csrfField(frame.csrf)}
${fieldErrorNotice(input.field, input.error)}
<label for="${input.field}">Price or product id</label>
<input id="${input.field}" name="${input.field}" required spellcheck="false" placeholder="${input.placeholder}"${fieldErrorAttributes(input.field, input.error)} value="${input.typed ?? ""}">
<div class="row"><button class="button" type="submit">Link</button></div>
</form>`;
}

/** The plan's Paddle prices in this environment (Paddle's sandbox and live have ids of their own). */
function paddleLinksPanel(frame: Frame, product: Product, plan: Plan, paddle: PaddleLinks): Html {
  const path = `${planPath(frame, product, plan.id)}/paddle`;
  const env = frame.current?.env ?? "test";
  const linked = linkedIds(frame, path, paddle.ids, `No Paddle price or product is linked in ${env === "test" ? "the sandbox" : "live"}.`);
  return html`<section class="panel narrow" id="paddle-prices">
<div class="panel-head"><h2>Paddle prices</h2>${envBadge(env)}</div>
<p class="panel-text">A Paddle purchase buys this plan only when what was paid for is linked here: link the Paddle price (<code>pri_…</code>) or product (<code>pro_…</code>) of ${env === "test" ? "Paddle's sandbox" : "your live Paddle account"}. A price is matched before a product.</p>
<p class="panel-text">Paddle's checkout sells the first linked price that Paddle has in this environment, active, in this plan's currency, and billed as the plan is (once, or every month or year).</p>
${paddle.linked ? notice("success", "Saved.") : ""}
${linked}
${linkForm(frame, path, { field: "paddle_id", placeholder: "pri_01h04vsc0qhwtsbsxh3422wjs4", error: paddle.error, typed: paddle.typed })}
</section>`;
}

export function planView(
  frame: Frame,
  product: Product,
  plan: Plan,
  input: {
    renamed?: boolean;
    retired?: boolean;
    error?: string;
    errorParam?: string;
    name?: string;
    /** The Stripe prices and products linked to the plan, for purchases made without Warden. */
    stripeIds: string[];
    stripeLinked?: boolean;
    stripeError?: string;
    stripeTyped?: string;
    /** The plan's Paddle prices and products in this environment, or null where they are not shown. */
    paddle: PaddleLinks | null;
    /** The panels of what the plan gives in each tool it covers. */
    terms: Html;
  },
): Html {
  const back = productPath(frame, product);
  const stripePath = `${planPath(frame, product, plan.id)}/stripe`;
  const linked = linkedIds(frame, stripePath, input.stripeIds, "No Stripe price or product is linked.");
  const stripeLinks = html`<section class="panel narrow" id="stripe-prices">
<div class="panel-head"><h2>Stripe prices</h2></div>
<p class="panel-text">Purchases made without Warden's checkout (ExtensionPay, a payment link, before Warden) name no plan. Link the Stripe Price (<code>price_…</code>) or Product (<code>prod_…</code>) they bought, and reconciling with Stripe maps them to this plan. A price is matched before a product.</p>
<p class="panel-text">Checkout sells the first linked Price that this environment's Stripe account has (active, in this plan's currency, and for a subscription plan recurring every month or year as the plan does), so your tax settings, coupons and reports at Stripe apply and its amount is what the buyer pays. With none, Checkout is given this plan's name and amount.</p>
${input.stripeLinked ? notice("success", "Saved. Reconcile with Stripe (on the Stripe page) to apply the purchases it maps.") : ""}
${linked}
${linkForm(frame, stripePath, { field: "stripe_id", placeholder: "price_1Q2w3E4r or prod_Q2w3E4r", error: input.stripeError, typed: input.stripeTyped })}
</section>`;
  const rename = formError(input.error, input.errorParam, { name: "name" });
  const retire =
    plan.retiredAt === null
      ? html`<section class="panel narrow">
<div class="panel-head"><h2>Retire this plan</h2></div>
<p class="panel-text">Checkout stops offering it. Licences and subscriptions already bought with it keep it.</p>
<a class="button danger-outline" href="${planPath(frame, product, plan.id)}/retire">Retire…</a>
</section>`
      : "";
  return appPage(
    plan.name,
    frame,
    html`${pageHeading(plan.name, html`A plan of the ${product.kind} <a href="${back}">${product.name}</a>.`)}
${input.renamed ? notice("success", "The plan is renamed. Checkout shows the new name from now on.") : ""}
${input.retired ? notice("success", "The plan is retired: checkout no longer offers it. What was bought with it keeps it.") : ""}
<section class="panel narrow">
<dl class="facts">
<dt>ID</dt><dd><code>${plan.id}</code></dd>
<dt>Billing</dt><dd>${billingLabel(plan)}</dd>
<dt>Price</dt><dd>${planPrice(plan)}</dd>
${plan.givesAccess ? "" : html`<dt>Access</dt><dd>None: a credit pack sold alone, each purchase adds its credits</dd>`}
<dt>State</dt><dd>${planState(plan)}</dd>
<dt>Created</dt><dd>${time(plan.createdAt)}</dd>
</dl>
</section>
<section class="panel narrow">
<div class="panel-head"><h2>Name</h2></div>
<form method="post" action="${planPath(frame, product, plan.id)}" class="stack">
${csrfField(frame.csrf)}
${rename.notice}
<label for="name">Plan name</label>
<input id="name"${rename.on("name")} name="name" maxlength="200" required value="${input.name ?? plan.name}">
<div class="row"><button class="button primary" type="submit">Save name</button><a class="button" href="${planPath(frame, product, plan.id)}/names">Name in other languages</a><a class="button" href="${back}">Back to ${product.name}</a></div>
</form>
</section>
${input.terms}
${stripeLinks}
${input.paddle ? paddleLinksPanel(frame, product, plan, input.paddle) : ""}
${retire}`,
    { trail: [{ label: product.name, href: back }, { label: plan.name }] },
  );
}

export function retirePlanView(frame: Frame, product: Product, plan: Plan): Html {
  const path = planPath(frame, product, plan.id);
  return appPage(
    "Retire plan",
    frame,
    html`${pageHeading(`Retire ${plan.name}?`)}
<section class="panel narrow">
<dl class="facts">
<dt>Plan</dt><dd>${plan.name} <code>${plan.id}</code></dd>
<dt>Price</dt><dd>${planPrice(plan)}</dd>
<dt>For</dt><dd>${product.name}</dd>
</dl>
<ul class="consequences">
<li>Your buy button can no longer start a checkout for it: Warden answers that it is no longer offered.</li>
<li>Licences bought with it stay valid, and its subscriptions keep renewing at Stripe until they are cancelled.</li>
${plan.isDefault ? html`<li>It is the default plan of ${product.name}: a purchase that names no plan gets no plan until you add a new default.</li>` : ""}
<li>It cannot be offered again; add a new plan instead.</li>
</ul>
<form method="post" action="${path}/retire" class="row">
${csrfField(frame.csrf)}
<button class="button danger" type="submit">Retire plan</button>
<a class="button" href="${path}">Keep offering it</a>
</form>
</section>`,
    { trail: [{ label: product.name, href: productPath(frame, product) }, { label: plan.name, href: path }, { label: "Retire plan" }] },
  );
}
