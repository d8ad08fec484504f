// The scheduled reconcile of `warden serve` (WARDEN_STRIPE_RECONCILE_MINUTES, off by
// default): catches what Stripe's webhooks missed without the vendor asking. Every
// process may run it; the lease row of each environment lets one reconcile it at a time.
import type { FastifyBaseLogger } from "fastify";
import { isDatabaseUnavailable } from "../db/storage-faults.js";
import type { Services } from "../services.js";
import { reconcileScheduled } from "./stripe-reconcile.service.js";

export class StripeReconcileScheduler {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private stopping = false;

  constructor(
    private readonly services: Services,
    private readonly log: FastifyBaseLogger,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    this.stopping = false;
    this.schedule(this.intervalMs);
  }

  /** Waits for the round under way (a round stops only between objects when its process ends). */
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
      this.running = this.run().then(() => {
        this.running = null;
        this.schedule(this.intervalMs);
      });
    }, delayMs);
    this.timer.unref();
  }

  private async run(): Promise<void> {
    try {
      for (const run of await reconcileScheduled(this.services)) {
        if (run.applied > 0 || run.unmapped > 0) {
          this.log.warn(
            { reconcile: run.id, workspace: run.workspace, env: run.env, applied: run.applied, unmapped: run.unmapped },
            "the scheduled reconcile with Stripe found what webhooks had missed",
          );
        }
      }
    } catch (error) {
      // An unreachable database is told once by `warden serve`; Stripe's failure is in the run's row too.
      if (!isDatabaseUnavailable(error)) this.log.error({ err: error }, "the scheduled reconcile with Stripe failed");
    }
  }
}
