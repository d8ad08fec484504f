import { type Clock, DAY_MS, MINUTE_MS } from "../clock.js";
import type { Limits } from "../config.js";
import type { Dialect, Executor } from "../db/database.js";
import type { Env } from "../db/schema.js";
import { isStorageFull, StorageFullError } from "../db/storage-faults.js";
import { ApiError } from "../errors/errors.js";
import { CounterBatcher } from "./counter.batcher.js";
import {
  addCounts,
  addToCounters,
  type CounterIncrement,
  type CounterState,
  deleteCounter,
  readCounter,
  readStoredCounters,
  readWrongKeyCountersReaching,
  setCounterWindow,
} from "./counter.store.js";
import { HeldCounts } from "./held-counts.js";
import { IDLE_MS, type LeaseFigures, QuotaLeases } from "./quota-leases.js";

const HOUR_MS = 3_600_000;
// The kind of counter of wrong keys per source address: `wrong-keys:<address>`.
const WRONG_KEYS = "wrong-keys";
// Blocked addresses the key watch reads at most each second; beyond, requests read their own.
const BLOCKS_READ = 1_000;

/** NIST SP 800-63B (5.2.2): at most 100 consecutive failed attempts on one account. */
export const CODE_FAILURES_PER_DAY = 100;

/**
 * Whose sign-in codes a count of wrong ones is for: a dashboard owner's address, or a
 * customer's address in one workspace environment (where its people and codes live).
 */
export type CodeAddress = { owner: true; emailNorm: string } | { owner: false; workspaceId: string; env: Env; emailNorm: string };
const OWNER_SIGN_IN_MAX_DELAY_MS = 15 * MINUTE_MS;

/** The wait after the `beyond`-th code past a pair's free ones (0 is the first): 1 minute, doubling, at most 15. */
export function ownerSignInDelayMs(beyond: number): number {
  return Math.min(MINUTE_MS * 2 ** Math.min(beyond, 10), OWNER_SIGN_IN_MAX_DELAY_MS);
}

// Window shapes. Per-minute limits use fixed minutes (never more than the limit in any
// calendar minute; decisions.md allows it). "Per day" is the UTC day, except lookups,
// whose day is the 24 hours from the first lookup in it (the specification says so).
type Window = "minute" | "utc-day" | "anchored-day";

function windowEndFor(window: Window, now: number): number {
  switch (window) {
    case "minute":
      return Math.floor(now / MINUTE_MS) * MINUTE_MS + MINUTE_MS;
    case "utc-day":
      return Math.floor(now / DAY_MS) * DAY_MS + DAY_MS;
    case "anchored-day":
      return now + DAY_MS;
  }
}

interface Quota {
  scope: string;
  limit: number;
  window: Window | { end: number };
  what: string;
  /** How the refusal ends its message. */
  retry?: string;
  /** Counted from leased blocks (quota-leases.ts) when counted alone, outside a transaction. */
  leased?: true;
}

/** The limit a quota belongs to, for the metrics: its scope up to the first colon (`lookups-owner`), a closed set. */
const limitOf = (quota: Quota) => quota.scope.slice(0, quota.scope.indexOf(":"));

const windowEndOf = (quota: Quota, now: number) => (typeof quota.window === "object" ? quota.window.end : windowEndFor(quota.window, now));

// A refusal whose counts have changed by the time they are read back (a window closed
// meanwhile) is counted again; a few tries are plenty, as each one follows a refusal.
const COUNT_ATTEMPTS = 3;

/** One daily limit and how much of it is used now. */
export interface DailyUsage {
  what: string;
  used: number;
  limit: number;
  /** When the count starts again; null when nothing is counted yet. */
  resetsAt: number | null;
}

/** Who a quota is charged to: the workspace environment and every owner of the workspace. */
interface QuotaSubject {
  workspaceId: string;
  env: Env;
  ownerIds: readonly string[];
}

export class LimitsService {
  private readonly batcher: CounterBatcher;
  /** Counts the database could not store (its storage full), until it can. */
  private readonly held = new HeldCounts();
  private readonly leases: QuotaLeases;
  private readonly idleSweep: NodeJS.Timeout | null = null;
  /**
   * Source addresses over their wrong-key limit, with when their minute ends: those this
   * process refused, and those the serving process's watch read (`readBlockedSources`), so
   * that a request whose key is answered from memory checks its address without a read.
   */
  private readonly blockedSources = new Map<string, number>();
  /** The addresses of `blockedSources` this process blocked itself (kept when the watch's read does not list them yet). */
  private readonly ownBlocks = new Set<string>();
  /** Until when the watch's last read is trusted to list every blocked address (0 before it reads, or when there were too many). */
  private blockedListedUntil = 0;

  /** With a clock, blocks left idle go back every IDLE_MS (quota-leases.ts); without, only at `close`. */
  constructor(
    private readonly limits: Readonly<Limits>,
    private readonly dialect: Dialect,
    clock?: Clock,
  ) {
    this.batcher = new CounterBatcher(dialect, this.held);
    this.leases = new QuotaLeases(dialect, (ex, now) => this.writeHeldCounts(ex, now));
    if (clock) this.idleSweep = setInterval(() => void this.leases.giveBack(clock.now()), IDLE_MS).unref();
  }

  /** At shutdown: stops the idle sweep and gives back every block; then writes what is held. */
  async close(ex: Executor, now: number): Promise<boolean> {
    if (this.idleSweep) clearInterval(this.idleSweep);
    await this.leases.giveBack(now, 0);
    return this.writeHeldCounts(ex, now);
  }

  /** The leased blocks' figures (the metrics' `warden_quota_lease_*`). */
  get leaseFigures(): LeaseFigures {
    return this.leases.figures;
  }

  /** How many counters are held in memory now (the metrics' `warden_limit_counts_held`). */
  get heldCounters(): number {
    return this.held.size;
  }

  /** Writes the counts held in memory, if any and if the storage takes them (at shutdown); answers whether none is left. */
  writeHeldCounts(ex: Executor, now: number): Promise<boolean> {
    return this.held.writeHeld((additions) => addCounts(ex, this.dialect, additions, now), now);
  }

  /**
   * `addToCounters`, or, when the storage is full, the same held in memory (see
   * HeldCounts). Inside a caller's transaction nothing is held: the transaction fails.
   */
  private async addUnlimited(ex: Executor, increments: readonly CounterIncrement[], by: number, now: number): Promise<CounterState[]> {
    let failure: unknown = null;
    if (ex.isTransaction || (await this.writeHeldCounts(ex, now))) {
      try {
        return await addToCounters(ex, this.dialect, increments, by, now);
      } catch (error) {
        if (ex.isTransaction || !isStorageFull(error)) throw error;
        failure = error;
      }
    }
    const stored = await readStoredCounters(
      ex,
      increments.map((c) => c.scope),
    );
    const outcome = this.held.addEachWithin(
      increments.map((c) => ({ ...c, by, limit: Number.POSITIVE_INFINITY })),
      stored,
      now,
    );
    if (!outcome?.states) throw failure ?? new StorageFullError(null);
    return outcome.states;
  }

  /** A counter as stored, plus what is held of it in memory. */
  private async readCount(ex: Executor, scope: string, now: number): Promise<CounterState> {
    return this.held.current(scope, await readCounter(ex, scope, now), now, now);
  }

  /**
   * Counts `by` against each quota and refuses with 429 (naming the first quota, in
   * order, that is over) once one is exceeded. All or nothing: a request refused by its
   * owner's quota must not use up its workspace's, so the quotas are counted in one
   * statement (one transaction) that a refusal undoes.
   */
  private async count(ex: Executor, quotas: Quota[], by: number, now: number): Promise<void> {
    const refusal = await this.countOrRefuse(ex, quotas, by, now);
    if (refusal) throw refusal.error;
  }

  /** `count`, answering the refusal (and which quota made it) instead of throwing it. */
  private async countOrRefuse(ex: Executor, quotas: Quota[], by: number, now: number): Promise<{ quota: Quota; error: ApiError } | null> {
    const increments = quotas.map((quota) => ({ scope: quota.scope, nextWindowEnd: windowEndOf(quota, now), limit: quota.limit }));
    const leased = !ex.isTransaction && quotas.every((quota) => quota.leased);
    // Counts held from a full disk are written before the next count, as the batcher does,
    // even when this one is served from a block: room given back is used at once.
    if (leased && this.held.size > 0) await this.writeHeldCounts(ex, now);
    for (let attempt = 1; ; attempt++) {
      const outcome = (leased ? await this.leases.count(ex, increments, by, now) : null) ?? (await this.batcher.count(ex, increments, by, now));
      if (!outcome.refused) return null;
      // The refusing statement undid itself: read the counts it saw, before this request's.
      const counted = outcome.states !== null;
      const states: CounterState[] = outcome.states ?? (await Promise.all(quotas.map((quota) => this.readCount(ex, quota.scope, now))));
      const over = quotas.findIndex((quota, i) => (states[i]?.count ?? 0) + (counted ? 0 : by) > quota.limit);
      const quota = quotas[over];
      const state = states[over];
      if (quota && state) {
        const error = new ApiError("rate_limited", `Too many requests: ${quota.what} (${quota.limit}). ${quota.retry ?? "Retry after the window resets."}`, {
          rateLimit: { limit: quota.limit, remaining: 0, resetAt: state.windowEnd },
          limit: limitOf(quota),
        });
        return { quota, error };
      }
      if (attempt >= COUNT_ATTEMPTS) throw new Error("a counter refused, and no quota was over when read back");
    }
  }

  /**
   * 600 requests a minute per key; counted on its own, whatever the request then does.
   * A read's from a leased block; a write's (a grant, a revocation) by the batcher, one
   * statement a turn: counted from a block, SQLite grants at 25 connections were a fifth
   * slower, though faster one at a time (bench/journal.md, 2026-11-27, late morning); why
   * was not found.
   */
  countKeyRequest(ex: Executor, keyId: string, now: number, request: { writes: boolean }): Promise<void> {
    const quota = this.keyRequestQuota(keyId);
    return this.count(ex, [request.writes ? { ...quota, leased: undefined } : quota], 1, now);
  }

  private keyRequestQuota(keyId: string): Quota {
    return { scope: `key-requests:${keyId}`, limit: this.limits.keyRequestsPerMin, window: "minute", what: "requests per minute for this key", leased: true };
  }

  /** The counter of wrong keys sent from a source address. */
  wrongKeyScope(source: string): string {
    return `${WRONG_KEYS}:${source}`;
  }

  /** Refuses a source address that has already sent too many wrong keys this minute. */
  async assertSourceNotBlocked(ex: Executor, source: string, now: number): Promise<void> {
    this.assertSourceCountNotBlocked(source, await readCounter(ex, this.wrongKeyScope(source), now), now);
  }

  /** The same, for the source's counter as read with the key (null when it has none), and what is held of it. */
  assertSourceCountNotBlocked(source: string, stored: CounterState | null, now: number): void {
    const state = this.held.current(this.wrongKeyScope(source), stored ?? undefined, now, now);
    if (state.windowEnd <= now || state.count < this.limits.wrongKeysPerMin) return;
    throw this.wrongKeysRefusal(state.windowEnd);
  }

  /**
   * Whether a request whose key or device session was answered without a read may check
   * its address from memory (`assertSourceKnownNotBlocked`): the watch's last read listed
   * every blocked address and is recent (a watch that falls behind stops it, as it stops
   * the keys' trust), and no count is held in memory (a full disk), which only the
   * database's count plus the held one can decide. Otherwise the address's counter is read.
   */
  knowsBlockedSources(now: number): boolean {
    return now < this.blockedListedUntil && this.held.size === 0;
  }

  /** The same from memory: the addresses this process blocked and those the watch last read. */
  assertSourceKnownNotBlocked(source: string, now: number): void {
    const until = this.blockedSources.get(source);
    if (until !== undefined && until > now) throw this.wrongKeysRefusal(until);
  }

  /**
   * The addresses over their wrong-key limit now, as stored by every process (read by the
   * serving process's watch, once a second); null when there are more than it reads at
   * once (an attack from many addresses): each request then reads its own address's count.
   */
  async readBlockedSources(ex: Executor, now: number): Promise<Map<string, number> | null> {
    const counters = await readWrongKeyCountersReaching(ex, this.limits.wrongKeysPerMin, now, BLOCKS_READ + 1);
    if (counters.size > BLOCKS_READ) return null;
    return new Map([...counters].map(([scope, state]) => [scope.slice(WRONG_KEYS.length + 1), state.windowEnd]));
  }

  /** What the watch read replaces what it read before (this process's own blocks stay until their minute ends); trusted until `trustedUntil`. */
  noteBlockedSources(blocked: ReadonlyMap<string, number> | null, now: number, trustedUntil: number): void {
    for (const [source, until] of this.blockedSources) if (until <= now || !this.ownBlocks.has(source)) this.blockedSources.delete(source);
    for (const source of this.ownBlocks) if (!this.blockedSources.has(source)) this.ownBlocks.delete(source);
    this.blockedListedUntil = blocked === null ? 0 : trustedUntil;
    for (const [source, until] of blocked ?? []) this.blockedSources.set(source, Math.max(until, this.blockedSources.get(source) ?? 0));
  }

  private wrongKeysRefusal(resetAt: number): ApiError {
    return new ApiError("rate_limited", "Too many wrong API keys from this address; retry after the minute resets.", {
      rateLimit: { limit: this.limits.wrongKeysPerMin, remaining: 0, resetAt },
      limit: "wrong-keys",
    });
  }

  /** Records a wrong key; answers whether the address is now over its limit. */
  async countWrongKey(ex: Executor, source: string, now: number): Promise<ApiError | null> {
    const [state] = await this.addUnlimited(ex, [{ scope: this.wrongKeyScope(source), nextWindowEnd: windowEndFor("minute", now) }], 1, now);
    if (!state) throw new Error("the wrong-key counter was not written");
    if (state.count >= this.limits.wrongKeysPerMin) {
      this.blockedSources.set(source, state.windowEnd);
      this.ownBlocks.add(source);
    }
    if (state.count <= this.limits.wrongKeysPerMin) return null;
    return this.wrongKeysRefusal(state.windowEnd);
  }

  countListPage(ex: Executor, subject: QuotaSubject, now: number): Promise<void> {
    return this.count(
      ex,
      [
        {
          scope: `list-pages:${subject.workspaceId}:${subject.env}`,
          limit: this.limits.listPagesPerMin,
          window: "minute",
          what: "list pages per minute for this workspace",
          leased: true,
        },
      ],
      1,
      now,
    );
  }

  /**
   * Rows read by lists. A page reserves its size (`limit`) before the read, all or
   * nothing like any count, and gives back what it did not return (it costs at least
   * one row): so the day's figure is never passed, however many pages run at once.
   * Charged after the read instead, 50 concurrent pages all passed the check first (12
   * pages served where 8 fitted). Answers the function that settles the reservation.
   */
  async reserveRowsRead(ex: Executor, subject: QuotaSubject, rows: number, now: number): Promise<(returned: number) => Promise<void>> {
    const quotas = this.rowQuotas(subject);
    await this.count(ex, quotas, rows, now);
    return async (returned) => {
      const unused = rows - Math.max(1, returned);
      if (unused <= 0) return;
      // Given back at the reservation's time: its window is the one the rows went into.
      const increments = quotas.map((quota) => ({ scope: quota.scope, nextWindowEnd: windowEndOf(quota, now) }));
      await this.addUnlimited(ex, increments, -unused, now);
    };
  }

  private rowQuotas(subject: QuotaSubject): Quota[] {
    const limit = this.limits.rowsReadPerDay;
    return [
      { scope: `rows-read:${subject.workspaceId}:${subject.env}`, limit, window: "utc-day", what: "rows read by lists today for this workspace" },
      ...subject.ownerIds.map((owner) => ({
        scope: `rows-read-owner:${owner}:${subject.env}`,
        limit,
        window: "utc-day" as const,
        what: "rows read by lists today across the owner's workspaces",
      })),
    ];
  }

  /**
   * Retrieve-a-customer and list-grants lookups, counted before the read. When the key's
   * request has not been counted yet (the route deferred it), it is counted in the same
   * statement, first, so that a key over its limit is what a refusal names; a request
   * refused by a lookup quota still counts against its key, as it would counted alone.
   */
  async countLookup(ex: Executor, subject: QuotaSubject & { keyId?: string; keyRequestCounted?: boolean }, now: number): Promise<void> {
    const limit = this.limits.lookupsPerDay;
    const lookups: Quota[] = [
      {
        scope: `lookups:${subject.workspaceId}:${subject.env}`,
        limit,
        window: "anchored-day",
        what: "customer lookups per day for this workspace",
        leased: true,
      },
      ...subject.ownerIds.map((owner) => ({
        scope: `lookups-owner:${owner}:${subject.env}`,
        limit,
        window: "anchored-day" as const,
        what: "customer lookups per day across the owner's workspaces",
        leased: true as const,
      })),
    ];
    if (subject.keyId === undefined || subject.keyRequestCounted !== false) return this.count(ex, lookups, 1, now);
    const key = this.keyRequestQuota(subject.keyId);
    const refusal = await this.countOrRefuse(ex, [key, ...lookups], 1, now);
    subject.keyRequestCounted = true;
    if (refusal && refusal.quota !== key) await this.count(ex, [key], 1, now);
    if (refusal) throw refusal.error;
  }

  /** A grant: one per tool per day, and one addition for the workspace and its owners. */
  countGrantCreation(ex: Executor, subject: QuotaSubject, toolId: string, now: number): Promise<void> {
    return this.count(
      ex,
      [
        {
          scope: `grants:${subject.workspaceId}:${subject.env}:${toolId}`,
          limit: this.limits.grantsPerToolPerDay,
          window: "utc-day",
          what: "grants per day for this tool",
        },
        ...this.additionQuotas(subject),
      ],
      1,
      now,
    );
  }

  /** A trial started from the client: a grant of kind trial, so one addition, but not one of the vendor's grants per tool. */
  countAddition(ex: Executor, subject: QuotaSubject, now: number): Promise<void> {
    return this.count(ex, this.additionQuotas(subject), 1, now);
  }

  private additionQuotas(subject: QuotaSubject): Quota[] {
    const additions = this.limits.additionsPerDay;
    return [
      { scope: `additions:${subject.workspaceId}:${subject.env}`, limit: additions, window: "utc-day", what: "additions per day for this workspace" },
      ...subject.ownerIds.map((owner) => ({
        scope: `additions-owner:${owner}:${subject.env}`,
        limit: additions,
        window: "utc-day" as const,
        what: "additions per day across the owner's workspaces",
      })),
    ];
  }

  /**
   * Example webhook events, sent through the service or signed by the command-line tool:
   * both ways share one count, and past it both refuse until the next UTC day. The
   * specification counts them per workspace: test and live keys share the 100.
   */
  countExampleEvent(ex: Executor, subject: Pick<QuotaSubject, "workspaceId">, now: number): Promise<void> {
    return this.count(
      ex,
      [
        {
          scope: `example-events:${subject.workspaceId}`,
          limit: this.limits.exampleEventsPerDay,
          window: "utc-day",
          what: "example events per day for this workspace",
        },
      ],
      1,
      now,
    );
  }

  /**
   * Sign-in codes requested through the client API: per address (normalised, per
   * workspace environment) and per source address, each in fixed clock hours. A refused
   * request counts nothing.
   */
  countSignInRequest(ex: Executor, subject: { workspaceId: string; env: Env; emailNorm: string; source: string }, now: number): Promise<void> {
    const hour = { end: Math.floor(now / HOUR_MS) * HOUR_MS + HOUR_MS };
    const retry = "Retry after the hour resets.";
    return this.count(
      ex,
      [
        {
          scope: `sign-ins-address:${subject.workspaceId}:${subject.env}:${subject.emailNorm}`,
          limit: this.limits.signInsPerAddressPerHour,
          window: hour,
          what: "sign-in codes per hour for this address",
          retry,
        },
        {
          scope: `sign-ins-source:${subject.source}`,
          limit: this.limits.signInsPerSourcePerHour,
          window: hour,
          what: "sign-in codes per hour from this network address",
          retry,
        },
      ],
      1,
      now,
    );
  }

  /**
   * Sign-in codes asked for a dashboard owner's address. No quota is the address's alone,
   * so that nobody can spend an owner's sign-ins for them: the source address has its
   * hourly figure (which only locks out that source), and each address and source pair
   * gets its first `signInsPerAddressPerHour` codes of a clock hour at once, then waits a
   * delay that doubles with each further code (1, 2, 4, 8, then 15 minutes). An owner
   * asking from their own network is never slowed by a stranger asking from another.
   */
  async countOwnerSignInRequest(ex: Executor, subject: { emailNorm: string; source: string }, now: number): Promise<void> {
    const pairScope = `owner-sign-ins-pair:${subject.emailNorm}:${subject.source}`;
    const waitScope = `owner-sign-ins-wait:${subject.emailNorm}:${subject.source}`;
    const wait = await readCounter(ex, waitScope, now);
    if (wait.count > 0) {
      const minutes = Math.ceil((wait.windowEnd - now) / MINUTE_MS);
      throw new ApiError(
        "rate_limited",
        `Too many sign-in codes asked for this address from your network: wait ${minutes === 1 ? "a minute" : `${minutes} minutes`} before asking for another.`,
        { rateLimit: { limit: this.limits.signInsPerAddressPerHour, remaining: 0, resetAt: wait.windowEnd }, limit: "owner-sign-ins-pair" },
      );
    }
    const hour = { end: Math.floor(now / HOUR_MS) * HOUR_MS + HOUR_MS };
    await this.count(
      ex,
      [
        {
          scope: `owner-sign-ins-source:${subject.source}`,
          limit: this.limits.signInsPerSourcePerHour,
          window: hour,
          what: "sign-in codes per hour from this network address",
          retry: "Retry after the hour resets.",
        },
      ],
      1,
      now,
    );
    const [pair] = await addToCounters(ex, this.dialect, [{ scope: pairScope, nextWindowEnd: hour.end }], 1, now);
    const beyond = (pair?.count ?? 0) - this.limits.signInsPerAddressPerHour;
    if (beyond >= 0) await setCounterWindow(ex, waitScope, now + ownerSignInDelayMs(beyond));
  }

  /**
   * Confirmation codes of a signed-in owner's session, in a quota of the session's own:
   * requests for the owner's address that anyone can make never use it up.
   */
  countConfirmationRequest(ex: Executor, subject: { sessionId: string }, now: number): Promise<void> {
    return this.count(
      ex,
      [
        {
          scope: `owner-confirm-session:${subject.sessionId}`,
          limit: this.limits.confirmationsPerSessionPerHour,
          window: { end: Math.floor(now / HOUR_MS) * HOUR_MS + HOUR_MS },
          what: "confirmation codes per hour for this session",
          retry: "Retry after the hour resets.",
        },
      ],
      1,
      now,
    );
  }

  /** Page tickets of one device session, a minute at a time (fixed minutes, as every per-minute limit). */
  countPageTicket(ex: Executor, subject: { deviceId: string }, now: number): Promise<void> {
    return this.count(
      ex,
      [
        {
          scope: `page-tickets:${subject.deviceId}`,
          limit: this.limits.pageTicketsPerDevicePerMin,
          window: "minute",
          what: "page tickets per minute for this device",
        },
      ],
      1,
      now,
    );
  }

  private codeFailureScope(address: CodeAddress): string {
    return address.owner ? `owner-code-failures:${address.emailNorm}` : `customer-code-failures:${address.workspaceId}:${address.env}:${address.emailNorm}`;
  }

  /**
   * Refuses every sign-in code of an address that has had CODE_FAILURES_PER_DAY wrong
   * tries in a row within 24 hours (NIST SP 800-63B's ceiling): at most that many guesses
   * at a million-valued code a day, whoever guesses, from however many sources. Checked
   * before a code's try is taken, so past the ceiling a right code is refused too.
   */
  async assertCodeTriesLeft(ex: Executor, address: CodeAddress, now: number): Promise<void> {
    const scope = this.codeFailureScope(address);
    const failures = await readCounter(ex, scope, now);
    if (failures.count < CODE_FAILURES_PER_DAY) return;
    const refusal = `Too many wrong sign-in codes for this address in a day (${CODE_FAILURES_PER_DAY}): codes for it work again in 24 hours.`;
    // An owner has a way back in that a customer has not: the operator's link (it clears the count).
    throw new ApiError("rate_limited", address.owner ? `${refusal} Your operator can print a one-time sign-in link with warden admin login-link.` : refusal, {
      rateLimit: { limit: CODE_FAILURES_PER_DAY, remaining: 0, resetAt: failures.windowEnd },
      limit: scope.slice(0, scope.indexOf(":")),
    });
  }

  /** A wrong sign-in code for the address, in the transaction that spent the try. */
  async countCodeFailure(ex: Executor, address: CodeAddress, now: number): Promise<void> {
    await addToCounters(ex, this.dialect, [{ scope: this.codeFailureScope(address), nextWindowEnd: windowEndFor("anchored-day", now) }], 1, now);
  }

  /** A sign-in succeeded: the wrong tries counted are no longer consecutive. */
  async clearCodeFailures(ex: Executor, address: CodeAddress): Promise<void> {
    await deleteCounter(ex, this.codeFailureScope(address));
  }

  /**
   * When each key was last used, to the minute, from its requests-per-minute counter: the
   * counter's window is the minute of its last request. A column written on every request
   * would be a write per request, and would invalidate every process's remembered keys.
   */
  async readLastKeyRequests(ex: Executor, keyIds: readonly string[]): Promise<Map<string, number>> {
    const stored = await readStoredCounters(
      ex,
      keyIds.map((id) => this.keyRequestQuota(id).scope),
    );
    const lastUsed = new Map<string, number>();
    for (const id of keyIds) {
      const state = stored.get(this.keyRequestQuota(id).scope);
      if (state) lastUsed.set(id, state.windowEnd - MINUTE_MS);
    }
    return lastUsed;
  }

  /** Today's use of a workspace environment's daily limits, as its own counters hold it (its owners' shared counters aside). */
  async readDailyUsage(ex: Executor, subject: Pick<QuotaSubject, "workspaceId" | "env">, now: number): Promise<DailyUsage[]> {
    const { workspaceId, env } = subject;
    const daily = [
      { what: "Rows read by lists", scope: `rows-read:${workspaceId}:${env}`, limit: this.limits.rowsReadPerDay },
      { what: "Customer lookups", scope: `lookups:${workspaceId}:${env}`, limit: this.limits.lookupsPerDay },
      { what: "Additions (grants and trials)", scope: `additions:${workspaceId}:${env}`, limit: this.limits.additionsPerDay },
      { what: "Example webhook events (test and live)", scope: `example-events:${workspaceId}`, limit: this.limits.exampleEventsPerDay },
    ];
    return Promise.all(
      daily.map(async ({ what, scope, limit }) => {
        const state = await this.readCount(ex, scope, now);
        // Blocks this process leased and has not spent are not used: shown usage is the blocks taken,
        // less those given back, less this process's unspent (other processes' unspent blocks show as used).
        const used = state.count - this.leases.unspent(scope, state.windowEnd);
        return { what, used, limit, resetsAt: used > 0 ? state.windowEnd : null };
      }),
    );
  }

  get hobbyPasses(): number {
    return this.limits.hobbyPasses;
  }

  get pageTicketsPerDevicePerMin(): number {
    return this.limits.pageTicketsPerDevicePerMin;
  }

  get devicesPerLicence(): number {
    return this.limits.devicesPerLicence;
  }
}
