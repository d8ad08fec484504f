import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { clientCalls, testMailbox } from "../test-support/client.js";
import { DIALECTS, seedWorkspace, testApi, testServices } from "../test-support/harness.js";

const mailbox = testMailbox();
const { signIn, check } = clientCalls(mailbox);
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

for (const dialect of DIALECTS) {
  describe(`Insights from the access check (${dialect})`, () => {
    test("the access check counts its device's day once, whatever the number of checks, and the next UTC day again", async () => {
      const { services, clock } = await testServices(dialect, { SMTP_URL: mailbox.url });
      const ws = await seedWorkspace(services);
      const api = await testApi(services);
      clock.set(Date.parse("2026-10-05T23:58:00.000Z"));
      const token = await signIn(api, ws, "user@example.com");
      for (let i = 0; i < 3; i++) assert.equal((await check(api, ws.tool, token)).statusCode, 200);
      clock.advance(3 * 60_000); // 00:01 the next day, UTC
      assert.equal((await check(api, ws.tool, token)).statusCode, 200);

      const from = "2026-10-05";
      const to = dayOf(Date.parse("2026-10-06T00:00:00Z"));
      const response = await api.request({ url: `/api/v1/insights/use?from=${from}&to=${to}`, key: ws.testKey });
      assert.equal(response.statusCode, 200, response.body);
      const use = response.json();
      assert.deepEqual(use.activePeople.daily.points, [
        { date: from, value: 1 },
        { date: to, value: 1 },
      ]);
      assert.deepEqual(
        use.activePeople.weekly.points.map((p: { value: number }) => p.value),
        [1, 1],
      );
      assert.deepEqual(
        use.activeDevices.points.map((p: { value: number }) => p.value),
        [1, 1],
      );
      // The total of a per-day count is the mean of its days, kept to two decimals: active on 2 of 6 days is 0.33, not 0.
      const longer = (await api.request({ url: `/api/v1/insights/use?from=2026-10-01&to=${to}`, key: ws.testKey })).json();
      assert.deepEqual(
        longer.activePeople.daily.points.map((p: { value: number }) => p.value),
        [0, 0, 0, 0, 1, 1],
      );
      assert.equal(longer.activePeople.daily.total, 0.33);
      assert.equal(longer.activePeople.daily.previousTotal, 0);
      assert.equal(longer.activeDevices.total, 0.33);
      // Free, active two days: the top of the unpaid.
      assert.deepEqual(
        use.topUnpaid.map((p: { email: string; activeDays: number; source: string }) => [p.email, p.activeDays, p.source]),
        [["user@example.com", 2, "free"]],
      );
    });
  });
}
