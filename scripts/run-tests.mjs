// Runs every *.test.ts under src and packages with node's own test runner (TypeScript
// through tsx).
// Node 20's --test takes no globs, so the files are listed here.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";

function findTests(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" || entry.name === "dist" ? [] : findTests(path);
    return entry.name.endsWith(".test.ts") ? [path] : [];
  });
}

const only = process.argv.slice(2);
const files = only.length > 0 ? only : [...findTests("src"), ...findTests("packages")].sort();
// The usual report, then the slowest files (scripts/slowest-test-files.mjs).
const reporters = [
  "--test-reporter=spec",
  "--test-reporter-destination=stdout",
  "--test-reporter=./scripts/slowest-test-files.mjs",
  "--test-reporter-destination=stdout",
];
const result = spawnSync(process.execPath, ["--import", "tsx", "--test", "--test-concurrency=2", ...reporters, ...files], { stdio: "inherit" });
process.exit(result.status ?? 1);
