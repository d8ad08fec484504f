// Spending a meter exactly across FOUR `warden serve` processes over one database, on
// SQLite (one file, WAL) and PostgreSQL: one person holds exactly 1,000 units (a free
// allowance of 400 a month and 600 credits), far more spends of 1 than that arrive at
// once over 100 connections, and exactly 1,000 are allowed, each seeing a different
// balance, the rest refused with 402. The database decides: every spend takes its
// meter's lock row first (src/usage/usage.store.ts, lockMeter).
import assert from "node:assert/strict";
import { before, describe, test } from "node:test";
import { systemClock } from "../src/clock.js";
import { ensurePerson } from "../src/customers/person.store.js";
import { DIALECTS, unique } from "../src/test-support/harness.js";
import { seedUsageCatalogue } from "../src/test-support/usage.js";
import {
  awayFromWindowEdges,
  bySize,
  type HttpAnswer,
  http,
  inFlight,
  problemsWith,
  recordFigures,
  type SharedDatabase,
  sharedDatabase,
} from "./fault-support.js";

const PROCESSES = 4;
const CONNECTIONS = 100;
const FREE = 400;
const CREDITS = 600;
const BALANCE = FREE + CREDITS;
const ATTEMPTS = bySize({ smoke: 1_300, default: 2_000, large: 5_000 });

for (const dialect of DIALECTS) {
  describe(`spending one person's meter across ${PROCESSES} warden serve processes (${dialect})`, () => {
    let shared: SharedDatabase;
    before(async () => {
      shared = await sharedDatabase(dialect, PROCESSES, { WARDEN_LIMIT_KEY_REQUESTS_PER_MIN: "1000000", WARDEN_DELIVERY_WORKER: "0" });
    });

    test(`a balance of exactly ${BALANCE}: ${ATTEMPTS} spends of 1 over ${CONNECTIONS} connections allow exactly ${BALANCE}, the rest 402`, async () => {
      const { db } = shared.services;
      const ws = await seedUsageCatalogue(shared.services);
      await db.updateTable("tool_meters").set({ free_allowance: FREE }).where("workspace_id", "=", ws.workspaceId).execute();
      const email = `${unique("spender")}@example.com`;
      // The free allowance is per calendar month (UTC): not across a month's end.
      await awayFromWindowEdges(120_000);
      const person = await ensurePerson(db, ws.workspaceId, "test", email, systemClock.now());
      await db
        .insertInto("meter_credits")
        .values({
          id: unique("crd"),
          workspace_id: ws.workspaceId,
          env: "test",
          person_id: person.id,
          tool_id: "tabmaster",
          meter_id: "summaries",
          licence_id: null,
          amount: CREDITS,
          remaining: CREDITS,
          expires_at: null,
          note: "faults",
          created_at: systemClock.now(),
        })
        .execute();
      const key = await shared.newKey(ws.slug);
      const path = `/api/v1/tools/tabmaster/customers/${encodeURIComponent(email)}/usage`;

      const started = performance.now();
      const answers: HttpAnswer[] = await inFlight(
        Array.from({ length: ATTEMPTS }, (_, i) => () => {
          const server = shared.servers[i % shared.servers.length];
          assert.ok(server);
          return http(server.baseUrl, "POST", path, { key, body: { meter: "summaries", quantity: 1 } });
        }),
        CONNECTIONS,
      );
      const seconds = (performance.now() - started) / 1000;

      const broken = answers.flatMap((a) => problemsWith(a).map((p) => `${p}: ${a.body.slice(0, 200)}`));
      assert.deepEqual(broken.slice(0, 5), [], `${broken.length} answers broke a promise`);
      const allowed = answers.filter((a) => a.status === 200);
      const refused = answers.filter((a) => a.status === 402);
      assert.deepEqual(
        answers.filter((a) => a.status !== 200 && a.status !== 402).map((a) => `${a.status} ${a.body.slice(0, 200)}`),
        [],
      );
      assert.equal(allowed.length, BALANCE, "exactly the balance is allowed");
      assert.equal(refused.length, ATTEMPTS - BALANCE);
      // Each allowed spend saw its own balance: what was left after it runs through 999 … 0 once each.
      const left = allowed.map((a) => (a.json as { remaining: number }).remaining).sort((x, y) => x - y);
      assert.deepEqual(
        left,
        Array.from({ length: BALANCE }, (_, i) => i),
      );
      assert.ok(refused.every((a) => (a.json as { error: { type: string; usage: { remaining: number } } }).error.usage.remaining === 0));

      const used = await db.selectFrom("meter_usage").select(["bucket", "used"]).where("workspace_id", "=", ws.workspaceId).execute();
      assert.deepEqual(
        used.map((r) => [r.bucket, Number(r.used)]),
        [["free", FREE]],
      );
      const credits = await db.selectFrom("meter_credits").select("remaining").where("workspace_id", "=", ws.workspaceId).execute();
      assert.deepEqual(
        credits.map((c) => Number(c.remaining)),
        [0],
      );
      recordFigures(`usage spend exact (${dialect})`, {
        processes: PROCESSES,
        connections: CONNECTIONS,
        attempts: ATTEMPTS,
        allowed: allowed.length,
        refused: refused.length,
        seconds: Number(seconds.toFixed(2)),
        perSecond: Math.round(ATTEMPTS / seconds),
      });
    });
  });
}
