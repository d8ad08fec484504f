import { sql } from "kysely";
import type { Executor } from "../db/database.js";
import type { Env, InsightDaysTable, InsightMonthsTable, ProductKind, TrialOutcome } from "../db/schema.js";

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
export const utcDayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
export const productScope = (kind: ProductKind, id: string) => `${kind}:${id}`;
/** The scope of figures that count a person once over every tool. */
export const ALL_TOOLS = "*";
/** Counts per day that do not add up over days (distinct people or devices): no month row. */
export const DAILY_ONLY: ReadonlySet<string> = new Set<Metric>(["active_people", "active_people_7", "active_people_30", "active_devices"]);

/** Adds each row's value to its figure, creating it at the value. */
export async function bump(ex: Executor, rows: readonly Bump[]): Promise<void> {
  // One row per figure: PostgreSQL refuses a statement that would update a row twice (an import's licences of one day and plan).
  const byKey = new Map<string, InsightDaysTable>();
  for (const r of rows) {
    const row = {
      workspace_id: r.workspaceId,
      env: r.env,
      metric: r.metric,
      day: r.day,
      scope: r.scope,
      currency: r.currency ?? "",
      plan_id: r.planId ?? "",
      value: 0,
    };
    const key = JSON.stringify([row.workspace_id, row.env, row.metric, row.day, row.scope, row.currency, row.plan_id]);
    const held = byKey.get(key) ?? row;
    held.value += r.value;
    byKey.set(key, held);
  }
  const values = [...byKey.values()].filter((v) => v.value !== 0);
  if (values.length === 0) return;
  await ex
    .insertInto("insight_days")
    .values(values)
    .onConflict((oc) =>
      oc.columns(["workspace_id", "env", "metric", "day", "scope", "currency", "plan_id"]).doUpdateSet({ value: sql`insight_days.value + excluded.value` }),
    )
    .execute();
  // The month's row beside each day's (migration 034), one per month like the days above.
  const byMonth = new Map<string, InsightMonthsTable>();
  for (const { day, ...v } of values) {
    if (DAILY_ONLY.has(v.metric)) continue;
    const month = { ...v, month: day.slice(0, 7) };
    const key = JSON.stringify([month.workspace_id, month.env, month.metric, month.month, month.scope, month.currency, month.plan_id]);
    const held = byMonth.get(key);
    if (held) held.value += month.value;
    else byMonth.set(key, month);
  }
  const months = [...byMonth.values()].filter((v) => v.value !== 0);
  if (months.length === 0) return;
  await ex
    .insertInto("insight_months")
    .values(months)
    .onConflict((oc) =>
      oc.columns(["workspace_id", "env", "metric", "month", "scope", "currency", "plan_id"]).doUpdateSet({ value: sql`insight_months.value + excluded.value` }),
    )
    .execute();
}

export interface Activity {
  workspaceId: string;
  env: Env;
  toolId: string;
  personId: string;
  deviceId: string;
  at: number;
}

/** Counts access checks (activity.ts notes them), their figures summed into one write. */
export async function recordActivities(ex: Executor, checks: readonly Activity[]): Promise<void> {
  const rows: Bump[] = [];
  for (const a of checks) rows.push(...(await activityFigures(ex, a)));
  await bump(ex, rows);
}

/**
 * One access check's days and the figures they add: nothing unless it is the device's
 * first of its UTC day. The person's first of the day (per tool and over all tools) adds
 * one to the day's active people and to each trailing 7 and 30-day window that did not
 * count them yet: with p their newest earlier active day, the windows ending on days
 * max(d, p + n) … d + n - 1.
 */
async function activityFigures(ex: Executor, a: Activity): Promise<Bump[]> {
  const day = utcDayOf(a.at);
  const device = await ex
    .insertInto("insight_device_days")
    .values({ device_id: a.deviceId, day })
    .onConflict((oc) => oc.columns(["device_id", "day"]).doNothing())
    .executeTakeFirst();
  if (Number(device.numInsertedOrUpdatedRows ?? 0) === 0) return [];
  const rows: Bump[] = [{ workspaceId: a.workspaceId, env: a.env, metric: "active_devices", day, scope: `tool:${a.toolId}`, value: 1 }];
  for (const scope of [`tool:${a.toolId}`, ALL_TOOLS]) {
    const inserted = await ex
      .insertInto("insight_active_days")
      .values({ workspace_id: a.workspaceId, env: a.env, scope, person_id: a.personId, day })
      .onConflict((oc) => oc.columns(["workspace_id", "env", "scope", "person_id", "day"]).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) continue;
    await ex
      .insertInto("insight_active_months")
      .values({ workspace_id: a.workspaceId, env: a.env, scope, month: day.slice(0, 7), person_id: a.personId, days: 1 })
      .onConflict((oc) =>
        oc.columns(["workspace_id", "env", "scope", "month", "person_id"]).doUpdateSet({ days: sql`insight_active_months.days + excluded.days` }),
      )
      .execute();
    await ex
      .insertInto("insight_last_active")
      .values({ workspace_id: a.workspaceId, env: a.env, scope, person_id: a.personId, day })
      .onConflict((oc) =>
        oc.columns(["workspace_id", "env", "scope", "person_id"]).doUpdateSet({ day: sql`excluded.day` }).where("insight_last_active.day", "<", day),
      )
      .execute();
    // The person's active days on either side of this one, in one read: p the newest
    // before, q the oldest after (a later check of an earlier day, from a process whose
    // clock is behind, may find windows already counted past d + n - 1).
    const around = await ex
      .selectFrom("insight_active_days")
      .select([
        sql<string | null>`max(case when day < ${day} then day end)`.as("before"),
        sql<string | null>`min(case when day > ${day} then day end)`.as("after"),
      ])
      .where("workspace_id", "=", a.workspaceId)
      .where("env", "=", a.env)
      .where("scope", "=", scope)
      .where("person_id", "=", a.personId)
      .executeTakeFirst();
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
  ]);
}

/** What a subscription's invoices paid, as subscription revenue on the day each was recorded. */
export async function countSubscriptionRevenue(
  ex: Executor,
  sub: Pick<SubscriptionFacts, "workspaceId" | "env" | "productKind" | "productId" | "planId">,
  payments: readonly { amountCents: number; currency: string; createdAt: number }[],
): Promise<void> {
  await bump(
    ex,
    payments.map((p) => ({
      workspaceId: sub.workspaceId,
      env: sub.env,
      metric: "gross_subscription" as const,
      day: utcDayOf(p.createdAt),
      scope: productScope(sub.productKind, sub.productId),
      currency: p.currency,
      planId: sub.planId,
      value: p.amountCents,
    })),
  );
}

/** What was refunded of a subscription's payments, as refunds on the day each was recorded. */
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
