// `warden serve` as an operator runs it (bin/warden.js, over dist/: build it first with
// `npx tsc -p tsconfig.build.json`): every failure to start is one line on stderr and a
// non-zero exit, and a start prints where it serves and what is unsafe.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { before, describe, test } from "node:test";
import { parseConfig } from "../config.js";
import { DIALECTS, newerSchemaEnv, PG_URL, privateDatabaseEnv, unique } from "../test-support/harness.js";
import { freePort } from "../test-support/serve.js";
import { describeUnsupportedNode } from "./node-version.js";
import { describeStartFailure } from "./start-up.js";

const ROOT = join(import.meta.dirname, "..", "..");
const SECRET = "start-up-test-secret-key-0123456789abcdef";

function newestSource(dir: string): number {
  return Math.max(
    0,
    ...readdirSync(dir, { withFileTypes: true }).map((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return newestSource(path);
      return entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") ? statSync(path).mtimeMs : 0;
    }),
  );
}

before(() => {
  const built = statSync(join(ROOT, "dist", "cli.js"), { throwIfNoEntry: false })?.mtimeMs ?? 0;
  assert.ok(built >= newestSource(join(ROOT, "src")), "dist/ is older than src/: run npx tsc -p tsconfig.build.json first");
});

interface Exited {
  code: number | null;
  stdout: string;
  stderr: string;
}

function spawnWarden(env: Record<string, string>): { child: ChildProcess; output: { stdout: string; stderr: string }; exited: Promise<Exited> } {
  // Only what the test sets: the developer's own DATABASE_URL or WARDEN_* must not leak in.
  const child = spawn(process.execPath, [join(ROOT, "bin", "warden.js"), "serve"], {
    env: { PATH: process.env.PATH ?? "", LOG_LEVEL: "warn", PORT: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output = { stdout: "", stderr: "" };
  child.stdout?.on("data", (chunk) => (output.stdout += String(chunk)));
  child.stderr?.on("data", (chunk) => (output.stderr += String(chunk)));
  const exited = new Promise<Exited>((resolve) => child.once("exit", (code) => resolve({ code, ...output })));
  return { child, output, exited };
}

/** Starts `warden serve` expecting it to fail; answers its exit. */
async function failToStart(env: Record<string, string>): Promise<Exited> {
  const { child, exited } = spawnWarden(env);
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  const result = await exited;
  clearTimeout(timer);
  return result;
}

function assertOneLine(result: Exited, pattern: RegExp, code = 1): void {
  assert.equal(result.code, code, `exit code; stderr: ${result.stderr}`);
  const lines = result.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 1, `one line on stderr, got:\n${result.stderr}`);
  assert.match(lines[0] ?? "", /^warden: /);
  assert.match(lines[0] ?? "", pattern);
  assert.equal(result.stdout, "", "nothing on stdout");
}

describe("a failure to start is one line on stderr naming its cause, and nothing on stdout", () => {
  test("a bad LOG_LEVEL exits 2, naming the levels and the value given", async () => {
    const dir = await privateDatabaseEnv("sqlite");
    assertOneLine(await failToStart({ ...dir, LOG_LEVEL: "loud" }), /LOG_LEVEL must be one of .*got "loud"/, 2);
  });

  test("a port in use exits 1, naming the port and the host", async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    try {
      const port = (blocker.address() as { port: number }).port;
      const dir = await privateDatabaseEnv("sqlite");
      assertOneLine(await failToStart({ ...dir, WARDEN_SECRET_KEY: SECRET, PORT: String(port) }), new RegExp(`port ${port} on 127\\.0\\.0\\.1 is in use`));
    } finally {
      blocker.close();
    }
  });

  test("PostgreSQL not answering at DATABASE_URL exits 1, naming its address and ECONNREFUSED", async () => {
    const closed = await freePort();
    const dir = await privateDatabaseEnv("sqlite");
    assertOneLine(
      // Without waiting for it to come up (WARDEN_DB_WAIT_SECONDS; faults/pg-outage.test.ts waits).
      await failToStart({ ...dir, DATABASE_URL: `postgres://postgres:pw@127.0.0.1:${closed}/test`, WARDEN_DB_WAIT_SECONDS: "0" }),
      new RegExp(`PostgreSQL at 127\\.0\\.0\\.1:${closed}/test does not answer \\(ECONNREFUSED\\)`),
    );
  });

  test("a PostgreSQL database that does not exist exits 1, saying so", async () => {
    const name = unique("missing").replace(/-/g, "_");
    const dir = await privateDatabaseEnv("sqlite");
    const url = PG_URL.replace(/\/test$/, `/${name}`);
    assertOneLine(await failToStart({ ...dir, DATABASE_URL: url }), new RegExp(`PostgreSQL at 127\\.0\\.0\\.1:5432/${name}: the database does not exist`));
  });

  for (const dialect of DIALECTS) {
    test(`a database migrated by a newer Warden is refused (${dialect})`, async () => {
      const { env, future } = await newerSchemaEnv(dialect);
      assertOneLine(
        await failToStart({ ...env, WARDEN_SECRET_KEY: SECRET }),
        new RegExp(`refusing to start: the database has migrations this version of Warden does not know \\(${future}\\)`),
      );
    });
  }
});

for (const dialect of DIALECTS) {
  describe(`the start summary (${dialect})`, () => {
    test("names the API, the docs and the data, warns of the development key and private webhooks, and SIGTERM exits 0", async () => {
      const env = await privateDatabaseEnv(dialect);
      // A password, to check that the summary leaves it out (the test server trusts any).
      if (env.DATABASE_URL) env.DATABASE_URL = env.DATABASE_URL.replace("postgres://postgres@", "postgres://postgres:hunter2-secret@");
      const { child, output, exited } = spawnWarden({ ...env, LOG_LEVEL: "info", WARDEN_ALLOW_PRIVATE_WEBHOOKS: "1" });
      try {
        for (let i = 0; i < 600 && !output.stdout.includes("WARDEN_ALLOW_PRIVATE_WEBHOOKS is on"); i++) {
          if (child.exitCode !== null) break;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        const summary = output.stdout
          .split("\n")
          .filter((line) => line.startsWith("{"))
          .map((line) => JSON.parse(line) as { level: number; msg: string });
        const serving = summary.find((line) => line.msg.startsWith("Warden is serving"));
        assert.ok(serving, output.stdout + output.stderr);
        const port = /http:\/\/127\.0\.0\.1:(\d+)\/api\/v1,/.exec(serving.msg)?.[1];
        assert.ok(port && port !== "0", serving.msg);
        assert.match(serving.msg, new RegExp(`API http://127\\.0\\.0\\.1:${port}/api/v1, docs http://127\\.0\\.0\\.1:${port}/api/v1/docs`));
        assert.match(serving.msg, /metrics off \(WARDEN_METRICS_TOKEN unset\)/);
        if (dialect === "sqlite") assert.ok(serving.msg.includes(`Data: SQLite ${join(env.WARDEN_DATA_DIR ?? "", "warden.sqlite")}.`), serving.msg);
        else assert.match(serving.msg, /Data: PostgreSQL 127\.0\.0\.1:5432\/test\./);
        assert.doesNotMatch(output.stdout + output.stderr, /hunter2/);
        const warnings = summary.filter((line) => line.level === 40).map((line) => line.msg);
        assert.ok(
          warnings.some((w) => w.startsWith("WARDEN_SECRET_KEY is not set") && w.includes(join(env.WARDEN_DATA_DIR ?? "", "secret.key"))),
          warnings.join("\n"),
        );
        assert.ok(warnings.some((w) => w.startsWith("WARDEN_ALLOW_PRIVATE_WEBHOOKS is on")));
        assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
      } finally {
        child.kill("SIGTERM");
      }
      const result = await exited;
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stderr, "");
    });

    test("with WARDEN_SECRET_KEY set and private webhooks off, nothing is warned of", async () => {
      const env = await privateDatabaseEnv(dialect);
      const { child, output, exited } = spawnWarden({ ...env, LOG_LEVEL: "info", WARDEN_SECRET_KEY: SECRET });
      try {
        for (let i = 0; i < 600 && !output.stdout.includes("Warden is serving"); i++) {
          if (child.exitCode !== null) break;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        assert.match(output.stdout, /Warden is serving/);
        assert.doesNotMatch(output.stdout, /"level":40/);
      } finally {
        child.kill("SIGTERM");
      }
      assert.equal((await exited).code, 0);
    });
  });
}

test("a HOST that does not resolve is named as such, not blamed on the database", async () => {
  const dir = await privateDatabaseEnv("sqlite");
  assertOneLine(
    await failToStart({ ...dir, WARDEN_SECRET_KEY: SECRET, HOST: "nohost.invalid" }),
    /^warden: cannot listen on nohost\.invalid: the host name does not resolve \(ENOTFOUND\); set HOST to an address of this machine/,
  );
});

describe("the one line for a fault outside the code", () => {
  const config = parseConfig({ WARDEN_DATA_DIR: "/srv/warden" });

  test("a native module built for another Node.js keeps its whole cause and says to reinstall it", async () => {
    // Node's own message when better-sqlite3 was compiled for Node 20 and runs on 24.
    const mismatch = Object.assign(
      new Error(
        "The module '/srv/warden/node_modules/better-sqlite3/build/Release/better_sqlite3.node'\nwas compiled against a different Node.js version using\nNODE_MODULE_VERSION 115. This version of Node.js requires\nNODE_MODULE_VERSION 137. Please try re-compiling or re-installing\nthe module (for instance, using `npm rebuild` or `npm install`).",
      ),
      { code: "ERR_DLOPEN_FAILED" },
    );
    const line = describeStartFailure(mismatch, config);
    assert.doesNotMatch(line, /\n/);
    assert.match(line, /^cannot load the SQLite driver \(better-sqlite3\) in Node\.js v\d+/);
    assert.match(
      line,
      /better_sqlite3\.node' was compiled against a different Node\.js version using NODE_MODULE_VERSION 115\. This version of Node\.js requires NODE_MODULE_VERSION 137\./,
    );
    assert.match(
      line,
      /using `npm rebuild` or `npm install`\); reinstall it for this Node\.js: run npm ci \(or npm rebuild better-sqlite3\) in Warden's folder$/,
    );

    // The same for a real failure to load, here a file that is no compiled module at all.
    const dir = await mkdtemp(join(tmpdir(), "warden-dlopen-"));
    const file = join(dir, "better_sqlite3.node");
    await writeFile(file, "not a shared object");
    let real: unknown;
    try {
      process.dlopen({ exports: {} }, file);
    } catch (error) {
      real = error;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    assert.match(describeStartFailure(real, config), /^cannot load the SQLite driver .*better_sqlite3\.node.*; reinstall it for this Node\.js: run npm ci/);
  });

  test("Node.js below 22.14 is refused in words (better-sqlite3 crashes there); 22.14, 24 and later are not", () => {
    for (const version of ["v20.20.2", "v22.13.1", "v18.20.0"]) {
      assert.equal(
        describeUnsupportedNode(version),
        `Warden needs Node.js 22 (22.14 or newer) or 24, and this is ${version}: scripts/install-node.sh 24 fetches Node.js 24 and prints its folder; put its bin/ first on PATH, then run npm ci in Warden's folder`,
      );
    }
    for (const version of ["v22.14.0", "v22.23.3", "v24.0.0", "v24.21.0", "v26.1.0"]) assert.equal(describeUnsupportedNode(version), null, version);
  });

  test("anything else keeps its whole message, on one line", () => {
    assert.equal(describeStartFailure(new Error("first\n  second"), config), "could not start: first second");
  });
});
