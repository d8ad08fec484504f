import assert from "node:assert/strict";
import { statSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { sql } from "kysely";
import { PG_URL, privateDatabaseEnv } from "../test-support/harness.js";
import { openStorage } from "./database.js";
import { WalCheckpointer } from "./wal-checkpointer.js";

// Checkpoints off the connection that writes (wal-checkpointer.ts, `warden serve`).

async function writePages(storage: ReturnType<typeof openStorage>, rows: number): Promise<void> {
  await sql`create table if not exists filler (id integer primary key, body text not null)`.execute(storage.db);
  await storage.db.transaction().execute(async (trx) => {
    for (let i = 0; i < rows; i++) await sql`insert into filler (body) values (${"x".repeat(2_000)})`.execute(trx);
  });
}

test("SQLite: the writer checkpoints only past its raised bound, and the worker copies the whole log into the file", async (t) => {
  const dir = (await privateDatabaseEnv("sqlite")).WARDEN_DATA_DIR as string;
  const storage = openStorage({ databaseUrl: null, dataDir: dir });
  let closed = false;
  t.after(() => (closed ? undefined : storage.close()));
  const file = join(dir, "warden.sqlite");
  const bound = async () => (await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(storage.db)).rows[0]?.wal_autocheckpoint;
  assert.equal(await bound(), 1_000, "SQLite's default until asked");

  const checkpointer = storage.checkpointInBackground();
  assert.ok(checkpointer);
  assert.equal(storage.checkpointInBackground(), checkpointer, "one worker however often it is asked");
  assert.equal(await bound(), 4_000);

  // Some 1,500 pages: past SQLite's default bound, so that the writer would have checkpointed itself, and within the raised one.
  const sizeBefore = statSync(file).size;
  await writePages(storage, 3_000);
  const result = await checkpointer.checkpoint();
  assert.ok(result.log > 1_000, `the log held ${result.log} pages: the writer did not checkpoint it`);
  assert.equal(result.checkpointed, result.log, "every page copied: nobody else reads the log");
  // Copied by this checkpoint or by the worker's own a moment before: the writer never copied them.
  assert.ok(statSync(file).size > sizeBefore + 1_000 * 4_096, "the pages are in the database file");
  const count = await sql<{ n: number }>`select count(*) as n from filler`.execute(storage.db);
  assert.equal(Number(count.rows[0]?.n), 3_000);

  // Closed with the storage; after that it refuses.
  await storage.close();
  closed = true;
  await assert.rejects(checkpointer.checkpoint(), /closed/);
});

test("no checkpointer in memory or on PostgreSQL", async (t) => {
  const memory = openStorage({ databaseUrl: null, sqliteFile: ":memory:" });
  t.after(() => memory.close());
  assert.equal(memory.checkpointInBackground(), null);
  const postgres = openStorage({ databaseUrl: PG_URL, poolSize: 1 });
  t.after(() => postgres.close());
  assert.equal(postgres.checkpointInBackground(), null);
});

test("a worker that fails tells its owner once, refuses the checkpoint asked for, and does not end the process", async (t) => {
  const dir = (await privateDatabaseEnv("sqlite")).WARDEN_DATA_DIR as string;
  const errors: Error[] = [];
  let told: () => void = () => {};
  const stopped = new Promise<void>((resolve) => {
    told = resolve;
  });
  // A file the worker cannot open (it opens only a file that exists): its connection throws as it starts.
  const checkpointer = new WalCheckpointer(join(dir, "missing", "warden.sqlite"), 60_000, 60_000, (error) => {
    errors.push(error);
    told();
  });
  t.after(() => checkpointer.close());
  const asked = checkpointer.checkpoint();
  await assert.rejects(asked, /unable to open|directory does not exist|cannot open/i);
  await stopped;
  assert.equal(errors.length, 1, "told once, though the worker also ends after its error");
  await assert.rejects(checkpointer.checkpoint(), /closed/);
});
