import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { sql } from "kysely";
import { ManualClock } from "../clock.js";
import { parseConfig } from "../config.js";
import { type Dialect, migrateToLatest, openStorage, type Storage } from "../db/database.js";
import { LimitsService } from "../limits/limits.service.js";
import { createPgSchema, DIALECTS, PG_URL, unique } from "../test-support/harness.js";
import { createKey, createOwner, createWorkspace, revokeKey, setOwnerSuspension } from "../workspaces/workspace.service.js";
import { authVersionTicket, findKeyWithOwners, forgetAuthVersion, trustAuthVersion } from "./key.store.js";
import { watchKeys } from "./key-watch.js";

// Warden's default limits: 30 wrong keys a minute from one address.
const LIMITS = parseConfig({}).limits;
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

  describe(`keys trusted between two reads of the key watch (${dialect})`, () => {
    test("a remembered key is answered with no statement while the watch's version holds; a revocation elsewhere is refused after the watch's next read", async () => {
      const { server, other, statements } = await twoProcesses(dialect);
      const clock = new ManualClock();
      const limits = new LimitsService(LIMITS, dialect);
      const seeded = await seedKey(other, clock);
      const query = { hash: seeded.hash, sourceScope: `wrong-keys:${unique("src")}` };
      await findKeyWithOwners(server.db, query, clock.now());
      await watchKeys(server.db, limits, clock);

      statements.length = 0;
      const remembered = await findKeyWithOwners(server.db, query, clock.now());
      assert.equal(remembered.key?.id, seeded.keyId);
      assert.equal(remembered.source, undefined, "the source's counter is not read either");
      assert.deepEqual(statements, [], "no statement at all");

      clock.advance(1_999);
      statements.length = 0;
      await findKeyWithOwners(server.db, query, clock.now());
      assert.deepEqual(statements, [], "trusted for two seconds from the watch's read");
      clock.advance(1);
      await findKeyWithOwners(server.db, query, clock.now());
      assert.deepEqual(statements.map(joinsKeys), [false], "a watch that fell behind is not trusted: the version is read");
      await watchKeys(server.db, limits, clock);

      await revokeKey(other.db, clock, { id: seeded.keyId });
      assert.equal((await findKeyWithOwners(server.db, query, clock.now())).key?.revokedAt, null, "until the watch reads again, the key is as it was");
      await watchKeys(server.db, limits, clock);
      assert.equal(
        (await findKeyWithOwners(server.db, query, clock.now())).key?.revokedAt,
        clock.now(),
        "the watch read the new version: the key is read again",
      );
      forgetAuthVersion(server.db);
    });

    test("a forgetting (this process revoked a key, or the watch lost the database) makes every lookup ask again; a watch read begun before it is not trusted", async () => {
      const { server, other, statements } = await twoProcesses(dialect);
      const clock = new ManualClock();
      const limits = new LimitsService(LIMITS, dialect);
      const seeded = await seedKey(other, clock);
      const query = { hash: seeded.hash, sourceScope: `wrong-keys:${unique("src")}` };
      await findKeyWithOwners(server.db, query, clock.now());
      await watchKeys(server.db, limits, clock);
      forgetAuthVersion(server.db);
      statements.length = 0;
      await findKeyWithOwners(server.db, query, clock.now());
      assert.deepEqual(statements.map(joinsKeys), [false], "the version and the source's counter are read");

      const ticket = authVersionTicket(server.db);
      forgetAuthVersion(server.db);
      const version = Number((await sql<{ version: number }>`select version from auth_version where id = 1`.execute(server.db)).rows[0]?.version);
      trustAuthVersion(server.db, version, ticket, clock.now() + 2_000);
      statements.length = 0;
      await findKeyWithOwners(server.db, query, clock.now());
      assert.equal(statements.length, 1, "the read that began before the forgetting was not trusted");
    });

    test("an address blocked for wrong keys by another process is refused from what the watch read, with no statement", async () => {
      const { server, other } = await twoProcesses(dialect);
      const clock = new ManualClock();
      const limits = new LimitsService(LIMITS, dialect);
      const otherLimits = new LimitsService(LIMITS, dialect);
      const source = unique("203.0.113.");
      const blockedTill = Math.floor(clock.now() / 60_000) * 60_000 + 60_000;
      assert.equal(limits.knowsBlockedSources(clock.now()), false, "before the watch's first read, each request reads its address's count");
      for (let i = 0; i < 29; i++) assert.equal(await otherLimits.countWrongKey(other.db, source, clock.now()), null);
      await watchKeys(server.db, limits, clock);
      assert.equal(limits.knowsBlockedSources(clock.now()), true);
      limits.assertSourceKnownNotBlocked(source, clock.now());
      assert.equal(await otherLimits.countWrongKey(other.db, source, clock.now()), null, "the 30th wrong key is answered 401");
      await watchKeys(server.db, limits, clock);
      assert.throws(
        () => limits.assertSourceKnownNotBlocked(source, clock.now()),
        (error: { code?: string; rateLimit?: { resetAt: number } }) => {
          assert.equal(error.code, "rate_limited");
          assert.equal(error.rateLimit?.resetAt, blockedTill);
          return true;
        },
      );
      clock.advance(blockedTill - clock.now());
      limits.assertSourceKnownNotBlocked(source, clock.now());
      await otherLimits.close(other.db, clock.now());
      await limits.close(server.db, clock.now());
    });
  });
}
