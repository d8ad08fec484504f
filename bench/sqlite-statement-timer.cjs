// Times every SQLite statement a process runs, by its SQL text, and writes the 30 costliest
// to $STATEMENT_TIMES-<pid>.txt (default /tmp/statements) when the process ends: calls, total
// time in the driver, mean, and for commits and claims how their times spread (a commit
// that checkpoints takes 5-20 ms where others take under one). Given to every Warden
// process of a run through BENCH_NODE_OPTIONS:
//
//   BENCH_NODE_OPTIONS="--require $PWD/bench/sqlite-statement-timer.cjs" node --import tsx bench/run.ts --scenarios 5
//
// It wraps better-sqlite3's statement methods, so it sees the statements Kysely runs and
// those Warden runs on the connection directly (db/database.ts), transactions included.
const Database = require("better-sqlite3");
const { writeFileSync } = require("node:fs");

const stats = new Map();
const SPREAD = [0.25, 0.5, 1, 2, 5, 20, Number.POSITIVE_INFINITY];
const spreadFor = (key) => key === "commit" || key.startsWith('update "deliveries" set "locked_until"');

function record(text, ms) {
  const key = text.replace(/\s+/g, " ").trim().slice(0, 160);
  let entry = stats.get(key);
  if (!entry) {
    entry = { calls: 0, ms: 0, spread: SPREAD.map(() => ({ calls: 0, ms: 0 })) };
    stats.set(key, entry);
  }
  entry.calls++;
  entry.ms += ms;
  if (spreadFor(key)) {
    const bucket = entry.spread[SPREAD.findIndex((limit) => ms < limit)];
    bucket.calls++;
    bucket.ms += ms;
  }
}

const probe = new Database(":memory:");
const Statement = Object.getPrototypeOf(probe.prepare("select 1"));
probe.close();
for (const method of ["run", "all", "get", "iterate"]) {
  const original = Statement[method];
  Statement[method] = function timed(...args) {
    const started = performance.now();
    try {
      return original.apply(this, args);
    } finally {
      record(this.source, performance.now() - started);
    }
  };
}

function write() {
  const lines = [...stats]
    .sort((a, b) => b[1].ms - a[1].ms)
    .slice(0, 30)
    .map(([key, { calls, ms, spread }]) => {
      const spreads = spread
        .map((bucket, i) => (bucket.calls ? `<${SPREAD[i]} ms: ${bucket.calls} (${bucket.ms.toFixed(0)} ms)` : ""))
        .filter(Boolean)
        .join(", ");
      return `${ms.toFixed(0).padStart(7)} ms ${String(calls).padStart(7)} × ${((ms * 1000) / calls).toFixed(1).padStart(8)} µs  ${key}${spreads ? `  [${spreads}]` : ""}`;
    });
  writeFileSync(`${process.env.STATEMENT_TIMES ?? "/tmp/statements"}-${process.pid}.txt`, `${lines.join("\n")}\n`);
}
process.on("exit", write);
