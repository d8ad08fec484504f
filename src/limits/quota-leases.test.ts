import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { MINUTE_MS } from "../clock.js";
import type { Executor } from "../db/database.js";
import { fillDiskFor } from "../test-support/full-disk.js";
import { DIALECTS, seedWorkspace, testApi, testServices, unique } from "../test-support/harness.js";
import { readCounter } from "./counter.store.js";
import { LimitsService } from "./limits.service.js";
import { IDLE_MS, type LeasedQuota, MAX_BLOCK, QuotaLeases } from "./quota-leases.js";

const lookupsShown = async (limits: LimitsService, ex: Executor, workspaceId: string) =>
  (await limits.readDailyUsage(ex, { workspaceId, env: "test" }, NOW)).find((u) => u.what === "Customer lookups")?.used;

const NOW = Date.UTC(2026, 10, 23, 12, 0, 15);
const WINDOW_END = Date.UTC(2026, 10, 23, 12, 1, 0);
const quota = (scope: string, limit: number, now = NOW): LeasedQuota => ({
  scope,
  limit,
  nextWindowEnd: Math.floor(now / MINUTE_MS) * MINUTE_MS + MINUTE_MS,
});
/** A leaser as a process has one: nothing held from a full disk to write first. */
const leaser = (dialect: "sqlite" | "postgres") => new QuotaLeases(dialect, async () => true);

async function admitted(leases: QuotaLeases, ex: Executor, quotas: LeasedQuota[], requests: number, now = NOW): Promise<number> {
  const outcomes = await Promise.all(Array.from({ length: requests }, () => leases.count(ex, quotas, 1, now)));
  return outcomes.filter((o) => o && !o.refused).length;
}

for (const dialect of DIALECTS) {
  describe(`quota leased in blocks (${dialect})`, () => {
    test("a block is half of what is left, at most 64 (MAX_BLOCK); the counter holds the block, and the next requests write nothing", async () => {
      const { services } = await testServices(dialect);
      const leases = leaser(dialect);
      const small = unique("small");
      const large = unique("large");

      assert.equal((await leases.count(services.db, [quota(small, 20)], 1, NOW))?.refused, false);
      assert.equal((await readCounter(services.db, small, NOW)).count, 10, "a block of 20 / 2");
      assert.equal(leases.unspent(small, WINDOW_END), 9);
      assert.equal((await leases.count(services.db, [quota(large, 100_000)], 1, NOW))?.refused, false);
      assert.equal((await readCounter(services.db, large, NOW)).count, 64, "a block of at most 64, not 100,000 / 2");

      // Nine more requests come from the block: the counter does not move.
      assert.equal(await admitted(leases, services.db, [quota(small, 20)], 9), 9);
      assert.equal((await readCounter(services.db, small, NOW)).count, 10);
      assert.equal(leases.unspent(small, WINDOW_END), 0);
    });

    test("blocks shrink as the window fills, to one unit at the end, and exactly the limit is admitted", async () => {
      const { services } = await testServices(dialect);
      const leases = leaser(dialect);
      const scope = unique("shrink");
      const counts: number[] = [];
      for (let i = 0; i < 25; i++) {
        const outcome = await leases.count(services.db, [quota(scope, 20)], 1, NOW);
        assert.equal(outcome?.refused, i >= 20, `request ${i}`);
        counts.push((await readCounter(services.db, scope, NOW)).count);
      }
      // Blocks of 10, 5, 2, 1, 1, 1: each half of what is left (at least one).
      assert.deepEqual([...new Set(counts)], [10, 15, 17, 18, 19, 20]);
      assert.deepEqual(leases.figures, { counters: 1, unspent: 0, blocksTaken: 6, unitsTaken: 20 });
      const refused = await leases.count(services.db, [quota(scope, 20)], 1, NOW);
      assert.deepEqual(refused?.states, [{ count: 21, windowEnd: WINDOW_END }]);
    });

    test("/metrics shows the blocks taken, the units they brought and the units held unspent", async () => {
      const { services, clock } = await testServices(dialect);
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      for (let i = 0; i < 3; i++) {
        // An address with no customer is a lookup all the same, counted as one.
        const r = await api.request({ url: `/api/v1/tools/${ws.tool}/customers/nobody${i}@example.com`, key: ws.testKey });
        assert.equal(r.statusCode, 404, r.body);
      }
      const { blocksTaken, unitsTaken, unspent } = services.limits.leaseFigures;
      // Each retrieve spends one unit of each leased quota it counts against (the key's requests, the lookups).
      const spent = unitsTaken - unspent;
      assert.ok(blocksTaken >= 1 && spent >= 3 && spent % 3 === 0, JSON.stringify(services.limits.leaseFigures));
      const text = await services.metrics.render();
      assert.match(text, new RegExp(`^warden_quota_lease_blocks_total ${blocksTaken}$`, "m"));
      assert.match(text, new RegExp(`^warden_quota_lease_units_total ${unitsTaken}$`, "m"));
      assert.match(text, new RegExp(`^warden_quota_leased_units_unspent ${unspent}$`, "m"));
      // At close every block goes back: nothing is held unspent.
      await services.limits.close(services.db, clock.now());
      assert.match(await services.metrics.render(), /^warden_quota_leased_units_unspent 0$/m);
    });

    test("what is left is split by the processes seen taking from the counter", async () => {
      const { services } = await testServices(dialect);
      const [a, b] = [leaser(dialect), leaser(dialect)];
      const scope = unique("split");
      await a.count(services.db, [quota(scope, 1000)], 1, NOW); // 64 (1000 / 2 is more)
      await b.count(services.db, [quota(scope, 1000)], 1, NOW); // 64: b has not seen a yet
      assert.equal((await readCounter(services.db, scope, NOW)).count, 128);
      // Each learns of the other from the counter (its takers) when it next takes: then what is left is split by four.
      const tight = unique("tight");
      await a.count(services.db, [quota(tight, 40)], 1, NOW); // 20: 40 / 2
      await b.count(services.db, [quota(tight, 40)], 1, NOW); // 10: 20 / 2, and b has seen a
      assert.equal(await admitted(a, services.db, [quota(tight, 40)], 19), 19);
      await a.count(services.db, [quota(tight, 40)], 1, NOW); // 5: 10 / 2, and a has seen b
      assert.equal(await admitted(a, services.db, [quota(tight, 40)], 4), 4);
      await a.count(services.db, [quota(tight, 40)], 1, NOW); // 1: 5 / 4 (alone it would have been 2)
      assert.equal((await readCounter(services.db, tight, NOW)).count, 36);
    });

    test("unspent units go back when idle and at close, and a block in use is kept", async () => {
      const { services } = await testServices(dialect);
      const leases = leaser(dialect);
      const [idle, busy] = [unique("idle"), unique("busy")];
      assert.equal(await admitted(leases, services.db, [quota(idle, 100)], 3), 3);
      assert.equal(await admitted(leases, services.db, [quota(busy, 100)], 1), 1);
      assert.equal((await readCounter(services.db, idle, NOW)).count, 50);

      await leases.giveBack(NOW + IDLE_MS - 1);
      assert.equal((await readCounter(services.db, idle, NOW)).count, 50, "not idle yet");
      assert.equal(await admitted(leases, services.db, [quota(busy, 100)], 1, NOW + IDLE_MS), 1);
      await leases.giveBack(NOW + IDLE_MS);
      assert.equal((await readCounter(services.db, idle, NOW)).count, 3, "the spent units stay counted");
      assert.equal((await readCounter(services.db, busy, NOW)).count, 50, "drawn from a moment ago");
      assert.equal(leases.unspent(idle, WINDOW_END), 0);

      await leases.giveBack(NOW + IDLE_MS, 0);
      assert.equal((await readCounter(services.db, busy, NOW)).count, 2);
      // A pool given back takes a new block on its next request.
      assert.equal(await admitted(leases, services.db, [quota(idle, 100)], 1, NOW + IDLE_MS), 1);
      assert.equal((await readCounter(services.db, idle, NOW)).count, 3 + 48);
    });

    test("the last give-back at shutdown, asked while an idle sweep is under way, still gives back every block", async () => {
      const { services } = await testServices(dialect);
      const leases = leaser(dialect);
      const [idle, busy] = [unique("idle"), unique("busy")];
      assert.equal(await admitted(leases, services.db, [quota(idle, 100)], 1), 1);
      assert.equal(await admitted(leases, services.db, [quota(busy, 100)], 1, NOW + IDLE_MS), 1);
      const sweep = leases.giveBack(NOW + IDLE_MS);
      const last = leases.giveBack(NOW + IDLE_MS, 0);
      await Promise.all([sweep, last]);
      assert.equal((await readCounter(services.db, idle, NOW)).count, 1);
      assert.equal((await readCounter(services.db, busy, NOW)).count, 1);
    });

    test("a new window drops the old block, and a return for a closed window leaves the new one alone", async () => {
      const { services } = await testServices(dialect);
      const leases = leaser(dialect);
      const scope = unique("roll");
      assert.equal(await admitted(leases, services.db, [quota(scope, 10)], 10), 10);
      assert.equal(await admitted(leases, services.db, [quota(scope, 10)], 1, WINDOW_END - 1), 0);

      const next = WINDOW_END + 5_000;
      assert.equal(await admitted(leases, services.db, [quota(scope, 10, next)], 2, next), 2);
      assert.deepEqual(await readCounter(services.db, scope, next), { count: 5, windowEnd: WINDOW_END + MINUTE_MS });
      await leases.giveBack(next + IDLE_MS);
      assert.equal((await readCounter(services.db, scope, next)).count, 2);
      // Past the second window: the pool is forgotten, and nothing is given back into a window it did not take from.
      await leases.giveBack(WINDOW_END + MINUTE_MS);
      assert.equal(leases.size, 0);
    });

    test("a request of several quotas spends from all or none: refused by one, it leaves the other's block for the next", async () => {
      const { services } = await testServices(dialect);
      const leases = leaser(dialect);
      const [owner, workspace] = [unique("owner"), unique("ws")];
      const both = [quota(workspace, 100), quota(owner, 3)];
      assert.equal(await admitted(leases, services.db, both, 5), 3);
      const refused = await leases.count(services.db, both, 1, NOW);
      assert.equal(refused?.refused, true);
      // The quota over is the one whose count passes its limit.
      assert.ok((refused?.states?.[1]?.count ?? 0) > 3 && (refused?.states?.[0]?.count ?? 0) <= 100, JSON.stringify(refused?.states));
      await leases.giveBack(NOW, 0);
      assert.equal((await readCounter(services.db, workspace, NOW)).count, 3, "only the admitted requests stay counted");
    });

    test("eight processes of 30 concurrent requests against 100: never more than 100, less only by the blocks stranded, exact once given back", async () => {
      const { services } = await testServices(dialect);
      const scope = unique("race");
      const processes = Array.from({ length: 8 }, () => leaser(dialect));
      const counts = await Promise.all(processes.map((leases) => admitted(leases, services.db, [quota(scope, 100)], 30)));
      const total = counts.reduce((a, b) => a + b, 0);
      const stranded = processes.reduce((sum, leases) => sum + leases.unspent(scope, WINDOW_END), 0);
      assert.ok(total <= 100, `${total} admitted`);
      assert.equal(total + stranded, 100, `${total} admitted, ${stranded} stranded`);
      // A process with requests left never strands: each that was refused holds nothing.
      for (const [i, leases] of processes.entries()) if ((counts[i] ?? 0) < 30) assert.equal(leases.unspent(scope, WINDOW_END), 0, `process ${i}`);

      await Promise.all(processes.map((leases) => leases.giveBack(NOW, 0)));
      assert.equal((await readCounter(services.db, scope, NOW)).count, total);
      // What was given back is admitted again, up to the limit and no further.
      const again = leaser(dialect);
      assert.equal(await admitted(again, services.db, [quota(scope, 100)], 100), 100 - total);
    });

    test("a process that stops without giving back strands its block until the window ends, and no more", async () => {
      const { services } = await testServices(dialect);
      const scope = unique("crash");
      const crashed = leaser(dialect);
      assert.equal(await admitted(crashed, services.db, [quota(scope, 30)], 1), 1);
      const stranded = crashed.unspent(scope, WINDOW_END);
      assert.equal(stranded, 14);
      const survivor = leaser(dialect);
      assert.equal(await admitted(survivor, services.db, [quota(scope, 30)], 40), 30 - 1 - stranded);
      const next = WINDOW_END + 1;
      assert.equal(await admitted(survivor, services.db, [quota(scope, 30, next)], 40, next), 30);
    });

    test("shown usage: this process's unspent blocks are left out, another's show as used until it gives them back", async () => {
      const { services, config } = await testServices(dialect);
      const [a, b] = [new LimitsService(config.limits, dialect), new LimitsService(config.limits, dialect)];
      const subject = { workspaceId: unique("ws"), env: "test" as const, ownerIds: [unique("owner")] };
      await a.countLookup(services.db, subject, NOW);
      await a.countLookup(services.db, subject, NOW);
      await b.countLookup(services.db, subject, NOW);
      assert.ok(config.limits.lookupsPerDay > 4 * MAX_BLOCK, "the default lookups limit leaves room for full blocks");
      // Each took a block of 64: a spent two of its own, b one. Each shows the 3 spent and the other's 63 or 62 unspent.
      assert.equal(await lookupsShown(a, services.db, subject.workspaceId), 66);
      assert.equal(await lookupsShown(b, services.db, subject.workspaceId), 65);
      await b.close(services.db, NOW);
      assert.equal(await lookupsShown(a, services.db, subject.workspaceId), 3);
      await a.close(services.db, NOW);
      assert.equal((await readCounter(services.db, `lookups:${subject.workspaceId}:test`, NOW)).count, 3);
    });

    test("with the storage full, the block in hand is spent; past it the caller counts the old way", async () => {
      const { services } = await testServices(dialect);
      const leases = leaser(dialect);
      const scope = unique("full-lease");
      assert.equal(await admitted(leases, services.db, [quota(scope, 10)], 1), 1);
      const giveRoomBack = await fillDiskFor(services.db, dialect, "counters", "full-lease%");
      try {
        assert.equal(await admitted(leases, services.db, [quota(scope, 10)], 4), 4, "from the block of 5");
        assert.equal(await leases.count(services.db, [quota(scope, 10)], 1, NOW), null);
      } finally {
        await giveRoomBack();
      }
      assert.equal((await readCounter(services.db, scope, NOW)).count, 5);
      // Counts held from the full disk are written before a block is taken; while they cannot be, nothing is leased.
      const holding = new QuotaLeases(dialect, async () => false);
      assert.equal(await holding.count(services.db, [quota(unique("held"), 10)], 1, NOW), null);
    });
  });
}
