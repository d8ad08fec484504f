// Spends of one person sent at once: a process gathers them into one transaction per
// batch, and each is still decided as if alone and in turn — never more allowed than is
// left, a refusal writing nothing (its Idempotency-Key given back), a retried key counted
// once, a key reused with another body refused. Both engines.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Services } from "../services.js";
import { DIALECTS, testApi, testServices, type Workspace } from "../test-support/harness.js";
import { seedUsageCatalogue } from "../test-support/usage.js";

const NOV_20 = Date.parse("2026-11-20T10:00:00.000Z");
const path = (email: string) => `/api/v1/tools/tabmaster/customers/${encodeURIComponent(email)}/usage`;

/** A workspace selling summaries (10 free a month), on 20 Nov, and spends of one address. */
async function bed(dialect: (typeof DIALECTS)[number], email: string) {
  const { services, clock } = await testServices(dialect);
  clock.set(NOV_20);
  const ws = await seedUsageCatalogue(services);
  const api = await testApi(services);
  const spend = (quantity: number, key?: string) =>
    api.request({
      method: "POST",
      url: path(email),
      key: ws.testKey,
      payload: { meter: "summaries", quantity },
      headers: key ? { "idempotency-key": key } : {},
    });
  const used = async () => (await api.request({ url: path(email), key: ws.testKey })).json().data[0].used as number;
  return { services, clock, ws, spend, used };
}

async function stored(services: Services, ws: Workspace) {
  const keys = await services.db.selectFrom("idempotency_keys").select(["key", "status"]).where("workspace_id", "=", ws.workspaceId).orderBy("key").execute();
  const people = await services.db.selectFrom("people").select("id").where("workspace_id", "=", ws.workspaceId).execute();
  return { keys: keys.map((k) => `${k.key}:${k.status}`), people: people.length };
}

for (const dialect of DIALECTS) {
  describe(`usage: spends sent at once for one person (${dialect})`, () => {
    test("fifteen spends of one against a free allowance of ten: exactly ten allowed, the person created once, only their keys kept", async () => {
      const { services, clock, ws, spend } = await bed(dialect, "burst@example.com");
      const answers = await Promise.all(Array.from({ length: 15 }, (_, i) => spend(1, `k${String(i).padStart(2, "0")}`)));
      const allowed = answers.filter((a) => a.statusCode === 200);
      const refused = answers.filter((a) => a.statusCode === 402);
      assert.equal(allowed.length, 10, answers.map((a) => a.body).join("\n"));
      assert.equal(refused.length, 5);
      for (const r of refused) assert.equal(r.json().error.usage.remaining, 0);
      assert.deepEqual(
        allowed.map((a) => a.json().remaining).sort((a, b) => a - b),
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
        "each answer says what was left after it",
      );
      const after = await stored(services, ws);
      assert.equal(after.people, 1);
      assert.equal(after.keys.length, 10);
      assert.ok(after.keys.every((k) => k.endsWith(":200")));
      // A refused key was given back: the same key spends once units are there again.
      const refusedKey = answers.findIndex((a) => a.statusCode === 402);
      clock.set(Date.parse("2026-12-02T00:00:00.000Z"));
      const retried = await spend(1, `k${String(refusedKey).padStart(2, "0")}`);
      assert.equal(retried.statusCode, 200, retried.body);
      assert.equal(retried.headers["idempotent-replayed"], undefined);
    });

    test("spends of 4, 4, 4 and 1 against ten: whatever their order, 9 are spent and one 4 is refused", async () => {
      const { services, ws, spend, used } = await bed(dialect, "mixed@example.com");
      const answers = await Promise.all([spend(4, "a"), spend(4, "b"), spend(4, "c"), spend(1, "d")]);
      assert.deepEqual(answers.map((a) => a.statusCode).sort(), [200, 200, 200, 402]);
      const refused = answers.find((a) => a.statusCode === 402);
      assert.equal(refused?.json().error.type, "usage_limit_error");
      assert.equal(await used(), 9);
      assert.equal((await stored(services, ws)).keys.length, 3, "the refused spend's key is not kept");
    });

    test("one key retried five times at once is counted once; each retry answers the first answer", async () => {
      const { spend, used } = await bed(dialect, "retry@example.com");
      const answers = await Promise.all([spend(2, "same"), spend(2, "same"), spend(2, "same"), spend(2, "same"), spend(2, "same"), spend(1, "other")]);
      assert.ok(answers.every((a) => a.statusCode === 200));
      const same = answers.slice(0, 5);
      assert.equal(same.filter((a) => a.headers["idempotent-replayed"] === "true").length, 4);
      const firstAnswer = same.find((a) => a.headers["idempotent-replayed"] === undefined)?.json();
      for (const a of same) assert.deepEqual(a.json(), firstAnswer);
      assert.equal(await used(), 3);
    });

    test("one spend's fault does not fail the spends sent with it: a replay whose stored answer is broken fails alone", async () => {
      const { services, ws, spend, used } = await bed(dialect, "fault@example.com");
      assert.equal((await spend(1, "broken")).statusCode, 200);
      await services.db
        .updateTable("idempotency_keys")
        .set({ response_body: "{" })
        .where("workspace_id", "=", ws.workspaceId)
        .where("key", "=", "broken")
        .execute();
      const [broken, a, b] = await Promise.all([spend(1, "broken"), spend(1, "a"), spend(1, "b")]);
      assert.notEqual(broken?.statusCode, 200, "the broken replay fails");
      assert.deepEqual([a?.statusCode, b?.statusCode], [200, 200], `${a?.body} ${b?.body}`);
      assert.equal(await used(), 3);
    });

    test("a key sent at once with two bodies: one spends, the other is refused as a mismatch and spends nothing", async () => {
      const { spend, used } = await bed(dialect, "clash@example.com");
      const answers = await Promise.all([spend(1, "clash"), spend(3, "clash")]);
      assert.deepEqual(answers.map((a) => a.statusCode).sort(), [200, 400]);
      const won = answers.find((a) => a.statusCode === 200)?.json();
      const lost = answers.find((a) => a.statusCode === 400)?.json();
      assert.equal(lost.error.param, "Idempotency-Key");
      assert.equal(await used(), won.quantity);
    });
  });
}
