import type { PeopleInsights, RevenueInsights, Series, SubscriptionInsights, UseInsights } from "../../insights/insights.types.js";
import type { ProcessorName } from "../../payments/payment-processor.js";
import type { Bundle, Tool } from "../../workspaces/workspace.types.js";
import { type ChartLine, type ChartSpec, changeOf, chartPanel, fullDate } from "../shared/charts.js";
import { type Html, html } from "../shared/html.js";
import {
  appPage,
  dateFieldsHint,
  envBadge,
  type Frame,
  fieldErrorAttributes,
  fieldErrorNotice,
  formatCount,
  formatMoney,
  pageHeading,
  scrollBox,
  sectionPath,
  time,
} from "../shared/layout.js";
import { secondaryId } from "../shared/names.js";
import { meterTableName } from "./insights.csv.js";
import { RANGE_LABELS, RANGES, type Range, type RangeRefusal } from "./insights.range.js";

export const GROUPS = ["revenue", "subscriptions", "people", "use"] as const;
export type Group = (typeof GROUPS)[number];
const GROUP_LABELS: Record<Group, string> = { revenue: "Revenue", subscriptions: "Subscriptions", people: "People", use: "Use" };
const GROUP_LEDES: Record<Group, string> = {
  revenue:
    "What came in, by currency (never added across currencies): gross, refunds and net, one-time and subscription apart, credit packs apart, by plan and bundle.",
  subscriptions: "Active subscriptions and monthly recurring revenue over time, and what moved it.",
  people: "New customers, trials and what became of them, and access granted by hand.",
  use: "What only Warden sees: who uses the tool, from its access checks; paying people who stopped, free users who use it most, meters spent and allowances used up.",
};

export const insightsPath = (frame: Frame) => {
  const here = frame.current;
  if (!here) throw new Error("an insights page has a workspace");
  return `${sectionPath(here.workspace.slug, here.env, "insights")}`;
};

/** What the page shows: which tool (null: all) and which range, as the address carries them. */
export interface Selection {
  tool: string | null;
  range: Range;
  /** The custom range as typed, shown back in its fields. */
  typed: { from: string; to: string };
  refusal: RangeRefusal | null;
}

/** The address's query of a selection, for the tabs and the CSV links. */
export function selectionQuery(s: Selection): string {
  const params = new URLSearchParams({ tool: s.tool ?? "all", range: s.range.choice });
  if (s.range.choice === "custom") {
    params.set("from", s.typed.from);
    params.set("to", s.typed.to);
  }
  return params.toString();
}

export type GroupData =
  | { group: "revenue"; data: RevenueInsights; processor: ProcessorName | null }
  | { group: "subscriptions"; data: SubscriptionInsights }
  | { group: "people"; data: PeopleInsights }
  | { group: "use"; data: UseInsights };

interface Context {
  frame: Frame;
  selection: Selection;
  tools: Tool[];
  bundles: Bundle[];
  /** The address of a table's CSV. */
  csv: (table: string) => string;
}

/** A product by its name, its id after it; one no longer in the catalogue by its id. */
function productName(c: Context, kind: string, id: string): Html {
  const products: readonly { id: string; name: string }[] = kind === "bundle" ? c.bundles : kind === "tool" ? c.tools : [];
  const name = products.find((p) => p.id === id)?.name;
  return name === undefined ? html`${id}` : html`${name}${secondaryId(id)}`;
}

/** What a paying person holds, from the API's `tool:<id>` or `bundle:<id>`. */
function holdingName(c: Context, holding: string): Html {
  const at = holding.indexOf(":");
  return at < 0 ? html`${holding}` : productName(c, holding.slice(0, at), holding.slice(at + 1));
}

function tabs(c: Context, on: Group): Html {
  const query = selectionQuery(c.selection);
  return html`<nav class="tabs insights-tabs" aria-label="Insights">${GROUPS.map(
    (g) => html`<a class="tab" href="${insightsPath(c.frame)}/${g}?${query}"${g === on ? html` aria-current="page"` : ""}>${GROUP_LABELS[g]}</a>`,
  )}</nav>`;
}

function filters(c: Context, on: Group): Html {
  const { selection: s, tools } = c;
  const option = (value: string, label: string, selected: boolean) => html`<option value="${value}"${selected ? html` selected` : ""}>${label}</option>`;
  const refusal = s.refusal;
  const errorOf = (field: "from" | "to") => (refusal?.field === field ? refusal.error : null);
  return html`<form method="get" action="${insightsPath(c.frame)}/${on}" class="inline-form filters insights-filters">
<div class="field"><label for="tool">Tool</label>
<select id="tool" name="tool">${option("all", "All tools", s.tool === null)}${tools.map((t) => option(t.id, t.name, s.tool === t.id))}</select></div>
<div class="field"><label for="range">Range</label>
<select id="range" name="range">${RANGES.map((r) => option(r, RANGE_LABELS[r], s.range.choice === r))}</select></div>
<div class="field"><label for="from">From <span class="muted">(custom)</span></label>${fieldErrorNotice("from", errorOf("from"))}<input id="from" name="from" type="date" value="${s.typed.from}"${fieldErrorAttributes("from", errorOf("from"))}></div>
<div class="field"><label for="to">To <span class="muted">(custom)</span></label>${fieldErrorNotice("to", errorOf("to"))}<input id="to" name="to" type="date" value="${s.typed.to}"${fieldErrorAttributes("to", errorOf("to"))}></div>
<button class="button primary" type="submit">Show</button>
</form>
${dateFieldsHint}`;
}

function rangeLine(c: Context): Html {
  const { range, refusal } = c.selection;
  const shown = `${fullDate(range.from, "day")} to ${fullDate(range.to, "day")}`;
  const tool = c.selection.tool === null ? "all tools" : (c.tools.find((t) => t.id === c.selection.tool)?.name ?? c.selection.tool);
  return html`<p class="insights-range" role="status">${refusal ? "Showing the last 30 days instead: " : ""}<strong>${shown}</strong>, by ${range.grain}, for ${tool}; each figure against the period of the same length just before. Days are UTC.</p>`;
}

/** A chart of one series, with its previous period. */
function seriesChart(
  id: string,
  title: string,
  name: string,
  series: Series,
  c: Context,
  rest: { unit: ChartSpec["unit"]; kind: "total" | "last"; empty: Html | string; table: string; more?: ChartLine[]; drawn?: boolean },
): Html {
  return chartPanel({
    id,
    title,
    unit: rest.unit,
    grain: c.selection.range.grain,
    // A flow (revenue, grants: what happened each day) is drawn as bars, a level (MRR, people active) as a line.
    shape: rest.kind === "total" ? "bars" : "lines",
    lines: [{ name, points: series.points, ...(rest.drawn === false ? { drawn: false } : {}) }, ...(rest.more ?? [])],
    previous: series.previous,
    // A level (MRR, people active) is read at the range's end; a flow (revenue, grants) is the range's total.
    headline:
      rest.kind === "total"
        ? { value: series.total, previous: series.previousTotal, kind: "total" }
        : { value: series.points.at(-1)?.value ?? 0, previous: series.previous.at(-1)?.value ?? 0, kind: "last" },
    empty: rest.empty,
    csvHref: c.csv(rest.table),
  });
}

/** Revenue's line under the title: which processor the environment's money comes from (one per environment). */
function processorLine(c: Context, processor: ProcessorName | null): Html {
  const says =
    processor === "paddle"
      ? "Money here comes from Paddle Billing, as Paddle reports it: what the buyer paid, and what you earn of it after Paddle's fee and tax, in the buyer's currency."
      : processor === "stripe"
        ? "Money here comes from Stripe."
        : "No payment processor is connected to this environment yet.";
  return html`<p class="processor-line">${says} ${stripeLink(c, processor === null ? "Connect Stripe or Paddle" : "Payments settings")}</p>`;
}

const stripeLink = (c: Context, words: string) => {
  const here = c.frame.current;
  return here ? html`<a href="${sectionPath(here.workspace.slug, here.env, "stripe")}">${words}</a>` : words;
};

function stat(label: string, value: string, change: string | null, note?: string): Html {
  return html`<div class="stat"><p class="stat-label">${label}</p><p class="stat-value">${value}</p>${change ? html`<p class="stat-note">${change}</p>` : ""}${note ? html`<p class="stat-note">${note}</p>` : ""}</div>`;
}

/**
 * What the vendor earned after the processor's fee and tax, where the processor reported
 * it (Paddle); where it did not, said so, never guessed (Stripe reports its fee apart from the sale).
 */
function earningsStat(
  cur: RevenueInsights["currencies"][number],
  code: string,
  processor: ProcessorName | null,
  money: (v: number) => string,
  against: (s: Series) => string,
): Html {
  const label = `Earnings after fee and tax, ${code}`;
  if (cur.earnings !== null) return stat(label, money(cur.earnings.total), against(cur.earnings), "As the processor reports it, less refunds and chargebacks");
  return stat(
    label,
    "Not reported",
    null,
    processor === "stripe" ? "Not reported by Stripe: its fee is not part of a sale's report" : "No sale in this currency reported it",
  );
}

function revenueContent(c: Context, data: RevenueInsights, processor: ProcessorName | null): Html {
  if (data.currencies.length === 0) {
    return processor === "paddle"
      ? html`<section class="panel"><div class="empty"><p class="empty-title">No revenue in this range</p><p>Revenue comes from Paddle's notifications: sales appear here as Paddle reports them.</p></div></section>`
      : html`<section class="panel"><div class="empty"><p class="empty-title">No revenue in this range</p><p>Revenue comes from Stripe's events: ${stripeLink(c, "connect Stripe")} and send its purchase, refund and invoice events to Warden. Sales then appear here as Stripe reports them.</p></div></section>`;
  }
  return html`${data.currencies.map((cur) => {
    const code = cur.currency.toUpperCase();
    const unit = { kind: "money", currency: cur.currency } as const;
    const id = cur.currency.toLowerCase();
    const money = (v: number) => formatMoney(v, cur.currency);
    const against = (s: Series) => `${changeOf(s.total, s.previousTotal)} against ${money(s.previousTotal)}`;
    return html`<h2 class="insights-currency">${code}</h2>
<div class="stats">${stat(`Net, ${code}`, money(cur.net.total), against(cur.net))}${stat(`Gross, ${code}`, money(cur.gross.total), against(cur.gross))}${stat(`Refunds, ${code}`, money(cur.refunds.total), against(cur.refunds))}${stat(`Credit packs, ${code}`, money(cur.packs.total), against(cur.packs), "Gross, part of one-time")}${earningsStat(cur, code, processor, money, against)}</div>
${seriesChart(`revenue-${id}`, `Revenue in ${code}`, "Net", cur.net, c, {
  unit,
  kind: "total",
  empty: "No sale or refund in this currency in the range or the one before.",
  table: `revenue-${id}`,
  // Gross up and refunds down: net is their difference, in the table (a line of net over one of gross hid one behind the other).
  drawn: false,
  more: [
    { name: "Gross", points: cur.gross.points },
    { name: "Refunds", points: cur.refunds.points, below: true },
  ],
})}
${chartPanel({
  id: `kinds-${id}`,
  title: `One-time, subscription and credit packs, ${code}`,
  unit,
  grain: c.selection.range.grain,
  shape: "bars",
  lines: [
    { name: "One-time", points: cur.oneTime.points },
    { name: "Subscription", points: cur.subscription.points },
    { name: "Credit packs", points: cur.packs.points },
  ],
  empty: "No sale in this currency in the range.",
  csvHref: c.csv(`revenue-${id}`),
})}
${
  cur.earnings === null
    ? ""
    : seriesChart(`earnings-${id}`, `Earnings after the processor's fee and tax, ${code}`, "Earnings", cur.earnings, c, {
        unit,
        kind: "total",
        empty: "No sale or refund in this currency reported earnings in the range or the one before.",
        table: `earnings-${id}`,
      })
}
<section class="panel" aria-labelledby="plans-${id}"><div class="panel-head"><h2 id="plans-${id}">By plan and bundle, ${code}</h2><a class="button small" href="${c.csv(`plans-${id}`)}" download>Download CSV<span class="sr-only"> of revenue by plan, ${code}</span></a></div>
${
  cur.byPlan.length === 0
    ? html`<div class="empty"><p>No plan sold in this currency in the range.</p></div>`
    : html`<div class="table-wrap"${scrollBox(`Revenue by plan, ${code}`)}><table class="figures-table">
<thead><tr><th scope="col">Plan</th><th scope="col">Bundle</th><th scope="col" class="num">Gross</th><th scope="col" class="num">Refunds</th><th scope="col" class="num">Net</th></tr></thead>
<tbody>${cur.byPlan.map(
        (p) =>
          html`<tr><th scope="row">${p.planName} <span class="muted">${p.planId}</span>${p.pack ? html` <span class="muted">(credit pack)</span>` : ""}</th><td>${p.bundleId === null ? html`<span class="muted">None</span>` : productName(c, "bundle", p.bundleId)}</td><td class="num">${money(p.gross)}</td><td class="num">${money(p.refunds)}</td><td class="num">${money(p.gross - p.refunds)}</td></tr>`,
      )}</tbody></table></div>`
}
</section>`;
  })}`;
}

function subscriptionContent(c: Context, data: SubscriptionInsights): Html {
  const count = { kind: "count", label: "subscriptions" } as const;
  return html`${seriesChart("active", "Active subscriptions", "Active", data.active, c, {
    unit: count,
    kind: "last",
    empty: html`No subscription in this range. Subscriptions come from Stripe: ${stripeLink(c, "connect Stripe")} and offer a subscription plan.`,
    table: "active",
  })}
${data.currencies.map((cur) => {
  const code = cur.currency.toUpperCase();
  const id = cur.currency.toLowerCase();
  const unit = { kind: "money", currency: cur.currency } as const;
  const m = cur.movements;
  const rates = cur.rates;
  const money = (v: number | null) => (v === null ? "—" : formatMoney(v, cur.currency));
  const churnRate = rates.monthlyChurnRate === null ? "—" : `${(rates.monthlyChurnRate * 100).toFixed(1)}%`;
  const perCustomer = rates.revenuePerPayingCustomer;
  return html`<h2 class="insights-currency">${code}</h2>
<section class="panel" aria-labelledby="rates-${id}"><div class="panel-head"><h2 id="rates-${id}">Recurring revenue, ${code}</h2><a class="button small" href="${c.csv(`rates-${id}`)}" download>Download CSV<span class="sr-only"> of recurring revenue, ${code}</span></a></div>
<div class="stats">${stat(`ARR, ${code}`, money(rates.arr.value), `${changeOf(rates.arr.value, rates.arr.previous)} against ${money(rates.arr.previous)}`, "12 × MRR at the range's end")}${stat(
    `MRR churn a month, ${code}`,
    churnRate,
    rates.monthlyChurnRate === null ? "No MRR at the range's start: no rate" : null,
    "Churned MRR in the range ÷ MRR at its start, brought to 30 days",
  )}${stat(
    `Per paying customer, ${code}`,
    money(perCustomer.value),
    perCustomer.value === null
      ? "Nobody pays a subscription in this currency at the range's end"
      : perCustomer.previous === null
        ? "Nobody paid at the range's start"
        : `${changeOf(perCustomer.value, perCustomer.previous)} against ${money(perCustomer.previous)}`,
    "MRR ÷ people paying a subscription in it, at the range's end",
  )}</div>
<div class="table-wrap"${scrollBox(`Recurring revenue, ${code}`)}><table class="figures-table">
<caption class="sr-only">Recurring revenue, ${code}: at the end of the range and of the period before</caption>
<thead><tr><th scope="col">Figure</th><th scope="col" class="num">This range</th><th scope="col" class="num">Period before</th></tr></thead>
<tbody><tr><th scope="row">ARR</th><td class="num">${money(rates.arr.value)}</td><td class="num">${money(rates.arr.previous)}</td></tr>
<tr><th scope="row">Paying customers</th><td class="num">${formatCount(cur.payingCustomers.points.at(-1)?.value ?? 0)}</td><td class="num">${formatCount(cur.payingCustomers.previous.at(-1)?.value ?? 0)}</td></tr>
<tr><th scope="row">Revenue per paying customer</th><td class="num">${money(perCustomer.value)}</td><td class="num">${money(perCustomer.previous)}</td></tr>
<tr><th scope="row">MRR churn a month</th><td class="num">${churnRate}</td><td class="num"><span class="muted">—</span></td></tr></tbody>
</table></div>
</section>
${seriesChart(`mrr-${id}`, `Monthly recurring revenue, ${code}`, "MRR", cur.mrr, c, {
  unit,
  kind: "last",
  empty: "No subscription in this currency in the range.",
  table: `mrr-${id}`,
})}
${chartPanel({
  id: `movements-${id}`,
  title: `What moved MRR, ${code}`,
  unit,
  grain: c.selection.range.grain,
  // ChartMogul's convention: what adds MRR above zero, what takes it away below.
  shape: "bars",
  lines: [
    { name: "New", points: m.new.points },
    { name: "Expansion", points: m.expansion.points },
    { name: "Contraction", points: m.contraction.points, below: true },
    { name: "Churn", points: m.churn.points, below: true },
    { name: "Reactivation", points: m.reactivation.points },
  ],
  empty: "MRR did not move in this currency in the range.",
  csvHref: c.csv(`mrr-${id}`),
})}
${seriesChart(`per-customer-${id}`, `Revenue per paying customer, ${code}`, "Per paying customer", cur.revenuePerPayingCustomer, c, {
  unit,
  kind: "last",
  empty: "Nobody paid a subscription in this currency in the range.",
  table: `per-customer-${id}`,
})}`;
})}`;
}

const percentOf = (part: number, whole: number) => (whole === 0 ? "" : ` (${Math.round((part / whole) * 100)}%)`);

function peopleContent(c: Context, data: PeopleInsights): Html {
  const count = (label: string) => ({ kind: "count", label }) as const;
  const t = data.trials;
  return html`<section class="panel" aria-labelledby="trials-head"><div class="panel-head"><h2 id="trials-head">Trials, and what became of them</h2><a class="button small" href="${c.csv("trial-conversion")}" download>Download CSV<span class="sr-only"> of trials and what became of them</span></a></div>
<div class="stats insights-trials">${stat("Trials started", formatCount(t.started), null)}${stat("Paid within the trial", `${formatCount(t.paidWithinTrial)}${percentOf(t.paidWithinTrial, t.started)}`, null)}${stat("Paid within 30 days after", `${formatCount(t.paidWithin30DaysAfter)}${percentOf(t.paidWithin30DaysAfter, t.started)}`, null, "A trial still running, or ended less than 30 days ago, may yet convert.")}</div>
</section>
${seriesChart("new-customers", "New customers", "New customers", data.newCustomers, c, {
  unit: count("customers"),
  kind: "total",
  empty: "Nobody bought, signed in, started a trial or was granted the tool in this range.",
  table: "new-customers",
})}
${seriesChart("trials", "Trials started", "Trials", data.trialsStarted, c, {
  unit: count("trials"),
  kind: "total",
  empty: "No trial started in this range. A tool offers a trial when its trial days are more than 0 (Tools and plans).",
  table: "trials",
})}
${seriesChart("grants", "Access granted by hand", "Grants", data.grants, c, {
  unit: count("grants"),
  kind: "total",
  empty: "No grant in this range. Grant a customer access from their page under Customers, or by the API.",
  table: "grants",
})}`;
}

const SOURCES: Record<UseInsights["topUnpaid"][number]["source"], string> = { trial: "Trial", grant: "Grant", free: "Free" };

function useContent(c: Context, data: UseInsights): Html {
  const people = { kind: "count", label: "people" } as const;
  const here = c.frame.current;
  const customers = here ? sectionPath(here.workspace.slug, here.env, "customers") : "";
  // A customer's page is a tool's: the tool on screen, or the workspace's only one; across several, the list searches the address.
  const tool = c.selection.tool ?? (c.tools.length === 1 ? (c.tools[0]?.id ?? null) : null);
  const customerLink = (email: string) =>
    tool === null ? `${customers}?${new URLSearchParams({ q: email })}` : `${customers}/${encodeURIComponent(tool)}/${encodeURIComponent(email)}`;
  const pickTool = tool === null ? " Choose a tool above to open each person's page from here." : "";
  const { daily, weekly, monthly } = data.activePeople;
  return html`${seriesChart("active-people", "People active", "In the day", daily, c, {
    unit: people,
    kind: "last",
    empty: "No access check in this range. People count as active from their first access check: see the client library's README to add one.",
    table: "active-people",
    more: [
      { name: "In 7 days", points: weekly.points },
      { name: "In 30 days", points: monthly.points },
    ],
  })}
${seriesChart("devices", "Devices active", "Devices", data.activeDevices, c, {
  unit: { kind: "count", label: "devices" },
  kind: "last",
  empty: "No device made an access check in this range.",
  table: "devices",
})}
<section class="panel" aria-labelledby="at-risk"><div class="panel-head"><h2 id="at-risk">Paying, but not using it</h2><a class="button small" href="${c.csv("at-risk")}" download>Download CSV<span class="sr-only"> of paying people not using it</span></a></div>
<p class="panel-text">People who pay and whose devices made no access check for 14 days: the likeliest to cancel. Newest lapse first, at most 100.${pickTool}</p>
${
  data.atRisk.length === 0
    ? html`<div class="empty"><p>Every paying person used it in the last 14 days.</p></div>`
    : html`<div class="table-wrap"${scrollBox("Paying people not using it")}><table>
<thead><tr><th scope="col">Customer</th><th scope="col">Holds</th><th scope="col">Last active</th></tr></thead>
<tbody>${data.atRisk.map(
        (p) =>
          html`<tr><td><a href="${customerLink(p.email)}">${p.email}</a></td><td>${holdingName(c, p.holding)}</td><td>${p.lastActiveAt === null ? html`<span class="muted">Never</span>` : time(Date.parse(p.lastActiveAt))}</td></tr>`,
      )}</tbody></table></div>`
}
</section>
<section class="panel" aria-labelledby="top-unpaid"><div class="panel-head"><h2 id="top-unpaid">Using it most without paying</h2><a class="button small" href="${c.csv("top-unpaid")}" download>Download CSV<span class="sr-only"> of people using it most without paying</span></a></div>
<p class="panel-text">People on a trial, a grant or free access with the most active days in the range: whom to offer a plan. At most 20.${pickTool}</p>
${
  data.topUnpaid.length === 0
    ? html`<div class="empty"><p>Nobody without a purchase used it in this range.</p></div>`
    : html`<div class="table-wrap"${scrollBox("People using it most without paying")}><table>
<thead><tr><th scope="col">Customer</th><th scope="col">Access by</th><th scope="col" class="num">Active days</th></tr></thead>
<tbody>${data.topUnpaid.map(
        (p) =>
          html`<tr><td><a href="${customerLink(p.email)}">${p.email}</a></td><td>${SOURCES[p.source]}</td><td class="num">${formatCount(p.activeDays)}</td></tr>`,
      )}</tbody></table></div>`
}
</section>
${meterContent(c, data, customers)}`;
}

/** A chart title's tool, by its name, when the page shows every tool. */
const toolPrefix = (c: Context, toolId: string) => (c.selection.tool === null ? `${c.tools.find((t) => t.id === toolId)?.name ?? toolId}: ` : "");

/** A meter's name, and its tool's when the page shows every tool. */
function meterName(c: Context, toolId: string, meterId: string, name?: string): Html {
  const meter = html`${name ?? meterId}${secondaryId(meterId)}`;
  return c.selection.tool === null ? html`${productName(c, "tool", toolId)}: ${meter}` : meter;
}

function meterContent(c: Context, data: UseInsights, customers: string): Html {
  if (data.meters.length === 0) {
    return html`<section class="panel" aria-labelledby="meters"><div class="panel-head"><h2 id="meters">Meters</h2></div><div class="empty"><p>No tool here declares a meter. A meter counts what people spend (summaries, exports), with an allowance per plan: Tools and plans, or <code>warden admin meter add</code>.</p></div></section>`;
  }
  const names = new Map(data.meters.map((m) => [`${m.toolId}\u0000${m.meterId}`, m.name]));
  return html`${data.meters.map((m) =>
    seriesChart(meterTableName(m), `${toolPrefix(c, m.toolId)}${m.name} spent`, m.name, m.used, c, {
      unit: { kind: "count", label: m.unit },
      kind: "total",
      empty: `Nobody spent ${m.unit} in this range.`,
      table: meterTableName(m),
    }),
  )}
<section class="panel" aria-labelledby="ran-out"><div class="panel-head"><h2 id="ran-out">Allowance used up</h2><a class="button small" href="${c.csv("allowance-ran-out")}" download>Download CSV<span class="sr-only"> of allowances used up</span></a></div>
<p class="panel-text">People who spent the last unit of their allowance of a meter in the range, whether credits then paid for more or not: whom to offer a bigger plan or a credit pack. Once per person, meter and period; newest first, at most 100.</p>
${
  data.allowanceRanOut.length === 0
    ? html`<div class="empty"><p>Nobody used up an allowance in this range.</p></div>`
    : html`<div class="table-wrap"${scrollBox("Allowances used up")}><table>
<thead><tr><th scope="col">Customer</th><th scope="col">Meter</th><th scope="col">Used up</th><th scope="col">Resets</th></tr></thead>
<tbody>${data.allowanceRanOut.map(
        (p) =>
          html`<tr><td><a href="${customers}/${encodeURIComponent(p.toolId)}/${encodeURIComponent(p.email)}">${p.email}</a></td><td>${meterName(c, p.toolId, p.meterId, names.get(`${p.toolId}\u0000${p.meterId}`))}</td><td>${time(Date.parse(p.ranOutAt))}</td><td>${time(Date.parse(p.resetsAt))}</td></tr>`,
      )}</tbody></table></div>`
}
</section>`;
}

export function insightsView(frame: Frame, input: { tools: Tool[]; bundles: Bundle[]; selection: Selection; shown: GroupData }): Html {
  const env = frame.current?.env ?? "test";
  const group = input.shown.group;
  const c: Context = {
    frame,
    selection: input.selection,
    tools: input.tools,
    bundles: input.bundles,
    csv: (table) => `${insightsPath(frame)}/${group}/${encodeURIComponent(table)}.csv?${selectionQuery(input.selection)}`,
  };
  const shown = input.shown;
  const content =
    shown.group === "revenue"
      ? revenueContent(c, shown.data, shown.processor)
      : shown.group === "subscriptions"
        ? subscriptionContent(c, shown.data)
        : shown.group === "people"
          ? peopleContent(c, shown.data)
          : useContent(c, shown.data);
  return appPage(
    `Insights: ${GROUP_LABELS[group]}`,
    frame,
    html`${pageHeading(`Insights: ${GROUP_LABELS[group]}`, html`${GROUP_LEDES[group]} ${envBadge(env)}`)}
${shown.group === "revenue" ? processorLine(c, shown.processor) : ""}
${tabs(c, group)}
<section class="panel" aria-label="What to show">${filters(c, group)}${rangeLine(c)}</section>
${content}`,
  );
}
