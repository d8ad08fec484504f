// The scheduled reconcile with Paddle of `warden serve` (WARDEN_PADDLE_RECONCILE_MINUTES,
// off by default), as Stripe's: catches what Paddle's notifications missed without the
// vendor asking. Unlike Stripe's it keeps no lease: every serving process runs its rounds,
// which is harmless (each object is applied once by its facts' ids, under the
// environment's payment lock) but asks Paddle once per process; run one process with it.
import type { FastifyBaseLogger } from "fastify";
import { isDatabaseUnavailable } from "../db/storage-faults.js";
import { RepeatingJob } from "../ops/repeating-job.js";
import type { Services } from "../services.js";
import { reconcilePaddleScheduled } from "./paddle-reconcile.service.js";

export function paddleReconcileScheduler(services: Services, log: FastifyBaseLogger, intervalMs: number): RepeatingJob {
  return new RepeatingJob(
    async () => {
      try {
        for (const run of await reconcilePaddleScheduled(services)) {
          if ("error" in run) log.error({ err: run.error, workspace: run.workspace, env: run.env }, "the scheduled reconcile with Paddle failed");
          else if (run.ignored.length > 0) {
            log.warn(
              { workspace: run.workspace, env: run.env, applied: run.applied, ignored: run.ignored.length },
              "the scheduled reconcile with Paddle found purchases it could not take",
            );
          }
        }
      } catch (error) {
        if (!isDatabaseUnavailable(error)) log.error({ err: error }, "the scheduled reconcile with Paddle failed");
      }
      return "done";
    },
    { firstDelayMs: intervalMs, intervalMs, retryMs: intervalMs },
  );
}
