import type { FastifyBaseLogger } from "fastify";
import { isDatabaseUnavailable } from "../db/storage-faults.js";
import { RepeatingJob } from "../ops/repeating-job.js";
import type { Services } from "../services.js";
import { foldFigures } from "./rollup.store.js";

// The fold job: a grant's or a sale's figures wait in insight_pending (migration 054)
// until a fold adds them up; `warden serve` folds once a second, so that what waits stays
// a second's worth, and every Insights read folds first, so that it is exact. Folds run
// one at a time over every process (rollup.store.ts, foldFigures).

const INTERVAL_MS = 1_000;
const RETRY_UNAVAILABLE_MS = 5_000;

/** The job `warden serve` runs every second. */
export function foldJob(services: Pick<Services, "db">, log: FastifyBaseLogger): RepeatingJob {
  return new RepeatingJob(
    async () => {
      try {
        await foldFigures(services.db);
      } catch (error) {
        if (isDatabaseUnavailable(error)) return "unreachable";
        log.error({ err: error }, "folding the Insights figures' changes failed: they stay pending for the next fold");
      }
      return "done";
    },
    { firstDelayMs: INTERVAL_MS, intervalMs: INTERVAL_MS, retryMs: RETRY_UNAVAILABLE_MS },
  );
}
