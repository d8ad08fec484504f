import type { Dialect, Executor } from "../db/database.js";
import { addEachWithin, type CounterIncrement, type CountOutcome, type LimitedAddition } from "./counter.store.js";

/** One request's counts, waiting for the batch it will be written with. */
interface Pending {
  increments: readonly (CounterIncrement & { limit: number })[];
  by: number;
  now: number;
  resolve: (outcome: CountOutcome) => void;
  reject: (error: unknown) => void;
}

// A statement has a row per distinct counter; past this many requests the rest wait for
// the next batch, so that one statement stays small and one refusal re-counts few
// requests one by one.
const MAX_BATCH = 64;

interface Queue {
  waiting: Pending[];
  /** A flush is due at the next check phase. */
  scheduled: boolean;
  /** A batch is being written. */
  writing: boolean;
}

/**
 * Counts the limits of concurrent requests together: the requests that reach their
 * counting step in one turn of the event loop are written as one statement (one
 * transaction), instead of a statement and a commit each. Every request served at
 * once by a workspace counts against the same rows (its lookups, its owner's), so
 * one by one they queued on those rows' locks (PostgreSQL) or paid a commit each
 * (SQLite).
 *
 * Exactness is kept: the batch's statement adds every request's counts only if no
 * counter passes its limit (all or nothing, as a single request's statement); when
 * one would, the batch counted nothing and its requests are counted again one at a
 * time, in the order they came, so exactly the requests that fit are let through.
 * Counts inside a caller's transaction are never batched: they must roll back with it.
 */
export class CounterBatcher {
  private readonly queues = new Map<Executor, Queue>();

  constructor(private readonly dialect: Dialect) {}

  count(ex: Executor, increments: readonly (CounterIncrement & { limit: number })[], by: number, now: number): Promise<CountOutcome> {
    if (ex.isTransaction) return addEachWithin(ex, this.dialect, eachBy(increments, by), now);
    return new Promise((resolve, reject) => {
      let queue = this.queues.get(ex);
      if (!queue) {
        queue = { waiting: [], scheduled: false, writing: false };
        this.queues.set(ex, queue);
      }
      queue.waiting.push({ increments, by, now, resolve, reject });
      this.schedule(ex, queue);
    });
  }

  // One batch is written at a time per database handle; the requests that arrive
  // meanwhile make the next batch (group commit). setImmediate, not a microtask: on
  // SQLite a request runs all of its queries without yielding to I/O, so only the check
  // phase after the poll phase sees every request that the poll phase started.
  private schedule(ex: Executor, queue: Queue): void {
    if (queue.scheduled || queue.writing || queue.waiting.length === 0) return;
    queue.scheduled = true;
    setImmediate(() => {
      queue.scheduled = false;
      void this.flush(ex, queue);
    });
  }

  private async flush(ex: Executor, queue: Queue): Promise<void> {
    const batch = queue.waiting.splice(0, MAX_BATCH);
    queue.writing = true;
    try {
      await this.write(ex, batch);
    } finally {
      queue.writing = false;
      this.schedule(ex, queue);
    }
  }

  private async write(ex: Executor, batch: Pending[]): Promise<void> {
    if (batch.length > 1) {
      try {
        const { additions, now } = merge(batch);
        const outcome = await addEachWithin(ex, this.dialect, additions, now);
        if (!outcome.refused && outcome.states) {
          const counts = new Map(additions.map((addition, i) => [addition.scope, outcome.states?.[i]]));
          // Each request is answered with the counts after the whole batch: as if it came last.
          for (const p of batch) p.resolve({ refused: false, states: p.increments.map((c) => counts.get(c.scope) ?? { count: 0, windowEnd: now }) });
          return;
        }
      } catch (error) {
        for (const p of batch) p.reject(error);
        return;
      }
    }
    for (const p of batch) {
      try {
        p.resolve(await addEachWithin(ex, this.dialect, eachBy(p.increments, p.by), p.now));
      } catch (error) {
        p.reject(error);
      }
    }
  }
}

const eachBy = (increments: readonly (CounterIncrement & { limit: number })[], by: number): LimitedAddition[] => increments.map((c) => ({ ...c, by }));

/**
 * One addition per counter, summing the batch's requests. The batch is counted at the
 * latest of its requests' times (they differ by the length of one turn of the event
 * loop), and a window it opens closes where that request's would.
 */
function merge(batch: readonly Pending[]): { additions: LimitedAddition[]; now: number } {
  const byScope = new Map<string, LimitedAddition>();
  let now = Number.NEGATIVE_INFINITY;
  for (const p of batch) {
    const latest = p.now >= now;
    if (latest) now = p.now;
    for (const c of p.increments) {
      const merged = byScope.get(c.scope);
      if (!merged) byScope.set(c.scope, { scope: c.scope, nextWindowEnd: c.nextWindowEnd, limit: c.limit, by: p.by });
      else {
        merged.by += p.by;
        if (latest) merged.nextWindowEnd = c.nextWindowEnd;
        merged.limit = Math.min(merged.limit, c.limit);
      }
    }
  }
  return { additions: [...byScope.values()], now };
}
