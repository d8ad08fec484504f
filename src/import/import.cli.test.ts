// `warden admin import` as an operator runs it: how far it has got (plain lines off a
// terminal, a bar on one), its --json summary, and Ctrl-C in the middle of the write.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, test } from "node:test";
import { type CliIo, main } from "../cli.js";
import type { Clock } from "../clock.js";
import { DIALECTS, privateDatabaseEnv } from "../test-support/harness.js";

const grant = (i: number) => JSON.stringify({ type: "grant", email: `p${i}@example.com`, tool: "tabmaster", starts_at: "2025-01-01T00:00:00Z" });
const grants = (n: number, from = 0) => Array.from({ length: n }, (_, i) => grant(from + i)).join("\n");

/** Moves four seconds each time it is read: the progress output sees time pass without a test sleeping. */
function steppingClock(): Clock {
  let now = Date.parse("2026-11-21T12:00:00.000Z");
  return {
    now: () => {
      now += 4_000;
      return now;
    },
  };
}

async function workspaceWithTool(env: Record<string, string>): Promise<void> {
  const io: CliIo = { stdout: () => {}, stderr: () => {}, env };
  assert.equal(await main(["admin", "owner", "create", "--email", "owner@example.com"], io), 0);
  assert.equal(await main(["admin", "workspace", "create", "--slug", "acme", "--name", "Acme", "--owner", "owner@example.com"], io), 0);
  assert.equal(await main(["admin", "tool", "create", "--workspace", "acme", "--id", "tabmaster", "--name", "Tab Master"], io), 0);
}

async function runImport(env: Record<string, string>, file: string, io: Partial<CliIo> = {}, ...extra: string[]) {
  let stdout = "";
  let stderr = "";
  const code = await main(["admin", "import", "--workspace", "acme", "--env", "test", file, ...extra], {
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
    env,
    ...io,
  });
  return { code, stdout, stderr };
}

for (const dialect of DIALECTS) {
  describe(`warden admin import on the command line (${dialect})`, () => {
    test("off a terminal it writes a plain line every ten seconds; --json prints only the summary", async () => {
      const env = await privateDatabaseEnv(dialect);
      await workspaceWithTool(env);
      const file = join(env.WARDEN_DATA_DIR as string, "grants.ndjson");
      await writeFile(file, grants(5_000));

      const plain = await runImport(env, file, { clock: steppingClock() });
      assert.equal(plain.code, 0, plain.stderr);
      const lines = plain.stderr.trimEnd().split("\n");
      for (const line of lines) {
        assert.match(line, /^import: (checked [\d,]+ lines|wrote [\d,]+ of 5,000 lines) \(\d+%\), [\d,]+ lines\/s, (\d+ s|\d+ min \d+ s) left$/);
      }
      assert.ok(lines.some((l) => l.startsWith("import: checked ")));
      assert.ok(lines.length >= 3, plain.stderr);
      assert.match(lines.at(-1) ?? "", /^import: wrote 5,000 of 5,000 lines \(100%\), [\d,]+ lines\/s, 0 s left$/);
      assert.equal(
        plain.stdout,
        "Imported accounts: 0, devices: 0, licences: 0, subscriptions: 0, trials: 0, grants: 5000, credit entries: 0, used counters: 0; 0 lines stored already as they are (unchanged).\n",
      );

      const again = await runImport(env, file, { clock: steppingClock() }, "--json");
      assert.equal(again.code, 0, again.stderr);
      assert.equal(again.stderr, "");
      assert.deepEqual(JSON.parse(again.stdout), {
        accounts: 0,
        devices: 0,
        licences: 0,
        subscriptions: 0,
        trials: 0,
        grants: 0,
        credits: 0,
        used: 0,
        unchanged: 5_000,
      });
    });

    test("on a terminal it redraws a bar in place, and ends its line", async () => {
      const env = await privateDatabaseEnv(dialect);
      await workspaceWithTool(env);
      const file = join(env.WARDEN_DATA_DIR as string, "grants.ndjson");
      await writeFile(file, grants(3_000));
      const run = await runImport(env, file, { clock: steppingClock(), stderrColumns: () => 100 }, "--json");
      assert.equal(run.code, 0, run.stderr);
      const draws = run.stderr.split("\r").filter((d) => d !== "");
      assert.ok(draws.length >= 4, JSON.stringify(run.stderr));
      for (const draw of draws) {
        assert.match(draw, /^(Checking|Writing ) \[[#-]{10,30}\] +\d+% {2}/);
        assert.ok(draw.trimEnd().length <= 99);
      }
      assert.match(draws.at(-1) ?? "", /^Writing {2}\[#+\] 100% {2}wrote 3,000 of 3,000 lines {2}[\d,]+ lines\/s {2}0 s left +\n$/);
      assert.deepEqual(JSON.parse(run.stdout).grants, 3_000);
    });

    test("Ctrl-C while it writes rolls everything back and exits 130", async () => {
      const env = await privateDatabaseEnv(dialect);
      await workspaceWithTool(env);
      const file = join(env.WARDEN_DATA_DIR as string, "grants.ndjson");
      await writeFile(file, grants(60_000));

      // The CLI in a process of its own, as on a terminal, so that it draws its bar and gets a real SIGINT.
      const code = `const { main, processIo } = await import(${JSON.stringify(new URL("../cli.ts", import.meta.url).href)});
process.exitCode = await main(process.argv.slice(1), { ...processIo, stderrColumns: () => 80 });`;
      const child = spawn(
        process.execPath,
        ["--import", "tsx", "--input-type=module", "-e", code, "admin", "import", "--workspace", "acme", "--env", "test", file],
        {
          env: { PATH: process.env.PATH, ...env },
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      let stderr = "";
      let stdout = "";
      let sent = false;
      child.stdout.on("data", (d) => (stdout += d));
      child.stderr.on("data", (d) => {
        stderr += d;
        if (!sent && stderr.includes("Writing")) {
          sent = true;
          child.kill("SIGINT");
        }
      });
      const exitCode = await new Promise<number | null>((resolve) => child.on("close", resolve));
      assert.ok(sent, `never saw the write begin: ${stderr}`);
      assert.equal(exitCode, 130, stderr);
      assert.equal(stdout, "");
      assert.match(stderr, /\nwarden: Interrupted: the import was rolled back; nothing was imported\.\n$/);

      // Had any batch stayed, its lines would now be unchanged.
      const first = join(env.WARDEN_DATA_DIR as string, "first.ndjson");
      await writeFile(first, grants(1_500));
      const after = await runImport(env, first, {}, "--json");
      assert.equal(after.code, 0, after.stderr);
      assert.deepEqual(JSON.parse(after.stdout), {
        accounts: 0,
        devices: 0,
        licences: 0,
        subscriptions: 0,
        trials: 0,
        grants: 1_500,
        credits: 0,
        used: 0,
        unchanged: 0,
      });
    });
  });
}
