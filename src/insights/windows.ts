import type { FastifyBaseLogger } from "fastify";
import { utcDayOf } from "../clock.js";
import type { Db } from "../db/database.js";
import { isDatabaseUnavailable } from "../db/storage-faults.js";
import { RepeatingJob } from "../ops/repeating-job.js";
import type { Services } from "../services.js";
import { stepWindow, windowStart, windowsToMove } from "./windows.store.js";

// The windows job: keeps each window of the most-active-unpaid list starting where the
// page's range of its span begins today (windows.store.ts). A day's move touches only the
// people active on the day that leaves; the 12-month window moves a month's days at the
// turn of the month, a day at a time. Each step is its own short transaction, the window's
// start locked, so that processes running the job side by side each take a step or find
// it taken, and a request waits at most one step for the event loop.

const INTERVAL_MS = 60_000;
const RETRY_UNAVAILABLE_MS = 10_000;

/** Moves every window to today's start, a day per transaction; answers the days moved. */
export async function slideWindows(db: Db, today: string, stopped: () => boolean = () => false): Promise<number> {
  let steps = 0;
  for (const w of await windowsToMove(db, today)) {
    const target = windowStart(w.span, today);
    for (;;) {
      if (stopped()) return steps;
      const moved = await db.transaction().execute((trx) => stepWindow(trx, w, target));
      if (moved === null) break;
      steps++;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  return steps;
}

/** The job `warden serve` runs every minute: a window is at most a minute late after midnight (the list counts from the months meanwhile). */
export function windowsJob(services: Pick<Services, "db" | "clock">, log: FastifyBaseLogger): RepeatingJob {
  return new RepeatingJob(
    async (stopped) => {
      try {
        const steps = await slideWindows(services.db, utcDayOf(services.clock.now()), stopped);
        if (steps > 0) log.info({ steps }, "moved the most-active-unpaid windows");
      } catch (error) {
        if (isDatabaseUnavailable(error)) return "unreachable";
        log.error({ err: error }, "moving the most-active-unpaid windows failed");
      }
      return "done";
    },
    { firstDelayMs: 0, intervalMs: INTERVAL_MS, retryMs: RETRY_UNAVAILABLE_MS },
  );
}
