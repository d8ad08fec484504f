// The package as a vendor gets it: a copy of this folder alone builds and packs with its
// declared devDependencies, and the tarball installs into an empty project that then
// type-checks (strict, both module resolutions a vendor's build uses) and imports it. A
// copy, not this folder, so `prepack` never rewrites the dist/ another test may be reading
// and no ancestor node_modules hides a missing devDependency ("tsc: not found").
import assert from "node:assert/strict";
import { type SpawnSyncReturns, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, describe, test } from "node:test";

const PACKAGE = import.meta.dirname;
const ROOT = join(PACKAGE, "..", "..");
const TYPESCRIPT = dirname(createRequire(import.meta.url).resolve("typescript/package.json"));
const NPM_TIMEOUT_MS = 120_000;

const work = mkdtempSync(join(tmpdir(), "warden-extension-pack-"));
after(() => rmSync(work, { recursive: true, force: true }));

function run(command: string, args: string[], cwd: string): SpawnSyncReturns<string> {
  return spawnSync(command, args, { cwd, encoding: "utf8", timeout: NPM_TIMEOUT_MS, env: { ...process.env, npm_config_update_notifier: "false" } });
}

function ok(result: SpawnSyncReturns<string>, what: string): string {
  assert.equal(result.status, 0, `${what} failed:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

function readJson(path: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
}

/** The copy a vendor would clone: the package's own files, typescript installed as its devDependency says. */
function standaloneCopy(): string {
  const dir = join(work, "package");
  for (const entry of ["package.json", "README.md", "CHANGELOG.md", "tsconfig.build.json", "src"])
    cpSync(join(PACKAGE, entry), join(dir, entry), { recursive: true });
  // What `npm install` would lay out, from the root's copy: the machine may have no registry.
  mkdirSync(join(dir, "node_modules", ".bin"), { recursive: true });
  symlinkSync(TYPESCRIPT, join(dir, "node_modules", "typescript"), "dir");
  symlinkSync(join("..", "typescript", "bin", "tsc"), join(dir, "node_modules", ".bin", "tsc"));
  return dir;
}

const CONSUMER = `import { type AccessState, createWarden, WardenError, type WardenErrorType } from "@warden/extension";

const warden = createWarden({ url: "https://acme.warden.example.com", workspace: "acme", tool: "tabmaster", env: "live" });

export async function unlocked(): Promise<boolean> {
  try {
    const state: AccessState = await warden.access({ fresh: true });
    return state.entitled;
  } catch (error) {
    if (error instanceof WardenError) {
      const type: WardenErrorType = error.type;
      return type === "network_error" ? false : Promise.reject(error);
    }
    throw error;
  }
}

// @ts-expect-error env is "live" or "test": the types are the library's, not any.
createWarden({ url: "https://acme.warden.example.com", workspace: "acme", tool: "tabmaster", env: "prod" });
`;

describe("@warden/extension as a vendor installs it", () => {
  test("its manifest: a version, no private flag, exports with types, typescript at the root's version", () => {
    const manifest = readJson(join(PACKAGE, "package.json"));
    const root = readJson(join(ROOT, "package.json"));
    assert.match(String(manifest.version), /^\d+\.\d+\.\d+/);
    assert.equal(manifest.private, undefined);
    assert.equal(manifest.license, root.license);
    assert.deepEqual((manifest.exports as Record<string, unknown>)["."], { types: "./dist/index.d.ts", default: "./dist/index.js" });
    assert.equal((manifest.devDependencies as Record<string, string>).typescript, (root.devDependencies as Record<string, string>).typescript);
    assert.deepEqual(manifest.dependencies, undefined, "a library that ships to browsers has no runtime dependencies");
  });

  test("a copy of the folder packs (prepack builds); the tarball installs, type-checks and imports in an empty project", () => {
    const copy = standaloneCopy();
    const packed = JSON.parse(ok(run("npm", ["pack", "--json", "--pack-destination", work], copy), "npm pack")) as {
      filename: string;
      files: { path: string }[];
    }[];
    const tarball = packed[0];
    assert.ok(tarball, "npm pack answered no tarball");
    const files = tarball.files.map((file) => file.path).sort();
    for (const file of ["package.json", "README.md", "CHANGELOG.md", "dist/index.js", "dist/index.d.ts", "dist/warden.js"])
      assert.ok(files.includes(file), `the tarball lacks ${file}`);
    assert.deepEqual(
      files.filter((file) => file.includes(".test.") || file.startsWith("src/")),
      [],
      "tests and sources stay out",
    );

    const project = join(work, "project");
    mkdirSync(project);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "vendor-extension", private: true, type: "module" }));
    ok(run("npm", ["install", join(work, tarball.filename), "--no-audit", "--no-fund", "--ignore-scripts"], project), "npm install");
    assert.deepEqual(readdirSync(join(project, "node_modules")).sort(), [".package-lock.json", "@warden"], "nothing else installed");
    writeFileSync(join(project, "background.ts"), CONSUMER);

    for (const resolution of [
      { module: "NodeNext", moduleResolution: "NodeNext" },
      { module: "ESNext", moduleResolution: "Bundler" },
    ]) {
      const tsconfig = `tsconfig.${resolution.moduleResolution}.json`;
      const compilerOptions = { ...resolution, target: "ES2022", lib: ["ES2022", "DOM"], types: [], strict: true, noEmit: true, skipLibCheck: false };
      writeFileSync(join(project, tsconfig), JSON.stringify({ compilerOptions, files: ["background.ts"] }));
      ok(run(process.execPath, [join(TYPESCRIPT, "bin", "tsc"), "-p", tsconfig], project), `tsc (${resolution.moduleResolution})`);
    }

    const imported = ok(
      run(
        process.execPath,
        ["--input-type=module", "-e", 'const m = await import("@warden/extension"); console.log(typeof m.createWarden, typeof m.WardenError);'],
        project,
      ),
      "node import",
    );
    assert.equal(imported.trim(), "function function");
  });
});
