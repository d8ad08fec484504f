import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";

// scripts/check-layers.mjs, run as `npm test` runs it, on this checkout and on planted trees.
const SCRIPT = fileURLToPath(new URL("../scripts/check-layers.mjs", import.meta.url));
const REPO = fileURLToPath(new URL("..", import.meta.url));

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "warden-layers-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

function check(dir: string) {
  const run = spawnSync(process.execPath, [SCRIPT, dir], { encoding: "utf8" });
  return { status: run.status, output: run.stdout + run.stderr };
}

// Down the layers only: a route calls a use case, which calls a store, which uses the db and the foundation's types.
const layered = {
  "src/app.ts": 'import { routes } from "./grants/grant.routes.js";\n',
  "src/grants/grant.routes.ts": 'import { grant } from "./grant.service.js";\n',
  "src/grants/grant.service.ts": 'import { insertGrant } from "./grant.store.js";\nimport type { Services } from "../services.js";\n',
  "src/grants/grant.store.ts": 'import type { Executor } from "../db/database.js";\nimport type { Grant } from "./grant.types.js";\n',
  "src/grants/grant.types.ts": 'import type { Env } from "../db/schema.js";\n',
  "src/db/database.ts": 'import { ApiError } from "../errors/errors.js";\n',
  "src/db/schema.ts": "export type Env = 'test' | 'live';\n",
  "src/errors/errors.ts": "export class ApiError extends Error {}\n",
  "src/services.ts": 'import type { Db } from "./db/database.js";\n',
  "src/grants/grant.routes.test.ts": 'import { buildApp } from "../app.js";\n',
};

describe("the layers check", () => {
  test("this repository passes", () => {
    const { status, output } = check(REPO);
    assert.equal(status, 0, output);
    assert.match(output, /0 imports up a layer; 0 circles/);
  });

  test("a tree whose imports run down the layers passes; tests may import anything", () => {
    const dir = tree(layered);
    try {
      const { status, output } = check(dir);
      assert.equal(status, 0, output);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a store importing a use case, or a use case a route, fails, naming both files and layers", () => {
    const dir = tree({
      ...layered,
      "src/grants/grant.store.ts": 'import { grant } from "./grant.service.js";\n',
      "src/grants/grant.service.ts": 'import { routes } from "./grant.routes.js";\n',
    });
    try {
      const { status, output } = check(dir);
      assert.equal(status, 1);
      assert.match(output, /up a layer: grants\/grant\.store\.ts \(stores\) imports grants\/grant\.service\.ts \(use cases\)/);
      assert.match(output, /up a layer: grants\/grant\.service\.ts \(use cases\) imports grants\/grant\.routes\.ts \(pages and routes\)/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("an import circle fails, even within one layer and through type-only imports", () => {
    const dir = tree({
      ...layered,
      "src/a/a.service.ts": 'import type { B } from "../b/b.service.js";\n',
      "src/b/b.service.ts": 'import { c } from "../c/c.service.js";\n',
      "src/c/c.service.ts": 'export type { A } from "../a/a.service.js";\n',
    });
    try {
      const { status, output } = check(dir);
      assert.equal(status, 1);
      assert.match(output, /circle: a\/a\.service\.ts ↔ b\/b\.service\.ts ↔ c\/c\.service\.ts/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
