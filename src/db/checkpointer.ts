import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

// SQLite in WAL mode copies the log back into the database file (a checkpoint) from
// inside a commit, once the log passes 1,000 pages: a copy and two fsyncs on Warden's
// only thread. Measured with 50,000 webhook deliveries on SQLite, one commit in twenty
// took 5 to 40 ms that way, 2.8 of the run's 3.8 s of commits; every request waiting
// on the event loop meanwhile waited with it. So the connection Warden writes through
// never checkpoints, and a thread of its own with a second connection does: passively
// (a writer never waits for it), except for a short last step now and then that lets
// the log start over (RESTART_PAGES).
//
// The thread's code is given as text: it is small, it must run as plain JavaScript both
// from dist/ and under tsx in the tests, and it needs nothing of Warden's.
const THREAD = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma("busy_timeout = " + workerData.busyMs);
const checkpoint = () => {
  const passive = db.pragma("wal_checkpoint(PASSIVE)")[0];
  if (passive.log < workerData.restartPages) return passive;
  // The log starts over only when a checkpoint has copied all of it, which a passive one
  // never does while commits keep coming: this one holds writers back for the last few
  // pages (those committed while the passive one ran), then lets the next commit start
  // the log over instead of growing it.
  return db.pragma("wal_checkpoint(RESTART)")[0];
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on("message", (message) => {
  if (message === "now") return parentPort.postMessage(checkpoint());
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

/** What a checkpoint did, as SQLite answers `wal_checkpoint`: pages in the log, pages copied back. */
export interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

export interface Checkpointer {
  /** Checkpoints now and answers what it did. */
  now(): Promise<CheckpointResult>;
  /** Stops the thread once its connection is closed. */
  stop(): Promise<void>;
}

/** How often the thread checkpoints. */
const INTERVAL_MS = 200;
/**
 * A log this long (16 MB) is started over. SQLite's own checkpoints do it at 1,000 pages; each
 * start holds writers back for a moment (the busy handler sleeps 1 ms and more), so a fourth
 * as often: commits then took 1.9 s instead of 3.8 s of the 50,000 deliveries, and a commit's
 * p99 2.2 ms instead of 11 ms.
 */
const RESTART_PAGES = 4000;
/** How long a restarting checkpoint waits for a writer to finish before it gives up until the next time. */
const BUSY_MS = 100;

/**
 * Checkpoints the SQLite database `file` from a thread of its own. If that thread ever
 * fails, `onFailure` runs (the writing connection then checkpoints for itself again).
 */
export function startCheckpointer(file: string, onFailure: (error: Error) => void): Checkpointer {
  const driver = createRequire(import.meta.url).resolve("better-sqlite3");
  const worker = new Worker(THREAD, { eval: true, workerData: { file, driver, intervalMs: INTERVAL_MS, restartPages: RESTART_PAGES, busyMs: BUSY_MS } });
  // An open storage never keeps the process alive by itself.
  worker.unref();
  let failure: Error | null = null;
  const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
  worker.once("error", (error) => {
    failure = error;
    onFailure(error);
  });
  // Held (ref) only while an answer is awaited.
  const held = <T>(answer: Promise<T>): Promise<T> => {
    worker.ref();
    return answer.finally(() => worker.unref());
  };
  return {
    now: () =>
      held(
        new Promise((resolve, reject) => {
          if (failure) return reject(failure);
          worker.once("message", resolve);
          worker.once("error", reject);
          worker.postMessage("now");
        }),
      ),
    stop() {
      worker.postMessage("stop");
      return held(exited);
    },
  };
}
