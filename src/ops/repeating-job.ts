/** What one run of a repeating job reports: `unreachable` when the database did not answer, so the next run comes sooner. */
export type RunOutcome = "done" | "unreachable";

export interface RepeatingJobTiming {
  /** Delay before the first run after start(). */
  firstDelayMs: number;
  /** Time between the end of one run and the start of the next. */
  intervalMs: number;
  /** Time before the next run when the last found the database unreachable. */
  retryMs: number;
}

/**
 * Work that `warden serve` repeats in the background (pruning, the scheduled reconcile with
 * Stripe). The next run is timed from the end of the last, so runs never overlap in a process;
 * stop() waits for the run under way, which asks `stopped()` to end early.
 */
export class RepeatingJob {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private stopping = false;

  constructor(
    private readonly run: (stopped: () => boolean) => Promise<RunOutcome>,
    private readonly timing: RepeatingJobTiming,
  ) {}

  start(): void {
    this.stopping = false;
    this.schedule(this.timing.firstDelayMs);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopping) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.run(() => this.stopping).then((outcome) => {
        this.running = null;
        this.schedule(outcome === "done" ? this.timing.intervalMs : Math.min(this.timing.retryMs, this.timing.intervalMs));
      });
    }, delayMs);
    // A pending run never keeps a process alive that has nothing else to do.
    this.timer.unref();
  }
}
