import assert from "node:assert/strict";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { sql } from "kysely";
import { startCheckpointer } from "./checkpointer.js";
import { openStorage } from "./database.js";

const dir = mkdtempSync(join(tmpdir(), "warden-checkpoint-"));
after(() => rmSync(dir, { recursive: true, force: true }));

describe("SQLite checkpoints off the event loop", () => {
  test("the writing connection never checkpoints; the thread copies the whole log back", async () => {
    const file = join(dir, "warden.sqlite");
    const storage = openStorage({ databaseUrl: null, sqliteFile: file });
    const checkpointer = startCheckpointer(file, (error) => assert.fail(error));
    try {
      const { db } = storage;
      await db.schema.createTable("probe").addColumn("n", "integer").addColumn("pad", "text").execute();
      const pad = "x".repeat(500);
      // About 2,500 pages of log, past the 1,000 at which SQLite would checkpoint in a commit.
      for (let batch = 0; batch < 100; batch++) {
        await db
          .insertInto("probe" as never)
          .values(Array.from({ length: 100 }, (_, i) => ({ n: batch * 100 + i, pad })) as never)
          .execute();
      }
      assert.deepEqual((await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(db)).rows, [{ wal_autocheckpoint: 0 }]);
      const walBytes = statSync(`${file}-wal`).size;
      assert.ok(walBytes > 1000 * 4096, `log of ${walBytes} bytes`);

      const result = await checkpointer.now();
      assert.equal(result.busy, 0);
      assert.ok(result.log > 1000, `log of ${result.log} pages`);
      assert.equal(result.checkpointed, result.log);
      // Nothing more to copy; the next commit starts the log over instead of growing it.
      await db
        .insertInto("probe" as never)
        .values({ n: -1, pad } as never)
        .execute();
      assert.equal(statSync(`${file}-wal`).size, walBytes);
      assert.deepEqual((await sql<{ n: number }>`select count(*) as n from probe`.execute(db)).rows, [{ n: 10_001 }]);
    } finally {
      await checkpointer.stop();
      await storage.close();
    }
  });

  test("a thread that cannot open the database reports it, and is stopped without hanging", async () => {
    const reported: Error[] = [];
    const checkpointer = startCheckpointer(join(dir, "missing", "warden.sqlite"), (error) => reported.push(error));
    await assert.rejects(checkpointer.now(), /directory does not exist|unable to open/);
    assert.equal(reported.length, 1);
    await checkpointer.stop();
  });
});
