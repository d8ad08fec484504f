import { sql } from "kysely";
import { utcDayOf } from "../clock.js";
import { dialectOf, type Executor } from "../db/database.js";
import { type Placeholder, perRowCount, prepared, preparedRaw } from "../db/prepared.js";
import type { Env, InsightDaysTable, ProductKind, TrialOutcome } from "../db/schema.js";
import { type ActiveDay, countInWindows } from "./windows.store.js";

// The writers of the Insights roll-ups (migration 031). Each is called in the transaction
// that writes the change it counts, so a figure never runs ahead of or behind its rows.

export type Metric =
  | "gross_one_time"
  | "gross_subscription"
  | "refunds"
  | "new_customers"
  | "trials"
  | "trial_paid_within"
  | "trial_paid_after"
  | "grants"
  | "mrr"
  | "active_subscriptions"
  | "paying_people"
  | "mrr_new"
  | "mrr_expansion"
  | "mrr_contraction"
  | "mrr_churn"
  | "mrr_reactivation"
  | "active_people"
  | "active_people_7"
  | "active_people_30"
  | "active_devices";

export interface Bump {
  workspaceId: string;
  env: Env;
  metric: Metric;
  day: string;
  scope: string;
  currency?: string;
  planId?: string | null;
  value: number;
}

const DAY = 86_400_000;
export const productScope = (kind: ProductKind, id: string) => `${kind}:${id}`;
/** The scope of figures that count a person once over every tool. */
export const ALL_TOOLS = "*";
/** Counts per day that do not add up over days (distinct people or devices): no month row. */
export const DAILY_ONLY: ReadonlySet<string> = new Set<Metric>(["active_people", "active_people_7", "active_people_30", "active_devices"]);

// A figure's row: its key and the value to add ("day" holds the month for insight_months).
type FigureRow = Omit<InsightDaysTable, "day"> & { day: string };
const FIGURE_COLUMNS = 8;
const figureArgs = (r: FigureRow) => [r.workspace_id, r.env, r.metric, r.day, r.scope, r.currency, r.plan_id, r.value];

/** One upsert adding each row's value to its figure in `table`, the row's values from slot `from` on. */
function upsertFigures(table: "insight_days" | "insight_months", rows: number, p: Placeholder, from: number) {
  const at = sql.ref(table === "insight_days" ? "day" : "month");
  const values = Array.from({ length: rows }, (_, i) => {
    const slot = from + FIGURE_COLUMNS * i;
    return sql`(${sql.join(Array.from({ length: FIGURE_COLUMNS }, (_, c) => p(slot + c)))})`;
  });
  return sql`insert into ${sql.table(table)} (workspace_id, env, metric, ${at}, scope, currency, plan_id, value) values ${sql.join(values)}
  on conflict (workspace_id, env, metric, ${at}, scope, currency, plan_id) do update set value = ${sql.ref(`${table}.value`)} + excluded.value`;
}

// Prepared per number of day and month rows (src/db/prepared.ts): a grant or a sale adds
// one or a few figures, and building and compiling the upserts with Kysely at each change
// cost more than running them. On PostgreSQL the days and the months are one statement
// (the days' upsert a data-modifying WITH), one round trip the fewer while the change's
// rows are locked; SQLite cannot write in a WITH, and its statements cost no round trip.
const PREPARED_ROWS = 16;
const upsertDays = perRowCount((days) => preparedRaw((p) => upsertFigures("insight_days", days, p, 0)));
const upsertMonths = perRowCount((months) => preparedRaw((p) => upsertFigures("insight_months", months, p, 0)));
const upsertDaysAndMonths = perRowCount((days) =>
  perRowCount((months) =>
    preparedRaw((p) => sql`with days as (${upsertFigures("insight_days", days, p, 0)}) ${upsertFigures("insight_months", months, p, FIGURE_COLUMNS * days)}`),
  ),
);

/** Each row's figures summed into one row per key, in key order, without the rows that add nothing. */
function summed(rows: Iterable<FigureRow>): FigureRow[] {
  const byKey = new Map<string, FigureRow>();
  for (const row of rows) {
    const key = JSON.stringify([row.workspace_id, row.env, row.metric, row.day, row.scope, row.currency, row.plan_id]);
    const held = byKey.get(key);
    if (held) held.value += row.value;
    else byKey.set(key, { ...row });
  }
  // Rows locked in one order by every writer, so that two changes adding to the same figures cannot deadlock on PostgreSQL.
  return [...byKey]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, row]) => row)
    .filter((row) => row.value !== 0);
}

/** Adds each row's value to its figure, creating it at the value. */
export async function bump(ex: Executor, rows: readonly Bump[]): Promise<void> {
  // One row per figure: PostgreSQL refuses a statement that would update a row twice (an import's licences of one day and plan).
  const days = summed(
    rows.map((r) => ({
      workspace_id: r.workspaceId,
      env: r.env,
      metric: r.metric,
      day: r.day,
      scope: r.scope,
      currency: r.currency ?? "",
      plan_id: r.planId ?? "",
      value: r.value,
    })),
  );
  if (days.length === 0) return;
  // The month's row beside each day's (migration 034), one per month like the days above.
  const months = summed(days.filter((d) => !DAILY_ONLY.has(d.metric)).map((d) => ({ ...d, day: d.day.slice(0, 7) })));
  if (days.length > PREPARED_ROWS || months.length > PREPARED_ROWS) {
    // An import's batch: a statement of its own size, not worth keeping prepared. The months
    // first, as the prepared statement below locks them on PostgreSQL (its main upsert runs
    // before the days' in its WITH) and the customers' triggers (migration 039): two
    // writers adding to the same figures must lock them in one order, or they can deadlock.
    await writeFigures(ex, "insight_months", months);
    await writeFigures(ex, "insight_days", days);
    return;
  }
  const args = [...days.flatMap(figureArgs), ...months.flatMap(figureArgs)];
  if (months.length === 0) await upsertDays(days.length)(ex, args);
  else if (dialectOf(ex) === "postgres") await upsertDaysAndMonths(days.length)(months.length)(ex, args);
  else {
    await upsertDays(days.length)(ex, args.slice(0, FIGURE_COLUMNS * days.length));
    await upsertMonths(months.length)(ex, args.slice(FIGURE_COLUMNS * days.length));
  }
}

async function writeFigures(ex: Executor, table: "insight_days" | "insight_months", rows: readonly FigureRow[]): Promise<void> {
  if (rows.length === 0) return;
  const args = rows.flatMap(figureArgs);
  await upsertFigures(table, rows.length, (i) => args[i] as never, 0).execute(ex);
}

export interface Activity {
  workspaceId: string;
  env: Env;
  toolId: string;
  personId: string;
  deviceId: string;
  at: number;
}

const byBytes = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Counts access checks (activity.ts notes them), their figures summed into one write. */
export async function recordActivities(ex: Executor, checks: readonly Activity[]): Promise<void> {
  const rows: Bump[] = [];
  const days: ActiveDay[] = [];
  // In one order in every process (by person, then device and time), so that two
  // processes' flushes lock the same people's rows in the same order: in the order they
  // were noted, two flushes on PostgreSQL could each hold a row the other waits for.
  const ordered = [...checks].sort(
    (a, b) =>
      byBytes(a.workspaceId, b.workspaceId) || byBytes(a.env, b.env) || byBytes(a.personId, b.personId) || byBytes(a.deviceId, b.deviceId) || a.at - b.at,
  );
  for (const a of ordered) rows.push(...(await activityFigures(ex, a, days)));
  await bump(ex, rows);
  await countInWindows(ex, days);
}

// The flush's statements, prepared (src/db/prepared.ts): a day's first checks come all at
// once (every installed device soon after midnight UTC), up to nine statements each, and
// Kysely building and compiling each of them cost more than SQLite running it. Each insert
// answers its row only when it wrote one.
const insertDeviceDay = prepared((ex, p) =>
  ex
    .insertInto("insight_device_days")
    .values({ device_id: p<string>(0), day: p<string>(1) })
    .onConflict((oc) => oc.columns(["device_id", "day"]).doNothing())
    .returning("day"),
);
// The person's slots: workspace, env, scope, person, day.
const insertActiveDay = prepared((ex, p) =>
  ex
    .insertInto("insight_active_days")
    .values({ workspace_id: p<string>(0), env: p<Env>(1), scope: p<string>(2), person_id: p<string>(3), day: p<string>(4) })
    .onConflict((oc) => oc.columns(["workspace_id", "env", "scope", "person_id", "day"]).doNothing())
    .returning("day"),
);
const addActiveMonthDay = prepared((ex, p) =>
  ex
    .insertInto("insight_active_months")
    .values({ workspace_id: p<string>(0), env: p<Env>(1), scope: p<string>(2), month: p<string>(3), person_id: p<string>(4), days: 1 })
    .onConflict((oc) =>
      oc.columns(["workspace_id", "env", "scope", "month", "person_id"]).doUpdateSet({ days: sql`insight_active_months.days + excluded.days` }),
    ),
);
const moveLastActive = prepared((ex, p) =>
  ex
    .insertInto("insight_last_active")
    .values({ workspace_id: p<string>(0), env: p<Env>(1), scope: p<string>(2), person_id: p<string>(3), day: p<string>(4) })
    .onConflict((oc) =>
      oc.columns(["workspace_id", "env", "scope", "person_id"]).doUpdateSet({ day: sql`excluded.day` }).where("insight_last_active.day", "<", p<string>(4)),
    ),
);
const daysAround = prepared((ex, p) =>
  ex
    .selectFrom("insight_active_days")
    .select([
      sql<string | null>`max(case when day < ${p<string>(4)} then day end)`.as("before"),
      sql<string | null>`min(case when day > ${p<string>(4)} then day end)`.as("after"),
    ])
    .where("workspace_id", "=", p<string>(0))
    .where("env", "=", p<Env>(1))
    .where("scope", "=", p<string>(2))
    .where("person_id", "=", p<string>(3)),
);

/**
 * One access check's days and the figures they add: nothing unless it is the device's
 * first of its UTC day. The person's first of the day (per tool and over all tools) adds
 * one to the day's active people and to each trailing 7 and 30-day window that did not
 * count them yet: with p their newest earlier active day, the windows ending on days
 * max(d, p + n) … d + n - 1.
 */
async function activityFigures(ex: Executor, a: Activity, newDays: ActiveDay[]): Promise<Bump[]> {
  const day = utcDayOf(a.at);
  if ((await insertDeviceDay(ex, [a.deviceId, day])).length === 0) return [];
  const rows: Bump[] = [{ workspaceId: a.workspaceId, env: a.env, metric: "active_devices", day, scope: `tool:${a.toolId}`, value: 1 }];
  for (const scope of [`tool:${a.toolId}`, ALL_TOOLS]) {
    const person = [a.workspaceId, a.env, scope, a.personId, day];
    if ((await insertActiveDay(ex, person)).length === 0) continue;
    newDays.push({ workspaceId: a.workspaceId, env: a.env, scope, personId: a.personId, day });
    await addActiveMonthDay(ex, [a.workspaceId, a.env, scope, day.slice(0, 7), a.personId]);
    await moveLastActive(ex, person);
    // The person's active days on either side of this one, in one read: p the newest
    // before, q the oldest after (a later check of an earlier day, from a process whose
    // clock is behind, may find windows already counted past d + n - 1).
    const [around] = await daysAround(ex, person);
    const d = Date.parse(`${day}T00:00:00Z`);
    const p = around?.before ? Date.parse(`${around.before}T00:00:00Z`) : Number.NEGATIVE_INFINITY;
    const q = around?.after ? Date.parse(`${around.after}T00:00:00Z`) : Number.POSITIVE_INFINITY;
    rows.push({ workspaceId: a.workspaceId, env: a.env, metric: "active_people", day, scope, value: 1 });
    for (const [metric, n] of [
      ["active_people_7", 7],
      ["active_people_30", 30],
    ] as const) {
      const last = Math.min(d + (n - 1) * DAY, q - DAY);
      for (let t = Math.max(d, p + n * DAY); t <= last; t += DAY) {
        rows.push({ workspaceId: a.workspaceId, env: a.env, metric, day: utcDayOf(t), scope, value: 1 });
      }
    }
  }
  return rows;
}

/** A subscription as MRR sees it. */
export interface SubscriptionFacts {
  workspaceId: string;
  env: Env;
  id: string;
  personId: string;
  productKind: ProductKind;
  productId: string;
  planId: string | null;
  status: string;
  endedAt: number | null;
  seats: number | null;
}

/** Statuses that bring money in: a trial has not paid yet, an unpaid or paused one has stopped. */
const PAYING = new Set(["active", "past_due"]);

/** A plan's recurring amount normalised to a month, times the seats; null for no recurring price. */
export function monthlyAmount(amountCents: number, interval: "month" | "year" | "week", seats: number | null): number {
  const perMonth = interval === "year" ? amountCents / 12 : interval === "week" ? (amountCents * 52) / 12 : amountCents;
  return Math.round(perMonth * Math.max(1, seats ?? 1));
}

/**
 * Moves MRR from what the subscription added before this change to what it adds now, on
 * the change's UTC day: new the first time it pays, reactivation when it pays again,
 * expansion or contraction when its amount changes while paying, churn when it stops.
 */
export async function recordSubscriptionMrr(ex: Executor, sub: SubscriptionFacts, at: number): Promise<void> {
  const plan = sub.planId
    ? await ex
        .selectFrom("plans")
        .select(["amount_cents", "currency", "interval"])
        .where("workspace_id", "=", sub.workspaceId)
        .where("product_kind", "=", sub.productKind)
        .where("product_id", "=", sub.productId)
        .where("id", "=", sub.planId)
        .executeTakeFirst()
    : undefined;
  const prior = await ex
    .selectFrom("insight_subscriptions")
    .select(["currency", "mrr", "contributed"])
    .where("workspace_id", "=", sub.workspaceId)
    .where("env", "=", sub.env)
    .where("subscription_id", "=", sub.id)
    .executeTakeFirst();
  const paying = PAYING.has(sub.status) && sub.endedAt === null && plan?.amount_cents != null && plan.interval !== null;
  const now = paying && plan?.amount_cents != null && plan.interval ? monthlyAmount(Number(plan.amount_cents), plan.interval, sub.seats) : 0;
  const was = prior ? Number(prior.mrr) : 0;
  const currency = plan?.currency ?? prior?.currency ?? "";
  const contributed = (prior?.contributed ?? 0) === 1 || now > 0;
  if (!prior) {
    await ex
      .insertInto("insight_subscriptions")
      .values({ workspace_id: sub.workspaceId, env: sub.env, subscription_id: sub.id, currency, mrr: now, contributed: contributed ? 1 : 0 })
      .execute();
  } else if (was !== now || prior.contributed !== (contributed ? 1 : 0)) {
    await ex
      .updateTable("insight_subscriptions")
      .set({ mrr: now, contributed: contributed ? 1 : 0 })
      .where("workspace_id", "=", sub.workspaceId)
      .where("env", "=", sub.env)
      .where("subscription_id", "=", sub.id)
      .execute();
  }
  if (was === now) return;
  const base = { workspaceId: sub.workspaceId, env: sub.env, day: utcDayOf(at), scope: productScope(sub.productKind, sub.productId), currency };
  const movement: Metric =
    was === 0 ? ((prior?.contributed ?? 0) === 1 ? "mrr_reactivation" : "mrr_new") : now === 0 ? "mrr_churn" : now > was ? "mrr_expansion" : "mrr_contraction";
  await bump(ex, [
    { ...base, metric: "mrr", value: now - was },
    { ...base, metric: movement, value: Math.abs(now - was) },
    { ...base, metric: "active_subscriptions", currency: "", value: (now > 0 ? 1 : 0) - (was > 0 ? 1 : 0) },
    ...(now > 0 === was > 0 ? [] : await payingPeopleMoves(ex, sub, base.day, currency, now > 0 ? 1 : -1)),
  ]);
}

/**
 * The paying people a subscription's start or stop of paying moves (docs/decisions.md,
 * Insights, "Revenue per paying customer"): the person counts once per currency under the
 * product's scope and under "*", so they move only when no other subscription of theirs
 * pays in that currency (for the product's scope: of that product). Called with the
 * subscription's own row already written, under the billing lock, so two changes of one
 * person never decide on the same state.
 */
async function payingPeopleMoves(ex: Executor, sub: SubscriptionFacts, day: string, currency: string, value: 1 | -1): Promise<Bump[]> {
  const others = await ex
    .selectFrom("subscriptions as s")
    .innerJoin("insight_subscriptions as i", (j) =>
      j.onRef("i.workspace_id", "=", "s.workspace_id").onRef("i.env", "=", "s.env").onRef("i.subscription_id", "=", "s.id"),
    )
    .select(["s.product_kind", "s.product_id"])
    .where("s.workspace_id", "=", sub.workspaceId)
    .where("s.env", "=", sub.env)
    .where("s.person_id", "=", sub.personId)
    .where("s.id", "!=", sub.id)
    .where("i.mrr", ">", 0)
    .where("i.currency", "=", currency)
    .execute();
  const base = { workspaceId: sub.workspaceId, env: sub.env, metric: "paying_people" as const, day, currency, value };
  const product = productScope(sub.productKind, sub.productId);
  return [
    ...(others.length === 0 ? [{ ...base, scope: ALL_TOOLS }] : []),
    ...(others.some((o) => productScope(o.product_kind, o.product_id) === product) ? [] : [{ ...base, scope: product }]),
  ];
}

/** What a subscription's invoices paid, as subscription revenue on the day Stripe was paid for each. */
export async function countSubscriptionRevenue(
  ex: Executor,
  sub: Pick<SubscriptionFacts, "workspaceId" | "env" | "productKind" | "productId" | "planId">,
  invoices: readonly { amountCents: number; currency: string; paidAt: number }[],
): Promise<void> {
  await bump(
    ex,
    invoices.map((p) => ({
      workspaceId: sub.workspaceId,
      env: sub.env,
      metric: "gross_subscription" as const,
      day: utcDayOf(p.paidAt),
      scope: productScope(sub.productKind, sub.productId),
      currency: p.currency,
      planId: sub.planId,
      value: p.amountCents,
    })),
  );
}

/** What was refunded of a subscription's payments, as refunds on the day Stripe refunded each. */
export async function countSubscriptionRefunds(
  ex: Executor,
  sub: Pick<SubscriptionFacts, "workspaceId" | "env" | "productKind" | "productId" | "planId">,
  refunds: readonly { amountCents: number; currency: string; at: number }[],
): Promise<void> {
  await bump(
    ex,
    refunds.map((r) => ({
      workspaceId: sub.workspaceId,
      env: sub.env,
      metric: "refunds" as const,
      day: utcDayOf(r.at),
      scope: productScope(sub.productKind, sub.productId),
      currency: r.currency,
      planId: sub.planId,
      value: r.amountCents,
    })),
  );
}

/** How long after a trial's end a purchase still counts as its outcome. */
export const TRIAL_FOLLOW_UP = 30 * DAY;
/** People settled per statement (bind parameters stay well under either engine's limit). */
const SETTLE_BATCH = 500;

/** A purchase's first moment, within or after the trial, decides the trial; null when none counts. */
function outcomeOf(trial: { startsAt: number; endsAt: number | null }, firstAt: number | null): TrialOutcome | null {
  if (firstAt === null) return null;
  const end = trial.endsAt ?? trial.startsAt;
  return firstAt < end ? "within" : firstAt < end + TRIAL_FOLLOW_UP ? "after" : null;
}

/**
 * Decides the trials of these people from their purchases (licences with an amount,
 * subscriptions) and moves the trial outcome figures to match, on each trial's creation
 * day: called in the transaction that writes a trial or a purchase, so a trial counts at
 * most once, by its person's first purchase from the trial's start (an earlier purchase
 * written later moves it). Two outcomes per trial: of a product containing its tool (the
 * bundles' tools as they are at the purchase), under 'tool:<tool>'; of any product, under
 * ALL_TOOLS, as the page over every tool counts.
 */
export async function settleTrialOutcomes(ex: Executor, people: readonly { workspaceId: string; env: Env; personId: string }[]): Promise<void> {
  const groups = new Map<string, { workspaceId: string; env: Env; ids: Set<string> }>();
  for (const p of people) {
    const key = `${p.workspaceId} ${p.env}`;
    const g = groups.get(key) ?? { workspaceId: p.workspaceId, env: p.env, ids: new Set<string>() };
    g.ids.add(p.personId);
    groups.set(key, g);
  }
  for (const { workspaceId, env, ids } of groups.values()) {
    const all = [...ids];
    for (let i = 0; i < all.length; i += SETTLE_BATCH) await settleBatch(ex, workspaceId, env, all.slice(i, i + SETTLE_BATCH));
  }
}

async function settleBatch(ex: Executor, workspaceId: string, env: Env, personIds: string[]): Promise<void> {
  const trials = await ex
    .selectFrom("grants")
    .select(["id", "tool_id", "person_id", "starts_at", "ends_at", "created_at", "outcome", "outcome_any"])
    .where("workspace_id", "=", workspaceId)
    .where("env", "=", env)
    .where("kind", "=", "trial")
    .where("person_id", "in", personIds)
    .execute();
  if (trials.length === 0) return;
  const buyers = [...new Set(trials.map((t) => t.person_id))];
  const [licences, subscriptions, bundles] = await Promise.all([
    ex
      .selectFrom("licences")
      .select(["person_id", "product_kind", "product_id", "purchased_at as at"])
      .where("workspace_id", "=", workspaceId)
      .where("env", "=", env)
      .where("person_id", "in", buyers)
      .where("amount_cents", "is not", null)
      .execute(),
    ex
      .selectFrom("subscriptions")
      .select(["person_id", "product_kind", "product_id", "created_at as at"])
      .where("workspace_id", "=", workspaceId)
      .where("env", "=", env)
      .where("person_id", "in", buyers)
      .execute(),
    ex.selectFrom("bundle_tools").select(["bundle_id", "tool_id"]).where("workspace_id", "=", workspaceId).execute(),
  ]);
  const inBundle = new Set(bundles.map((b) => `${b.bundle_id} ${b.tool_id}`));
  const buys = [...licences, ...subscriptions].map((b) => ({ ...b, at: Number(b.at) }));
  const rows: Bump[] = [];
  const again = new Set<string>();
  for (const t of trials) {
    const trial = { startsAt: Number(t.starts_at), endsAt: t.ends_at === null ? null : Number(t.ends_at) };
    const mine = buys.filter((b) => b.person_id === t.person_id && b.at >= trial.startsAt);
    const first = (bs: typeof mine) => (bs.length === 0 ? null : Math.min(...bs.map((b) => b.at)));
    const forTool = mine.filter((b) => (b.product_kind === "tool" ? b.product_id === t.tool_id : inBundle.has(`${b.product_id} ${t.tool_id}`)));
    const outcome = outcomeOf(trial, first(forTool));
    const outcomeAny = outcomeOf(trial, first(mine));
    if (outcome === t.outcome && outcomeAny === t.outcome_any) continue;
    // Only from what was read: a transaction that decided the trial since (PostgreSQL, another
    // process's purchase) leaves nothing to update, and the person is decided again on what it wrote.
    const updated = await ex
      .updateTable("grants")
      .set({ outcome, outcome_any: outcomeAny })
      .where("id", "=", t.id)
      .where("outcome", t.outcome === null ? "is" : "=", t.outcome)
      .where("outcome_any", t.outcome_any === null ? "is" : "=", t.outcome_any)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) {
      again.add(t.person_id);
      continue;
    }
    const day = utcDayOf(Number(t.created_at));
    const move = (was: TrialOutcome | null, now: TrialOutcome | null, scope: string) => {
      if (was === now) return;
      if (was) rows.push({ workspaceId, env, metric: `trial_paid_${was}`, day, scope, value: -1 });
      if (now) rows.push({ workspaceId, env, metric: `trial_paid_${now}`, day, scope, value: 1 });
    };
    move(t.outcome, outcome, productScope("tool", t.tool_id));
    move(t.outcome_any, outcomeAny, ALL_TOOLS);
  }
  await bump(ex, rows);
  if (again.size > 0) await settleBatch(ex, workspaceId, env, [...again]);
}
