// The example extension as a test loads it: a copy of example/ in a folder of its own, the
// library compiled into its warden/ (as `npm run example` does for a developer), and a
// config.js pointing at the test's Warden.
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

const PACKAGE = join(import.meta.dirname, "..");

/** Compiles the library once per test file; answers the folder of its .js files. */
export function compileLibrary(): string {
  const out = mkdtempSync(join(tmpdir(), "warden-extension-lib-"));
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const result = spawnSync(process.execPath, [tsc, "-p", join(PACKAGE, "tsconfig.build.json"), "--outDir", out, "--declaration", "false"], {
    encoding: "utf8",
  });
  if (result.status !== 0) throw new Error(`tsc failed: ${result.stdout}${result.stderr}`);
  return out;
}

export interface ExampleConfig {
  url: string;
  workspace: string;
  tool: string;
  env: "test" | "live";
  successUrl: string;
}

/** A loadable copy of the example extension; answers its folder. */
export function exampleCopy(library: string, config: ExampleConfig): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), "warden-extension-example-"));
  // Without example/warden/ (a developer's copy of the library), but with warden-signed-in.html.
  cpSync(join(PACKAGE, "example"), dir, { recursive: true, filter: (source) => source !== join(PACKAGE, "example", "warden") });
  cpSync(library, join(dir, "warden"), { recursive: true });
  writeFileSync(join(dir, "config.js"), `export const config = ${JSON.stringify(config, null, 2)};\n`);
  if (!readdirSync(join(dir, "warden")).includes("index.js")) throw new Error("the compiled library has no index.js");
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
