import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";

// scripts/check-self-contained.mjs, run as `npm test` runs it, on throwaway git checkouts.
// The planted references are assembled from pieces so this file passes the check itself.
const SCRIPT = fileURLToPath(new URL("../scripts/check-self-contained.mjs", import.meta.url));
const REPO = fileURLToPath(new URL("..", import.meta.url));
const up = (levels: number) => "../".repeat(levels);
const sibling = ["shared", "spec", "entitlement-api.md"].join("/");

function checkout(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "warden-self-contained-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  execFileSync("git", ["init", "-q"], { cwd: dir });
  execFileSync("git", ["add", "-A"], { cwd: dir });
  return dir;
}

function check(dir: string) {
  const run = spawnSync(process.execPath, [SCRIPT, dir], { encoding: "utf8" });
  return { status: run.status, output: run.stdout + run.stderr };
}

const clean = {
  "README.md": "# x\n\nSee [the API](docs/api.md) and [decisions](./docs/decisions.md); scratch in /tmp/a.\n",
  "docs/api.md": "Back to the [README](../README.md); config in /etc/postgresql.\n",
  "src/a/b.test.ts": `const fixture = new URL("${up(1)}fixtures/x.json", import.meta.url);\nimport { x } from "${up(2)}c.js";\n`,
  ".ci/run": "#!/bin/sh\nnpm ci && npm test\n",
};

describe("the self-contained check", () => {
  test("this repository passes", () => {
    const { status, output } = check(REPO);
    assert.equal(status, 0, output);
  });

  test("a checkout whose references all stay inside passes", () => {
    const dir = checkout(clean);
    try {
      const { status, output } = check(dir);
      assert.equal(status, 0, output);
      assert.match(output, /4 tracked files/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a new file git does not ignore is checked before it is committed; an ignored one is not", () => {
    const dir = checkout({ ...clean, ".gitignore": "tmp/\n" });
    try {
      writeFileSync(join(dir, "notes.md"), `See ${up(1)}${sibling}.\n`);
      mkdirSync(join(dir, "tmp"));
      writeFileSync(join(dir, "tmp", "scratch.md"), `See ${up(2)}${sibling}.\n`);
      const { status, output } = check(dir);
      assert.equal(status, 1, output);
      assert.match(output, /^notes\.md:1: /m);
      assert.doesNotMatch(output, /scratch/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  const planted: Array<[string, string, string, RegExp]> = [
    ["a README linking the material beside the repository", "README.md", `It implements \`${up(1)}${sibling}\`.\n`, /README\.md:1: .*outside the repository/],
    ["a test reading a file above the repository", "src/a/b.test.ts", `readFileSync(new URL("${up(3)}${sibling}", import.meta.url));\n`, /climbs 1 level/],
    [
      "an absolute path to a worktree",
      "bench/run.ts",
      `const out = "${["", "work", "wt-x", "bench"].join("/")}";\n`,
      /bench\/run\.ts:1: .*machine it was written on/,
    ],
    ["a home folder", "docs/setup.md", `Copy ${["", "home", "ada", ".npmrc"].join("/")} first.\n`, /home folder/],
    ["CI reading the material beside the repository", ".ci/run", `#!/bin/sh\ncp -r ${up(1)}${dirname(sibling)} spec\n`, /\.ci\/run:2: /],
  ];
  for (const [name, path, text, expected] of planted) {
    test(`fails on ${name}`, () => {
      const dir = checkout({ ...clean, [path]: text });
      try {
        const { status, output } = check(dir);
        assert.equal(status, 1, output);
        assert.match(output, expected);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
