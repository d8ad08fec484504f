// Scenario 10 (issue 46): spending one unit of a meter from the vendor's server, repeated
// for one person, each request with its own Idempotency-Key (as the extension library
// sends one), against the bare node:http server answering a body of the same size. Every
// spend of one person's meter queues on that person's meter lock: the worst case for a
// spend, since nothing runs beside it. The person spends credits added by hand (one
// ledger row), after a free allowance that the first request uses up. After Warden
// stops, the credits left are read back: exactly one unit was taken per spend the
// database recorded (its Idempotency-Key stored in the same transaction), and none of the
// 200s answered is missing. Spends still in flight when a run ends are applied but never
// answered (autocannon stops waiting), so more may be spent than were acknowledged.
import type { Storage } from "../src/db/database.js";
import { BENCH } from "./customer-mix.js";
import type { DatabasePids, Measured } from "./load.js";
import type { LoadRequest, LoadSpec } from "./load-worker.js";
import type { ServerProcess } from "./processes.js";
import type { BenchWorkspace } from "./seed.js";

export const SPEND_METER = "summaries";
export const SPENDER = "spender@bench.example.com";
const CREDITS = 1_000_000_000;

export interface SpendRun extends Measured {
  ratio: number;
  peakRssMb: number;
  /** 200 answers received (warm-up, the sample and the measured run). */
  acknowledged: number;
  /** Units taken from the person's credits, read back after Warden stopped. */
  spent: number;
  /** Spends the database recorded: their Idempotency-Keys of the run's series. */
  recorded: number;
  /** One unit per recorded spend, and every acknowledged spend among them. */
  exact: boolean;
}

export interface SpendResult {
  bodyBytes: number;
  baseline: Measured;
  spend: SpendRun;
}

interface SpendContext {
  ws: BenchWorkspace;
  wardenCommand: (args: string[]) => unknown;
  launchWarden: () => Promise<ServerProcess>;
  startBaseline: (bodyBytes: number) => Promise<ServerProcess>;
  measure: (server: ServerProcess, spec: Omit<LoadSpec, "url">, pids?: DatabasePids) => Promise<Measured>;
  load: (request: LoadRequest, key: string) => Omit<LoadSpec, "url">;
  storage: () => Storage;
  pids?: DatabasePids;
  assertAllOk: (what: string, measured: Measured) => void;
}

const usagePath = `/api/v1/tools/${BENCH.tool}/customers/${encodeURIComponent(SPENDER)}`;

async function post(warden: ServerProcess, ws: BenchWorkspace, path: string, body: object, headers: Record<string, string> = {}) {
  const response = await fetch(`${warden.url}${usagePath}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${ws.key}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== 200 && response.status !== 201) throw new Error(`POST ${path} answered ${response.status}: ${text}`);
  return Buffer.byteLength(text);
}

async function recordedSpends(storage: Storage, ws: BenchWorkspace, tag: string): Promise<number> {
  const row = await storage.db
    .selectFrom("idempotency_keys")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("workspace_id", "=", ws.workspaceId)
    .where("env", "=", ws.env)
    .where("key", "like", `${tag}-%`)
    .where("status", "=", 200)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function creditsLeft(storage: Storage, ws: BenchWorkspace): Promise<number> {
  const row = await storage.db
    .selectFrom("meter_credits")
    .innerJoin("people", "people.id", "meter_credits.person_id")
    .select((eb) => eb.fn.sum<number>("meter_credits.remaining").as("left"))
    .where("people.email", "=", SPENDER)
    .where("meter_credits.workspace_id", "=", ws.workspaceId)
    .where("meter_credits.meter_id", "=", SPEND_METER)
    .executeTakeFirstOrThrow();
  return Number(row.left);
}

export async function runSpendScenario(ctx: SpendContext): Promise<SpendResult> {
  // The meter, with a free allowance of one a month, which the sample spends.
  ctx.wardenCommand([
    "admin",
    "meter",
    "add",
    "--workspace",
    BENCH.workspace,
    "--tool",
    BENCH.tool,
    "--id",
    SPEND_METER,
    "--name",
    "Summaries",
    "--unit",
    "summaries",
    "--free",
    "1",
  ]);
  const tag = Date.now().toString(36);
  const request: LoadRequest = { kind: "spend", tool: BENCH.tool, email: SPENDER, meter: SPEND_METER, tag };
  const warden = await ctx.launchWarden();
  let bodyBytes: number;
  let baseline: Measured;
  let measured: Measured;
  let peakRssMb: number;
  try {
    await post(warden, ctx.ws, "/credits", { meter: SPEND_METER, amount: CREDITS, note: "bench" });
    // The sample takes the free unit; every spend of the load takes one credit.
    bodyBytes = await post(warden, ctx.ws, "/usage", { meter: SPEND_METER, quantity: 1 }, { "idempotency-key": `${tag}-sample` });
    const server = await ctx.startBaseline(bodyBytes);
    try {
      baseline = await ctx.measure(server, ctx.load(request, ctx.ws.key));
    } finally {
      await server.stop();
    }
    ctx.assertAllOk("baseline POST (spend)", baseline);
    measured = await ctx.measure(warden, ctx.load(request, ctx.ws.key), ctx.pids);
    ctx.assertAllOk("spend one unit", measured);
    peakRssMb = warden.peakRssMb();
  } finally {
    await warden.stop();
  }
  const storage = ctx.storage();
  let left: number;
  let recorded: number;
  try {
    left = await creditsLeft(storage, ctx.ws);
    // The sample's key is of the series too, and it spent the free unit, not a credit.
    recorded = (await recordedSpends(storage, ctx.ws, tag)) - 1;
  } finally {
    await storage.close();
  }
  const acknowledged = measured.warmupOk + measured.ok;
  const spent = CREDITS - left;
  const exact = spent === recorded && spent >= acknowledged;
  const spend = { ...measured, ratio: measured.reqPerSec / baseline.reqPerSec, peakRssMb, acknowledged, spent, recorded, exact };
  return { bodyBytes, baseline, spend };
}
