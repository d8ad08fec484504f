/** A unit of work waiting for its batch: its input, and how to answer it. */
export interface Waiting<I, O> {
  input: I;
  resolve: (output: O) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: what is asked for in one turn of the event loop is handed to `write` as
 * one batch, and at most `maxInFlight` batches are written at a time (one, for writes
 * that would only queue on each other's row locks); what comes while they are written
 * makes the next. `write` must answer every unit of its batch. setImmediate, not a
 * microtask: on SQLite a request runs its queries without yielding to I/O, so only the
 * check phase after the poll phase sees every request that the poll phase started.
 *
 * With `lingerMs` a batch instead gathers for that long (or until it is full): for work
 * nobody waits on, where fewer, larger commits are worth a few milliseconds.
 */
export class GroupCommit<I, O> {
  private waiting: Waiting<I, O>[] = [];
  private scheduled = false;
  private lingering: NodeJS.Timeout | null = null;
  private inFlight = 0;

  constructor(
    private readonly write: (batch: Waiting<I, O>[]) => Promise<void>,
    private readonly maxBatch: number,
    private readonly maxInFlight = 1,
    private readonly lingerMs = 0,
  ) {}

  add(input: I): Promise<O> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ input, resolve, reject });
      if (this.lingering !== null && this.waiting.length >= this.maxBatch) {
        clearTimeout(this.lingering);
        this.lingering = null;
        this.scheduled = false;
      }
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || this.waiting.length === 0) return;
    this.scheduled = true;
    const start = () => {
      this.scheduled = false;
      this.lingering = null;
      void this.flush();
    };
    if (this.lingerMs > 0 && this.waiting.length < this.maxBatch) this.lingering = setTimeout(start, this.lingerMs);
    else setImmediate(start);
  }

  private async flush(): Promise<void> {
    const batch = this.waiting.splice(0, this.maxBatch);
    this.inFlight++;
    try {
      await this.write(batch);
    } catch (error) {
      for (const unit of batch) unit.reject(error);
    } finally {
      this.inFlight--;
      this.schedule();
    }
  }
}
