// What a retrieve and an access check read (the person and their sources for the tool, a
// device session), kept in memory so that a repeated question touches no database for
// them. Never stale by construction, not by timing alone:
// - every change of a person's access writes the access-change feed in its transaction
//   (access-change.store.ts); while this process writes one, the person's answers are not
//   served nor kept from the moment it is written until the feed shows it committed;
// - the feed is read once a second by the process's access watch, whichever process wrote
//   it: what it names is dropped (another process's change is seen within a second);
// - the cache answers only while that reading works: a failed read drops it whole;
// - an entry expires at the earliest time a source starts or ends by itself, and after
//   MAX_AGE_MS in any case.
// Bounded by the bytes of its entries (estimated from their JSON), least recently used first.
import type { Clock } from "../clock.js";
import type { Env } from "../db/schema.js";
import type { Sources } from "./entitlement.js";

/** The feed's person for a change that concerns everyone of a workspace environment (a plan renamed). */
export const EVERYONE = "*";

/** Last resort: an entry is read again after this long whatever the feed says. */
export const MAX_AGE_MS = 60_000;
// A change noted while written and never seen committed (its transaction rolled back)
// stops keeping its person out of the cache after this.
const PENDING_MAX_MS = 30_000;
// An entry's bytes beyond its JSON: the Map slots, the key, the object headers.
const ENTRY_OVERHEAD = 200;

export const personTag = (workspaceId: string, env: Env, personId: string) => `${workspaceId}\u0000${env}\u0000${personId}`;

/** The tags of an answer about a person: dropped by a change of theirs or of everyone in the workspace environment. */
export const tagsOf = (workspaceId: string, env: Env, personId: string) => [personTag(workspaceId, env, personId), personTag(workspaceId, env, EVERYONE)];

/** When an answer computed from these sources may change by itself: the earliest grant or trial start or end still ahead. */
export function nextChangeOf(sources: Sources, now: number): number | null {
  let next: number | null = null;
  for (const g of sources.grants) {
    for (const at of [g.startsAt, g.endsAt]) if (at !== null && at > now && (next === null || at < next)) next = at;
  }
  return next;
}

interface Entry {
  value: unknown;
  bytes: number;
  tags: readonly string[];
  expiresAt: number;
}

export interface CacheFigures {
  hits: number;
  misses: number;
  evictions: number;
  bytes: number;
  entries: number;
}

// The caches of this process (one per Services), told of every feed write as it happens.
const caches = new Set<AnswerCache>();

/** Called by the feed's writer, in the change's transaction: the people named are kept out of every cache until the feed shows the change. */
export function noteAccessWrites(workspaceId: string, env: Env, personIds: readonly string[]): void {
  if (caches.size === 0) return;
  const tags = personIds.map((personId) => personTag(workspaceId, env, personId));
  for (const cache of caches) cache.writing(tags);
}

export class AnswerCache {
  // A Map keeps insertion order: re-inserting on a hit makes the first key the least recently used.
  private readonly entries = new Map<string, Entry>();
  // The oldest entry is found by one iterator kept across evictions, never by a new one: V8
  // leaves a deleted entry's slot in place until the table is rebuilt, and a new iterator
  // steps over every such slot from the start (at a million customers, each retrieve's
  // eviction stepped over tens of thousands: 38 µs an eviction, 1,148 retrieves a second).
  // A kept iterator steps over each slot once. Entries moved to the end (a hit) come after it.
  private order: MapIterator<[string, Entry]> | null = null;
  private readonly byTag = new Map<string, Set<string>>();
  /** Tags of changes being written by this process: how many, and since when. */
  private readonly pending = new Map<string, { count: number; since: number }>();
  private epoch = 0;
  private listening = false;
  private readonly figures: CacheFigures = { hits: 0, misses: 0, evictions: 0, bytes: 0, entries: 0 };

  constructor(
    private readonly maxBytes: number,
    private readonly clock: Clock,
  ) {
    if (maxBytes > 0) caches.add(this);
  }

  get stats(): Readonly<CacheFigures> {
    return { ...this.figures, entries: this.entries.size };
  }

  /** Taken before a database read whose answer may be kept: a change noted meanwhile keeps it out (set refuses it). */
  ticket(): number {
    return this.epoch;
  }

  get<T>(key: string): T | undefined {
    if (!this.listening) return undefined;
    const entry = this.entries.get(key);
    if (entry === undefined || entry.expiresAt <= this.clock.now() || this.isPending(entry.tags)) {
      if (entry) this.remove(key, entry);
      this.figures.misses += 1;
      return undefined;
    }
    this.entries.delete(key);
    this.entries.set(key, entry);
    this.figures.hits += 1;
    return entry.value as T;
  }

  /** Keeps an answer read after `ticket`, until `changesAt` (null: until something changes it) or MAX_AGE_MS. */
  set(key: string, value: unknown, input: { ticket: number; tags: readonly string[]; changesAt: number | null }): void {
    if (!this.listening || input.ticket !== this.epoch || this.isPending(input.tags)) return;
    const bytes = 2 * (key.length + JSON.stringify(value).length) + ENTRY_OVERHEAD;
    // One answer never takes more than a sixteenth: a huge one would empty the cache for itself.
    if (bytes > this.maxBytes / 16) return;
    const old = this.entries.get(key);
    if (old) this.remove(key, old);
    const now = this.clock.now();
    const expiresAt = Math.min(now + MAX_AGE_MS, input.changesAt ?? Number.POSITIVE_INFINITY);
    this.entries.set(key, { value, bytes, tags: input.tags, expiresAt });
    for (const tag of input.tags) {
      let keys = this.byTag.get(tag);
      if (!keys) {
        keys = new Set();
        this.byTag.set(tag, keys);
      }
      keys.add(key);
    }
    this.figures.bytes += bytes;
    while (this.figures.bytes > this.maxBytes) {
      const [oldestKey, oldest] = this.oldest();
      this.remove(oldestKey, oldest);
      this.figures.evictions += 1;
    }
  }

  /** This process is writing changes of these tags (in a transaction not committed yet). */
  writing(tags: readonly string[]): void {
    const now = this.clock.now();
    for (const tag of tags) {
      const held = this.pending.get(tag);
      this.pending.set(tag, { count: (held?.count ?? 0) + 1, since: now });
    }
    this.drop(tags);
  }

  /**
   * The feed showed these people's changes committed (by any process). An entry is not
   * told apart by its writer: another process's change of the same person, seen while
   * this process's own is still open, ends its wait early, and an answer read meanwhile
   * may be kept until the feed shows the own change, at most a second later.
   */
  changed(workspaceId: string, env: Env, personIds: Iterable<string>): void {
    const tags: string[] = [];
    for (const personId of personIds) {
      const tag = personTag(workspaceId, env, personId);
      tags.push(tag);
      const held = this.pending.get(tag);
      if (held && held.count > 1) held.count -= 1;
      else this.pending.delete(tag);
    }
    this.drop(tags);
  }

  /**
   * The feed's reader found where it ends: the changes this process noted before are
   * committed or rolled back (the feed's reader will not see them), bar one still being
   * written at that moment, which may then be kept up to a second too long.
   */
  start(): void {
    this.pending.clear();
    this.listen(true);
  }

  /** Whether the feed is being read: the cache answers only while it is; losing it drops everything. */
  listen(reading: boolean): void {
    if (!reading) this.clear();
    this.listening = reading && this.maxBytes > 0;
  }

  clear(): void {
    this.epoch += 1;
    this.order = null;
    this.entries.clear();
    this.byTag.clear();
    this.figures.bytes = 0;
  }

  close(): void {
    caches.delete(this);
    this.listen(false);
  }

  /** The least recently used entry (there is one: the caller is over its bytes). */
  private oldest(): [string, Entry] {
    let step = this.order?.next();
    // An iterator that has ended stays ended, whatever is added after: start another.
    if (!step || step.done) {
      this.order = this.entries.entries();
      step = this.order.next();
    }
    if (step.done) throw new Error("the answer cache counts bytes of no entry");
    return step.value;
  }

  private drop(tags: readonly string[]): void {
    if (tags.length === 0) return;
    this.epoch += 1;
    for (const tag of tags) for (const key of [...(this.byTag.get(tag) ?? [])]) this.remove(key, this.entries.get(key));
  }

  private isPending(tags: readonly string[]): boolean {
    if (this.pending.size === 0) return false;
    const now = this.clock.now();
    let pending = false;
    for (const tag of tags) {
      const held = this.pending.get(tag);
      if (!held) continue;
      if (now - held.since >= PENDING_MAX_MS) this.pending.delete(tag);
      else pending = true;
    }
    return pending;
  }

  private remove(key: string, entry: Entry | undefined): void {
    if (!entry) return;
    this.entries.delete(key);
    this.figures.bytes -= entry.bytes;
    for (const tag of entry.tags) {
      const keys = this.byTag.get(tag);
      keys?.delete(key);
      if (keys?.size === 0) this.byTag.delete(tag);
    }
  }
}
