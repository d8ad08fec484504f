import assert from "node:assert/strict";
import { request as httpRequest } from "node:http";
import { describe, test } from "node:test";
import { openStorage } from "../db/database.js";
import { wardenJson } from "../test-support/cli.js";
import { DIALECTS, privateDatabaseEnv, unique } from "../test-support/harness.js";
import { callApi, type RunningWarden, startWarden } from "../test-support/serve.js";
import { startReceiver } from "../test-support/webhooks.js";
import type { Delivery } from "../webhooks/webhook.schema.js";

// SIGTERM, as an orchestrator sends it on a deploy: the process stops taking requests,
// answers those it took, finishes the webhook attempt under way, gives its endpoint's
// lease back and exits 0. Started again, it sends the rest at once, not after the lease.

const EVENTS = 5;
const SLOW_ANSWER_MS = 1_500;
const BURST = 20;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A grant whose body arrives in two halves: the request is under way between them. */
function slowGrant(warden: RunningWarden, key: string, email: string): { sendRest: () => void; answer: Promise<{ status: number; body: string }> } {
  const body = JSON.stringify({ email, days: 30 });
  const url = new URL(`${warden.baseUrl}/api/v1/tools/tabmaster/grants`);
  let sendRest = () => {};
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      (response) => {
        let text = "";
        response.on("data", (chunk) => (text += String(chunk)));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body: text }));
      },
    );
    req.on("error", reject);
    req.write(body.slice(0, 10));
    sendRest = () => req.end(body.slice(10));
  });
  return { sendRest, answer };
}

for (const dialect of DIALECTS) {
  describe(`SIGTERM (${dialect})`, () => {
    test("answers every request it took, finishes the attempt under way, gives the lease back and exits 0; restarted, it sends the rest at once", async () => {
      const env: Record<string, string> = {
        ...(await privateDatabaseEnv(dialect)),
        WARDEN_SECRET_KEY: "sigterm-test-secret-key-0123456789abcdefgh",
        WARDEN_ALLOW_PRIVATE_WEBHOOKS: "1",
        // A lease left held would keep the endpoint from the restarted process for a minute.
        WARDEN_DELIVERY_LEASE_MS: "60000",
        WARDEN_LIMIT_EXAMPLE_EVENTS_PER_DAY: "1000",
      };
      const email = `${unique("o")}@example.com`;
      const slug = unique("ws");
      await wardenJson(env, "admin", "owner", "create", "--email", email);
      await wardenJson(env, "admin", "workspace", "create", "--slug", slug, "--name", "Term", "--owner", email, "--plan", "pro");
      await wardenJson(env, "admin", "tool", "create", "--workspace", slug, "--id", "tabmaster", "--name", "Tab Master");
      const key = String((await wardenJson(env, "admin", "key", "create", "--workspace", slug, "--env", "test")).key);

      // The first request is answered slowly: it is under way when SIGTERM comes.
      let signalFirst: () => void = () => {};
      const firstArrived = new Promise<void>((resolve) => {
        signalFirst = resolve;
      });
      const receiver = await startReceiver(async (_request, response) => {
        if (receiver.received.length === 1) {
          signalFirst();
          await sleep(SLOW_ANSWER_MS);
        }
        response.end("ok");
      });

      let warden = await startWarden(env);
      try {
        assert.equal((await callApi(warden, key, "POST", "/webhooks/endpoints", { url: receiver.url })).status, 201);
        const emitted: string[] = [];
        for (let i = 0; i < EVENTS; i++) {
          const sent = await callApi<{ event: { id: string } }>(warden, key, "POST", "/webhooks/examples", { type: "payment.refunded" });
          assert.equal(sent.status, 202);
          emitted.push(sent.json.event.id);
        }
        await firstArrived;

        // A grant under way (half its body sent), then a burst of them, then SIGTERM.
        const slowEmail = `${unique("slow")}@example.com`;
        const slow = slowGrant(warden, key, slowEmail);
        await sleep(300);
        const burstEmails = Array.from({ length: BURST }, () => `${unique("burst")}@example.com`);
        const burst = burstEmails.map((address) =>
          fetch(`${warden.baseUrl}/api/v1/tools/tabmaster/grants`, {
            method: "POST",
            headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
            body: JSON.stringify({ email: address, days: 30 }),
          }).then(
            (response) => response.status,
            () => "refused" as const,
          ),
        );
        await sleep(20);
        const exited = new Promise<number | null>((resolve) => warden.child.once("exit", (code) => resolve(code)));
        const termAt = Date.now();
        warden.child.kill("SIGTERM");
        await sleep(300);
        slow.sendRest();

        const slowAnswer = await slow.answer;
        assert.equal(slowAnswer.status, 201, `the request under way is answered: ${slowAnswer.body}`);
        const statuses = await Promise.all(burst);
        // Each one was either taken and answered, or refused before it was taken: never cut off.
        for (const status of statuses) assert.ok(status === 201 || status === 503 || status === "refused", String(status));
        assert.equal(await exited, 0);
        const tookMs = Date.now() - termAt;
        assert.ok(tookMs < 10_000, `stopped within the grace period (${tookMs} ms)`);
        // The attempt under way was finished, not cut short: one request so far, answered.
        assert.equal(receiver.received.length, 1);

        // Its lease was given back: no endpoint is held by the stopped process.
        const storage = openStorage({ databaseUrl: env.DATABASE_URL ?? null, dataDir: env.WARDEN_DATA_DIR });
        try {
          const held = await storage.db.selectFrom("endpoint_leases").select("endpoint_id").where("locked_until", ">", Date.now()).execute();
          assert.deepEqual(held, []);
        } finally {
          await storage.close();
        }

        const restartedAt = Date.now();
        warden = await startWarden(env);
        await receiver.waitFor(() => emitted.every((id) => receiver.ids().includes(id)), 10_000);
        assert.ok(Date.now() - restartedAt < 15_000, "the rest was sent at once, not after the 60 s lease");
        // Each event exactly once: the attempt under way at SIGTERM was recorded as it ended.
        assert.deepEqual(receiver.ids().sort(), [...emitted].sort());

        // Every grant answered 201 is stored.
        const granted = [slowEmail, ...burstEmails.filter((_, i) => statuses[i] === 201)];
        for (const address of granted) {
          const customer = await callApi<{ tools: unknown }>(warden, key, "GET", `/tools/tabmaster/customers/${encodeURIComponent(address)}`);
          assert.equal(customer.status, 200, `${address} was granted: ${JSON.stringify(customer.json)}`);
        }

        let deliveries: Delivery[] = [];
        for (let i = 0; i < 100; i++) {
          deliveries = (await callApi<{ data: Delivery[] }>(warden, key, "GET", "/webhooks/deliveries?limit=100")).json.data;
          if (deliveries.length === EVENTS && deliveries.every((d) => d.status === "succeeded")) break;
          await sleep(50);
        }
        assert.deepEqual(
          deliveries.map((d) => d.status),
          Array(EVENTS).fill("succeeded"),
        );
      } finally {
        await warden.kill();
      }
    });
  });
}
