import { sql } from "kysely";
import type { Executor } from "../db/database.js";
import { prepared } from "../db/prepared.js";

interface CounterState {
  count: number;
  /** Epoch milliseconds at which the current window closes. */
  windowEnd: number;
}

/**
 * Adds `by` to a windowed counter and answers the new state, in one statement.
 * A window that has closed restarts at `by` with `nextWindowEnd`. The upsert locks the
 * counter's row until the surrounding transaction ends, so counts are exact across
 * processes, and a rolled-back transaction takes its increment with it.
 */
const upsertCounter = prepared((ex, p) => {
  const [scope, by, now, nextWindowEnd] = [p<string>(0), p<number>(1), p<number>(2), p<number>(3)];
  return ex
    .insertInto("counters")
    .values({ scope, window_end: nextWindowEnd, count: by })
    .onConflict((oc) =>
      oc.column("scope").doUpdateSet({
        count: sql<number>`case when counters.window_end <= ${now} then ${by} else counters.count + ${by} end`,
        window_end: sql<number>`case when counters.window_end <= ${now} then ${nextWindowEnd} else counters.window_end end`,
      }),
    )
    .returning(["count", "window_end"]);
});

export async function incrementCounter(ex: Executor, scope: string, by: number, now: number, nextWindowEnd: number): Promise<CounterState> {
  const [row] = await upsertCounter(ex, [scope, by, now, nextWindowEnd]);
  if (!row) throw new Error(`counter ${scope} was not written`);
  return { count: Number(row.count), windowEnd: Number(row.window_end) };
}

/** Reads a counter without changing it; a closed window reads as zero. */
const selectCounter = prepared((ex, p) => ex.selectFrom("counters").select(["count", "window_end"]).where("scope", "=", p<string>(0)));

export async function readCounter(ex: Executor, scope: string, now: number): Promise<CounterState> {
  const [row] = await selectCounter(ex, [scope]);
  if (!row || Number(row.window_end) <= now) return { count: 0, windowEnd: now };
  return { count: Number(row.count), windowEnd: Number(row.window_end) };
}
