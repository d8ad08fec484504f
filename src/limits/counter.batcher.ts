import type { Dialect, Executor } from "../db/database.js";
import { GroupCommit, type Waiting } from "../db/group-commit.js";
import { isDatabaseUnavailable, isStorageFull, StorageFullError } from "../db/storage-faults.js";
import { addCounts, addEachWithin, type CounterIncrement, type CountOutcome, type LimitedAddition, readStoredCounters } from "./counter.store.js";
import { HeldCounts } from "./held-counts.js";

/** One request's counts. */
interface Counts {
  increments: readonly (CounterIncrement & { limit: number })[];
  by: number;
  now: number;
}

// A statement has a row per distinct counter; past this many requests the rest wait for
// the next batch, so that one statement stays small and one refusal re-counts few
// requests one by one.
const MAX_BATCH = 64;

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
 *
 * When the database's storage is full, the counts are decided and held in memory
 * (`held`, held-counts.ts) against the stored counts read back, and written before the
 * first batch that the database takes again.
 */
export class CounterBatcher {
  private readonly groups = new Map<Executor, GroupCommit<Counts, CountOutcome>>();

  constructor(
    private readonly dialect: Dialect,
    private readonly held: HeldCounts = new HeldCounts(),
  ) {}

  count(ex: Executor, increments: readonly (CounterIncrement & { limit: number })[], by: number, now: number): Promise<CountOutcome> {
    if (ex.isTransaction) return addEachWithin(ex, this.dialect, eachBy(increments, by), now);
    let group = this.groups.get(ex);
    if (!group) {
      group = new GroupCommit((batch) => this.write(ex, batch), MAX_BATCH);
      this.groups.set(ex, group);
    }
    return group.add({ increments, by, now });
  }

  private async write(ex: Executor, batch: Waiting<Counts, CountOutcome>[]): Promise<void> {
    const latest = Math.max(...batch.map((w) => w.input.now));
    // Held counts go first: counted in the database without them, a request could pass a limit.
    if (!(await this.held.writeHeld((additions) => addCounts(ex, this.dialect, additions, latest), latest))) return this.countHeld(ex, batch, null);
    if (batch.length > 1) {
      const { additions, now } = merge(batch.map((w) => w.input));
      // A statement that fails for one request's counter (bad input in its scope) counted
      // nothing, like a refusal: every request is counted again alone, so only it fails.
      // Unless the database is unreachable: then each would wait for it in turn.
      const outcome = await addEachWithin(ex, this.dialect, additions, now).catch((error: unknown) => {
        if (isDatabaseUnavailable(error)) throw error;
        return null;
      });
      if (outcome && !outcome.refused && outcome.states) {
        const counts = new Map(additions.map((addition, i) => [addition.scope, outcome.states?.[i]]));
        // Each request is answered with the counts after the whole batch: as if it came last.
        for (const { input, resolve } of batch)
          resolve({ refused: false, states: input.increments.map((c) => counts.get(c.scope) ?? { count: 0, windowEnd: now }) });
        return;
      }
    }
    for (const [i, { input, resolve, reject }] of batch.entries()) {
      try {
        resolve(await addEachWithin(ex, this.dialect, eachBy(input.increments, input.by), input.now));
      } catch (error) {
        if (isStorageFull(error)) return this.countHeld(ex, batch.slice(i), error);
        reject(error);
      }
    }
  }

  /**
   * Counts each request in memory, in the order they came, against the stored counts
   * read back (reads still work on a full disk). When even memory has no room (the
   * bound of HeldCounts), the request fails as the write did.
   */
  private async countHeld(ex: Executor, batch: Waiting<Counts, CountOutcome>[], failure: unknown): Promise<void> {
    const scopes = [...new Set(batch.flatMap((w) => w.input.increments.map((c) => c.scope)))];
    const stored = await readStoredCounters(ex, scopes);
    for (const { input, resolve, reject } of batch) {
      const outcome = this.held.addEachWithin(eachBy(input.increments, input.by), stored, input.now);
      if (outcome) resolve(outcome);
      else reject(failure ?? new StorageFullError(null));
    }
  }
}

const eachBy = (increments: readonly (CounterIncrement & { limit: number })[], by: number): LimitedAddition[] => increments.map((c) => ({ ...c, by }));

/**
 * One addition per counter, summing the batch's requests. The batch is counted at the
 * latest of its requests' times (they differ by the length of one turn of the event
 * loop), and a window it opens closes where that request's would.
 */
function merge(batch: readonly Counts[]): { additions: LimitedAddition[]; now: number } {
  const byScope = new Map<string, LimitedAddition>();
  let now = Number.NEGATIVE_INFINITY;
  for (const counts of batch) {
    const latest = counts.now >= now;
    if (latest) now = counts.now;
    for (const c of counts.increments) {
      const merged = byScope.get(c.scope);
      if (!merged) byScope.set(c.scope, { scope: c.scope, nextWindowEnd: c.nextWindowEnd, limit: c.limit, by: counts.by });
      else {
        merged.by += counts.by;
        if (latest) merged.nextWindowEnd = c.nextWindowEnd;
        merged.limit = Math.min(merged.limit, c.limit);
      }
    }
  }
  return { additions: [...byScope.values()], now };
}
