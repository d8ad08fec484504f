import { utcDayOf } from "../clock.js";
import type { Db } from "../db/database.js";
import { type Activity, recordActivities } from "./rollup.store.js";

// The access check counts its device's first check of each UTC day towards the use
// figures. Counting it in the check's own transaction made every first check of a day
// write some forty figures that every other device's first check writes too: at the turn
// of a day, or with many new devices, the checks queued on those rows (110 checks a second
// on PostgreSQL). So the check only notes the device's day here, and once a second the
// process writes the noted days and their figures summed, a hundred checks a transaction. The insert of the
// device's day still decides (rollup.store.ts), so the count is exact across processes;
// what a process had noted and not written when it dies is lost (the days and their
// figures alike: the roll-ups never disagree with the rows), and the device's next check
// that day notes it again in another process.

/** Past this many devices remembered, the memory starts again empty (a forgotten device costs one insert that changes nothing). */
const MAX_REMEMBERED = 200_000;
/** Days noted and not yet written; while the database is away, further days wait for the next check. */
const MAX_PENDING = 50_000;
const FLUSH_DELAY_MS = 1_000;
// Checks written a transaction at most. On SQLite a transaction holds the one connection
// and every request waits for it: soon after midnight UTC every device's check is its
// first of the day, and one transaction of a second's first checks (1,500 of them at a
// million people) kept every request waiting for it (the access check's p99 1.3 s,
// bench scenario 8, 2026-11-27). Between two chunks the requests waiting go first: on
// SQLite the driver's calls are synchronous and its promises settle as microtasks, so
// without a turn of the event loop (setImmediate) the chunks ran back to back and the p99
// stayed at 0.9 s for 10,000 devices' first checks.
const FLUSH_CHUNK = 100;

export class ActivityCounter {
  /** The day each device's check was last written for. */
  private counted = new Map<string, string>();
  private pending = new Map<string, Activity>();
  private writing: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;

  /** `flushDelayMs`: how long a noted check waits for the timer's write (a test that counts its own flushes' transactions sets it beyond its run). */
  constructor(
    private readonly db: Db,
    private readonly flushDelayMs = FLUSH_DELAY_MS,
  ) {}

  /** Notes an access check; its day is written within a second (or by `flush`). */
  note(a: Activity): void {
    const day = utcDayOf(a.at);
    if (this.counted.get(a.deviceId) === day) return;
    const key = `${a.deviceId} ${day}`;
    if (this.pending.has(key) || this.pending.size >= MAX_PENDING) return;
    this.pending.set(key, a);
    this.schedule();
  }

  /**
   * Writes what was noted, in one transaction. A failure (the database away, the disk
   * full) keeps the days for the next try and is thrown to the caller.
   */
  flush(): Promise<void> {
    this.writing = this.writing.catch(() => {}).then(() => this.write());
    return this.writing;
  }

  /** Writes what is noted, and stops writing by timer. */
  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.flush();
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      // The timer's write fails quietly (the database's unavailability is logged where it is
      // found) and is tried again a second later.
      this.flush().catch(() => this.schedule());
    }, this.flushDelayMs);
    // A pending write never keeps a process alive that has nothing else to do.
    this.timer.unref();
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = [...this.pending.values()];
    this.pending = new Map();
    for (let from = 0; from < batch.length; from += FLUSH_CHUNK) {
      if (from > 0) await new Promise((resolve) => setImmediate(resolve));
      const chunk = batch.slice(from, from + FLUSH_CHUNK);
      try {
        await this.db.transaction().execute((trx) => recordActivities(trx, chunk));
      } catch (error) {
        for (const a of batch.slice(from)) {
          const key = `${a.deviceId} ${utcDayOf(a.at)}`;
          if (this.pending.size < MAX_PENDING && !this.pending.has(key)) this.pending.set(key, a);
        }
        throw error;
      }
      if (this.counted.size + chunk.length > MAX_REMEMBERED) this.counted = new Map();
      for (const a of chunk) this.counted.set(a.deviceId, utcDayOf(a.at));
    }
  }
}
