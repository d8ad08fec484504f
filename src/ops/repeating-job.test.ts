import assert from "node:assert/strict";
import { describe, mock, test } from "node:test";
import { RepeatingJob, type RunOutcome } from "./repeating-job.js";

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("a repeating job", () => {
  test("runs after its first delay, then an interval after each run ended, sooner after an unreachable database", async (t) => {
    mock.timers.enable({ apis: ["setTimeout"] });
    t.after(() => mock.timers.reset());
    const outcomes: RunOutcome[] = ["unreachable", "done", "done"];
    let runs = 0;
    const job = new RepeatingJob(
      async () => {
        runs++;
        return outcomes.shift() ?? "done";
      },
      { firstDelayMs: 100, intervalMs: 10_000, retryMs: 1_000 },
    );
    job.start();
    mock.timers.tick(99);
    assert.equal(runs, 0);
    mock.timers.tick(1);
    assert.equal(runs, 1);
    await flush();
    // The first run found the database away: the next comes after retryMs, not a whole interval.
    mock.timers.tick(1_000);
    assert.equal(runs, 2);
    await flush();
    mock.timers.tick(9_999);
    assert.equal(runs, 2);
    mock.timers.tick(1);
    assert.equal(runs, 3);
    await job.stop();
  });

  test("stop waits for the run under way, tells it to stop, and no run follows", async (t) => {
    mock.timers.enable({ apis: ["setTimeout"] });
    t.after(() => mock.timers.reset());
    let release = () => {};
    let sawStop = false;
    let runs = 0;
    const job = new RepeatingJob(
      async (stopped) => {
        runs++;
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        sawStop = stopped();
        return "done";
      },
      { firstDelayMs: 0, intervalMs: 10, retryMs: 10 },
    );
    job.start();
    mock.timers.tick(0);
    let stopped = false;
    const stopping = job.stop().then(() => {
      stopped = true;
    });
    await flush();
    assert.equal(stopped, false, "stop returned while a run was under way");
    release();
    await stopping;
    assert.equal(sawStop, true);
    mock.timers.tick(1_000);
    assert.equal(runs, 1);
  });
});
