// Fails when a tracked file reads or links something outside the repository: a relative
// path that climbs above the checkout, the team's materials beside it, or an absolute
// path into a home folder or the machine it was written on. Everything needed to build,
// test and understand Warden has to travel with a clone.
//   node scripts/check-self-contained.mjs [DIR]     (DIR: a git checkout, default this one)
// Scratch paths under /tmp and system paths (/etc, /usr) are fine: they are not the project.
// The patterns are assembled from pieces so that this file does not match itself.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, posix } from "node:path";
import { fileURLToPath } from "node:url";

const UP = "\\.\\./";
const NOT_IN_A_PATH = "(?<![\\w.:/~-])";
const ABSOLUTE = [
  { pattern: new RegExp(`${NOT_IN_A_PATH}/${"work"}(?:/|\\b)`, "g"), why: "an absolute path on the machine it was written on" },
  { pattern: new RegExp(`${NOT_IN_A_PATH}/(?:${["home", "root", "Users"].join("|")})/`, "g"), why: "an absolute path into a home folder" },
  { pattern: new RegExp(`[A-Za-z]:\\\\${"Users"}\\\\`, "g"), why: "an absolute path into a home folder" },
  { pattern: new RegExp(`\\b${"shared"}/(?:spec|guide)\\b`, "g"), why: "material kept outside the repository" },
];
const RELATIVE = new RegExp(`(?<![\\w.~/-])((?:${UP})+)([\\w@+.-]+(?:/[\\w@+.-]+)*)?`, "g");

// Recorded benchmark runs name where each run wrote its CPU profiles: an ignored folder of
// the checkout the run was made in. They are results to read, not paths anything opens.
const RECORDED_PROFILE = new RegExp(`"/${"work"}/[\\w.-]+/bench/tmp/profiles/[^"]*"`, "g");
const isRecordedRun = (file) => file.startsWith("bench/results/") && file.endsWith(".json");

/** The findings in one file's text: `{line, text, why}`. */
export function findingsIn(file, text) {
  const findings = [];
  const depth = posix.dirname(file) === "." ? 0 : posix.dirname(file).split("/").length;
  text.split("\n").forEach((raw, index) => {
    const line = isRecordedRun(file) ? raw.replace(RECORDED_PROFILE, '""') : raw;
    const report = (text, why) => findings.push({ line: index + 1, text, why });
    for (const { pattern, why } of ABSOLUTE) {
      for (const match of line.matchAll(pattern)) report(match[0], why);
    }
    for (const match of line.matchAll(RELATIVE)) {
      const ups = (match[1] ?? "").length / 3;
      if (ups > depth) report(match[0], `a relative path that climbs ${ups - depth} level(s) above the repository`);
    }
  });
  return findings;
}

/** Every finding in the checkout at `dir`: its tracked files, and new ones git does not ignore. */
export function checkCheckout(dir) {
  const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
    cwd: dir,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  })
    .split("\0")
    .filter(Boolean);
  const findings = [];
  for (const file of files) {
    let bytes;
    try {
      bytes = readFileSync(join(dir, file));
    } catch {
      continue; // tracked but deleted in the work tree: nothing there to read
    }
    if (bytes.includes(0)) continue; // binary
    for (const finding of findingsIn(file, bytes.toString("utf8"))) findings.push({ file, ...finding });
  }
  return { files: files.length, findings };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dir = process.argv[2] ?? fileURLToPath(new URL("..", import.meta.url));
  const { files, findings } = checkCheckout(dir);
  for (const { file, line, text, why } of findings) console.error(`${file}:${line}: ${text} (${why})`);
  if (findings.length > 0) {
    console.error(`self-contained check: ${findings.length} reference(s) outside the repository in ${files} tracked files`);
    process.exit(1);
  }
  console.log(`self-contained check: ${files} tracked files, nothing outside the repository`);
}
