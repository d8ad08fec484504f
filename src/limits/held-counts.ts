import { isStorageFull } from "../db/storage-faults.js";
import type { CounterAddition, CounterState, CountOutcome, LimitedAddition } from "./counter.store.js";

// What a process may hold: a scope is a key, a workspace environment, an owner, a
// source address; a full disk that lasts an hour under heavy traffic holds some
// thousands. Past this a count that cannot be stored fails (503) rather than grow the
// process without end.
const MAX_HELD_SCOPES = 100_000;
// Counters written per statement: far below either engine's limit on parameters, and
// few distinct statement sizes to prepare (counter.store.ts prepares one per size).
const WRITE_CHUNK = 100;

/**
 * Counts of limits that the database could not store because its storage was full
 * (db/storage-faults.ts), held in this process until it can: a retrieve or an access
 * check then still answers, and no limit is lifted meanwhile, since every count adds
 * what is held to what the database has.
 *
 * The one owner of that memory (LimitsService makes it and hands it to its counter
 * batcher). Bound: MAX_HELD_SCOPES counters. Figure: `warden_limit_counts_held`. Dropped:
 * a counter once its amount is written (the first count that reaches the database
 * writes everything held before its own), or once its window has closed, as nothing is
 * left to enforce in it. A process that stops while the disk is still full loses what
 * it held: at most one window's counts, of limits that then allow that much more
 * until the window ends. While the database is full it is not written at all, so the
 * stored counts read back do not change under the held ones.
 */
export class HeldCounts {
  private readonly held = new Map<string, CounterState>();
  private writing: Promise<boolean> | null = null;

  /** Counters held now. */
  get size(): number {
    return this.held.size;
  }

  /** A counter's state: `stored` (as read from the database, undefined when it has no row) plus what is held for it. */
  current(scope: string, stored: CounterState | undefined, nextWindowEnd: number, now: number): CounterState {
    const held = this.held.get(scope);
    const open = held && held.windowEnd > now ? held : undefined;
    if (held && !open) this.held.delete(scope);
    if (stored && stored.windowEnd > now) return { count: stored.count + (open?.count ?? 0), windowEnd: stored.windowEnd };
    return open ? { ...open } : { count: 0, windowEnd: nextWindowEnd };
  }

  /**
   * What `addEachWithin` does, in memory: adds each amount unless a counter would pass
   * its limit, in which case nothing is added; the states answered include the amounts.
   * Answers null, holding nothing, when the bound leaves no room for the new counters.
   * Synchronous, so that requests counted concurrently are decided one after the other.
   */
  addEachWithin(additions: readonly LimitedAddition[], stored: ReadonlyMap<string, CounterState>, now: number): CountOutcome | null {
    const states = additions.map((a) => {
      const state = this.current(a.scope, stored.get(a.scope), a.nextWindowEnd, now);
      return { count: state.count + a.by, windowEnd: state.windowEnd };
    });
    if (states.some((state, i) => state.count > (additions[i]?.limit ?? 0))) return { refused: true, states };
    const added = additions.filter((a) => !this.held.has(a.scope)).length;
    if (this.held.size + added > MAX_HELD_SCOPES) return null;
    for (const [i, a] of additions.entries()) {
      const state = states[i];
      const held = this.held.get(a.scope);
      if (!state) continue;
      if (held && held.windowEnd === state.windowEnd) held.count += a.by;
      else this.held.set(a.scope, { count: a.by, windowEnd: state.windowEnd });
    }
    return { refused: false, states };
  }

  /**
   * Writes what is held with `write`, WRITE_CHUNK counters a statement; answers false
   * when the storage is still full, and what was not written stays held. One write at a time: callers
   * that come while one is under way share its outcome, so nothing is written twice.
   */
  writeHeld(write: (additions: CounterAddition[]) => Promise<unknown>, now: number): Promise<boolean> {
    if (this.held.size === 0) return Promise.resolve(true);
    this.writing ??= this.writeOnce(write, now).finally(() => {
      this.writing = null;
    });
    return this.writing;
  }

  private async writeOnce(write: (additions: CounterAddition[]) => Promise<unknown>, now: number): Promise<boolean> {
    const additions: CounterAddition[] = [];
    for (const [scope, held] of this.held) {
      if (held.windowEnd <= now || held.count === 0) this.held.delete(scope);
      else additions.push({ scope, nextWindowEnd: held.windowEnd, by: held.count });
    }
    for (let start = 0; start < additions.length; start += WRITE_CHUNK) {
      const chunk = additions.slice(start, start + WRITE_CHUNK);
      try {
        await write(chunk);
      } catch (error) {
        if (isStorageFull(error)) return false;
        throw error;
      }
      // Until this runs, a count reads the written amounts twice (stored and held): a
      // moment of strictness, never a limit passed.
      for (const { scope, nextWindowEnd, by } of chunk) {
        const held = this.held.get(scope);
        if (!held || held.windowEnd !== nextWindowEnd) continue;
        held.count -= by;
        if (held.count === 0) this.held.delete(scope);
      }
    }
    return true;
  }
}
