// A dispute opened, or a full refund made, while a spend is under way (both engines): no
// spend is accepted after the change that takes away the licence paying for it commits.
// On PostgreSQL the spend is held between its read of the sources and its writes by
// another connection's open transaction (as another process's would), and the change
// comes in meanwhile: it waits on the meter's lock the spend holds, so the spend commits
// first (it paid from a licence still held); the next spend finds the licence gone.
// SQLite's one writer orders the two whole transactions already: sent at once, either
// comes wholly before the other.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { sql } from "kysely";
import pg from "pg";
import { DIALECTS, PG_URL, testApi, testServices } from "../test-support/harness.js";
import { chargeObject, connectTestStripe, deliver, disputeObject, paymentSession, stripeEvent, stripeId } from "../test-support/stripe.js";
import { seedUsageCatalogue } from "../test-support/usage.js";

const NOV_20 = Date.parse("2026-11-20T10:00:00.000Z");
const EMAIL = "ada@example.com";
const path = `/api/v1/tools/tabmaster/customers/${encodeURIComponent(EMAIL)}/usage`;

/** Ada holds the lifetime plan (100 summaries a month; 10 free to someone who holds nothing) and has spent 1 of it. */
async function bed(dialect: (typeof DIALECTS)[number]) {
  const { services, clock } = await testServices(dialect);
  clock.set(NOV_20);
  const ws = await seedUsageCatalogue(services);
  const api = await testApi(services);
  const secret = await connectTestStripe(services, ws);
  const send = (type: string, object: Record<string, unknown>) => deliver(api, ws, secret, stripeEvent(type, object, { now: clock.now() }), clock.now());
  const paymentIntent = stripeId("pi");
  const session = paymentSession({
    email: EMAIL,
    metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" },
    amount: 4900,
    paymentIntent,
    now: clock.now(),
  });
  assert.equal(await send("checkout.session.completed", session), "applied");
  const spend = (quantity: number) => api.request({ method: "POST", url: path, key: ws.testKey, payload: { meter: "summaries", quantity } });
  const first = await spend(1);
  assert.equal(first.statusCode, 200, first.body);
  const person = await services.db
    .selectFrom("people")
    .select("id")
    .where("workspace_id", "=", ws.workspaceId)
    .where("email", "=", EMAIL)
    .executeTakeFirstOrThrow();
  const takeAway = {
    dispute: () => send("charge.dispute.created", disputeObject({ id: stripeId("du"), paymentIntent, amount: 4900, status: "needs_response" })),
    refund: () => send("charge.refunded", chargeObject({ paymentIntent, amount: 4900, amountRefunded: 4900 })),
  };
  return { services, ws, spend, takeAway, personId: person.id };
}

/** A PostgreSQL connection of its own, on the test's schema: another process. */
async function otherConnection(schema: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query(`set search_path = ${schema}`);
  return client;
}

/** The backends waiting on a lock `pid` holds, as `watcher` sees them now. */
async function backendsHeldBy(watcher: pg.Client, pid: number): Promise<number[]> {
  const { rows } = await watcher.query<{ pid: number }>("select pid from pg_stat_activity where $1 = any(pg_blocking_pids(pid))", [pid]);
  return rows.map((r) => r.pid);
}

const CHANGES = [
  { change: "dispute", what: "a dispute opened", status: "suspended" },
  { change: "refund", what: "a full refund", status: "revoked" },
] as const;

for (const dialect of DIALECTS) {
  describe(`usage: the licence paying for a spend taken away during it (${dialect})`, () => {
    for (const { change, what, status } of CHANGES)
      test(`${what}: a spend past its read of the sources commits first; the next spend is refused`, async () => {
        const t = await bed(dialect);
        const takeAway = t.takeAway[change];
        const settled: string[] = [];
        if (dialect === "sqlite") {
          const [spent, changed] = await Promise.all([t.spend(50).finally(() => settled.push("spend")), takeAway().finally(() => settled.push("change"))]);
          assert.equal(changed, "applied");
          // Whichever transaction the one writer took first, the other came after it whole.
          if (spent.statusCode === 200) assert.deepEqual(settled, ["spend", "change"]);
          else assert.equal(spent.json().error.usage.allowance, 10, `the ${change} came first: only the free allowance was left`);
        } else {
          const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(t.services.db);
          const schema = String(rows[0]?.schema);
          const blocker = await otherConnection(schema);
          const watcher = await otherConnection(schema);
          try {
            // The other process holds Ada's row of what she used: the spend reads her sources, then waits to write it.
            await blocker.query("begin");
            await blocker.query("select used from meter_usage where person_id = $1 for update", [t.personId]);
            const blockerPid = (await blocker.query<{ pid: number }>("select pg_backend_pid() as pid")).rows[0]?.pid as number;
            const spending = t.spend(50).finally(() => settled.push("spend"));
            let spender: number | undefined;
            while (spender === undefined) [spender] = await backendsHeldBy(watcher, blockerPid);

            // The change comes in now: it commits at once (the defect), or waits on the spend.
            const changing = takeAway().finally(() => settled.push("change"));
            let changeWaits = false;
            while (!changeWaits && !settled.includes("change")) changeWaits = (await backendsHeldBy(watcher, spender)).length > 0;
            const committedDuringSpend = settled.includes("change");
            await blocker.query("rollback");
            const [spent, changed] = await Promise.all([spending, changing]);
            assert.equal(changed, "applied");
            assert.equal(spent.statusCode, 200, spent.body);
            assert.equal(committedDuringSpend, false, `the ${change} committed while the spend was under way, and the spend was then accepted`);
            assert.ok(changeWaits, `the ${change} waited on the spend's meter lock`);
          } finally {
            await blocker.query("rollback").catch(() => {});
            await blocker.end();
            await watcher.end();
          }
        }
        const licence = await t.services.db.selectFrom("licences").select("status").where("workspace_id", "=", t.ws.workspaceId).executeTakeFirstOrThrow();
        assert.equal(licence.status, status);
        // Suspended or revoked, the licence pays nothing: 50 is more than the 10 free.
        const after = await t.spend(50);
        assert.equal(after.statusCode, 402, after.body);
        assert.equal(after.json().error.usage.allowance, 10);
      });
  });
}
