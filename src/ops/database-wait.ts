import type { Clock } from "../clock.js";
import { isDatabaseUnavailable } from "../db/storage-faults.js";

/** Time between two tries: a database restarting takes a few seconds, and each try costs a line of the log. */
export const RETRY_EVERY_MS = 2_000;

export interface WaitOptions {
  /** WARDEN_DB_WAIT_SECONDS: how long to keep trying; 0 tries once. */
  waitSeconds: number;
  clock: Clock;
  /** Waits between tries (a timer in `warden serve`; tests move their clock instead). */
  sleep: (ms: number) => Promise<void>;
  /** Told, in one line, of each try that found the database away. */
  report: (line: string) => void;
}

/**
 * Runs `open` until it succeeds, for as long as it fails because the database is
 * unreachable and the wait has not run out: a supervisor that restarts `warden serve`
 * while PostgreSQL is still down then gets a process that starts when the database does,
 * not a crash loop. Any other failure (a wrong password, a schema too new) is thrown at
 * once, and so is the last one.
 */
export async function waitForDatabase<T>(open: () => Promise<T>, describe: (error: unknown) => string, options: WaitOptions): Promise<T> {
  const giveUpAt = options.clock.now() + options.waitSeconds * 1000;
  for (let attempt = 1; ; attempt++) {
    try {
      return await open();
    } catch (error) {
      const left = giveUpAt - options.clock.now();
      if (!isDatabaseUnavailable(error) || left <= 0) throw error;
      options.report(`${describe(error)} (try ${attempt}; trying again for ${Math.ceil(left / 1000)} s more: WARDEN_DB_WAIT_SECONDS)`);
      await options.sleep(Math.min(RETRY_EVERY_MS, left));
    }
  }
}
