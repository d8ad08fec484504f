import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { wardenJson } from "../test-support/cli.js";
import { DIALECTS, privateDatabaseEnv, unique } from "../test-support/harness.js";
import { callApi, type RunningWarden, startWarden } from "../test-support/serve.js";
import { type ReceivedRequest, startReceiver } from "../test-support/webhooks.js";
import type { Delivery } from "./webhook.schema.js";

// The promise, tested as it is stated: `kill -9` the running service in the
// middle of delivering, start it again on the same database, and every event arrives.

const EVENTS = 20;
const ANSWER_AFTER_MS = 100;
const KILL_AT = 6;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function allDeliveries(warden: RunningWarden, key: string): Promise<Delivery[]> {
  const out: Delivery[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : "";
    const page = await callApi<{ data: Delivery[]; next_cursor: string | null }>(warden, key, "GET", `/webhooks/deliveries?limit=100${query}`);
    assert.equal(page.status, 200);
    out.push(...page.json.data);
    cursor = page.json.next_cursor;
  } while (cursor);
  return out;
}

for (const dialect of DIALECTS) {
  describe(`kill -9 (${dialect})`, () => {
    test("killing warden serve mid-delivery and starting it again loses nothing and delivers everything", async () => {
      const env = {
        ...(await privateDatabaseEnv(dialect)),
        WARDEN_SECRET_KEY: "kill-test-secret-key-0123456789abcdefghij",
        WARDEN_ALLOW_PRIVATE_WEBHOOKS: "1",
        // A claim held by the killed process is taken over after this long.
        WARDEN_DELIVERY_LEASE_MS: "1500",
        WARDEN_LIMIT_EXAMPLE_EVENTS_PER_DAY: "1000",
      };
      const email = `${unique("o")}@example.com`;
      const slug = unique("ws");
      await wardenJson(env, "admin", "owner", "create", "--email", email);
      await wardenJson(env, "admin", "workspace", "create", "--slug", slug, "--name", "Kill", "--owner", email, "--plan", "pro");
      const key = String((await wardenJson(env, "admin", "key", "create", "--workspace", slug, "--env", "test")).key);

      // Two slow receivers. The first holds its KILL_AT-th request unanswered and signals:
      // the service dies while that attempt is under way.
      let signalKill: (request: ReceivedRequest) => void = () => {};
      const killPoint = new Promise<ReceivedRequest>((resolve) => {
        signalKill = resolve;
      });
      const first = await startReceiver(async (request, response) => {
        if (first.received.length === KILL_AT) return signalKill(request);
        await sleep(ANSWER_AFTER_MS);
        response.end("ok");
      });
      const second = await startReceiver(async (_request, response) => {
        await sleep(ANSWER_AFTER_MS);
        response.end("ok");
      });

      let warden = await startWarden(env);
      try {
        for (const receiver of [first, second]) {
          assert.equal((await callApi(warden, key, "POST", "/webhooks/endpoints", { url: receiver.url })).status, 201);
        }
        const emitted: string[] = [];
        for (let i = 0; i < EVENTS; i++) {
          const sent = await callApi<{ event: { id: string } }>(warden, key, "POST", "/webhooks/examples", { type: "payment.refunded" });
          assert.equal(sent.status, 202);
          emitted.push(sent.json.event.id);
        }

        const inFlight = await killPoint;
        await warden.kill();
        const beforeRestart = { first: first.received.length, second: second.received.length };
        assert.ok(beforeRestart.first < EVENTS + 1 && beforeRestart.second < EVENTS, "killed before everything was delivered");

        warden = await startWarden(env);
        const everything = (r: typeof first) => emitted.every((id) => r.ids().includes(id));
        // Generous: it returns as soon as everything has arrived, and a loaded CI machine is slow.
        await first.waitFor(() => everything(first), 60_000);
        await second.waitFor(() => everything(second), 60_000);
        // At least once: the attempt cut short by the kill was made again.
        const inFlightId = String(inFlight.headers["webhook-id"]);
        assert.ok(first.ids().filter((id) => id === inFlightId).length >= 2, "the interrupted delivery was sent again");
        for (const receiver of [first, second]) assert.deepEqual(new Set(receiver.ids()), new Set(emitted));

        // Every delivery ends succeeded (the last success may still be being recorded).
        let deliveries: Delivery[] = [];
        for (let i = 0; i < 100; i++) {
          deliveries = await allDeliveries(warden, key);
          if (deliveries.length === 2 * EVENTS && deliveries.every((d) => d.status === "succeeded")) break;
          await sleep(50);
        }
        assert.equal(deliveries.length, 2 * EVENTS);
        assert.deepEqual(
          deliveries.filter((d) => d.status !== "succeeded").map((d) => [d.id, d.status]),
          [],
        );
        const events = await callApi<{ data: { id: string }[] }>(warden, key, "GET", "/webhooks/events?limit=100");
        assert.deepEqual(new Set(events.json.data.map((e) => e.id)), new Set(emitted));
      } finally {
        await warden.kill();
      }
    });
  });
}
