import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ManualClock } from "../clock.js";
import { DatabaseUnavailableError } from "../db/storage-faults.js";
import { RETRY_EVERY_MS, waitForDatabase } from "./database-wait.js";

const refused = () => new DatabaseUnavailableError(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }));

/** A clock moved by the waits themselves, and the lines reported. */
function waiting(waitSeconds: number) {
  const clock = new ManualClock();
  const lines: string[] = [];
  const options = {
    waitSeconds,
    clock,
    sleep: async (ms: number) => clock.advance(ms),
    report: (line: string) => lines.push(line),
  };
  return { clock, lines, options };
}

describe("waiting for the database at start", () => {
  test("keeps trying while the database is unreachable, one line a try, and answers once it is up", async () => {
    const { lines, options } = waiting(60);
    let tries = 0;
    const opened = await waitForDatabase(
      async () => {
        tries++;
        if (tries < 4) throw refused();
        return "services";
      },
      () => "PostgreSQL does not answer",
      options,
    );
    assert.equal(opened, "services");
    assert.equal(tries, 4);
    assert.deepEqual(lines, [
      "PostgreSQL does not answer (try 1; trying again for 60 s more: WARDEN_DB_WAIT_SECONDS)",
      "PostgreSQL does not answer (try 2; trying again for 58 s more: WARDEN_DB_WAIT_SECONDS)",
      "PostgreSQL does not answer (try 3; trying again for 56 s more: WARDEN_DB_WAIT_SECONDS)",
    ]);
  });

  test("gives up with the last failure once WARDEN_DB_WAIT_SECONDS have passed", async () => {
    const { clock, lines, options } = waiting(5);
    const started = clock.now();
    await assert.rejects(
      waitForDatabase(
        async () => {
          throw refused();
        },
        () => "down",
        options,
      ),
      DatabaseUnavailableError,
    );
    assert.equal(clock.now() - started, 5_000);
    assert.equal(lines.length, Math.ceil(5_000 / RETRY_EVERY_MS));
  });

  test("0 tries once; any other failure (a wrong password, a schema too new) is thrown at once", async () => {
    const none = waiting(0);
    await assert.rejects(
      waitForDatabase(
        async () => {
          throw refused();
        },
        () => "down",
        none.options,
      ),
      DatabaseUnavailableError,
    );
    assert.deepEqual(none.lines, []);
    const other = waiting(60);
    let tries = 0;
    await assert.rejects(
      waitForDatabase(
        async () => {
          tries++;
          throw Object.assign(new Error("password authentication failed"), { code: "28P01" });
        },
        () => "down",
        other.options,
      ),
      /password authentication failed/,
    );
    assert.equal(tries, 1);
    assert.deepEqual(other.lines, []);
  });
});
