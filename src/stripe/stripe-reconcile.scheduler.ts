// The scheduled reconcile of `warden serve` (WARDEN_STRIPE_RECONCILE_MINUTES, off by
// default): catches what Stripe's webhooks missed without the vendor asking. Every
// process may run it; the lease row of each environment lets one reconcile it at a time.
import type { FastifyBaseLogger } from "fastify";
import { isDatabaseUnavailable } from "../db/storage-faults.js";
import { RepeatingJob } from "../ops/repeating-job.js";
import type { Services } from "../services.js";
import { reconcileScheduled } from "./stripe-reconcile.service.js";

/** Its stop() waits for the round under way: a round stops only between objects when its process ends. */
export function stripeReconcileScheduler(services: Services, log: FastifyBaseLogger, intervalMs: number): RepeatingJob {
  return new RepeatingJob(
    async () => {
      try {
        for (const run of await reconcileScheduled(services)) {
          if (run.applied > 0 || run.unmapped > 0) {
            log.warn(
              { reconcile: run.id, workspace: run.workspace, env: run.env, applied: run.applied, unmapped: run.unmapped },
              "the scheduled reconcile with Stripe found what webhooks had missed",
            );
          }
        }
      } catch (error) {
        // An unreachable database is told once by `warden serve`; Stripe's failure is in the run's row too.
        if (!isDatabaseUnavailable(error)) log.error({ err: error }, "the scheduled reconcile with Stripe failed");
      }
      // The next round comes a whole interval later either way: it reads from before this one began.
      return "done";
    },
    { firstDelayMs: intervalMs, intervalMs, retryMs: intervalMs },
  );
}
