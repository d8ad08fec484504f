// The load generator, run as its own process (pinned to the other core than the server
// under test): autocannon against one server, a warm-up and then the measured run.
// Latencies are recorded here at sub-millisecond resolution from autocannon's response
// events: its own histogram keeps whole milliseconds, too coarse to compare a 1 ms p50
// at 10,000 customers with one at 1,000,000.
//
//   node --import tsx bench/load-worker.ts '<LoadSpec as JSON>'
//
// Prints one JSON line per phase on stdout: {"event":"measuring"} when the measured run
// starts, then {"event":"done","result":…}.
import autocannon from "autocannon";
import { devicesOf, deviceTokenOf, emailOf, hash32 } from "./customer-mix.js";
import { STRIPE_PATH, signedCheckoutReport } from "./stripe-report.js";

export type LoadRequest =
  /** Retrieve a customer: a random one of the first `customers` seeded. */
  | { kind: "retrieve"; tool: string; customers: number }
  /** Create a grant for a new address per request, marked by `note`. */
  | { kind: "grant"; tool: string; note: string; tag: string }
  /**
   * The client API's access check by a seeded device of the first `customers`, with its own
   * token: request n of a run (warm-up included) asks for device `start` + n of a fixed
   * random order, a new device each time (`start` is random unless given); with `repeat`,
   * device `start` + (n mod repeat): the devices of an earlier run of `repeat` requests, again.
   */
  | { kind: "access"; tool: string; customers: number; start?: number; repeat?: number }
  /** A paid checkout reported by Stripe, a new sale per request (series `tag`), signed with the endpoint's `secret`. */
  | { kind: "ingest"; tag: string; secret: string }
  /** Spend one unit of `meter` for one person, each request with a new Idempotency-Key of series `tag`. */
  | { kind: "spend"; tool: string; email: string; meter: string; tag: string }
  /** A hosted page (`path`), with a web session's `cookie` when signed in and the browser's `acceptLanguage`. */
  | { kind: "page"; path: string; cookie?: string; acceptLanguage?: string };

export interface LoadSpec {
  url: string;
  key: string;
  connections: number;
  durationSec: number;
  warmupSec: number;
  request: LoadRequest;
}

export interface LoadResult {
  /** 2xx answers per second over the measured run. */
  reqPerSec: number;
  ok: number;
  /** Answers by status, e.g. {"200": 51234}. */
  statuses: Record<string, number>;
  errors: number;
  timeouts: number;
  durationSec: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  /** Mean bytes per answer, headers included. */
  bytesPerAnswer: number;
  /** CPU used by this load generator during the measured run, in % of one core. */
  loadCpuPercent: number;
  /** Requests of the warm-up that answered 2xx (they wrote, for grants). */
  warmupOk: number;
  /** The access check's devices: the first of the order and how many requests were made (warm-up included). */
  devices?: { start: number; requests: number };
}

type Method = "GET" | "POST";

// Across the warm-up and the measured run, so that every grant is for a new address, every
// Stripe report a new sale and every access check (without `repeat`) a new device.
let sequence = 0;
/** Chosen once a process, so that the warm-up and the measured run draw one order. */
let deviceStart: number | null = null;

function requestsFor(spec: LoadSpec): { method: Method; setupRequest: (req: autocannon.Request) => autocannon.Request }[] {
  const request = spec.request;
  if (request.kind === "retrieve") {
    const base = `/api/v1/tools/${request.tool}/customers/`;
    return [
      {
        method: "GET",
        setupRequest: (req) => ({ ...req, path: base + encodeURIComponent(emailOf(Math.floor(Math.random() * request.customers))) }),
      },
    ];
  }
  if (request.kind === "access") {
    const path = `/api/client/v1/tools/${request.tool}/access`;
    deviceStart ??= request.start ?? Math.floor(Math.random() * 2 ** 30);
    const start = deviceStart;
    return [
      {
        method: "GET",
        setupRequest: (req) => {
          const n = start + (request.repeat ? sequence % request.repeat : sequence);
          sequence += 1;
          // About half the customers have a device: draw until one has.
          for (let salt = 0; ; salt++) {
            const i = hash32(n, 81 + salt) % request.customers;
            const devices = devicesOf(i);
            if (devices === 0) continue;
            const authorization = `Bearer ${deviceTokenOf(i, hash32(n, 80) % devices)}`;
            return { ...req, path, headers: { ...req.headers, authorization } };
          }
        },
      },
    ];
  }
  if (request.kind === "ingest") {
    return [
      {
        method: "POST",
        setupRequest: (req) => {
          sequence += 1;
          const { payload, signature } = signedCheckoutReport(request.tag, sequence, request.secret);
          return { ...req, path: STRIPE_PATH, body: payload, headers: { ...req.headers, "stripe-signature": signature } };
        },
      },
    ];
  }
  if (request.kind === "page") {
    const headers = { ...(request.cookie ? { cookie: request.cookie } : {}), ...(request.acceptLanguage ? { "accept-language": request.acceptLanguage } : {}) };
    return [{ method: "GET", setupRequest: (req) => ({ ...req, path: request.path, headers: { ...req.headers, ...headers } }) }];
  }
  if (request.kind === "spend") {
    const path = `/api/v1/tools/${request.tool}/customers/${encodeURIComponent(request.email)}/usage`;
    const body = JSON.stringify({ meter: request.meter, quantity: 1 });
    return [
      {
        method: "POST",
        setupRequest: (req) => {
          sequence += 1;
          return { ...req, path, body, headers: { ...req.headers, "idempotency-key": `${request.tag}-${sequence}` } };
        },
      },
    ];
  }
  return [
    {
      method: "POST",
      setupRequest: (req) => {
        sequence += 1;
        const body = JSON.stringify({ email: `grant.${request.tag}.${sequence}@bench.example.com`, days: 30, note: request.note });
        return { ...req, path: `/api/v1/tools/${request.tool}/grants`, body };
      },
    },
  ];
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
}

/** One autocannon run; answers autocannon's result and the 2xx latencies. */
function runOnce(spec: LoadSpec, durationSec: number): Promise<{ result: autocannon.Result; latencies: Float64Array }> {
  let latencies = new Float64Array(1 << 16);
  let count = 0;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: spec.url,
        connections: spec.connections,
        duration: durationSec,
        headers: { authorization: `Bearer ${spec.key}`, "content-type": "application/json" },
        requests: requestsFor(spec),
        timeout: 10,
      },
      (error, result) => {
        if (error) reject(error);
        else resolve({ result, latencies: latencies.slice(0, count) });
      },
    );
    instance.on("response", (_client, statusCode, _bytes, responseTime) => {
      if (statusCode < 200 || statusCode >= 300) return;
      if (count === latencies.length) {
        const bigger = new Float64Array(latencies.length * 2);
        bigger.set(latencies);
        latencies = bigger;
      }
      latencies[count++] = responseTime;
    });
  });
}

const emit = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const warmup = spec.warmupSec > 0 ? await runOnce(spec, spec.warmupSec) : null;
  emit({ event: "measuring" });
  const cpuBefore = process.cpuUsage();
  const { result, latencies } = await runOnce(spec, spec.durationSec);
  const cpu = process.cpuUsage(cpuBefore);
  latencies.sort();
  const ok = result["2xx"];
  const statuses: Record<string, number> = {};
  for (const [status, stat] of Object.entries(result.statusCodeStats ?? {})) statuses[status] = stat.count ?? 0;
  let sum = 0;
  for (const value of latencies) sum += value;
  return {
    reqPerSec: ok / result.duration,
    ok,
    statuses,
    errors: result.errors,
    timeouts: result.timeouts,
    durationSec: result.duration,
    latencyMs: {
      p50: percentile(latencies, 50),
      p90: percentile(latencies, 90),
      p99: percentile(latencies, 99),
      max: percentile(latencies, 100),
      mean: latencies.length === 0 ? Number.NaN : sum / latencies.length,
    },
    bytesPerAnswer: result.requests.total === 0 ? 0 : result.throughput.total / result.requests.total,
    loadCpuPercent: ((cpu.user + cpu.system) / 1e6 / result.duration) * 100,
    warmupOk: warmup?.result["2xx"] ?? 0,
    ...(spec.request.kind === "access" ? { devices: { start: deviceStart ?? 0, requests: sequence } } : {}),
  };
}

const arg = process.argv[2];
if (arg !== undefined) {
  runLoad(JSON.parse(arg) as LoadSpec).then(
    (result) => emit({ event: "done", result }),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
