// Summarises V8 CPU profiles (node --cpu-prof) of a Warden process: where the time went,
// by function (self time) and by area (Warden's code, each dependency, node internals,
// idle). Run alone on profiles of `npm run bench -- --profile`:
//
//   node --import tsx bench/profile-summary.ts bench/tmp/profiles/sqlite-retrieve-100000
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface ProfileSummary {
  file: string;
  totalMs: number;
  /** Share of samples that were not idle. */
  busyPercent: number;
  areas: { area: string; percent: number }[];
  functions: { name: string; where: string; percent: number }[];
  /** Inclusive time of Warden's own functions (self time plus everything they called). */
  wardenInclusive: { name: string; where: string; percent: number }[];
}

/** Warden's code: compiled (`warden serve`), or its sources run through tsx (bench/query-census.ts); not a dependency's. */
const isWarden = (url: string) => (url.includes("/dist/") || url.includes("/src/")) && !url.includes("/node_modules/");

function areaOf(url: string, name: string): string {
  if (name === "(idle)") return "idle";
  if (name === "(garbage collector)") return "garbage collector";
  if (name === "(program)") return "program (native, outside JS)";
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
  if (pkg) return pkg;
  if (isWarden(url)) return "warden";
  if (url.startsWith("node:") || url === "") return "node internals";
  return "other";
}

function shortUrl(url: string): string {
  const modules = url.lastIndexOf("node_modules/");
  if (modules >= 0) return url.slice(modules + "node_modules/".length);
  const dist = url.indexOf("/dist/");
  if (dist >= 0) return url.slice(dist + 1);
  const src = url.indexOf("/src/");
  if (src >= 0) return url.slice(src + 1);
  return url;
}

export function summariseProfile(file: string, top = 25): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

  const areas = new Map<string, number>();
  const functions = new Map<string, { name: string; where: string; us: number }>();
  const inclusive = new Map<string, { name: string; where: string; us: number }>();
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (!node) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const name = functionName || "(anonymous)";
    const area = areaOf(url, name);
    areas.set(area, (areas.get(area) ?? 0) + us);
    const key = `${name}@${url}:${lineNumber}`;
    const entry = functions.get(key) ?? { name, where: `${shortUrl(url)}:${lineNumber + 1}`, us: 0 };
    entry.us += us;
    functions.set(key, entry);
    // Inclusive time of Warden's functions: charge each sample once to every distinct Warden frame on its stack.
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)?.callFrame;
      if (!frame || !isWarden(frame.url)) continue;
      const frameKey = `${frame.functionName || "(anonymous)"}@${frame.url}:${frame.lineNumber}`;
      if (seen.has(frameKey)) continue;
      seen.add(frameKey);
      const inc = inclusive.get(frameKey) ?? { name: frame.functionName || "(anonymous)", where: `${shortUrl(frame.url)}:${frame.lineNumber + 1}`, us: 0 };
      inc.us += us;
      inclusive.set(frameKey, inc);
    }
  }
  const idle = areas.get("idle") ?? 0;
  const busy = total - idle;
  const percentOfBusy = (us: number) => (busy === 0 ? 0 : (us / busy) * 100);
  return {
    file,
    totalMs: total / 1000,
    busyPercent: total === 0 ? 0 : (busy / total) * 100,
    areas: [...areas]
      .filter(([area]) => area !== "idle")
      .map(([area, us]) => ({ area, percent: percentOfBusy(us) }))
      .sort((a, b) => b.percent - a.percent),
    functions: [...functions.values()]
      .filter((f) => f.name !== "(idle)")
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((f) => ({ name: f.name, where: f.where, percent: percentOfBusy(f.us) })),
    wardenInclusive: [...inclusive.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((f) => ({ name: f.name, where: f.where, percent: percentOfBusy(f.us) })),
  };
}

/** The .cpuprofile files of a folder (or the file itself). */
export function profileFiles(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .filter((f) => f.endsWith(".cpuprofile"))
    .map((f) => join(path, f));
}

export function renderProfile(summary: ProfileSummary, label: string): string {
  const lines = [
    `#### ${label}`,
    "",
    `${(summary.totalMs / 1000).toFixed(1)} s profiled, ${summary.busyPercent.toFixed(0)}% busy. Shares below are of busy time.`,
    "",
    "| Area | Busy % |",
    "|---|---:|",
    ...summary.areas.slice(0, 12).map((a) => `| ${a.area} | ${a.percent.toFixed(1)} |`),
    "",
    "| Function (self time) | Where | Busy % |",
    "|---|---|---:|",
    ...summary.functions.map((f) => `| \`${f.name}\` | ${f.where} | ${f.percent.toFixed(1)} |`),
    "",
    "| Warden function (inclusive) | Where | Busy % |",
    "|---|---|---:|",
    ...summary.wardenInclusive.map((f) => `| \`${f.name}\` | ${f.where} | ${f.percent.toFixed(1)} |`),
    "",
  ];
  return lines.join("\n");
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const path of process.argv.slice(2)) {
    for (const file of profileFiles(path)) process.stdout.write(`${renderProfile(summariseProfile(file), file)}\n`);
  }
}
