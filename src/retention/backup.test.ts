import assert from "node:assert/strict";
import { copyFile, mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, describe, test } from "node:test";
import { openStorage } from "../db/database.js";
import { runWarden, wardenJson } from "../test-support/cli.js";
import { privateDatabaseEnv, unique } from "../test-support/harness.js";
import { startWarden } from "../test-support/serve.js";

const folders: string[] = [];
after(async () => {
  for (const folder of folders) await rm(folder, { recursive: true, force: true });
});

async function freshFolder(): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), "warden-backup-"));
  folders.push(folder);
  return folder;
}

/** A workspace made with the CLI, as an operator does; answers its slug and test key. */
async function setUp(env: Record<string, string>): Promise<{ slug: string; key: string }> {
  const email = `${unique("o")}@example.com`;
  const slug = unique("ws");
  await wardenJson(env, "admin", "owner", "create", "--email", email);
  await wardenJson(env, "admin", "workspace", "create", "--slug", slug, "--name", "Acme", "--owner", email, "--plan", "pro");
  await wardenJson(env, "admin", "tool", "create", "--workspace", slug, "--id", "tabs", "--name", "Tabs");
  const { key } = await wardenJson(env, "admin", "key", "create", "--workspace", slug, "--env", "test");
  return { slug, key: key as string };
}

describe("warden admin backup", () => {
  test("copies the SQLite database while warden serve writes: a restore holds every write acknowledged before, and no half transaction", async () => {
    const env: Record<string, string> = { ...(await privateDatabaseEnv("sqlite")), WARDEN_DELIVERY_WORKER: "0" };
    const { key } = await setUp(env);
    const server = await startWarden(env);
    const acknowledged: string[] = [];
    let writing = true;
    const writer = async () => {
      while (writing) {
        const email = `${unique("p")}@example.com`;
        const response = await fetch(`${server.baseUrl}/api/v1/tools/tabs/grants`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "idempotency-key": unique("k") },
          body: JSON.stringify({ email, days: 30 }),
        });
        assert.equal(response.status, 201, await response.text());
        acknowledged.push(email);
      }
    };
    const writers = [writer(), writer(), writer(), writer()];
    while (acknowledged.length < 100) await new Promise((resolve) => setTimeout(resolve, 5));

    const before = [...acknowledged];
    const file = join(await freshFolder(), "warden-backup.sqlite");
    const run = await runWarden(env, "admin", "backup", file);
    const duringBackup = acknowledged.length - before.length;
    while (acknowledged.length < before.length + duringBackup + 50) await new Promise((resolve) => setTimeout(resolve, 5));
    writing = false;
    await Promise.all(writers);
    await server.kill();
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^Backed up .*warden\.sqlite to .*warden-backup\.sqlite \(\d+ bytes\)\.\nKeep .*secret\.key with it/);
    // Readable by its owner only, as the key beside the database; nothing half-written left beside it.
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    assert.equal((await stat(join(env.WARDEN_DATA_DIR as string, "secret.key"))).mode & 0o777, 0o600);
    assert.deepEqual(await readdir(dirname(file)), ["warden-backup.sqlite"]);

    // Restored as the README says: the file (and the secret key) into a fresh data folder.
    const restored = await freshFolder();
    await copyFile(file, join(restored, "warden.sqlite"));
    await copyFile(join(env.WARDEN_DATA_DIR as string, "secret.key"), join(restored, "secret.key"));
    const storage = openStorage({ databaseUrl: null, dataDir: restored });
    try {
      const db = storage.db;
      const check = await db.selectNoFrom((eb) => eb.val("x").as("x")).execute();
      assert.equal(check.length, 1);
      const people = new Set((await db.selectFrom("people").select("email").execute()).map((r) => r.email));
      const missing = before.filter((email) => !people.has(email));
      assert.deepEqual(missing, [], "every grant acknowledged before the backup began is in it");
      const grants = await db.selectFrom("grants").innerJoin("people", "people.id", "grants.person_id").select(["grants.id", "people.email"]).execute();
      assert.ok(grants.length >= before.length && grants.length < acknowledged.length, `${grants.length} grants of ${acknowledged.length} written`);
      // Each grant's transaction wrote the grant, its person, its customer row and its
      // idempotency record (claimed, then completed): all of them or none.
      const customers = await db.selectFrom("customers").select("person_id").execute();
      const keys = await db.selectFrom("idempotency_keys").select(["status", "response_body"]).execute();
      assert.equal(customers.length, grants.length);
      assert.equal(keys.length, grants.length);
      assert.deepEqual(
        keys.filter((k) => k.status !== 201),
        [],
      );
      const recorded = new Set(keys.map((k) => (JSON.parse(k.response_body) as { id: string }).id));
      assert.deepEqual(
        grants.filter((g) => !recorded.has(g.id)),
        [],
      );
    } finally {
      await storage.close();
    }

    // And the restored folder serves: a grant written before the backup answers.
    const restoredEnv = { ...env, WARDEN_DATA_DIR: restored };
    const again = await startWarden(restoredEnv);
    try {
      const email = before[0] as string;
      const response = await fetch(`${again.baseUrl}/api/v1/tools/tabs/grants?email=${encodeURIComponent(email)}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      assert.equal(response.status, 200);
      assert.equal(((await response.json()) as { data: unknown[] }).data.length, 1);
    } finally {
      await again.kill();
    }
  });

  test("refuses an existing file, a missing folder, and PostgreSQL with pg_dump's advice", async () => {
    const env = await privateDatabaseEnv("sqlite");
    await setUp(env);
    const folder = await freshFolder();
    const file = join(folder, "one.sqlite");
    assert.equal((await runWarden(env, "admin", "backup", file)).code, 0);
    const again = await runWarden(env, "admin", "backup", file, "--json");
    assert.equal(again.code, 1);
    assert.deepEqual(JSON.parse(again.stderr), {
      error: { type: "invalid_request_error", message: `${file} exists already; give the backup a new file name.`, param: "FILE" },
    });
    const nowhere = await runWarden(env, "admin", "backup", join(folder, "no", "such.sqlite"));
    assert.equal(nowhere.code, 1);
    assert.match(nowhere.stderr, /folder of .* does not exist/);
    assert.equal((await runWarden(env, "admin", "backup")).code, 2);

    const pg = await privateDatabaseEnv("postgres");
    const refused = await runWarden(pg, "admin", "backup", join(folder, "two.sqlite"));
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /PostgreSQL .*pg_dump -Fc .*pg_restore/);
  });
});
