import { sql } from "kysely";
import { utcDayOf } from "../clock.js";
import { dialectOf, type Executor, holdWriteLock, type Trx } from "../db/database.js";
import type { Env } from "../db/schema.js";

// The windows of the most-active-unpaid list (migration 036): per scope and span, each
// person's active days on the window's start or after. The page's fixed ranges all end
// today, so a window needs no end: it is right for the range whose first day is its start,
// as long as nobody has a day after today (a process whose clock runs ahead), which the
// read checks. The activity flush counts new days in; the windows job moves the starts.

export const SPANS = ["7d", "30d", "90d", "12m"] as const;
export type Span = (typeof SPANS)[number];

const DAY = 86_400_000;
const dayMs = (day: string) => Date.parse(`${day}T00:00:00Z`);

/** The first day of the span's range ending `today`, as the page draws it (dashboard/insights/insights.range.ts). */
export function windowStart(span: Span, today: string): string {
  if (span === "12m") {
    const d = new Date(dayMs(today));
    return utcDayOf(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 11, 1));
  }
  const days = span === "7d" ? 7 : span === "30d" ? 30 : 90;
  return utcDayOf(dayMs(today) - (days - 1) * DAY);
}

/** The span whose window is the range from…to, when it ends today; null for any other range. */
export function spanOf(from: string, to: string, today: string): Span | null {
  if (to !== today) return null;
  return SPANS.find((s) => windowStart(s, today) === from) ?? null;
}

export interface WindowKey {
  workspaceId: string;
  env: Env;
  scope: string;
  span: Span;
}

/** Rows of insight_active_windows per upsert: six parameters each. */
const UPSERT_ROWS = 1_000;

export interface ActiveDay {
  workspaceId: string;
  env: Env;
  scope: string;
  personId: string;
  day: string;
}

const startsOf = (ex: Executor, workspaceId: string, env: Env, scopes: string[]) => {
  const q = ex
    .selectFrom("insight_window_starts")
    .select(["scope", "span", "start"])
    .where("workspace_id", "=", workspaceId)
    .where("env", "=", env)
    .where("scope", "in", scopes)
    .orderBy("scope")
    .orderBy("span");
  // Shared: flushes pass each other; a start that moves waits for them, then reads their days.
  return dialectOf(ex) === "postgres" ? q.forShare().execute() : q.execute();
};

/**
 * Counts days just written (each new to insight_active_days) in every window that starts
 * on or before them, in the transaction that wrote them. A scope seen for the first time
 * gets its windows here, starting on its earliest day in the batch: it has no other days
 * (migration 036 gave every scope active before it its windows).
 */
export async function countInWindows(ex: Executor, days: readonly ActiveDay[]): Promise<void> {
  const byEnv = new Map<string, ActiveDay[]>();
  for (const d of days) {
    const key = JSON.stringify([d.workspaceId, d.env]);
    byEnv.set(key, [...(byEnv.get(key) ?? []), d]);
  }
  const counts = new Map<string, { workspace_id: string; env: Env; scope: string; span: string; person_id: string; days: number }>();
  for (const mine of byEnv.values()) {
    const { workspaceId, env } = mine[0] as ActiveDay;
    const scopes = [...new Set(mine.map((d) => d.scope))].sort();
    let starts = await startsOf(ex, workspaceId, env, scopes);
    const known = new Set(starts.map((s) => s.scope));
    const fresh = scopes.filter((s) => !known.has(s));
    if (fresh.length > 0) {
      const first = (scope: string) => mine.filter((d) => d.scope === scope).reduce((m, d) => (d.day < m ? d.day : m), "9999-12-31");
      await ex
        .insertInto("insight_window_starts")
        .values(fresh.flatMap((scope) => SPANS.map((span) => ({ workspace_id: workspaceId, env, scope, span, start: first(scope) }))))
        .onConflict((oc) => oc.columns(["workspace_id", "env", "scope", "span"]).doNothing())
        .execute();
      starts = await startsOf(ex, workspaceId, env, scopes);
    }
    for (const d of mine) {
      for (const s of starts) {
        if (s.scope !== d.scope || d.day < s.start) continue;
        const key = JSON.stringify([workspaceId, env, d.scope, s.span, d.personId]);
        const held = counts.get(key) ?? { workspace_id: workspaceId, env, scope: d.scope, span: s.span, person_id: d.personId, days: 0 };
        held.days += 1;
        counts.set(key, held);
      }
    }
  }
  if (counts.size === 0) return;
  // In key order: two flushes that touch the same people lock their rows in the same order.
  const values = [...counts.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v);
  // A statement's parameters are bounded (SQLite's limit): a flush of thousands of days writes them in parts.
  for (let i = 0; i < values.length; i += UPSERT_ROWS) {
    await ex
      .insertInto("insight_active_windows")
      .values(values.slice(i, i + UPSERT_ROWS))
      .onConflict((oc) =>
        oc.columns(["workspace_id", "env", "scope", "span", "person_id"]).doUpdateSet({ days: sql`insight_active_windows.days + excluded.days` }),
      )
      .execute();
  }
}

/** Every window whose start is not where a range ending `today` begins. */
export async function windowsToMove(ex: Executor, today: string): Promise<(WindowKey & { start: string })[]> {
  const rows = await ex.selectFrom("insight_window_starts").selectAll().execute();
  return rows
    .map((r) => ({ workspaceId: r.workspace_id, env: r.env, scope: r.scope, span: r.span as Span, start: r.start }))
    .filter((r) => (SPANS as readonly string[]).includes(r.span) && r.start !== windowStart(r.span, today));
}

/**
 * Moves a window's start towards `target` past one day with activity, in the caller's
 * transaction: forward, the people active on that day lose it (and their row when it was
 * their last); back, the people active on it gain it. Days without activity are passed
 * over in the same step. Answers the new start, or null when there was nothing to do
 * (another process moved it first).
 */
export async function stepWindow(trx: Trx, w: WindowKey, target: string): Promise<string | null> {
  await holdWriteLock(trx);
  let q = trx
    .selectFrom("insight_window_starts")
    .select("start")
    .where("workspace_id", "=", w.workspaceId)
    .where("env", "=", w.env)
    .where("scope", "=", w.scope)
    .where("span", "=", w.span);
  if (dialectOf(trx) === "postgres") q = q.forUpdate();
  const row = await q.executeTakeFirst();
  if (!row || row.start === target) return null;
  const forward = row.start < target;
  // The next day anyone was active between the start and the target: the days between change nothing.
  const days = trx.selectFrom("insight_active_days").where("workspace_id", "=", w.workspaceId).where("env", "=", w.env).where("scope", "=", w.scope);
  const next = forward
    ? await days
        .select((eb) => eb.fn.min("day").as("day"))
        .where("day", ">=", row.start)
        .where("day", "<", target)
        .executeTakeFirst()
    : await days
        .select((eb) => eb.fn.max("day").as("day"))
        .where("day", "<", row.start)
        .where("day", ">=", target)
        .executeTakeFirst();
  const day = next?.day ?? null;
  if (day === null) {
    await setStart(trx, w, target);
    return target;
  }
  const activeThatDay = trx
    .selectFrom("insight_active_days")
    .select("person_id")
    .where("workspace_id", "=", w.workspaceId)
    .where("env", "=", w.env)
    .where("scope", "=", w.scope)
    .where("day", "=", day);
  const window = () =>
    trx
      .updateTable("insight_active_windows")
      .where("workspace_id", "=", w.workspaceId)
      .where("env", "=", w.env)
      .where("scope", "=", w.scope)
      .where("span", "=", w.span);
  if (forward) {
    await window().set({ days: sql`days - 1` }).where("person_id", "in", activeThatDay).execute();
    await trx
      .deleteFrom("insight_active_windows")
      .where("workspace_id", "=", w.workspaceId)
      .where("env", "=", w.env)
      .where("scope", "=", w.scope)
      .where("span", "=", w.span)
      .where("days", "<=", 0)
      .execute();
  } else {
    await trx
      .insertInto("insight_active_windows")
      .columns(["workspace_id", "env", "scope", "span", "person_id", "days"])
      // The span is one of SPANS, written as a literal: a parameter in a select list has no type on PostgreSQL.
      .expression(activeThatDay.clearSelect().select(["workspace_id", "env", "scope", sql.lit(w.span).as("span"), "person_id", sql.lit(1).as("days")]))
      .onConflict((oc) =>
        oc.columns(["workspace_id", "env", "scope", "span", "person_id"]).doUpdateSet({ days: sql`insight_active_windows.days + excluded.days` }),
      )
      .execute();
  }
  const start = forward ? utcDayOf(dayMs(day) + DAY) : day;
  await setStart(trx, w, start);
  return start;
}

async function setStart(trx: Trx, w: WindowKey, start: string): Promise<void> {
  await trx
    .updateTable("insight_window_starts")
    .set({ start })
    .where("workspace_id", "=", w.workspaceId)
    .where("env", "=", w.env)
    .where("scope", "=", w.scope)
    .where("span", "=", w.span)
    .execute();
}

/** The start of a window as it stands, or null when the scope has none yet. */
export async function startOfWindow(ex: Executor, w: WindowKey): Promise<string | null> {
  const row = await ex
    .selectFrom("insight_window_starts")
    .select("start")
    .where("workspace_id", "=", w.workspaceId)
    .where("env", "=", w.env)
    .where("scope", "=", w.scope)
    .where("span", "=", w.span)
    .executeTakeFirst();
  return row?.start ?? null;
}

/** Whether the scope has an active day after `day` (written by a process whose clock runs ahead). */
export async function activeAfter(ex: Executor, workspaceId: string, env: Env, scope: string, day: string): Promise<boolean> {
  const row = await ex
    .selectFrom("insight_active_days")
    .select("day")
    .where("workspace_id", "=", workspaceId)
    .where("env", "=", env)
    .where("scope", "=", scope)
    .where("day", ">", day)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
