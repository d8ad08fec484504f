import { utcDayOf } from "../clock.js";
import type { Executor } from "../db/database.js";
import { invalidParameter } from "../errors/errors.js";
import type { Services } from "../services.js";
import {
  type Figure,
  figures,
  lapsedPayers,
  levelsBefore,
  meterDays,
  metersOf,
  mostActiveUnpaid,
  packPlans,
  planNames,
  planTotals,
  runOuts,
  type Scope,
  scopesOfTool,
} from "./insights.store.js";
import type {
  CurrencyMrr,
  CurrencyRevenue,
  InsightsQuery,
  OverviewInsights,
  PeopleInsights,
  Point,
  RecurringRates,
  RevenueInsights,
  Series,
  SubscriptionInsights,
  UseInsights,
} from "./insights.types.js";
import { ALL_TOOLS, foldFigures, type Metric } from "./rollup.store.js";

// The four use cases behind the Insights pages and GET /api/v1/insights/…: each reads the
// daily roll-ups of the range and of the period of equal length before it (a few rows a
// day), never the events or the customers, but for the lists of people. Each folds the
// figures' pending changes first (PostgreSQL, rollup.store.ts foldFigures), so it reads
// every change committed before it.

const DAY = 86_400_000;
/** The longest range asked at once: a bit over two years of days. */
export const MAX_RANGE_DAYS = 800;
const AT_RISK_DAYS = 14;
/** The allowances that ran out, listed at most. */
const RAN_OUT_LIMIT = 100;

const dayMs = (day: string) => Date.parse(`${day}T00:00:00.000Z`);
const keyOf = (day: string, grain: InsightsQuery["grain"]) => (grain === "day" ? day : day.slice(0, 7));

function checkDay(param: string, day: string): void {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || Number.isNaN(dayMs(day)) || utcDayOf(dayMs(day)) !== day) {
    throw invalidParameter(param, `${param} must be a day written YYYY-MM-DD (UTC).`);
  }
}

/** Refuses a range that is not one: days that do not exist, the end before the start, or too long. */
function checkRange(q: InsightsQuery): void {
  checkDay("from", q.from);
  checkDay("to", q.to);
  if (q.to < q.from) throw invalidParameter("to", "to must be the same day as from or after it.");
  if ((dayMs(q.to) - dayMs(q.from)) / DAY + 1 > MAX_RANGE_DAYS) throw invalidParameter("from", `A range covers at most ${MAX_RANGE_DAYS} days.`);
}

/** The days of a range, the last few ranges' kept: a page asks for the same two ranges for each of its series, and writing a day costs more than all else in the arithmetic of a 12-month page. Read-only. */
const dayLists = new Map<string, readonly string[]>();
function daysOf(from: string, to: string): readonly string[] {
  const key = `${from}/${to}`;
  const held = dayLists.get(key);
  if (held) return held;
  const out: string[] = [];
  for (let t = dayMs(from), end = dayMs(to); t <= end; t += DAY) out.push(utcDayOf(t));
  if (dayLists.size >= 16) dayLists.clear();
  dayLists.set(key, out);
  return out;
}

/** The points' dates of a range: each day, or each month the range touches. */
function pointDates(from: string, to: string, grain: InsightsQuery["grain"]): string[] {
  return [...new Set(daysOf(from, to).map((d) => keyOf(d, grain)))];
}

/** The period of equal length just before the range. */
function previousRange(from: string, to: string): { from: string; to: string } {
  const days = (dayMs(to) - dayMs(from)) / DAY + 1;
  return { from: utcDayOf(dayMs(from) - days * DAY), to: utcDayOf(dayMs(from) - DAY) };
}

interface Ranges {
  q: InsightsQuery;
  prev: { from: string; to: string };
}

/** Figures of the range and of the period before, each added up per point (or per day). */
interface Periods {
  current: Figure[];
  previous: Figure[];
}

const total = (ps: Point[]) => ps.reduce((s, p) => s + p.value, 0);
const last = (ps: Point[]) => ps[ps.length - 1]?.value ?? 0;

/** A measure that adds up over days: each point the sum of its days. */
function summed(f: Periods, { q, prev }: Ranges): Series {
  const points = (figs: Figure[], r: { from: string; to: string }): Point[] => {
    const by = new Map(pointDates(r.from, r.to, q.grain).map((d) => [d, 0]));
    for (const x of figs) by.set(keyOf(x.date, q.grain), (by.get(keyOf(x.date, q.grain)) ?? 0) + x.value);
    return [...by].map(([date, value]) => ({ date, value }));
  };
  return withTotals(points(f.current, q), points(f.previous, prev), total);
}

/** A level kept as its daily changes (MRR, active subscriptions): each point its value at the end of the point's last day. */
function level(start: number, f: Periods, { q, prev }: Ranges): Series {
  const points = (figs: Figure[], r: { from: string; to: string }, from: number): Point[] => {
    const change = new Map<string, number>();
    for (const x of figs) change.set(keyOf(x.date, q.grain), (change.get(keyOf(x.date, q.grain)) ?? 0) + x.value);
    let value = from;
    return pointDates(r.from, r.to, q.grain).map((date) => {
      value += change.get(date) ?? 0;
      return { date, value };
    });
  };
  // The level before the previous period: the start of the range less the previous period's changes.
  const before = start - f.previous.reduce((s, x) => s + x.value, 0);
  return withTotals(points(f.current, q, start), points(f.previous, prev, before), last);
}

/**
 * A count per day that does not add up over days (distinct people), read by day: a month's
 * point is its last day's; the total, the mean of the days to two decimals (rounded to a
 * whole number, one person active on 4 days of 15 read as 0, as if nobody had been).
 */
function daily(f: Periods, { q, prev }: Ranges): Series {
  const side = (figs: Figure[], r: { from: string; to: string }) => {
    const byDay = new Map<string, number>();
    for (const x of figs) byDay.set(x.date, (byDay.get(x.date) ?? 0) + x.value);
    const by = new Map<string, number>();
    const days = daysOf(r.from, r.to);
    for (const day of days) by.set(keyOf(day, q.grain), byDay.get(day) ?? 0);
    const mean = Math.round((days.reduce((s, d) => s + (byDay.get(d) ?? 0), 0) / days.length) * 100) / 100;
    return { points: [...by].map(([date, value]) => ({ date, value })), mean };
  };
  const current = side(f.current, q);
  const previous = side(f.previous, prev);
  return { points: current.points, previous: previous.points, total: current.mean, previousTotal: previous.mean };
}

function withTotals(points: Point[], previous: Point[], sum: (ps: Point[]) => number): Series {
  return { points, previous, total: sum(points), previousTotal: sum(previous) };
}

async function scopeOf(db: Executor, q: InsightsQuery): Promise<{ products: Scope; distinct: Scope; activity: string }> {
  const base = { workspaceId: q.workspaceId, env: q.env };
  if (q.toolId === null) return { products: { ...base, scopes: null }, distinct: { ...base, scopes: [ALL_TOOLS] }, activity: ALL_TOOLS };
  const tool = `tool:${q.toolId}`;
  return { products: { ...base, scopes: await scopesOfTool(db, q.workspaceId, q.toolId) }, distinct: { ...base, scopes: [tool] }, activity: tool };
}

/** The range's and the previous period's figures, added up per point in the database (or per day: `by`); only these plans', when given. */
async function read(
  db: Executor,
  scope: Scope,
  metrics: readonly Metric[],
  r: Ranges,
  by: "day" | "month" = r.q.grain,
  plans: readonly string[] | null = null,
): Promise<Periods> {
  const [current, previous] = await Promise.all([
    figures(db, scope, metrics, r.q.from, r.q.to, by, plans),
    figures(db, scope, metrics, r.prev.from, r.prev.to, by, plans),
  ]);
  return { current, previous };
}

const pick = (f: Periods, test: (x: Figure) => boolean): Periods => ({ current: f.current.filter(test), previous: f.previous.filter(test) });
const of = (f: Periods, ...metrics: string[]) => pick(f, (x) => metrics.includes(x.metric));
const currenciesOf = (f: Periods) => [...new Set([...f.current, ...f.previous].map((x) => x.currency))].filter((c) => c !== "").sort();

function ranges(q: InsightsQuery): Ranges {
  checkRange(q);
  return { q, prev: previousRange(q.from, q.to) };
}

/** Net revenue of one currency's figures: gross (one-time and subscription) less refunds, summed per point. */
function netOf(mine: Periods, r: Ranges): Series {
  const gross = of(mine, "gross_one_time", "gross_subscription");
  const refunds = of(mine, "refunds");
  const negative = (xs: Figure[]) => xs.map((x) => ({ ...x, value: -x.value }));
  return summed({ current: [...gross.current, ...negative(refunds.current)], previous: [...gross.previous, ...negative(refunds.previous)] }, r);
}

/**
 * What the vendor earned in one currency after the processor's fee and tax, less what
 * refunds and chargebacks took back, summed per point; null when no payment of either
 * period reported it (Stripe's never do), rather than a zero that would read as earned nothing.
 */
function earningsOf(mine: Periods, r: Ranges): Series | null {
  const earnings = of(mine, "earnings");
  return earnings.current.length === 0 && earnings.previous.length === 0 ? null : summed(earnings, r);
}

export async function revenueInsights(db: Executor, q: InsightsQuery): Promise<RevenueInsights> {
  const r = ranges(q);
  await foldFigures(db);
  const { products } = await scopeOf(db, q);
  const packs = await packPlans(db, q.workspaceId);
  const [f, packFigures, plans, names] = await Promise.all([
    read(db, products, ["gross_one_time", "gross_subscription", "refunds", "earnings"], r),
    read(db, products, ["gross_one_time"], r, r.q.grain, packs),
    planTotals(db, products, q.from, q.to),
    planNames(db, q.workspaceId),
  ]);
  const isPack = new Set(packs);
  const currencies: CurrencyRevenue[] = currenciesOf(f).map((currency) => {
    const mine = pick(f, (x) => x.currency === currency);
    const refunds = of(mine, "refunds");
    const gross = of(mine, "gross_one_time", "gross_subscription");
    const byPlan = new Map<string, CurrencyRevenue["byPlan"][number]>();
    for (const p of plans) {
      if (p.currency !== currency) continue;
      const key = `${p.scope}:${p.planId}`;
      const [kind, product] = p.scope.split(":") as [string, string];
      const row = byPlan.get(key) ?? {
        planId: p.planId,
        planName: names.get(key) ?? p.planId,
        bundleId: kind === "bundle" ? product : null,
        pack: isPack.has(key),
        gross: 0,
        refunds: 0,
      };
      if (p.metric === "refunds") row.refunds += p.value;
      else row.gross += p.value;
      byPlan.set(key, row);
    }
    return {
      currency,
      gross: summed(gross, r),
      refunds: summed(refunds, r),
      net: netOf(mine, r),
      oneTime: summed(of(mine, "gross_one_time"), r),
      subscription: summed(of(mine, "gross_subscription"), r),
      packs: summed(
        pick(packFigures, (x) => x.currency === currency),
        r,
      ),
      byPlan: [...byPlan.values()].sort((a, b) => b.gross - a.gross || a.planId.localeCompare(b.planId)),
      earnings: earningsOf(mine, r),
    };
  });
  return { currencies };
}

const MOVEMENTS = ["mrr_new", "mrr_expansion", "mrr_contraction", "mrr_churn", "mrr_reactivation"] as const;

type Levels = Awaited<ReturnType<typeof levelsBefore>>;

/** A level at the start of the range: its value before the previous period, plus the previous period's changes. */
const levelAtStart = (f: Periods, levels: Levels, metric: string, currency: string) =>
  (levels.find((l) => l.metric === metric && l.currency === currency)?.value ?? 0) +
  f.previous.filter((x) => x.metric === metric && x.currency === currency).reduce((s, x) => s + x.value, 0);

/** The currencies with a figure in either period or a level before them. */
const levelCurrencies = (f: Periods, levels: Levels) => [...new Set([...currenciesOf(f), ...levels.map((l) => l.currency).filter((c) => c !== "")])].sort();

/** MRR in one currency: each point its value at the end of the point's last day. */
const mrrOf = (f: Periods, levels: Levels, r: Ranges, currency: string): Series =>
  level(
    levelAtStart(f, levels, "mrr", currency),
    of(
      pick(f, (x) => x.currency === currency),
      "mrr",
    ),
    r,
  );

export async function subscriptionInsights(db: Executor, q: InsightsQuery): Promise<SubscriptionInsights> {
  const r = ranges(q);
  await foldFigures(db);
  const { products, distinct } = await scopeOf(db, q);
  // Paying people are counted once per product and once over all ("*"): a tool's page adds its products', all tools read "*".
  const paying = q.toolId === null ? distinct : products;
  const metrics: Metric[] = ["mrr", "active_subscriptions", ...MOVEMENTS];
  const [f, levels, people, peopleBefore] = await Promise.all([
    read(db, products, metrics, r),
    levelsBefore(db, products, ["mrr", "active_subscriptions"], r.prev.from),
    read(db, paying, ["paying_people"], r),
    levelsBefore(db, paying, ["paying_people"], r.prev.from),
  ]);
  const days = (dayMs(q.to) - dayMs(q.from)) / DAY + 1;
  const currencies: CurrencyMrr[] = levelCurrencies(f, levels).map((currency) => {
    const mine = pick(f, (x) => x.currency === currency);
    const mrr = mrrOf(f, levels, r, currency);
    const churn = summed(of(mine, "mrr_churn"), r);
    const payingCustomers = level(
      levelAtStart(people, peopleBefore, "paying_people", currency),
      pick(people, (x) => x.currency === currency),
      r,
    );
    return {
      currency,
      mrr,
      movements: {
        new: summed(of(mine, "mrr_new"), r),
        expansion: summed(of(mine, "mrr_expansion"), r),
        contraction: summed(of(mine, "mrr_contraction"), r),
        churn,
        reactivation: summed(of(mine, "mrr_reactivation"), r),
      },
      payingCustomers,
      revenuePerPayingCustomer: perPayingCustomer(mrr, payingCustomers),
      rates: recurringRates(mrr, churn, payingCustomers, days),
    };
  });
  return { active: level(levelAtStart(f, levels, "active_subscriptions", ""), of(f, "active_subscriptions"), r), currencies };
}

/** MRR ÷ paying people, rounded to the minor unit; null with nobody paying. */
const perPerson = (mrr: number, people: number) => (people > 0 ? Math.round(mrr / people) : null);

/** MRR ÷ paying customers at each point (0 where nobody pays: a chart's point is a number). */
function perPayingCustomer(mrr: Series, people: Series): Series {
  const at = (m: Point[], p: Point[]) => m.map((x, i) => ({ date: x.date, value: perPerson(x.value, p[i]?.value ?? 0) ?? 0 }));
  return withTotals(at(mrr.points, people.points), at(mrr.previous, people.previous), last);
}

/**
 * ARR, the monthly MRR churn rate and revenue per paying customer of one currency, from
 * its MRR, churn and paying-people series over a range of `days` days: MRR at the start is
 * the previous period's last value (the end of the day before the range). A rate over 90
 * days is scaled to 30 (÷ 3), not compounded.
 */
export function recurringRates(mrr: Series, churn: Series, people: Series, days: number): RecurringRates {
  const end = mrr.points.at(-1)?.value ?? 0;
  const start = mrr.previous.at(-1)?.value ?? 0;
  return {
    arr: { value: 12 * end, previous: 12 * start },
    monthlyChurnRate: start <= 0 ? null : (churn.total / start) * (30 / days),
    revenuePerPayingCustomer: { value: perPerson(end, last(people.points)), previous: perPerson(start, last(people.previous)) },
  };
}

export async function peopleInsights(db: Executor, q: InsightsQuery): Promise<PeopleInsights> {
  const r = ranges(q);
  await foldFigures(db);
  const { products, distinct } = await scopeOf(db, q);
  // Trial outcomes are kept per tool ('tool:<tool>') and, for any product bought, under "*": the distinct scope reads the one the page means.
  const [people, grants] = await Promise.all([
    read(db, distinct, ["new_customers", "trial_paid_within", "trial_paid_after"], r),
    read(db, products, ["trials", "grants"], r),
  ]);
  const trialsStarted = summed(of(grants, "trials"), r);
  return {
    newCustomers: summed(of(people, "new_customers"), r),
    trialsStarted,
    grants: summed(of(grants, "grants"), r),
    trials: trialOutcomes(people, trialsStarted.total),
  };
}

/** Trials started in the range and what became of them: the outcomes are counted on each trial's creation day. */
function trialOutcomes(people: Periods, started: number): PeopleInsights["trials"] {
  const sum = (metric: string) => people.current.reduce((s, x) => s + (x.metric === metric ? x.value : 0), 0);
  return { started, paidWithinTrial: sum("trial_paid_within"), paidWithin30DaysAfter: sum("trial_paid_after") };
}

/**
 * `now` places the at-risk cut-off (no check for 14 days up to today). The checks this
 * process noted are written first, so its own are read (another process's within a second).
 */
export async function useInsights(services: Pick<Services, "db" | "activity">, q: InsightsQuery, now: Date): Promise<UseInsights> {
  await services.activity.flush();
  const { db } = services;
  const r = ranges(q);
  await foldFigures(db);
  const { products, distinct, activity } = await scopeOf(db, q);
  const since = utcDayOf(now.getTime() - (AT_RISK_DAYS - 1) * DAY);
  const where = { workspaceId: q.workspaceId, env: q.env, toolId: q.toolId };
  const [people, devices, atRisk, topUnpaid, meters, used, ranOut] = await Promise.all([
    read(db, distinct, ["active_people", "active_people_7", "active_people_30"], r, "day"),
    read(db, products, ["active_devices"], r, "day"),
    lapsedPayers(db, products, activity, since, 100),
    mostActiveUnpaid(db, products, activity, q.toolId, q.from, q.to, 20, utcDayOf(now.getTime())),
    metersOf(db, q.workspaceId, q.toolId),
    Promise.all([meterDays(db, where, q.from, q.to), meterDays(db, where, r.prev.from, r.prev.to)]),
    runOuts(db, where, dayMs(q.from), dayMs(q.to) + DAY, RAN_OUT_LIMIT),
  ]);
  // A meter's units as figures, to sum per point as every other count is.
  const usedOf = (toolId: string, meterId: string): Periods => {
    const figuresOf = (rows: (typeof used)[number]) =>
      rows.filter((x) => x.toolId === toolId && x.meterId === meterId).map((x) => ({ metric: "used", date: x.day, currency: "", value: x.used }));
    return { current: figuresOf(used[0]), previous: figuresOf(used[1]) };
  };
  return {
    activePeople: {
      daily: daily(of(people, "active_people"), r),
      weekly: daily(of(people, "active_people_7"), r),
      monthly: daily(of(people, "active_people_30"), r),
    },
    activeDevices: daily(devices, r),
    atRisk: atRisk.map((p) => ({ ...p, lastActiveAt: p.lastActiveAt === null ? null : new Date(p.lastActiveAt).toISOString() })),
    topUnpaid,
    meters: meters.map((m) => ({ toolId: m.toolId, meterId: m.id, name: m.name, unit: m.unit, used: summed(usedOf(m.toolId, m.id), r) })),
    allowanceRanOut: ranOut.map((x) => ({ ...x, ranOutAt: new Date(x.ranOutAt).toISOString(), resetsAt: new Date(x.resetsAt).toISOString() })),
  };
}

/** The days the overview counts over: the Insights pages' "Last 30 days". */
export const OVERVIEW_DAYS = 30;

/**
 * The dashboard overview's figures for a workspace environment, over every tool and the
 * 30 days ending on `now`'s UTC day, against the 30 days before: each figure the one its
 * Insights page shows for that range, from the same reads and the same arithmetic, but
 * only the figures the overview shows (three reads of the roll-ups and the MRR level
 * before them, no lists of people).
 */
export async function overviewInsights(
  services: Pick<Services, "db" | "activity">,
  where: { workspaceId: string; env: InsightsQuery["env"] },
  now: Date,
): Promise<OverviewInsights> {
  // As the Use page does: this process's access checks are written before they are read.
  await services.activity.flush();
  const { db } = services;
  await foldFigures(db);
  const today = utcDayOf(now.getTime());
  const q: InsightsQuery = { ...where, toolId: null, from: utcDayOf(dayMs(today) - (OVERVIEW_DAYS - 1) * DAY), to: today, grain: "day" };
  const r = ranges(q);
  const { products, distinct } = await scopeOf(db, q);
  const [f, levels, people] = await Promise.all([
    read(db, products, ["gross_one_time", "gross_subscription", "refunds", "trials", "mrr", ...MOVEMENTS], r),
    levelsBefore(db, products, ["mrr"], r.prev.from),
    read(db, distinct, ["new_customers", "trial_paid_within", "trial_paid_after", "active_people", "active_people_7"], r),
  ]);
  const subscriptions = of(f, "mrr", ...MOVEMENTS);
  const revenue = of(f, "gross_one_time", "gross_subscription", "refunds");
  const newCustomers = summed(of(people, "new_customers"), r);
  const trials = trialOutcomes(people, summed(of(f, "trials"), r).total);
  return {
    from: q.from,
    to: q.to,
    mrr: levelCurrencies(subscriptions, levels).map((currency) => {
      const mrr = mrrOf(subscriptions, levels, r, currency);
      return { currency, value: last(mrr.points), previous: last(mrr.previous) };
    }),
    netRevenue: currenciesOf(revenue).map((currency) => {
      const net = netOf(
        pick(revenue, (x) => x.currency === currency),
        r,
      );
      return { currency, value: net.total, previous: net.previousTotal };
    }),
    newCustomers: { value: newCustomers.total, previous: newCustomers.previousTotal },
    trials: { started: trials.started, converted: trials.paidWithinTrial + trials.paidWithin30DaysAfter },
    activeToday: last(daily(of(people, "active_people"), r).points),
    activeThisWeek: last(daily(of(people, "active_people_7"), r).points),
  };
}
