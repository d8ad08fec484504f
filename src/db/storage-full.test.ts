import assert from "node:assert/strict";
import { tmpdir } from "node:os";
import { describe, test } from "node:test";
import { sql } from "kysely";
import { fillDiskFor } from "../test-support/full-disk.js";
import { DIALECTS, storageFor } from "../test-support/harness.js";
import { isStorageFull, StorageFullError, sqliteStorageFault } from "./storage-faults.js";

const sqliteError = (code: string, message: string) => Object.assign(new Error(message), { code });

describe("what counts as a full disk", () => {
  test("SQLITE_FULL is, whatever the folder", () => {
    assert.ok(sqliteStorageFault(sqliteError("SQLITE_FULL", "database or disk is full"), null) instanceof StorageFullError);
    assert.ok(isStorageFull(sqliteError("SQLITE_FULL", "database or disk is full")));
  });

  test("an I/O error growing a file is only when its folder has no room left", () => {
    // The test machine's temporary folder has far more than 64 MB free: a broken disk, not a full one.
    assert.equal(sqliteStorageFault(sqliteError("SQLITE_IOERR_WRITE", "disk I/O error"), tmpdir()), null);
    assert.equal(sqliteStorageFault(sqliteError("SQLITE_IOERR_SHMSIZE", "disk I/O error"), null), null);
    assert.equal(sqliteStorageFault(sqliteError("SQLITE_IOERR_READ", "disk I/O error"), tmpdir()), null);
  });

  test("PostgreSQL's disk_full is; its other failures are not", () => {
    assert.ok(isStorageFull(Object.assign(new Error("could not extend file"), { code: "53100" })));
    assert.equal(isStorageFull(Object.assign(new Error("duplicate key"), { code: "23505" })), false);
    assert.equal(isStorageFull(new Error("database or disk is full")), false);
  });
});

for (const dialect of DIALECTS) {
  describe(`a transaction the full disk fails (${dialect})`, () => {
    test("fails as a full disk, not as the rollback after it, and leaves the connection usable", async () => {
      const { db } = await storageFor(dialect);
      await sql`create table if not exists full_target (x integer)`.execute(db);
      const giveRoomBack = await fillDiskFor(db, dialect, "full_target");
      try {
        // On SQLite a single-row insert that runs out of pages rolls the whole transaction
        // back at once (no statement journal): Kysely's own rollback then found none open.
        // (disk_filler is fillDiskFor's; its page limit is what fails here.)
        await assert.rejects(
          db.transaction().execute(async (trx) => {
            if (dialect === "sqlite") await sql`insert into disk_filler values (zeroblob(2000000))`.execute(trx);
            else await sql`insert into full_target values (1)`.execute(trx);
          }),
          (error) => isStorageFull(error),
        );
      } finally {
        await giveRoomBack();
      }
      await db.transaction().execute((trx) => sql`insert into full_target values (2)`.execute(trx));
      const rows = await sql<{ x: number }>`select x from full_target`.execute(db);
      assert.deepEqual(
        rows.rows.map((r) => Number(r.x)),
        [2],
      );
    });
  });
}
