import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { sql } from "kysely";
import { ManualClock } from "../clock.js";
import { type Dialect, migrateToLatest, openStorage, type Storage } from "../db/database.js";
import { createPgSchema, DIALECTS, PG_URL, unique } from "../test-support/harness.js";
import { createKey, createOwner, createWorkspace, revokeKey, setOwnerSuspension } from "../workspaces/workspace.service.js";
import { findKeyWithOwners } from "./key.store.js";

const hashOf = (key: string) => createHash("sha256").update(key).digest("hex");

/**
 * Two connections to one database, as two processes have (`warden serve` and the CLI):
 * `server` answers requests and remembers keys, `other` writes behind its back. The
 * server's statements are recorded.
 */
async function twoProcesses(dialect: Dialect): Promise<{ server: Storage; other: Storage; statements: string[] }> {
  const statements: string[] = [];
  const onQuery = (text: string) => statements.push(text);
  let server: Storage;
  let other: Storage;
  if (dialect === "sqlite") {
    const dir = await mkdtemp(join(tmpdir(), "warden-keys-"));
    const sqliteFile = join(dir, "warden.sqlite");
    server = openStorage({ databaseUrl: null, sqliteFile, onQuery });
    other = openStorage({ databaseUrl: null, sqliteFile });
    after(() => rm(dir, { recursive: true, force: true }));
  } else {
    const pgSchema = await createPgSchema();
    server = openStorage({ databaseUrl: PG_URL, pgSchema, poolSize: 2, onQuery });
    other = openStorage({ databaseUrl: PG_URL, pgSchema, poolSize: 2 });
  }
  after(async () => {
    await server.close();
    await other.close();
  });
  await migrateToLatest(other.db, dialect);
  return { server, other, statements };
}

async function seedKey(storage: Storage, clock: ManualClock) {
  const ownerEmail = `${unique("owner")}@example.com`;
  await createOwner(storage.db, clock, { email: ownerEmail });
  const slug = unique("ws");
  const workspace = await createWorkspace(storage.db, clock, { slug, name: "Keys", ownerEmail, plan: "pro" });
  const created = await createKey(storage.db, clock, { workspace: slug, env: "live" });
  return { ownerEmail, slug, workspaceId: workspace.id, keyId: created.id, hash: hashOf(created.key) };
}

const joinsKeys = (statement: string) => statement.includes("api_keys");

for (const dialect of DIALECTS) {
  describe(`key lookup across processes (${dialect})`, () => {
    test("a key revoked by another process is refused on the next lookup", async () => {
      const { server, other } = await twoProcesses(dialect);
      const clock = new ManualClock();
      const seeded = await seedKey(other, clock);
      const query = { hash: seeded.hash, sourceScope: `wrong-keys:${unique("src")}` };

      for (let i = 0; i < 3; i++) assert.equal((await findKeyWithOwners(server.db, query)).key?.revokedAt, null);
      await revokeKey(other.db, clock, { id: seeded.keyId });
      assert.equal((await findKeyWithOwners(server.db, query)).key?.revokedAt, clock.now());
    });

    test("an owner suspended, a plan changed or an owner added by another process is seen on the next lookup", async () => {
      const { server, other } = await twoProcesses(dialect);
      const clock = new ManualClock();
      const seeded = await seedKey(other, clock);
      const query = { hash: seeded.hash, sourceScope: `wrong-keys:${unique("src")}` };
      await findKeyWithOwners(server.db, query);

      await setOwnerSuspension(other.db, clock, { email: seeded.ownerEmail, suspended: true });
      assert.deepEqual(
        (await findKeyWithOwners(server.db, query)).owners.map((o) => o.suspended),
        [true],
      );
      await setOwnerSuspension(other.db, clock, { email: seeded.ownerEmail, suspended: false });
      assert.deepEqual(
        (await findKeyWithOwners(server.db, query)).owners.map((o) => o.suspended),
        [false],
      );

      // An operator's own SQL counts as much as a use case's.
      await sql`update workspaces set plan = 'hobby' where id = ${seeded.workspaceId}`.execute(other.db);
      assert.equal((await findKeyWithOwners(server.db, query)).key?.workspacePlan, "hobby");

      const second = await createOwner(other.db, clock, { email: `${unique("owner")}@example.com` });
      await sql`insert into workspace_owners (workspace_id, owner_id) values (${seeded.workspaceId}, ${second.id})`.execute(other.db);
      assert.equal((await findKeyWithOwners(server.db, query)).owners.length, 2);
      await sql`delete from workspace_owners where owner_id = ${second.id}`.execute(other.db);
      assert.equal((await findKeyWithOwners(server.db, query)).owners.length, 1);
    });

    test("the source's wrong-key count is read afresh on every lookup", async () => {
      const { server, other } = await twoProcesses(dialect);
      const clock = new ManualClock();
      const seeded = await seedKey(other, clock);
      const scope = `wrong-keys:${unique("src")}`;
      const query = { hash: seeded.hash, sourceScope: scope };
      assert.equal((await findKeyWithOwners(server.db, query)).source, null);
      await sql`insert into counters (scope, window_end, count) values (${scope}, ${clock.now() + 60_000}, 7)`.execute(other.db);
      assert.deepEqual((await findKeyWithOwners(server.db, query)).source, { count: 7, windowEnd: clock.now() + 60_000 });
    });

    test("every write to keys, workspaces, their owners and owners raises auth_version, in the writing transaction", async () => {
      const { other } = await twoProcesses(dialect);
      const clock = new ManualClock();
      const version = async () => Number((await sql<{ version: number }>`select version from auth_version where id = 1`.execute(other.db)).rows[0]?.version);
      const before = await version();
      const seeded = await seedKey(other, clock); // an owner, a workspace and its owner, a key
      const afterSeed = await version();
      assert.ok(afterSeed >= before + 4, `${before} -> ${afterSeed}`);

      await sql`update api_keys set name = 'renamed' where id = ${seeded.keyId}`.execute(other.db);
      assert.equal(await version(), afterSeed + 1);
      await other.db
        .transaction()
        .execute(async (trx) => {
          await sql`update owners set suspended_at = 1 where email = ${seeded.ownerEmail}`.execute(trx);
          throw new Error("rolled back");
        })
        .catch(() => {});
      assert.equal(await version(), afterSeed + 1, "a rolled-back write leaves the version alone");
      await sql`delete from api_keys where id = ${seeded.keyId}`.execute(other.db);
      assert.equal(await version(), afterSeed + 2);
    });
  });

  describe(`remembered keys (${dialect})`, () => {
    test("a key found once is checked by the version and the source's counter alone, until a write raises the version", async () => {
      const { server, other, statements } = await twoProcesses(dialect);
      const clock = new ManualClock();
      const seeded = await seedKey(other, clock);
      const query = { hash: seeded.hash, sourceScope: `wrong-keys:${unique("src")}` };

      statements.length = 0;
      await findKeyWithOwners(server.db, query);
      assert.deepEqual(statements.map(joinsKeys), [true]);
      statements.length = 0;
      const again = await findKeyWithOwners(server.db, query);
      assert.deepEqual(statements.map(joinsKeys), [false]);
      assert.equal(again.key?.id, seeded.keyId);
      assert.equal(again.owners.length, 1);

      await createKey(other.db, clock, { workspace: seeded.slug, env: "test" });
      statements.length = 0;
      await findKeyWithOwners(server.db, query);
      assert.deepEqual(statements.map(joinsKeys), [false, true], "the version moved: the whole lookup is read again");
    });

    test("an unknown key is never remembered", async () => {
      const { server, statements } = await twoProcesses(dialect);
      const query = { hash: hashOf(`wk_live_${unique("nokey")}`), sourceScope: `wrong-keys:${unique("src")}` };
      for (let i = 0; i < 2; i++) {
        statements.length = 0;
        assert.equal((await findKeyWithOwners(server.db, query)).key, null);
        assert.deepEqual(statements.map(joinsKeys), [true]);
      }
    });
  });
}
