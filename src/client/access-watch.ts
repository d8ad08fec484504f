// The devices waiting on GET /tools/{tool}/access/changes, and the one loop per process
// that wakes them. Idle waiters cost memory only: no query runs per waiting device. Each
// second the loop reads what the access-change feed gained (one query for the whole
// process, whichever process or command wrote it) and wakes the waiters of the people
// it names; each woken device then checks its own access once. This module owns the
// waiters: bounded (`maxWaiters` per process, one wait per device), counted in /metrics,
// all answered "no change" when the process closes or the database stops answering.
import type { Clock } from "../clock.js";
import { type AccessChange, lastAccessChange, readAccessChangesAfter, readAccessChangesAt } from "../customers/access-change.store.js";
import { EVERYONE } from "../customers/answer-cache.js";
import type { Db } from "../db/database.js";
import type { Env } from "../db/schema.js";
import { ApiError } from "../errors/errors.js";

/** Why a wait returned: the person's access may have changed, its time ran out, or it was ended (closing, client gone, database lost). */
export type WaitEnd = "changed" | "timeout" | "ended";

export interface AccessWatchOptions {
  /** Waiting devices this process holds at most; beyond, a wait is refused with 429. */
  maxWaiters: number;
  pollIntervalMs: number;
  /**
   * How long a position the feed skipped is looked for. On PostgreSQL positions are taken
   * in order but committed in any order: a change whose transaction is still open when a
   * later one is read shows up a moment after. Past this the position counts as a
   * rolled-back write (a waiting device then learns of a change that slow at its next
   * recheck, as without the feed).
   */
  gapWaitMs: number;
  /** Feed entries read a statement; a poll reads at most `maxPages` of them and goes on at the next. */
  batch: number;
  maxPages: number;
}

// 10,000 waiting devices took 222 MB more resident memory on SQLite, 257 MB on PostgreSQL
// (a socket, its request and reply: 23 to 26 KB a wait in all) in bench/access-waits.ts. The library
// waits only while a page it opened is open, so a process rarely holds many; the cap keeps
// a flood of waits from taking the process's memory, and sends the rest elsewhere.
export const DEFAULT_ACCESS_WATCH_OPTIONS: AccessWatchOptions = { maxWaiters: 10_000, pollIntervalMs: 1_000, gapWaitMs: 10_000, batch: 1_000, maxPages: 20 };
// Positions looked for at once at most: a sequence that jumps far ahead is not a backlog to track.
const MAX_GAPS = 1_000;
// A process at its maximum asks clients to come back after about a wait's length.
const FULL_RETRY_MS = 30_000;

/** Told what each read of the feed found, and when reading it fails (customers/answer-cache.ts). */
export interface FeedListener {
  /** The feed's end was read: every change written before is in the database's answers. */
  started(): void;
  /** Read each turn beside the feed (the key watch, auth/key.service.ts); its failure is the feed's. */
  turn?(): Promise<void>;
  read(changes: readonly AccessChange[]): void;
  lost(): void;
}

/** Who waits: a device of a person, in a workspace environment (a change for everyone there wakes it too). */
export interface WaitFor {
  deviceId: string;
  personId: string;
  workspaceId: string;
  env: Env;
}

const everyoneKey = (workspaceId: string, env: Env) => `${workspaceId}\u0000${env}`;

/** One device's wait. */
export class Waiter {
  private woken = false;
  private ended: WaitEnd | null = null;
  private resolve: ((end: WaitEnd) => void) | null = null;

  readonly deviceId: string;
  readonly personId: string;
  /** The workspace environment's key: a change for everyone there (a plan's features) wakes every waiter of it. */
  readonly everyone: string;

  constructor(
    who: WaitFor,
    readonly deadline: number,
  ) {
    this.deviceId = who.deviceId;
    this.personId = who.personId;
    this.everyone = everyoneKey(who.workspaceId, who.env);
  }

  /** Resolves at the next wake, or at once when one came since the last call. */
  next(): Promise<WaitEnd> {
    if (this.ended) return Promise.resolve(this.ended);
    if (this.woken) {
      this.woken = false;
      return Promise.resolve("changed");
    }
    return new Promise((resolve) => {
      this.resolve = resolve;
    });
  }

  /** Whether it sits in next(), waiting for a wake. */
  get parked(): boolean {
    return this.resolve !== null;
  }

  wake(): void {
    const resolve = this.resolve;
    this.resolve = null;
    if (resolve) resolve("changed");
    else this.woken = true;
  }

  end(why: Exclude<WaitEnd, "changed">): void {
    this.ended ??= why;
    const resolve = this.resolve;
    this.resolve = null;
    resolve?.(this.ended);
  }
}

export class AccessWatch {
  private readonly byPerson = new Map<string, Set<Waiter>>();
  private readonly byWorkspaceEnv = new Map<string, Set<Waiter>>();
  private readonly byDevice = new Map<string, Waiter>();
  /** The last feed position read; null until the first read of where the feed ends. */
  private high: number | null = null;
  /** Positions skipped by the feed, with when they were first missed. */
  private readonly gaps = new Map<number, number>();
  private starting: Promise<void> | null = null;
  private polling: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly options: AccessWatchOptions = DEFAULT_ACCESS_WATCH_OPTIONS,
    private readonly listener?: FeedListener,
  ) {}

  /** Devices waiting in this process now. */
  get size(): number {
    return this.byDevice.size;
  }

  /** Waits parked until a wake or their end, the device's own check done. */
  get parked(): number {
    let parked = 0;
    for (const waiter of this.byDevice.values()) if (waiter.parked) parked += 1;
    return parked;
  }

  /**
   * Registers a device's wait until `deadline` (the clock's time), or throws 429: this
   * device waits already, or the process holds its maximum. Registered before the
   * device's access is read, so a change committed in between wakes it.
   */
  async open(who: WaitFor, deadline: number, signal?: AbortSignal): Promise<Waiter> {
    const { deviceId } = who;
    await this.ready();
    const now = this.clock.now();
    const held = this.byDevice.get(deviceId);
    if (held) {
      throw new ApiError("rate_limited", "This device is waiting for an access change already: one wait at a time.", {
        rateLimit: { limit: 1, remaining: 0, resetAt: Math.max(now + 1_000, held.deadline) },
        limit: "access-waits-per-device",
      });
    }
    if (this.byDevice.size >= this.options.maxWaiters) {
      throw new ApiError("rate_limited", "Warden is holding as many waiting devices as it may: check access as usual, and wait again later.", {
        rateLimit: { limit: this.options.maxWaiters, remaining: 0, resetAt: now + FULL_RETRY_MS },
        limit: "access-waits",
      });
    }
    const waiter = new Waiter(who, deadline);
    if (this.closed || signal?.aborted) {
      waiter.end("ended");
      return waiter;
    }
    this.byDevice.set(deviceId, waiter);
    addTo(this.byPerson, waiter.personId, waiter);
    addTo(this.byWorkspaceEnv, waiter.everyone, waiter);
    signal?.addEventListener("abort", () => waiter.end("ended"), { once: true });
    return waiter;
  }

  /** Forgets a wait that returned. */
  close(waiter: Waiter): void {
    waiter.end("ended");
    if (this.byDevice.get(waiter.deviceId) === waiter) this.byDevice.delete(waiter.deviceId);
    removeFrom(this.byPerson, waiter.personId, waiter);
    removeFrom(this.byWorkspaceEnv, waiter.everyone, waiter);
  }

  /**
   * Wakes the waiters of the people the feed named, and every waiter of a workspace
   * environment whose change concerns everyone (a plan's features, a tool's): each
   * checks its own access once.
   */
  private wake(changes: readonly AccessChange[]): void {
    const woken = new Set<Waiter>();
    for (const change of changes) {
      const waiters = change.personId === EVERYONE ? this.byWorkspaceEnv.get(everyoneKey(change.workspaceId, change.env)) : this.byPerson.get(change.personId);
      for (const waiter of waiters ?? []) woken.add(waiter);
    }
    for (const waiter of woken) waiter.wake();
  }

  /**
   * One turn of the loop: reads what the feed gained and wakes those it names, then ends
   * the waits whose time is up. A database that does not answer ends every wait ("no
   * change": the devices ask again later) and is tried again at the next turn. Turns
   * never overlap.
   */
  poll(): Promise<void> {
    this.polling ??= this.turn().finally(() => {
      this.polling = null;
    });
    return this.polling;
  }

  /** Polls every `pollIntervalMs` until stopped. */
  start(): void {
    if (this.timer || this.closed) return;
    this.timer = setInterval(() => void this.poll(), this.options.pollIntervalMs);
    this.timer.unref();
  }

  /** Stops the loop and answers every wait at once: a closing server does not hold its waiters until their time is up. */
  async stop(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.endAll();
    await this.polling;
  }

  private endAll(): void {
    for (const waiter of [...this.byDevice.values()]) waiter.end("ended");
  }

  /** Where the feed ends, read once before the first wait: what was written before it is in the device's own first check. */
  private ready(): Promise<void> {
    this.starting ??= lastAccessChange(this.db).then(
      (last) => {
        this.high ??= last;
        this.listener?.started();
      },
      (error: unknown) => {
        this.starting = null;
        throw error;
      },
    );
    return this.starting;
  }

  private async turn(): Promise<void> {
    try {
      await this.listener?.turn?.();
      if (this.high === null) await this.ready();
      else {
        const changes = await this.readFeed();
        this.listener?.read(changes);
        this.wake(changes);
      }
    } catch {
      this.listener?.lost();
      // The database is away (its outage is logged once by server.ts): no wait can be
      // answered truly, so each says "no change" and its device asks again later.
      this.endAll();
    }
    const now = this.clock.now();
    for (const waiter of this.byDevice.values()) if (waiter.deadline <= now) waiter.end("timeout");
  }

  private async readFeed(): Promise<AccessChange[]> {
    const now = this.clock.now();
    const found: AccessChange[] = [];
    for (let page = 0; page < this.options.maxPages; page++) {
      const rows = await readAccessChangesAfter(this.db, this.high ?? 0, this.options.batch);
      for (const row of rows) {
        for (let missing = (this.high ?? 0) + 1; missing < row.seq && this.gaps.size < MAX_GAPS; missing++) this.gaps.set(missing, now);
        this.high = row.seq;
        found.push(row);
      }
      if (rows.length < this.options.batch) break;
    }
    if (this.gaps.size > 0) {
      for (const row of await readAccessChangesAt(this.db, [...this.gaps.keys()])) {
        this.gaps.delete(row.seq);
        found.push(row);
      }
      for (const [seq, since] of this.gaps) if (now - since >= this.options.gapWaitMs) this.gaps.delete(seq);
    }
    return found;
  }
}

function addTo(map: Map<string, Set<Waiter>>, key: string, waiter: Waiter): void {
  let waiters = map.get(key);
  if (!waiters) {
    waiters = new Set();
    map.set(key, waiters);
  }
  waiters.add(waiter);
}

function removeFrom(map: Map<string, Set<Waiter>>, key: string, waiter: Waiter): void {
  const waiters = map.get(key);
  waiters?.delete(waiter);
  if (waiters?.size === 0) map.delete(key);
}
