// The long poll on `warden serve` in its own process, as deployed: a change written by
// another process (`warden admin import`, the CLI) wakes the waiting device through the
// feed, at the server's loop of a second; SIGTERM answers a waiting device at once with
// 204 and the process exits 0. Real processes and real time: bounded waits, no clock.
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { seedThroughCli, wardenJson } from "../test-support/cli.js";
import { testMailbox } from "../test-support/client.js";
import { DIALECTS, privateDatabaseEnv, unique } from "../test-support/harness.js";
import { startWarden } from "../test-support/serve.js";

const METRICS_TOKEN = "access-watch-metrics-token-0123";
const mailbox = testMailbox();

for (const dialect of DIALECTS) {
  describe(`the long poll on warden serve (${dialect})`, () => {
    test("a grant imported by the CLI in another process wakes the waiting device within seconds; SIGTERM answers a wait at once", async () => {
      const env: Record<string, string> = {
        ...(await privateDatabaseEnv(dialect)),
        WARDEN_SECRET_KEY: "access-watch-serve-secret-0123456789abcdef",
        WARDEN_METRICS_TOKEN: METRICS_TOKEN,
        SMTP_URL: mailbox.url,
      };
      const { slug } = await seedThroughCli(env, "Waits");
      const warden = await startWarden(env);
      try {
        const client = `${warden.baseUrl}/api/client/v1`;
        const post = (path: string, body: object) =>
          fetch(`${client}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
        const email = `${unique("ada")}@example.com`;
        const target = { workspace: slug, tool: "tabmaster", env: "test", email };
        assert.equal((await post("/sign-in", target)).status, 200);
        const verified = await post("/sign-in/verify", {
          ...target,
          code: await mailbox.codeFor(email),
          device: { name: "Laptop", platform: "chrome-linux" },
        });
        assert.equal(verified.status, 200);
        const authorization = `Bearer ${((await verified.json()) as { token: string }).token}`;
        const held = (await (await fetch(`${client}/tools/tabmaster/access`, { headers: { authorization } })).json()) as { state: string; entitled: boolean };
        assert.equal(held.entitled, false);
        const wait = (state: string) => fetch(`${client}/tools/tabmaster/access/changes?state=${state}`, { headers: { authorization } });
        const waiting = async () => {
          const deadline = Date.now() + 10_000;
          for (;;) {
            const figures = await (await fetch(`${warden.baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
            if (/^warden_access_waiters 1$/m.test(figures)) return;
            assert.ok(Date.now() < deadline, "the wait is held");
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        };

        const first = wait(held.state);
        await waiting();
        const file = join(env.WARDEN_DATA_DIR as string, "grant.ndjson");
        await writeFile(file, `${JSON.stringify({ type: "grant", email, tool: "tabmaster", starts_at: new Date(Date.now() - 60_000).toISOString() })}\n`);
        const importedAt = Date.now();
        await wardenJson(env, "admin", "import", "--workspace", slug, "--env", "test", file);
        const woken = await first;
        const after = Date.now() - importedAt;
        assert.equal(woken.status, 200);
        const fresh = (await woken.json()) as { entitled: boolean; via: string; state: string };
        assert.deepEqual([fresh.entitled, fresh.via], [true, "grant"]);
        assert.ok(after < 5_000, `woken ${after} ms after the import`);

        const second = wait(fresh.state);
        await waiting();
        const exited = new Promise<number | null>((resolve) => warden.child.once("exit", (code) => resolve(code)));
        const termAt = Date.now();
        warden.child.kill("SIGTERM");
        assert.equal((await second).status, 204, "closing answers the wait: no change");
        assert.equal(await exited, 0);
        assert.ok(Date.now() - termAt < 5_000, "no wait held the process");
      } finally {
        await warden.kill();
      }
    });
  });
}
