// The SQLite data folder's disk fills up under a running `warden serve`, on a small
// tmpfs of its own. Writes must answer 503 `storage_full` in the catalogue's shape;
// retrieves and access checks must go on answering, with the per-minute limits still
// exact (the counts held in memory); once the filler is deleted, writes succeed with no
// restart and the held counts reach the database; nothing acknowledged is lost, and
// the database opens cleanly after a restart. SQLite only: PostgreSQL's disk is its
// server's, not Warden's data folder.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, statfsSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import { systemClock } from "../src/clock.js";
import { DEVICE, testMailbox } from "../src/test-support/client.js";
import { seedWorkspace, unique, type Workspace } from "../src/test-support/harness.js";
import { createKey } from "../src/workspaces/workspace.service.js";
import { awayFromWindowEdges, type HttpAnswer, http, inFlight, problemsWith, recordFigures, type SharedDatabase, sharedDatabase } from "./fault-support.js";

const KEY_REQUESTS_PER_MIN = 30;

/** A tmpfs of 24 MB for the data folder, or the reason there is none (not root, no mount). */
function mountSmallDisk(): { dir: string } | { skip: string } {
  if (process.getuid?.() !== 0) return { skip: "a full disk needs root to mount a tmpfs: skipped" };
  const dir = mkdtempSync(join(tmpdir(), "warden-full-disk-"));
  const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", "size=24m", "tmpfs", dir], { encoding: "utf8" });
  if (mounted.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    return { skip: `a full disk needs a tmpfs, and mount failed (${(mounted.stderr || String(mounted.error)).trim()}): skipped` };
  }
  // Registered after fault-support's own cleanup (servers killed, connections closed): runs after it.
  after(() => {
    spawnSync("umount", ["-l", dir]);
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir };
}

/** Fills the file system of `dir` to its last byte with one file; answers its path. */
function fillDisk(dir: string): string {
  const path = join(dir, "filler");
  const fd = openSync(path, "w");
  const chunk = Buffer.alloc(1024 * 1024, 1);
  try {
    for (let size = chunk.length; size >= 512; ) {
      try {
        writeSync(fd, chunk, 0, size);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
        size = Math.floor(size / 2);
      }
    }
  } finally {
    closeSync(fd);
  }
  return path;
}

const disk = mountSmallDisk();
const mailbox = testMailbox();

describe("a full disk under the SQLite data folder (sqlite)", { skip: "skip" in disk ? disk.skip : false }, () => {
  let shared: SharedDatabase;
  let ws: Workspace;
  let base: string;
  const dataDir = "dir" in disk ? join(disk.dir, "data") : "";

  before(async () => {
    shared = await sharedDatabase("sqlite", 1, {
      WARDEN_DATA_DIR: dataDir,
      SMTP_URL: mailbox.url,
      WARDEN_LIMIT_KEY_REQUESTS_PER_MIN: String(KEY_REQUESTS_PER_MIN),
    });
    ws = await seedWorkspace(shared.services);
    const server = shared.servers[0];
    assert.ok(server);
    base = server.baseUrl;
  });

  const grant = (key: string, email: string) => http(base, "POST", `/api/v1/tools/${ws.tool}/grants`, { key, body: { email, days: 30 } });
  const retrieve = (key: string, email: string) => http(base, "GET", `/api/v1/tools/${ws.tool}/customers/${encodeURIComponent(email)}`, { key });

  test("writes answer 503 storage_full, reads and limits go on, and room given back needs no restart", async () => {
    const started = Date.now();
    // Before the disk fills: what must survive it.
    const acknowledged: string[] = [];
    for (let i = 0; i < 5; i++) {
      const email = `${unique("before")}@example.com`;
      const answer = await grant(ws.testKey, email);
      assert.equal(answer.status, 201, answer.body);
      acknowledged.push((answer.json as { id: string }).id);
    }
    const holder = `${unique("holder")}@example.com`;
    const held = await grant(ws.testKey, holder);
    assert.equal(held.status, 201, held.body);
    acknowledged.push((held.json as { id: string }).id);
    const burstKey = await createKey(shared.services.db, systemClock, { workspace: ws.slug, env: "test" });
    const signIn = { workspace: ws.slug, tool: ws.tool, email: holder, env: "test" };
    assert.equal((await http(base, "POST", "/api/client/v1/sign-in", { body: signIn })).status, 200);
    const verified = await http(base, "POST", "/api/client/v1/sign-in/verify", { body: { ...signIn, code: await mailbox.codeFor(holder), device: DEVICE } });
    assert.equal(verified.status, 200, verified.body);
    const { token } = verified.json as { token: string };
    const check = () => http(base, "GET", `/api/client/v1/tools/${ws.tool}/access`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal((await check()).status, 200);

    // The WAL is emptied first: a write that fits in the room it already has would not need the disk.
    await sql`pragma wal_checkpoint(TRUNCATE)`.execute(shared.services.db);
    const filler = fillDisk("dir" in disk ? disk.dir : "");
    const { bavail, bsize } = statfsSync(dataDir);
    assert.ok(bavail * bsize < 64 * 1024, `the disk is full (${bavail * bsize} bytes free)`);

    // Writes: 503 in the catalogue's shape, saying what is wrong.
    const refusedEmails: string[] = [];
    for (let i = 0; i < 3; i++) {
      const email = `${unique("during")}@example.com`;
      refusedEmails.push(email);
      const answer = await grant(ws.testKey, email);
      assert.equal(answer.status, 503, answer.body);
      assert.equal(answer.headers["retry-after"], "60");
      assert.match(answer.headers["request-id"] as string, /^req_/);
      const error = (answer.json as { error: { type: string; message: string } }).error;
      assert.equal(error.type, "api_error");
      assert.match(error.message, /storage is full/);
      assert.deepEqual(
        problemsWith(answer).filter((p) => !p.startsWith("status")),
        [],
      );
    }

    // Reads: retrieves and access checks answer; the key's per-minute limit stays exact.
    await awayFromWindowEdges();
    const retrieves = await inFlight(Array.from({ length: KEY_REQUESTS_PER_MIN + 10 }, () => () => retrieve(burstKey.key, holder)));
    const checks = await inFlight(Array.from({ length: 20 }, () => check));
    const statuses = (answers: HttpAnswer[]) => {
      const counted: Record<number, number> = {};
      for (const { status } of answers) counted[status] = (counted[status] ?? 0) + 1;
      return counted;
    };
    assert.deepEqual(
      statuses(retrieves),
      { 200: KEY_REQUESTS_PER_MIN, 429: 10 },
      JSON.stringify(retrieves.find((a) => a.status !== 200 && a.status !== 429)?.body),
    );
    assert.deepEqual(statuses(checks), { 200: 20 });
    const scope = `key-requests:${burstKey.id}`;
    const storedDuring = await shared.services.db.selectFrom("counters").select("count").where("scope", "=", scope).executeTakeFirst();
    assert.equal(storedDuring, undefined, "the key's counts were held, not stored");

    // Room back: writes succeed with no restart, and the held counts reach the database.
    rmSync(filler);
    const after = await grant(ws.testKey, `${unique("after")}@example.com`);
    assert.equal(after.status, 201, after.body);
    acknowledged.push((after.json as { id: string }).id);
    const storedAfter = await shared.services.db.selectFrom("counters").select("count").where("scope", "=", scope).executeTakeFirst();
    assert.equal(storedAfter?.count, KEY_REQUESTS_PER_MIN);
    assert.equal((await retrieve(burstKey.key, holder)).status, 429, "the limit holds across the write of the held counts");
    assert.equal((await check()).status, 200);

    // Every acknowledged write is there, none of the refused ones; and after a restart
    // the database opens cleanly.
    const server = shared.servers[0];
    assert.ok(server);
    const stopped = new Promise((resolve) => server.child.once("exit", resolve));
    server.child.kill("SIGTERM");
    await stopped;
    await shared.restart();
    base = shared.servers[0]?.baseUrl ?? "";
    const integrity = await sql<{ integrity_check: string }>`pragma integrity_check`.execute(shared.services.db);
    assert.deepEqual(
      integrity.rows.map((r) => r.integrity_check),
      ["ok"],
    );
    const stored = await shared.services.db.selectFrom("grants").select("id").where("workspace_id", "=", ws.workspaceId).execute();
    assert.deepEqual(new Set(stored.map((r) => r.id)), new Set(acknowledged));
    assert.equal((await retrieve(ws.testKey, holder)).status, 200);
    assert.equal((await grant(ws.testKey, `${unique("restarted")}@example.com`)).status, 201);
    recordFigures("disk-full", {
      refusedWrites: refusedEmails.length,
      retrieves: statuses(retrieves),
      checks: statuses(checks),
      seconds: Math.round((Date.now() - started) / 1000),
    });
  });
});
