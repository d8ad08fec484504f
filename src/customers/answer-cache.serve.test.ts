// The answer cache across processes, as deployed: `warden serve` answers a repeated
// retrieve and access check from memory, and a grant written by another process (the
// CLI's import) is in its answers within about a second (its loop reads the feed each
// second). Real processes and real time: bounded waits, no clock.
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { seedThroughCli, wardenJson } from "../test-support/cli.js";
import { testMailbox } from "../test-support/client.js";
import { DIALECTS, privateDatabaseEnv, unique } from "../test-support/harness.js";
import { startWarden } from "../test-support/serve.js";

const METRICS_TOKEN = "answer-cache-serve-metrics-token";
const mailbox = testMailbox();
// The loop's second, and the reads in flight when it turns.
const WITHIN_MS = 1_500;

for (const dialect of DIALECTS) {
  describe(`the answer cache on warden serve (${dialect})`, () => {
    test("answers from memory, and a grant imported by another process is answered within a second", async (t) => {
      const env: Record<string, string> = {
        ...(await privateDatabaseEnv(dialect)),
        WARDEN_SECRET_KEY: "answer-cache-serve-secret-0123456789abcdef",
        WARDEN_METRICS_TOKEN: METRICS_TOKEN,
        SMTP_URL: mailbox.url,
      };
      const { slug } = await seedThroughCli(env, "Cache");
      const key = (await wardenJson(env, "admin", "key", "create", "--workspace", slug, "--env", "test")).key as string;
      const warden = await startWarden(env);
      try {
        const client = `${warden.baseUrl}/api/client/v1`;
        const post = (path: string, body: object) =>
          fetch(`${client}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
        const email = `${unique("ada")}@example.com`;
        const target = { workspace: slug, tool: "tabmaster", env: "test", email };
        assert.equal((await post("/sign-in", target)).status, 200);
        const verified = await post("/sign-in/verify", { ...target, code: await mailbox.codeFor(email), device: { name: "Laptop", platform: "chrome-linux" } });
        assert.equal(verified.status, 200);
        const authorization = `Bearer ${((await verified.json()) as { token: string }).token}`;
        const access = async () =>
          ((await (await fetch(`${client}/tools/tabmaster/access`, { headers: { authorization } })).json()) as { entitled: boolean }).entitled;
        const customer = async () =>
          (
            (await (
              await fetch(`${warden.baseUrl}/api/v1/tools/tabmaster/customers/${encodeURIComponent(email)}`, { headers: { authorization: `Bearer ${key}` } })
            ).json()) as { entitled: boolean }
          ).entitled;
        const hits = async () => {
          const figures = await (await fetch(`${warden.baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
          return Number(/^warden_answer_cache_hits_total (\d+)$/m.exec(figures)?.[1]);
        };

        // The cache answers once the loop has read the feed (its first second) and the sign-in's change is seen.
        const deadline = Date.now() + 10_000;
        for (;;) {
          const before = await hits();
          assert.deepEqual([await access(), await customer(), await access(), await customer()], [false, false, false, false]);
          if ((await hits()) >= before + 2) break;
          assert.ok(Date.now() < deadline, "repeated questions are answered from memory");
          await new Promise((resolve) => setTimeout(resolve, 200));
        }

        const file = join(env.WARDEN_DATA_DIR as string, "grant.ndjson");
        await writeFile(file, `${JSON.stringify({ type: "grant", email, tool: "tabmaster", starts_at: new Date(Date.now() - 60_000).toISOString() })}\n`);
        await wardenJson(env, "admin", "import", "--workspace", slug, "--env", "test", file);
        const importedAt = Date.now();
        let seenAfter = -1;
        while (Date.now() - importedAt < 5_000) {
          if ((await access()) && (await customer())) {
            seenAfter = Date.now() - importedAt;
            break;
          }
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        t.diagnostic(`the other process's grant answered ${seenAfter} ms after its import returned`);
        assert.ok(seenAfter >= 0 && seenAfter <= WITHIN_MS, `seen after ${seenAfter} ms`);
      } finally {
        await warden.kill();
      }
    });
  });
}
