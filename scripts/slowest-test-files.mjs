// A node:test reporter that prints, once every file has run, the files that took longest
// (each file's top-level tests and suites summed): where the test run's time goes, in
// every CI log, so that a run that grows is cut where it is long.
import { relative } from "node:path";

const SHOWN = 25;

export default async function* slowestTestFiles(source) {
  const byFile = new Map();
  for await (const event of source) {
    if ((event.type !== "test:pass" && event.type !== "test:fail") || event.data.nesting !== 0 || !event.data.file) continue;
    const file = relative(process.cwd(), event.data.file);
    byFile.set(file, (byFile.get(file) ?? 0) + (event.data.details?.duration_ms ?? 0));
  }
  const rows = [...byFile].sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((sum, [, ms]) => sum + ms, 0);
  yield `\nThe ${Math.min(SHOWN, rows.length)} slowest of ${rows.length} test files (${Math.round(total / 1000)} s summed over files that ran side by side):\n`;
  for (const [file, ms] of rows.slice(0, SHOWN)) yield `${String(Math.round(ms / 1000)).padStart(6)} s  ${file}\n`;
}
