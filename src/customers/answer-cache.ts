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
// When full, it keeps a new answer only if the same question missed recently too (a
// doorkeeper, as TinyLFU's): under questions that never repeat (random addresses among a
// million) each answer would evict one that may be asked again, and cost its keeping.
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
// An entry's bytes in V8's heap beyond its key and JSON (one byte a character: the values
// are ASCII): the Maps' and Sets' slots, the tags, the object headers. Measured on Node 24
// (bench/answer-cache-heap.ts, 100,000 retrieve answers): 1,052, 1,311 and 2,052 bytes for
// answers of 0, 1 and 4 licences, which this counts as 1,232, 1,449 and 2,103.
const ENTRY_OVERHEAD = 1_000;
// The doorkeeper's slots: one per this many bytes of the cache, a power of two in bounds.
const BYTES_PER_DOOR_SLOT = 1_024;
const MIN_DOOR_SLOTS = 1 << 10;
const MAX_DOOR_SLOTS = 1 << 20;

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
  /** Answers not kept because the cache was full and their question had not missed recently. */
  refused: number;
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

/** The doorkeeper's hash of a question: FNV-1a over its UTF-16 code units, never 0 (an empty slot). */
export function questionHash(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return hash >>> 0 || 1;
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
  private readonly figures: CacheFigures = { hits: 0, misses: 0, evictions: 0, refused: 0, bytes: 0, entries: 0 };
  // The doorkeeper: each slot holds the hash of the last question refused there (0: none).
  // A question's second refusal within the slots' turnover is admitted; a collision only
  // forgets an earlier question, never admits a new one (short of two keys with one hash).
  private readonly door: Uint32Array;

  constructor(
    private readonly maxBytes: number,
    private readonly clock: Clock,
  ) {
    if (maxBytes > 0) caches.add(this);
    const slots = Math.min(MAX_DOOR_SLOTS, Math.max(MIN_DOOR_SLOTS, 2 ** Math.ceil(Math.log2(Math.max(1, maxBytes / BYTES_PER_DOOR_SLOT)))));
    this.door = new Uint32Array(maxBytes > 0 ? slots : 0);
  }

  get stats(): Readonly<CacheFigures> {
    return { ...this.figures, entries: this.entries.size };
  }

  /** Taken before a database read whose answer may be kept: a change noted meanwhile keeps it out (set refuses it). */
  ticket(): number {
    return this.epoch;
  }

  /**
   * The entry of a question, if kept and still true. `counted` false leaves the hits and
   * misses alone: a tool's terms, read beside every answer (usage/terms-cache.ts), would
   * otherwise double the figures, which are of the answers.
   */
  get<T>(key: string, counted = true): T | undefined {
    if (!this.listening) return undefined;
    const entry = this.entries.get(key);
    if (entry === undefined || entry.expiresAt <= this.clock.now() || this.isPending(entry.tags)) {
      if (entry) this.remove(key, entry);
      if (counted) this.figures.misses += 1;
      return undefined;
    }
    this.entries.delete(key);
    this.entries.set(key, entry);
    if (counted) this.figures.hits += 1;
    return entry.value as T;
  }

  /** A hit of an entry got uncounted: the answer's bytes kept beside its sources (customer.service.ts), counted as the one answer it is. */
  countHit(): void {
    this.figures.hits += 1;
  }

  /** Keeps an answer read after `ticket`, until `changesAt` (null: until something changes it) or MAX_AGE_MS. */
  set(key: string, value: unknown, input: { ticket: number; tags: readonly string[]; changesAt: number | null }): void {
    if (!this.listening || input.ticket !== this.epoch || this.isPending(input.tags)) return;
    const bytes = key.length + (typeof value === "string" ? value.length : JSON.stringify(value).length) + ENTRY_OVERHEAD;
    // One answer never takes more than a sixteenth: a huge one would empty the cache for itself.
    if (bytes > this.maxBytes / 16) return;
    const old = this.entries.get(key);
    if (old) this.remove(key, old);
    else if (this.figures.bytes + bytes > this.maxBytes && !this.admit(key)) {
      this.figures.refused += 1;
      return;
    }
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
    this.door.fill(0);
    this.order = null;
    this.entries.clear();
    this.byTag.clear();
    this.figures.bytes = 0;
  }

  close(): void {
    caches.delete(this);
    this.listen(false);
  }

  /** Whether a full cache keeps this question's answer: only on its second refusal within the slots' turnover. */
  private admit(key: string): boolean {
    const hash = questionHash(key);
    const slot = hash & (this.door.length - 1);
    if (this.door[slot] === hash) {
      this.door[slot] = 0;
      return true;
    }
    this.door[slot] = hash;
    return false;
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
