// SQLite only: another process writing to the same file (a `warden admin stripe reconcile`
// or an import beside `warden serve`) makes the delivery worker try its claim again at its
// next look for work, not log an error. The other process is a worker thread with a
// connection of its own: it holds the write lock, changes a row and commits while the
// worker claims. PostgreSQL locks rows (the claim skips locked ones): no such wait there.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { describe, test } from "node:test";
import { Worker } from "node:worker_threads";
import { isDatabaseBusy } from "../db/storage-faults.js";
import { seedWorkspace, sqliteFileServices, testApi } from "../test-support/harness.js";
import { emitExample, startReceiver, testWorker } from "../test-support/webhooks.js";

// The other process's part: take the write lock, touch the leases, hold it, commit.
const WRITER = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma("busy_timeout = 5000");
db.exec("BEGIN IMMEDIATE");
db.prepare("update endpoint_leases set locked_until = locked_until").run();
parentPort.postMessage("held");
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, workerData.holdMs);
db.exec("COMMIT");
db.close();
`;

/** Runs the writer; resolves when it holds the lock, with a promise of its end. */
async function otherProcessWriting(file: string, holdMs: number): Promise<{ ended: Promise<void> }> {
  const driver = createRequire(import.meta.url).resolve("better-sqlite3");
  const writer = new Worker(WRITER, { eval: true, workerData: { driver, file, holdMs } });
  const ended = new Promise<void>((resolve, reject) => {
    writer.on("error", reject);
    writer.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`the writer exited with ${code}`))));
  });
  await new Promise<void>((resolve, reject) => {
    writer.once("message", () => resolve());
    ended.catch(reject);
  });
  return { ended };
}

describe("delivery claims beside another process's writes (sqlite)", () => {
  test("while another process holds the write lock the worker's claims give up at once and try again; the event is delivered once it commits, and nothing is logged as an error", async () => {
    const { services, clock, file } = await sqliteFileServices();
    clock.set(Date.now());
    const ws = await seedWorkspace(services);
    const api = await testApi(services);
    const receiver = await startReceiver();
    try {
      const added = await api.request({ method: "POST", url: "/api/v1/webhooks/endpoints", key: ws.testKey, payload: { url: receiver.url } });
      assert.equal(added.statusCode, 201, added.body);
      const eventId = await emitExample(services, ws);
      const worker = testWorker(services, { pollIntervalMs: 20 });

      // A claim reads, then writes its lease: its write finds the lock taken (SQLITE_BUSY)
      // or the file changed since it read (SQLITE_BUSY_SNAPSHOT); it was logged as an error.
      const other = await otherProcessWriting(file, 300);
      worker.start();
      try {
        await other.ended;
        await receiver.waitFor(() => receiver.received.length === 1, 60_000);
      } finally {
        await worker.stop();
      }
      assert.deepEqual(receiver.ids(), [eventId]);
      assert.deepEqual(worker.errors, []);
    } finally {
      await receiver.stop();
    }
  });

  test("SQLite's busy answers are a wait, told apart from a failure", () => {
    const busy = Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" });
    const snapshot = Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY_SNAPSHOT" });
    assert.equal(isDatabaseBusy(busy), true);
    assert.equal(isDatabaseBusy(new Error("claiming failed", { cause: snapshot })), true, "found among the causes");
    assert.equal(isDatabaseBusy(Object.assign(new Error("UNIQUE constraint failed"), { code: "SQLITE_CONSTRAINT_UNIQUE" })), false);
    assert.equal(isDatabaseBusy(new Error("no code")), false);
  });
});
