// The run's figures as a table (printed and written as Markdown) and as JSON, with the
// issue's targets checked against them.
import type { EngineResult, Preset } from "./engine-run.js";
import type { Measured } from "./load.js";

export interface RunInfo {
  startedAt: string;
  preset: Preset;
  machine: { cpus: number; cpuModel: string; memoryGb: number; node: string; sqlite: string; postgres: string | null };
  pinning: string;
  commit: string;
  /** Files under src/ changed since that commit when the run started. */
  uncommitted: string[];
  profiled: boolean;
}

export interface TargetCheck {
  target: string;
  engine: string;
  measured: string;
  met: boolean | null;
}

const ms = (value: number) => (value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2));
const int = (value: number) => Math.round(value).toLocaleString("en");
const ratio = (value: number) => `${value.toFixed(value < 0.1 ? 3 : 2)}×`;
const customers = (n: number) => (n >= 1_000_000 ? `${n / 1_000_000}M` : n >= 1000 ? `${n / 1000}k` : String(n));

export function checkTargets(engines: EngineResult[], preset: Preset): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const largest = preset.sizes[preset.sizes.length - 1] ?? 0;
  for (const e of engines) {
    const minRatio = e.engine === "sqlite" ? 0.5 : 0.25;
    const retrieveMet = e.retrieve.ratio >= minRatio && (e.engine !== "sqlite" || e.retrieve.latencyMs.p99 < 10);
    checks.push({
      target: e.engine === "sqlite" ? "Retrieve ≥ 0.5× baseline req/s, p99 < 10 ms" : "Retrieve ≥ 0.25× baseline req/s",
      engine: e.engine,
      measured: `${ratio(e.retrieve.ratio)}, p99 ${ms(e.retrieve.latencyMs.p99)} ms`,
      met: retrieveMet,
    });
    const first = e.scaling[0];
    const lastPoint = e.scaling[e.scaling.length - 1];
    if (first && lastPoint && lastPoint !== first) {
      const growth = lastPoint.loaded.latencyMs.p50 / first.loaded.latencyMs.p50;
      const singleGrowth = lastPoint.single.latencyMs.p50 / first.single.latencyMs.p50;
      checks.push({
        target: `p50 at ${customers(largest)} within 1.3× of p50 at ${customers(first.customers)}${largest < 1_000_000 ? " (the issue's target is at 1M: bench:full)" : ""}`,
        engine: e.engine,
        measured: `${ratio(growth)} at ${preset.connections} connections (${ms(first.loaded.latencyMs.p50)} → ${ms(lastPoint.loaded.latencyMs.p50)} ms); ${ratio(singleGrowth)} at 1 connection`,
        met: growth <= 1.3,
      });
    }
    checks.push({
      target: "Last list page within 1.5× of the first",
      engine: e.engine,
      measured: `${ratio(e.list.lastOverFirst)} (${ms(e.list.firstPageMs.p50)} → ${ms(e.list.lastPageMs.p50)} ms)`,
      met: e.list.lastOverFirst <= 1.5,
    });
    checks.push({
      target: "Peak RSS under the retrieve benchmark < 250 MB",
      engine: e.engine,
      measured: `${e.retrieve.peakRssMb.toFixed(0)} MB`,
      met: e.retrieve.peakRssMb < 250,
    });
    checks.push({
      target: "Every grant counted and stored",
      engine: e.engine,
      measured: `${int(e.grants.acknowledged)} acknowledged, ${int(e.grants.stored)} stored, counters ${Object.values(e.grants.counters).map(int).join("/")}`,
      met: e.grants.consistent,
    });
  }
  return checks;
}

function loadRow(name: string, engine: string, m: Measured, extra: { ratio?: number; rssMb?: number } = {}): string {
  return `| ${name} | ${engine} | ${int(m.reqPerSec)} | ${ms(m.latencyMs.p50)} | ${ms(m.latencyMs.p99)} | ${extra.rssMb === undefined ? "" : extra.rssMb.toFixed(0)} | ${extra.ratio === undefined ? "" : ratio(extra.ratio)} | ${Math.round(m.serverCpuPercent)} / ${Math.round(m.dbCpuPercent)} / ${Math.round(m.loadCpuPercent)} / ${Math.round(m.otherCpuPercent)} |`;
}

export function renderMarkdown(info: RunInfo, engines: EngineResult[], checks: TargetCheck[]): string {
  const p = info.preset;
  const lines: string[] = [];
  lines.push(`# Warden benchmark: ${p.name} run of ${info.startedAt}`);
  lines.push("");
  lines.push(
    `${info.machine.cpus} × ${info.machine.cpuModel}, ${info.machine.memoryGb} GB; Node ${info.machine.node}; SQLite ${info.machine.sqlite}; ${info.machine.postgres ? `PostgreSQL ${info.machine.postgres}` : "no PostgreSQL"}. ` +
      `Commit ${info.commit}${info.uncommitted.length > 0 ? ` with ${info.uncommitted.length} uncommitted files under src/` : ""}. ${info.pinning}` +
      `${info.profiled ? " **Profiled run (node --cpu-prof): figures are lower than an unprofiled run's.**" : ""}`,
  );
  lines.push("");
  lines.push(
    `Load: autocannon, ${p.connections} connections, ${p.warmupSec} s warm-up then ${p.durationSec} s measured, each server in a fresh process. Latencies are from request to last byte. CPU is in % of one core during the measured run: the server under test, the PostgreSQL backends serving it, the load generator, and the rest of the machine (other work; a run disturbed by more than 25% is repeated, up to three times, keeping the least disturbed).`,
  );
  lines.push("");
  lines.push("| Scenario | Engine | req/s | p50 ms | p99 ms | peak RSS MB | × baseline | CPU % server / db / load / rest |");
  lines.push("|---|---|---:|---:|---:|---:|---:|---:|");
  for (const e of engines) {
    lines.push(loadRow(`Baseline node:http GET (${e.retrieveBodyBytes} B)`, e.engine, e.baselineRetrieve));
  }
  for (const e of engines) {
    lines.push(loadRow(`1. Retrieve a customer (${customers(e.customers)})`, e.engine, e.retrieve, { ratio: e.retrieve.ratio, rssMb: e.retrieve.peakRssMb }));
  }
  for (const e of engines) {
    lines.push(loadRow(`Baseline node:http POST (${e.grantBodyBytes} B)`, e.engine, e.baselineGrant));
  }
  for (const e of engines) {
    lines.push(loadRow(`2. Create a grant (${customers(e.customers)})`, e.engine, e.grants, { ratio: e.grants.ratio, rssMb: e.grants.peakRssMb }));
  }
  lines.push("");
  lines.push(`### 3. List customers (${p.listPageSize} rows a page, one request at a time, median of ${engines[0]?.list.walks ?? 0} walks)`);
  lines.push("");
  lines.push("| Engine | Customers | Rows walked | Pages | First page ms | Last page ms | Last / first | Whole walk ms | peak RSS MB |");
  lines.push("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const e of engines) {
    const l = e.list;
    lines.push(
      `| ${e.engine} | ${customers(e.customers)} | ${int(l.rowsPerWalk)} | ${l.pagesPerWalk} | ${ms(l.firstPageMs.p50)} | ${ms(l.lastPageMs.p50)} | ${ratio(l.lastOverFirst)} | ${ms(l.walkMs.p50)} | ${l.peakRssMb.toFixed(0)} |`,
    );
  }
  lines.push("");
  lines.push(`### 4. Scaling: retrieve a customer as the workspace grows`);
  lines.push("");
  lines.push(`| Engine | Customers | req/s (${p.connections} conn.) | p50 ms (${p.connections} conn.) | p99 ms | p50 ms (1 conn.) | p50 vs smallest |`);
  lines.push("|---|---:|---:|---:|---:|---:|---:|");
  for (const e of engines) {
    const first = e.scaling[0];
    for (const s of e.scaling) {
      const vs = first ? ratio(s.loaded.latencyMs.p50 / first.loaded.latencyMs.p50) : "";
      lines.push(
        `| ${e.engine} | ${customers(s.customers)} | ${int(s.loaded.reqPerSec)} | ${ms(s.loaded.latencyMs.p50)} | ${ms(s.loaded.latencyMs.p99)} | ${ms(s.single.latencyMs.p50)} | ${vs} |`,
      );
    }
  }
  lines.push("");
  lines.push("### Targets");
  lines.push("");
  lines.push("| Target | Engine | Measured | Met |");
  lines.push("|---|---|---|---|");
  for (const c of checks) lines.push(`| ${c.target} | ${c.engine} | ${c.measured} | ${c.met === null ? "–" : c.met ? "yes" : "**no**"} |`);
  lines.push("");
  lines.push("### Seeding (not measured against any target)");
  lines.push("");
  lines.push("| Engine | Customers | Seconds | Rows added (people / licences / subscriptions / grants / devices / customers) |");
  lines.push("|---|---:|---:|---|");
  for (const e of engines) {
    for (const s of e.seeding) {
      const r = s.rows;
      lines.push(
        `| ${e.engine} | ${customers(s.customers)} | ${s.seconds.toFixed(1)} | ${[r.people, r.licences, r.subscriptions, r.grants, r.devices, r.customers].map((n) => int(n ?? 0)).join(" / ")} |`,
      );
    }
  }
  lines.push("");
  return lines.join("\n");
}
