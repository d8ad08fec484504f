// The layers of src/ (src/README.md, "Layers"), checked over TypeScript's own reading of
// each file's imports (ts.preProcessFile: static, type-only and dynamic imports alike, no
// type check needed, about a second for the whole tree). Fails on an import that runs up
// a layer and on any import circle; `--report` prints the figures instead of failing.
// `node scripts/check-layers.mjs [CHECKOUT]`: this checkout's src/ by default.
// A small script rather than dependency-cruiser: the rules are five lines of patterns
// below, and the TypeScript compiler is already a dependency.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";

// The checkout whose src/ is checked: this one, or the one named (tests plant trees).
const ROOT = process.argv.slice(2).find((a) => !a.startsWith("--")) ?? resolve(dirname(new URL(import.meta.url).pathname), "..");
const SRC = join(resolve(ROOT), "src");

/**
 * Layers from the top. A file is in the first layer one of whose patterns matches its
 * path under src/; it may import its own layer and those below, never one above.
 */
const LAYERS = [
  { name: "entry points", patterns: [/^(app|server|cli)\.ts$/, /^cli\//] },
  {
    name: "pages and routes",
    patterns: [
      /\.routes\.ts$/,
      /\.hook\.ts$/,
      /\.views\.ts$/,
      /^dashboard\//,
      /^customer-pages\/(layout|customer-session)\.ts$/,
      /^http\/(?!cursor\.ts$)/,
      /^client\/cors\.ts$/,
    ],
  },
  { name: "use cases", patterns: [/\.service\.ts$/, /^services\.ts$/, /./] },
  { name: "stores", patterns: [/\.store\.ts$/, /^customers\/answer-cache\.ts$/] },
  { name: "db", patterns: [/^db\//] },
  {
    name: "foundation",
    patterns: [
      /^(clock|config|ids|version)\.ts$/,
      /^errors\//,
      /\.(schema|types)\.ts$/,
      /^db\/schema\.ts$/,
      /^http\/cursor\.ts$/,
      /^customers\/(email|entitlement)\.ts$/,
      /^events\/event-types\.ts$/,
      /^i18n\//,
    ],
  },
];

/** The order patterns are tried in: the particular ones first, "use cases"' catch-all last. */
const ORDER = [0, 5, 1, 3, 4, 2];

function layerOf(path) {
  for (const index of ORDER) if (LAYERS[index].patterns.some((p) => p.test(path))) return index;
  throw new Error(`${path} is in no layer`);
}

function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "test-support" ? [] : sourceFiles(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") ? [path] : [];
  });
}

/** Each source file's imports of other source files, as paths under src/. */
function importGraph() {
  const files = sourceFiles(SRC);
  const known = new Set(files);
  const graph = new Map();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
    const targets = new Set();
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith(".")) continue;
      const target = resolve(dirname(file), fileName.replace(/\.js$/, ".ts"));
      if (known.has(target)) targets.add(relative(SRC, target));
    }
    graph.set(relative(SRC, file), [...targets].sort());
  }
  return graph;
}

/** The graph's strongly connected components of more than one file (Tarjan's algorithm): its import circles. */
function circles(graph) {
  let next = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  const visit = (v) => {
    index.set(v, next);
    low.set(v, next);
    next += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) === index.get(v)) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return found;
}

/** Imports from a file to one in a layer above its own. */
function upwardImports(graph) {
  const found = [];
  for (const [from, targets] of graph) {
    const own = layerOf(from);
    for (const to of targets) if (layerOf(to) < own) found.push({ from, to, fromLayer: LAYERS[own].name, toLayer: LAYERS[layerOf(to)].name });
  }
  return found;
}

{
  const graph = importGraph();
  const up = upwardImports(graph);
  const loops = circles(graph);
  for (const u of up) console.log(`up a layer: ${u.from} (${u.fromLayer}) imports ${u.to} (${u.toLayer})`);
  for (const c of loops) console.log(`circle: ${c.join(" ↔ ")}`);
  const lines = [...graph.keys()].reduce((n, f) => n + readFileSync(join(SRC, f), "utf8").split("\n").length, 0);
  console.log(`${graph.size} source files, ${lines} lines; ${up.length} imports up a layer; ${loops.length} circles`);
  if (!process.argv.includes("--report") && (up.length > 0 || loops.length > 0)) process.exit(1);
}
