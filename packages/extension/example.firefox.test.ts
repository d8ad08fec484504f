// The example's Firefox (MV3) build passes Mozilla's own linter, the one addons.mozilla.org
// runs on a submission (web-ext lint): no error and no warning, so a vendor starting
// from the example starts from a manifest Firefox accepts.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { after, test } from "node:test";
import { compileLibrary, exampleCopy } from "./test-support/example.js";

// Its package exports no package.json: its bin sits beside its main file.
const WEB_EXT = join(dirname(createRequire(import.meta.url).resolve("web-ext")), "bin", "web-ext.js");

interface LintReport {
  summary: { errors: number; warnings: number; notices: number };
  errors: { code: string; message: string }[];
  warnings: { code: string; message: string }[];
}

const library = compileLibrary();
const example = exampleCopy(library, {
  url: "https://acme.warden.example.com",
  workspace: "acme",
  tool: "tabmaster",
  env: "live",
  successUrl: "https://acme.example.com/thanks",
});
after(() => {
  example.remove();
  rmSync(library, { recursive: true, force: true });
});

test("the example's Firefox MV3 build passes web-ext lint with no error or warning", () => {
  const built = spawnSync(process.execPath, [join(import.meta.dirname, "scripts", "firefox-example.mjs"), example.dir], { encoding: "utf8" });
  assert.equal(built.status, 0, built.stderr);
  const manifest = JSON.parse(readFileSync(join(example.dir, "manifest.json"), "utf8")) as { background: unknown };
  assert.deepEqual(manifest.background, { scripts: ["background.js"], type: "module" });

  const lint = spawnSync(process.execPath, [WEB_EXT, "lint", "--source-dir", example.dir, "--output", "json", "--no-config-discovery"], {
    encoding: "utf8",
    timeout: 120_000,
    env: { ...process.env, NO_UPDATE_NOTIFIER: "1" },
  });
  const report = JSON.parse(lint.stdout) as LintReport;
  assert.deepEqual(
    [...report.errors, ...report.warnings].map((m) => `${m.code}: ${m.message}`),
    [],
  );
  assert.equal(lint.status, 0, lint.stderr);
});
