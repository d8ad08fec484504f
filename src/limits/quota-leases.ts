import { randomInt } from "node:crypto";
import type { Dialect, Executor } from "../db/database.js";
import { isStorageFull } from "../db/storage-faults.js";
import { type CounterState, type CountOutcome, returnBlock, type Taken, takeBlock } from "./counter.store.js";

/** A quota to count against from a leased block: its counter, its limit, and where a window opened now would close. */
export interface LeasedQuota {
  scope: string;
  limit: number;
  nextWindowEnd: number;
}

// The largest block a process takes at once: the most one crashed process can strand of
// a counter's window, and one take per this many requests at the most.
export const MAX_BLOCK = 64;
// A block not drawn from for this long goes back to the database, for other processes.
export const IDLE_MS = 1_000;
// Counters a process leases from at once (keys, workspaces and owners in use this
// minute or day); past this a request is counted the old way, one upsert, holding nothing.
const MAX_POOLS = 100_000;
// Bits a process may take among a counter's takers: two processes share one by chance
// (1 in 48), which only makes their blocks larger, as if they were one process. Leasers
// of one process (tests) take the bits in turn from a random first one.
const TAKER_BITS = 48;
const firstBit = randomInt(TAKER_BITS);
let leasersMade = 0;

export interface LeaseFigures {
  counters: number;
  unspent: number;
  blocksTaken: number;
  unitsTaken: number;
}

/** What this process holds of one counter's window. */
interface Pool {
  ex: Executor;
  /** Units leased and not yet spent. */
  units: number;
  /** Units on their way back to the database (still in the counter until the return lands). */
  returning: number;
  windowEnd: number;
  /** The counter as last seen: every process's blocks and spent units, less what was given back. */
  count: number;
  /** Processes seen taking from it in this window. */
  seen: number;
  /** What blocks are split by: the processes seen in this window or the one before, whichever are more. */
  processes: number;
  lastUsed: number;
  /** The take under way, shared by the requests that wait for it. */
  taking: Promise<Taken> | null;
}

/**
 * The limits of the hot paths (a key's requests, lookups, list pages) counted from blocks
 * of quota leased from the database: one upsert takes a block of a counter's window, and
 * requests are counted from it in memory, synchronously, so never twice. The counter in
 * the database holds every block taken, spent or not, so no process can take past the
 * limit: blocks may only under-admit. To keep that small, a block is at most MAX_BLOCK
 * and at most what is left divided by twice the processes seen taking from the counter
 * (so it shrinks as the window fills: the last units go one at a time); unspent units go
 * back after IDLE_MS without use and at shutdown; a window's end drops them (the counter
 * starts again). A process that crashes strands at most its blocks until their windows end.
 *
 * A request of several quotas is all or nothing: it spends from every pool or from none,
 * and a block taken for a request that another quota then refuses stays in the pool.
 */
export class QuotaLeases {
  private readonly pools = new Map<string, Pool>();
  private readonly bit = 2 ** ((firstBit + leasersMade++) % TAKER_BITS);
  private returning: Promise<void> | null = null;
  /** Blocks taken from the database and units they brought, since the process started (for /metrics). */
  private taken = { blocks: 0, units: 0 };

  constructor(
    private readonly dialect: Dialect,
    /** Writes counts held while the storage was full; answers false while it still is (then nothing is leased). */
    private readonly writeHeld: (ex: Executor, now: number) => Promise<boolean>,
  ) {}

  /**
   * Counts `by` against every quota from the leased blocks, taking blocks where they lack.
   * Answers null when it cannot lease (the storage is full, or too many counters are
   * leased): the caller counts the old way.
   */
  async count(ex: Executor, quotas: readonly LeasedQuota[], by: number, now: number): Promise<CountOutcome | null> {
    for (;;) {
      const pools: Pool[] = [];
      for (const quota of quotas) {
        const pool = this.poolFor(ex, quota.scope, now);
        if (!pool) return null;
        pools.push(pool);
      }
      if (pools.every((pool) => pool.units >= by)) {
        for (const pool of pools) {
          pool.units -= by;
          pool.lastUsed = now;
        }
        return { refused: false, states: pools.map((pool) => ({ count: pool.count, windowEnd: pool.windowEnd })) };
      }
      const lacking = quotas.filter((_, i) => (pools[i]?.units ?? 0) < by);
      let takes: Taken[];
      try {
        if (!(await this.writeHeld(ex, now))) return null;
        takes = await Promise.all(lacking.map((quota) => this.take(ex, quota, by, now)));
      } catch (error) {
        if (isStorageFull(error)) return null;
        throw error;
      }
      // Refused when a take saw less than one request's count left and the pool still lacks.
      const exhausted = new Set(lacking.filter((quota, i) => (this.pools.get(quota.scope)?.units ?? 0) < by && left(quota, takes[i]) < by).map((q) => q.scope));
      if (exhausted.size > 0) {
        const states = quotas.map((quota, i): CounterState => {
          const pool = this.pools.get(quota.scope) ?? pools[i];
          const count = pool?.count ?? quota.limit;
          // As the batcher answers a refusal: the counts with this request's, so the quota over is the one named.
          return { count: exhausted.has(quota.scope) ? Math.max(count, quota.limit) + by : Math.min(count, quota.limit), windowEnd: pool?.windowEnd ?? now };
        });
        return { refused: true, states };
      }
    }
  }

  /** Units this process holds unspent of a counter's window (what shown usage leaves out). */
  unspent(scope: string, windowEnd: number): number {
    const pool = this.pools.get(scope);
    return pool && pool.windowEnd === windowEnd ? pool.units + pool.returning : 0;
  }

  /** Counters leased from now. */
  get size(): number {
    return this.pools.size;
  }

  /** What /metrics shows: units held unspent now, and blocks and units taken so far. */
  get figures(): LeaseFigures {
    let unspent = 0;
    for (const pool of this.pools.values()) unspent += pool.units;
    return { counters: this.pools.size, unspent, blocksTaken: this.taken.blocks, unitsTaken: this.taken.units };
  }

  /**
   * Gives back what was not drawn from for IDLE_MS (all of it with `idleMs` 0, at
   * shutdown), and forgets closed windows. A sweep that comes while one is under way is
   * skipped; the last one at shutdown waits for it, then runs. A return that fails loses
   * its units until the window ends: fewer admitted, never more.
   */
  giveBack(now: number, idleMs = IDLE_MS): Promise<void> {
    if (this.returning && idleMs > 0) return this.returning;
    const run = (this.returning ?? Promise.resolve()).then(() => this.giveBackOnce(now, idleMs));
    this.returning = run;
    const clear = () => {
      if (this.returning === run) this.returning = null;
    };
    run.then(clear, clear);
    return run;
  }

  private async giveBackOnce(now: number, idleMs: number): Promise<void> {
    const returns: { pool: Pool; scope: string; windowEnd: number; units: number }[] = [];
    for (const [scope, pool] of this.pools) {
      if (pool.taking) continue;
      if (pool.windowEnd <= now) this.pools.delete(scope);
      else if (pool.lastUsed <= now - idleMs && pool.units > 0) {
        // The pool stays while its window runs, for what it knows of the counter (how many processes take from it).
        returns.push({ pool, scope, windowEnd: pool.windowEnd, units: pool.units });
        pool.returning += pool.units;
        pool.units = 0;
      }
    }
    for (const { pool, scope, windowEnd, units } of returns) {
      try {
        await returnBlock(pool.ex, scope, windowEnd, units);
      } catch {
        // Lost until the window ends (see above); the next sweep has other work.
      } finally {
        pool.returning -= units;
      }
    }
  }

  private poolFor(ex: Executor, scope: string, now: number): Pool | null {
    let pool = this.pools.get(scope);
    if (pool && pool.windowEnd <= now && !pool.taking) {
      // A closed window's units are worth nothing: the counter starts again.
      pool.units = 0;
      pool.count = 0;
    }
    if (!pool) {
      if (this.pools.size >= MAX_POOLS) return null;
      pool = { ex, units: 0, returning: 0, windowEnd: 0, count: 0, seen: 1, processes: 1, lastUsed: now, taking: null };
      this.pools.set(scope, pool);
    }
    return pool;
  }

  /** Takes a block for `quota`, or waits for the take under way (and answers what it saw). */
  private take(ex: Executor, quota: LeasedQuota, by: number, now: number): Promise<Taken> {
    const pool = this.pools.get(quota.scope);
    if (!pool) throw new Error(`no pool for ${quota.scope}`);
    if (pool.taking) return pool.taking;
    const block = {
      scope: quota.scope,
      nextWindowEnd: quota.nextWindowEnd,
      limit: quota.limit,
      demand: by,
      maxBlock: MAX_BLOCK,
      divisor: 2 * pool.processes,
      bit: this.bit,
    };
    const taking = takeBlock(ex, this.dialect, block, now).then((taken) => {
      const seen = Math.max(1, bitsSet(taken.takers));
      if (taken.windowEnd !== pool.windowEnd) {
        // A new window: what was held of the last one went with it. Its first takers have
        // not met the others yet, so the last window's figure stands until they have.
        pool.units = 0;
        pool.windowEnd = taken.windowEnd;
        pool.processes = Math.max(seen, pool.seen);
        pool.seen = seen;
      } else {
        pool.seen = Math.max(pool.seen, seen);
        pool.processes = Math.max(pool.processes, seen);
      }
      pool.units += taken.taken;
      if (taken.taken > 0) this.taken.blocks += 1;
      this.taken.units += taken.taken;
      pool.count = taken.count;
      pool.ex = ex;
      pool.lastUsed = now;
      return taken;
    });
    pool.taking = taking;
    const clear = () => {
      if (pool.taking === taking) pool.taking = null;
    };
    taking.then(clear, clear);
    return taking;
  }
}

/** What a take saw left of the quota after it. */
function left(quota: LeasedQuota, taken: Taken | undefined): number {
  return taken ? quota.limit - taken.count : 0;
}

function bitsSet(bits: number): number {
  let n = 0;
  for (let rest = bits; rest > 0; rest = Math.floor(rest / 2)) n += rest % 2;
  return n;
}
