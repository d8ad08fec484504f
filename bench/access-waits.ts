// What devices waiting on GET /tools/{tool}/access/changes cost `warden serve`: its
// resident memory and heap with N devices waiting (10,000 by default), the CPU it spends
// while they wait (each wait ends after `wait` seconds and its device asks again at once,
// as the library does), and how long a grant takes to reach one waiting device. Not part
// of `npm run bench`; build first:
//
//   npm run build && node --import tsx bench/access-waits.ts [--devices 10000] [--wait 25] [--engine sqlite|postgres]
//
// Prints the figures as JSON; bench/journal.md keeps them.

import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { Agent, request } from "node:http";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { openDeviceSession } from "../src/client/client.service.js";
import { systemClock } from "../src/clock.js";
import { parseConfig } from "../src/config.js";
import { ensurePerson } from "../src/customers/person.store.js";
import { createServices } from "../src/services.js";
import { createKey, createOwner, createTool, createWorkspace } from "../src/workspaces/workspace.service.js";
import { pinSelfToLoadCore, ROOT, readCpuSeconds, snapshotWarden, startWarden } from "./processes.js";

const { values } = parseArgs({
  options: { devices: { type: "string", default: "10000" }, wait: { type: "string", default: "25" }, engine: { type: "string", default: "sqlite" } },
});
const DEVICES = Number(values.devices);
const WAIT_S = Number(values.wait);
const SECRET = "bench-secret-key-0123456789abcdefghijklmnopqrstuvwxyz";
const METRICS_TOKEN = "bench-metrics-token-0123456789";
const PG_URL = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** The library's pause after a wait answered "no change" long before its time. */
const QUICK_ANSWER_MS = 5_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;

function residentMb(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  return Number(kb) / 1024;
}

const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });

function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string; retryAfter: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body, retryAfter: res.headers["retry-after"] }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

async function post(url: string, key: string, payload: object): Promise<number> {
  const response = await fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(payload),
  });
  await response.arrayBuffer();
  return response.status;
}

async function metric(url: string, name: string): Promise<number> {
  const text = (await get(`${url}/metrics`, { authorization: `Bearer ${METRICS_TOKEN}` })).body;
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return line === undefined ? Number.NaN : Number(line.split(" ")[1]);
}

async function inBatches<T>(items: readonly T[], concurrency: number, each: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await each(items[next++] as T);
    }),
  );
}

async function main() {
  pinSelfToLoadCore();
  // Under bench/tmp: the snapshot of Warden finds its packages in the checkout's node_modules.
  await mkdir(join(ROOT, "bench", "tmp"), { recursive: true });
  const work = await mkdtemp(join(ROOT, "bench", "tmp", "access-waits-"));
  const dataDir = join(work, "data");
  let databaseUrl: string | null = null;
  let schema: string | null = null;
  if (values.engine === "postgres") {
    const pg = (await import("pg")).default;
    schema = `bench_waits_${process.pid}`;
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`create schema ${schema}`);
    await client.end();
    databaseUrl = `${PG_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  }
  const env = { WARDEN_DATA_DIR: dataDir, WARDEN_SECRET_KEY: SECRET, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) };

  // Seeded before the server starts: a workspace, a tool, and a signed-in device per person.
  const seeding = await createServices(parseConfig(env), { clock: systemClock });
  const { db } = seeding;
  await createOwner(db, systemClock, { email: "owner@bench.test" });
  await createWorkspace(db, systemClock, { slug: "bench", name: "Bench", ownerEmail: "owner@bench.test", plan: "pro" });
  await createTool(db, systemClock, { workspace: "bench", id: "tabmaster", name: "Tab Master" });
  const key = (await createKey(db, systemClock, { workspace: "bench", env: "test" })).key;
  const workspaceId = (await db.selectFrom("workspaces").select("id").where("slug", "=", "bench").executeTakeFirstOrThrow()).id;
  const devices: { email: string; token: string }[] = [];
  for (let start = 0; start < DEVICES; start += 1_000) {
    await db.transaction().execute(async (trx) => {
      for (let i = start; i < Math.min(DEVICES, start + 1_000); i++) {
        const email = `person${i}@bench.test`;
        const person = await ensurePerson(trx, workspaceId, "test", email, systemClock.now());
        const opened = await openDeviceSession(trx, {
          workspaceId,
          env: "test",
          toolId: "tabmaster",
          personId: person.id,
          licenceId: null,
          device: { name: "Bench", platform: "chrome-linux" },
          now: systemClock.now(),
        });
        devices.push({ email, token: opened.token });
      }
    });
  }
  await seeding.close();

  const command = snapshotWarden(join(work, "warden"));
  const server = await startWarden({
    command,
    databaseUrl,
    dataDir,
    limits: {},
    logFile: join(work, "warden.log"),
    env: { WARDEN_METRICS_TOKEN: METRICS_TOKEN, WARDEN_DELIVERY_WORKER: "0" },
  });
  const base = `${server.url}/api/client/v1/tools/tabmaster`;
  const figures: Record<string, unknown> = { devices: DEVICES, waitSeconds: WAIT_S, engine: values.engine };
  try {
    await sleep(3_000);
    figures.idleRssMb = mb(residentMb(server.pid) * 1024 * 1024);
    figures.idleHeapMb = mb(await metric(server.url, "nodejs_heap_size_used_bytes"));

    // Each device's state, then its wait, asked again whenever it ends without a change.
    const states = new Map<string, string>();
    await inBatches(devices, 50, async (device) => {
      const answer = await get(`${base}/access`, { authorization: `Bearer ${device.token}` });
      if (answer.status !== 200) throw new Error(`access check answered ${answer.status}: ${answer.body}`);
      states.set(device.token, JSON.parse(answer.body).state);
    });
    let repolls = 0;
    let endedEarly = 0;
    let refused = 0;
    let resets = 0;
    const failures: string[] = [];
    let stopping = false;
    const woken = new Map<string, (at: number) => void>();
    const hold = async (device: { email: string; token: string }) => {
      while (!stopping) {
        const askedAt = performance.now();
        const answer = await get(`${base}/access/changes?state=${states.get(device.token)}&wait=${WAIT_S}`, { authorization: `Bearer ${device.token}` }).catch(
          (error: unknown) => {
            // A kept-alive connection the server closed as this one was sent on it: asked again, as the library would.
            if (!["ECONNRESET", "EPIPE"].includes((error as NodeJS.ErrnoException).code ?? "")) throw error;
            resets += 1;
            return null;
          },
        );
        if (answer === null) continue;
        if (answer.status === 200) {
          states.set(device.token, JSON.parse(answer.body).state);
          woken.get(device.email)?.(performance.now());
        } else if (answer.status === 204) {
          repolls += 1;
          // As the library does (QUICK_ANSWER_MS): a wait answered "no change" long before its
          // time (Warden ending every wait) is not asked again at once, or 10,000 come back together.
          if (performance.now() - askedAt < QUICK_ANSWER_MS && !stopping) {
            endedEarly += 1;
            await sleep(QUICK_ANSWER_MS);
          }
        } else if ((answer.status === 503 || answer.status === 429) && !stopping) {
          // As the library does: Warden busy (a pool full of the others' first checks) is waited out.
          refused += 1;
          await sleep(Number(answer.retryAfter ?? 5) * 1000);
        } else if (!stopping) failures.push(`${answer.status}: ${answer.body}`);
      }
    };
    const opening = performance.now();
    // Opened 500 at a time, half a second apart: 10,000 connections at once overflow the
    // server's accept queue (the kernel resets them), which says nothing of waiting.
    const holders: Promise<void>[] = [];
    for (let start = 0; start < devices.length; start += 500) {
      for (const device of devices.slice(start, start + 500)) holders.push(hold(device).catch((error: unknown) => void failures.push(String(error))));
      await sleep(500);
    }
    for (;;) {
      const waiting = await metric(server.url, "warden_access_waiters");
      if (waiting >= DEVICES) break;
      if (failures.length > 0) throw new Error(`waits failed: ${failures.slice(0, 3).join("; ")}`);
      if (performance.now() - opening > 180_000)
        throw new Error(`only ${waiting} waiting after 3 minutes (${refused} busy answers, ${endedEarly} waits ended early, ${resets} resets)`);
      await sleep(500);
    }
    figures.secondsToOpenAll = Math.round((performance.now() - opening) / 100) / 10;
    figures.busyAnswersWhileOpening = refused;
    await sleep(2_000);
    figures.waitingRssMb = mb(residentMb(server.pid) * 1024 * 1024);
    figures.waitingHeapMb = mb(await metric(server.url, "nodejs_heap_size_used_bytes"));
    figures.rssPerWaiterKb = Math.round((((figures.waitingRssMb as number) - (figures.idleRssMb as number)) * 1024 * 10) / DEVICES) / 10;

    // CPU while they wait: over 2 waits' length, renewals included.
    const cpuBefore = readCpuSeconds(server.pid);
    const repollsBefore = repolls;
    const windowS = WAIT_S * 2;
    await sleep(windowS * 1000);
    figures.cpuPercentWhileWaiting = Math.round(((readCpuSeconds(server.pid) - cpuBefore) / windowS) * 1000) / 10;
    figures.renewalsPerSecond = Math.round((repolls - repollsBefore) / windowS);

    // One grant, one device woken: from the vendor's POST to the device's answer.
    const latencies: number[] = [];
    for (const index of [1, DEVICES / 2, DEVICES - 1].map(Math.floor)) {
      const device = devices[index] as { email: string };
      const answered = new Promise<number>((resolve) => woken.set(device.email, resolve));
      const sent = performance.now();
      const status = await post(`${server.url}/api/v1/tools/tabmaster/grants`, key, { email: device.email, days: 1 });
      if (status !== 201) throw new Error(`grant answered ${status}`);
      latencies.push(Math.round((await answered) - sent));
      await sleep(1_500);
    }
    figures.grantToWakeMs = latencies;
    figures.stillWaiting = await metric(server.url, "warden_access_waiters");
    figures.busyAnswersAfterOpening = refused - (figures.busyAnswersWhileOpening as number);
    figures.connectionResets = resets;
    figures.waitsEndedEarly = endedEarly;
    if (failures.length > 0) throw new Error(`waits failed: ${failures.slice(0, 3).join("; ")}`);
    stopping = true;
    await server.stop();
    await Promise.allSettled(holders);
  } finally {
    await server.stop();
    agent.destroy();
    await rm(work, { recursive: true, force: true });
    if (schema) {
      const pg = (await import("pg")).default;
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`drop schema ${schema} cascade`);
      await client.end();
    }
  }
  console.log(JSON.stringify(figures, null, 2));
}

await main();
