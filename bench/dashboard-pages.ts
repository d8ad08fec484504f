// Scenario 7: the dashboard's main pages at the workspace's size (issue 24, point 8):
// as many events as customers (1,000,000 of each at `--size full`), spread over the last
// 30 days, each with a delivery to one endpoint (1 in 100 failed) and its attempt, and an
// audit log of a tenth as many entries. An owner signs in through the operator's one-time
// link, as a vendor would the first time; then each page is requested one at a time with
// that session's cookie, like a person clicking, and timed from request to last byte.
import { sql } from "kysely";
import { DAY_MS } from "../src/clock.js";
import type { Storage } from "../src/db/database.js";
import { EVENT_TYPES, type EventType } from "../src/events/event-types.js";
import { randomBase62 } from "../src/ids.js";
import { BENCH, emailOf, hash32 } from "./customer-mix.js";
import { type DatabasePids, databaseCpu } from "./load.js";
import { machineCpuSeconds, type ServerProcess, waitForQuietMachine } from "./processes.js";
import type { BenchWorkspace } from "./seed.js";
import { addBenchEndpoint, seedEvents } from "./seed-events.js";

export const DASHBOARD_ENDPOINT = "ep_benchdashboard00000000000";
/** The event type a vendor filters for that is rarest in the seeded mix (1 in 1,000). */
const RARE_TYPE: EventType = "dispute.closed";

/** Type of event n: mostly sales, some renewals and cancellations, few refunds, fewer disputes. */
function typeOf(n: number): EventType {
  const r = hash32(n, 71) % 1000;
  if (r === 0) return RARE_TYPE;
  if (r < 10) return "payment.disputed";
  if (r < 60) return "payment.refunded";
  const common = EVENT_TYPES.filter((t) => t !== RARE_TYPE && t !== "payment.disputed" && t !== "payment.refunded");
  return common[r % common.length] as EventType;
}

export interface DashboardSeed {
  events: number;
  auditEntries: number;
  seconds: number;
}

/** The month of events, their deliveries and attempts, and the audit log, in the workspace's environment. */
export async function seedDashboard(storage: Storage, ws: BenchWorkspace, events: number, now: number, log: (line: string) => void): Promise<DashboardSeed> {
  const started = performance.now();
  await addBenchEndpoint(storage, ws, DASHBOARD_ENDPOINT, now - 31 * DAY_MS);
  let shown = 0;
  await seedEvents(
    storage,
    ws,
    {
      endpointId: DASHBOARD_ENDPOINT,
      count: events,
      oldest: now - 30 * DAY_MS,
      newest: now - 60_000,
      idPrefix: "dash",
      typeOf,
      failed: (n) => hash32(n, 72) % 100 === 0,
    },
    (done) => {
      if (done - shown >= 100_000 || done === events) {
        log(`  seeded ${done.toLocaleString("en")} events with their deliveries and attempts`);
        shown = done;
      }
    },
  );
  const auditEntries = Math.max(100, Math.round(events / 10));
  const owner = await storage.db.selectFrom("owners").select("id").where("email", "=", BENCH.ownerEmail).executeTakeFirstOrThrow();
  const actions = ["grant.created", "grant.revoked", "delivery.resent", "event.example_sent", "key.created"];
  for (let from = 0; from < auditEntries; from += 1000) {
    const rows = Array.from({ length: Math.min(1000, auditEntries - from) }, (_, k) => {
      const n = from + k;
      return {
        id: `aud_${randomBase62(24)}`,
        owner_id: owner.id,
        owner_email: BENCH.ownerEmail,
        workspace_id: ws.workspaceId,
        env: ws.env,
        action: actions[n % actions.length] as string,
        subject: emailOf(n),
        created_at: now - 30 * DAY_MS + Math.floor((n / auditEntries) * 30 * DAY_MS),
      };
    });
    await storage.db.insertInto("audit_log").values(rows).execute();
  }
  if (storage.dialect === "postgres") {
    for (const table of ["events", "deliveries", "delivery_attempts", "audit_log", "webhook_endpoints"]) await sql.raw(`analyze ${table}`).execute(storage.db);
  } else {
    await sql`pragma wal_checkpoint(TRUNCATE)`.execute(storage.db);
  }
  return { events, auditEntries, seconds: (performance.now() - started) / 1000 };
}

/** The session cookie of the benchmark's owner, from `warden admin login-link` opened and confirmed as a browser does. */
export async function signInOwner(warden: ServerProcess, loginLink: () => unknown): Promise<string> {
  const { url } = loginLink() as { url: string };
  const path = new URL(url).pathname;
  const opened = await fetch(`${warden.url}${path}`);
  const form = await opened.text();
  const csrf = /name="_csrf" value="([0-9a-f]+)"/.exec(form)?.[1];
  const browser = cookiesOf(opened);
  if (opened.status !== 200 || !csrf || !browser) throw new Error(`the login link's page answered ${opened.status}`);
  const confirmed = await fetch(`${warden.url}${path}`, {
    method: "POST",
    headers: { cookie: browser, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ _csrf: csrf }).toString(),
    redirect: "manual",
  });
  await confirmed.arrayBuffer();
  const session = cookiesOf(confirmed);
  if (confirmed.status !== 303 || !session) throw new Error(`confirming the login link answered ${confirmed.status}`);
  return session;
}

const cookiesOf = (response: Response) =>
  response.headers
    .getSetCookie()
    .map((line) => line.split(";")[0])
    .filter((pair) => pair && !pair.endsWith("="))
    .join("; ");

export interface PageTiming {
  name: string;
  /** An example of the addresses asked for (one per request when the page is about a random customer or event). */
  example: string;
  requests: number;
  latencyMs: { p50: number; p99: number; max: number };
  bytes: number;
  /** % of one core while this page was measured: Warden, its PostgreSQL backends, this process (the client), the rest of the machine. */
  cpu: { server: number; db: number; client: number; rest: number };
  /**
   * CPU time a request took, in ms, Warden's and PostgreSQL's backends' together: what the
   * page costs whatever else the machine runs, where its latency on a busy machine is
   * mostly the wait for a core.
   */
  cpuMsPerRequest: number;
}

export interface DashboardResult {
  customers: number;
  seed: DashboardSeed;
  pages: PageTiming[];
  peakRssMb: number;
}

/** A signed-in owner's pages timed in one Warden process (scenarios 7 and 9). */
export interface PageRun {
  warden: ServerProcess;
  cookie: string;
  requests: number;
  warmup: number;
  patient: boolean;
  pids?: DatabasePids;
  log: (line: string) => void;
}

export interface PageSpec {
  name: string;
  /** The path of request n (relative to the workspace environment's pages unless it starts with /). */
  path: (n: number) => string;
  /** The search answers with a redirect to the customer's page: the page is followed, as a browser does. */
  follow?: boolean;
}

function quantile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
}

async function get(warden: ServerProcess, cookie: string, path: string, follow = false): Promise<{ status: number; body: string; ms: number }> {
  const started = performance.now();
  let response = await fetch(`${warden.url}${path}`, { headers: { cookie }, redirect: "manual" });
  if (follow && response.status === 303) {
    await response.arrayBuffer();
    response = await fetch(`${warden.url}${response.headers.get("location")}`, { headers: { cookie }, redirect: "manual" });
  }
  const body = await response.text();
  return { status: response.status, body, ms: performance.now() - started };
}

/** The href of a page's "Older … →" link, or null. */
const nextLink = (body: string) => /<a class="button small" href="([^"]+)">Older [a-z]+ →<\/a>/.exec(body)?.[1]?.replaceAll("&amp;", "&") ?? null;

/** Follows a list's "Older" links up to `pages` times; answers the last page's address and how many pages were walked. */
async function walk(warden: ServerProcess, cookie: string, first: string, pages: number): Promise<{ path: string; depth: number }> {
  let path = first;
  let depth = 1;
  for (; depth < pages; depth++) {
    const page = await get(warden, cookie, path);
    if (page.status !== 200) throw new Error(`${path} answered ${page.status}`);
    const next = nextLink(page.body);
    if (next === null) break;
    path = next;
  }
  return { path, depth };
}

/**
 * Times every main page `requests` times, one request at a time, after `warmup`
 * requests. Any answer but 200 fails the run: a page that errs is not a fast page.
 */
export async function measureDashboard(options: PageRun & { customers: number; events: number }): Promise<PageTiming[]> {
  const { warden, cookie, customers, events } = options;
  const here = `/dashboard/w/${BENCH.workspace}/live`;
  const customer = (n: number) => emailOf(hash32(n, 73) % customers);
  const event = (n: number) => `evt_dash${String(hash32(n, 74) % events).padStart(20, "0")}`;
  // The customers list reaches its newest 2,000 holders and 2,000 members (docs/api.md):
  // its deepest page is the last one reachable; the events list goes back as far as there are events.
  const deepCustomers = await walk(warden, cookie, `${here}/customers?tool=${BENCH.tool}`, 1_000);
  const deepEvents = await walk(warden, cookie, `${here}/events`, 40);
  options.log(`  deepest pages: customers page ${deepCustomers.depth}, events page ${deepEvents.depth}`);
  const pages: PageSpec[] = [
    { name: "Overview", path: () => here },
    { name: "Customers, first page", path: () => `${here}/customers?tool=${BENCH.tool}` },
    { name: `Customers, page ${deepCustomers.depth} (the last reachable)`, path: () => deepCustomers.path },
    { name: "Customers, entitled only", path: () => `${here}/customers?tool=${BENCH.tool}&entitled=yes` },
    {
      name: "Customer search (redirect + the customer's page)",
      path: (n) => `${here}/customers/search?tool=${BENCH.tool}&email=${encodeURIComponent(customer(n))}`,
      follow: true,
    },
    { name: "A customer's page", path: (n) => `${here}/customers/${BENCH.tool}/${encodeURIComponent(customer(n))}` },
    { name: "Events, first page", path: () => `${here}/events` },
    { name: `Events, page ${deepEvents.depth}`, path: () => deepEvents.path },
    { name: "Events of a common type", path: () => `${here}/events?type=purchase.completed` },
    { name: `Events of a rare type (${RARE_TYPE}, 1 in 1,000)`, path: () => `${here}/events?type=${RARE_TYPE}` },
    { name: "Events of the last hour", path: () => `${here}/events?within=hour` },
    { name: "Events of a rare type in the last 7 days", path: () => `${here}/events?type=${RARE_TYPE}&within=week` },
    { name: "An event's page", path: (n) => `${here}/events/${event(n)}` },
    { name: "Deliveries, first page", path: () => `${here}/events/deliveries` },
    { name: "Deliveries that failed (1 in 100)", path: () => `${here}/events/deliveries?status=failed` },
    { name: "Deliveries of the endpoint in the last day", path: () => `${here}/events/deliveries?endpoint=${DASHBOARD_ENDPOINT}&within=day` },
    { name: "The endpoint's page", path: () => `${here}/webhooks/${DASHBOARD_ENDPOINT}` },
    { name: "Audit log", path: () => "/dashboard/audit" },
  ];
  return timePages(options, pages);
}

/** Each page `requests` times, one at a time after `warmup` unmeasured ones, with its CPU accounted; any answer but 200 fails the run. */
export async function timePages(options: PageRun, pages: readonly PageSpec[]): Promise<PageTiming[]> {
  const { warden, cookie } = options;
  const timings: PageTiming[] = [];
  for (const spec of pages) {
    for (let n = 0; n < options.warmup; n++) await get(warden, cookie, spec.path(n + options.requests), spec.follow);
    if (options.patient) await waitForQuietMachine(10, 30);
    const cpuAtStart = warden.cpuSeconds();
    const machineAtStart = machineCpuSeconds();
    const dbAtStart = await databaseCpu(options.pids);
    const clientAtStart = process.cpuUsage();
    const started = performance.now();
    const times: number[] = [];
    let bytes = 0;
    for (let n = 0; n < options.requests; n++) {
      const path = spec.path(n);
      const page = await get(warden, cookie, path, spec.follow);
      if (page.status !== 200) throw new Error(`dashboard page ${spec.name} (${path}) answered ${page.status}: ${page.body.slice(0, 300)}`);
      times.push(page.ms);
      bytes += page.body.length;
    }
    const seconds = (performance.now() - started) / 1000;
    const dbAtEnd = await databaseCpu(options.pids);
    let dbCpu = 0;
    for (const [pid, cpu] of dbAtEnd) dbCpu += cpu - (dbAtStart.get(pid) ?? 0);
    const client = process.cpuUsage(clientAtStart);
    const percent = (cpuSeconds: number) => (cpuSeconds / seconds) * 100;
    const server = percent(warden.cpuSeconds() - cpuAtStart);
    const db = percent(dbCpu);
    const clientPercent = percent((client.user + client.system) / 1e6);
    const rest = Math.max(0, percent(machineCpuSeconds().busy - machineAtStart.busy) - server - db - clientPercent);
    times.sort((a, b) => a - b);
    const timing: PageTiming = {
      name: spec.name,
      example: spec.path(0),
      requests: options.requests,
      latencyMs: { p50: quantile(times, 50), p99: quantile(times, 99), max: times[times.length - 1] ?? Number.NaN },
      bytes: Math.round(bytes / options.requests),
      cpu: { server, db, client: clientPercent, rest },
      cpuMsPerRequest: (((server + db) / 100) * seconds * 1000) / options.requests,
    };
    timings.push(timing);
    options.log(
      `  ${spec.name}: p50 ${timing.latencyMs.p50.toFixed(1)} ms, p99 ${timing.latencyMs.p99.toFixed(1)} ms, ${timing.cpuMsPerRequest.toFixed(2)} ms of CPU a request (${timing.bytes.toLocaleString("en")} B; CPU server ${Math.round(server)}% / db ${Math.round(db)}% / rest ${Math.round(rest)}%)`,
    );
  }
  return timings;
}
