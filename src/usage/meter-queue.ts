// Spends of one person's meter, gathered into batches within a process: while one batch
// is written, what arrives waits and becomes the next, so a burst on one person costs
// one transaction (one lock, one read of what is left, one commit) per batch rather than
// per spend. The database alone makes spends exact across processes (each batch locks
// its meter's row); this keeps each process to one connection per meter waiting on that
// lock, so a burst on one person never fills the PostgreSQL pool.

/** What one input of a batch came to: its answer, or the error it alone is answered with. */
export type Outcome<O> = { ok: true; value: O } | { ok: false; error: unknown };

interface Waiting<I, O> {
  input: I;
  resolve: (output: O) => void;
  reject: (error: unknown) => void;
}

interface Queue<I, O> {
  waiting: Waiting<I, O>[];
  running: boolean;
}

/**
 * Batches per key, one batch of a key at a time, in arrival order. `run` answers one
 * outcome per input, in order; when it throws, every input of its batch fails with that
 * error. Inputs with the same `conflict` (an Idempotency-Key) never share a batch: the
 * later one starts the next, so it sees what the earlier one wrote, as it would one at a
 * time.
 */
export class KeyedBatches<I, O> {
  private readonly queues = new Map<string, Queue<I, O>>();

  constructor(
    private readonly run: (batch: readonly I[]) => Promise<Outcome<O>[]>,
    private readonly maxBatch: number,
    private readonly conflict: (input: I) => string | null,
  ) {}

  add(key: string, input: I): Promise<O> {
    return new Promise((resolve, reject) => {
      let queue = this.queues.get(key);
      if (!queue) {
        queue = { waiting: [], running: false };
        this.queues.set(key, queue);
      }
      queue.waiting.push({ input, resolve, reject });
      if (!queue.running) this.schedule(key, queue);
    });
  }

  // setImmediate, as GroupCommit: the requests the poll phase started join the batch.
  private schedule(key: string, queue: Queue<I, O>): void {
    queue.running = true;
    setImmediate(() => void this.flush(key, queue));
  }

  // In arrival order, up to the first that cannot join: what came after it waits with it,
  // so no spend is decided before one that came earlier.
  private take(queue: Queue<I, O>): Waiting<I, O>[] {
    const taken = new Set<string>();
    let end = 0;
    for (const unit of queue.waiting) {
      const conflict = this.conflict(unit.input);
      if (end >= this.maxBatch || (conflict !== null && taken.has(conflict))) break;
      if (conflict !== null) taken.add(conflict);
      end++;
    }
    return queue.waiting.splice(0, end);
  }

  private async flush(key: string, queue: Queue<I, O>): Promise<void> {
    const batch = this.take(queue);
    try {
      const outcomes = await this.run(batch.map((unit) => unit.input));
      for (const [i, unit] of batch.entries()) {
        const outcome = outcomes[i];
        if (!outcome) unit.reject(new Error("a batch answered fewer outcomes than it was given"));
        else if (outcome.ok) unit.resolve(outcome.value);
        else unit.reject(outcome.error);
      }
    } catch (error) {
      for (const unit of batch) unit.reject(error);
    }
    if (queue.waiting.length > 0) this.schedule(key, queue);
    else {
      queue.running = false;
      this.queues.delete(key);
    }
  }
}
