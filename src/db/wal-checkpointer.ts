import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

// SQLite's write-ahead log is copied back into the database file by a checkpoint, which
// by default the connection that commits runs itself once the log passes 1,000 pages: in
// that commit, on the event loop, with its fsync. A day's first access checks write some
// 20 pages a check (bench/journal.md, 2026-11-30), so at a storm of them nearly every
// flush's commit checkpointed: 9.5 of 20.6 s of 20,000 first checks in process were
// commits, most over 20 ms, and every request waited through them. `warden serve` has
// the checkpoints run here instead, in a worker thread with its own connection: a
// checkpoint and a writer run side by side in WAL mode, so the commits only append.

const WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
const SQLite = require(workerData.driver);
const db = new SQLite(workerData.file, { fileMustExist: true });
function checkpoint() {
  // PASSIVE: copies the pages no reader still needs, and never waits for a lock.
  const [row] = db.pragma("wal_checkpoint(PASSIVE)");
  return { log: row.log, checkpointed: row.checkpointed };
}
// Again soon while the log grows (a flush's transactions come one after the other), else
// after a pause: the log starts again from its beginning only once all of it is copied,
// which a writer that keeps committing would otherwise leave to its own bound.
let last = -1;
function tick() {
  let wait = workerData.everyMs;
  try {
    const { log } = checkpoint();
    if (log !== last) wait = workerData.busyMs;
    last = log;
  } catch {
    // Tried again after the pause: a busy or failing file is the writer's to report.
  }
  setTimeout(tick, wait);
}
setTimeout(tick, workerData.everyMs);
parentPort.on("message", () => {
  let answer;
  try {
    answer = checkpoint();
  } catch (error) {
    answer = { error: String(error && error.message) };
  }
  parentPort.postMessage(answer);
});
`;

/** A checkpoint's figures: pages in the log, and of them copied into the database file. */
export interface CheckpointResult {
  log: number;
  checkpointed: number;
}

/**
 * Checkpoints the SQLite file's log in a worker thread: again at once while each
 * checkpoint finds the log grown (after `busyMs`), else every `everyMs`, and when asked. The connection
 * that writes keeps a bound of its own (set by the caller) for when the worker falls behind.
 * A worker that fails or ends unasked (a file it cannot open, an error it does not catch)
 * closes the checkpointer and calls `stopped` once, so that the caller gives the writer its
 * own checkpoints back: an unheard worker error would end the whole process.
 */
export class WalCheckpointer {
  private readonly worker: Worker;
  private running: Promise<CheckpointResult> | null = null;
  private refuse: ((error: Error) => void) | null = null;
  private closed = false;

  constructor(
    file: string,
    everyMs: number,
    busyMs: number,
    private readonly stopped: (error: Error) => void,
  ) {
    const driver = createRequire(import.meta.url).resolve("better-sqlite3");
    this.worker = new Worker(WORKER, { eval: true, workerData: { driver, file, everyMs, busyMs } });
    this.worker.on("error", (error) => this.fail(error));
    this.worker.on("exit", (code) => this.fail(new Error(`the checkpoint worker ended (exit code ${code})`)));
    // The worker never keeps a process alive that has nothing else to do.
    this.worker.unref();
  }

  /** Runs a checkpoint now, or answers the one under way. */
  checkpoint(): Promise<CheckpointResult> {
    if (this.closed) return Promise.reject(new Error("the checkpointer is closed"));
    this.running ??= new Promise<CheckpointResult>((resolve, reject) => {
      this.refuse = reject;
      this.worker.once("message", (answer: CheckpointResult | { error: string }) => {
        this.running = null;
        this.refuse = null;
        if ("error" in answer) reject(new Error(answer.error));
        else resolve(answer);
      });
      this.worker.postMessage(null);
    });
    return this.running;
  }

  /** Stops the worker (after the checkpoint asked for, if any). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.running?.catch(() => {});
    await this.worker.terminate();
  }

  /** The worker failed or ended while open: the checkpoint asked for is refused, and the caller told once. */
  private fail(error: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.refuse?.(error);
    this.running = null;
    this.refuse = null;
    this.stopped(error);
  }
}
