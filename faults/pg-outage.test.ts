// PostgreSQL stops for 10 s under a mixed load and starts again, as in a failover, an
// upgrade or a network blip; and `warden serve` starts while it is still down. The
// promises: no process exits; while the database is away every request is answered
// within 2 s, a 503 in the error shape that says so, never a 2xx for a write not stored;
// /readyz 503, /healthz 200; one warning when it goes and one when it is back; a metric;
// within 5 s of its return writes succeed again without a restart; nothing acknowledged
// is lost. The test makes a PostgreSQL cluster of its own (it must stop it), so it runs
// as root where the Debian cluster tools are (CI), and is skipped elsewhere.
import assert from "node:assert/strict";
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import Stripe from "stripe";
import { openDeviceSession } from "../src/client/client.service.js";
import { systemClock } from "../src/clock.js";
import { parseConfig } from "../src/config.js";
import { ensurePerson } from "../src/customers/person.store.js";
import { createServices, type Services } from "../src/services.js";
import { seedCatalogue, type Workspace } from "../src/test-support/harness.js";
import { freePort } from "../src/test-support/serve.js";
import { connectTestStripe, paymentSession, stripeEvent, stripeId } from "../src/test-support/stripe.js";
import { type Receiver, startReceiver } from "../src/test-support/webhooks.js";
import { type BuiltWarden, bySize, ERROR_TYPES, http, recordFigures, SECRET_KEY, startBuiltWarden } from "./fault-support.js";

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const OUTAGE_MS = 10_000;
/** Requests kept in flight across both processes, all through the run. */
const LANES = bySize({ smoke: 4, default: 8, large: 16 });
const PROCESSES = 2;
const METRICS_TOKEN = "pg-outage-metrics-token-0123456789";

const VERSION = (() => {
  try {
    return readdirSync("/usr/lib/postgresql").sort().at(-1);
  } catch {
    return undefined;
  }
})();
const CAN_RUN = process.getuid?.() === 0 && existsSync("/usr/bin/pg_createcluster") && VERSION !== undefined;

/** A PostgreSQL cluster of the test's own (Debian's cluster tools), trust authentication, on a free port. */
class PgCluster {
  private constructor(
    readonly name: string,
    readonly port: number,
  ) {}

  static async create(): Promise<PgCluster> {
    const cluster = new PgCluster(`wardenfault${process.pid}`, await freePort());
    await run("pg_createcluster", [String(VERSION), cluster.name, "--port", String(cluster.port), "--", "--auth=trust"]);
    await cluster.start();
    return cluster;
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  start() {
    return run("pg_ctlcluster", [String(VERSION), this.name, "start"]);
  }

  /** Fast shutdown: connections are cut, as in a failover or a restart for an upgrade. */
  async stop(): Promise<void> {
    await run("pg_ctlcluster", [String(VERSION), this.name, "stop", "-m", "fast"]);
  }

  /** pg_isready's word for the cluster now. */
  async state(): Promise<string> {
    const answer = await run("pg_isready", ["-h", "127.0.0.1", "-p", String(this.port)]).catch((error: { stdout?: string }) => error);
    return String(answer.stdout ?? "").trim();
  }

  drop() {
    return run("pg_dropcluster", [String(VERSION), this.name, "--stop"]);
  }
}

type Operation = "grant" | "retrieve" | "access" | "stripe" | "event";

interface Outcome {
  op: Operation;
  startedAt: number;
  endedAt: number;
  status: number;
  body: string;
  retryAfter: string | null;
  /** The grant's id or the Stripe payment that was acknowledged. */
  acknowledged?: string;
}

interface Fixture {
  ws: Workspace;
  stripeSecret: string;
  deviceToken: string;
}

async function seed(services: Services): Promise<Fixture> {
  const ws = await seedCatalogue(services);
  const stripeSecret = await connectTestStripe(services, ws);
  const person = await ensurePerson(services.db, ws.workspaceId, "test", "device-owner@example.com", Date.now());
  const { token } = await openDeviceSession(services.db, {
    workspaceId: ws.workspaceId,
    env: "test",
    toolId: ws.tool,
    personId: person.id,
    licenceId: null,
    device: { name: "Laptop", platform: "chrome-mac" },
    now: Date.now(),
  });
  return { ws, stripeSecret, deviceToken: token };
}

const ENV = {
  WARDEN_SECRET_KEY: SECRET_KEY,
  WARDEN_DOMAIN: "warden.test",
  WARDEN_ALLOW_PRIVATE_WEBHOOKS: "1",
  // A record that failed with the database leaves its endpoint leased until this runs out.
  WARDEN_DELIVERY_LEASE_MS: "1500",
  WARDEN_METRICS_TOKEN: METRICS_TOKEN,
  WARDEN_LIMIT_KEY_REQUESTS_PER_MIN: "1000000",
  WARDEN_LIMIT_LOOKUPS_PER_DAY: "1000000",
  WARDEN_LIMIT_GRANTS_PER_TOOL_PER_DAY: "1000000",
  WARDEN_LIMIT_ADDITIONS_PER_DAY: "1000000",
  WARDEN_LIMIT_EXAMPLE_EVENTS_PER_DAY: "1000000",
};

/** One request of the mixed load, to one of the processes; a request that takes 5 s is a hang (status 0). */
async function request(op: Operation, server: BuiltWarden, fixture: Fixture, granted: string[]): Promise<Outcome> {
  const { ws } = fixture;
  const startedAt = Date.now();
  let acknowledged: string | undefined;
  let send: () => Promise<Response>;
  const json = { "content-type": "application/json" };
  const key = { authorization: `Bearer ${ws.testKey}` };
  const signal = AbortSignal.timeout(5_000);
  switch (op) {
    case "grant": {
      const email = `grant-${startedAt}-${Math.random().toString(36).slice(2)}@example.com`;
      send = () =>
        fetch(`${server.baseUrl}/api/v1/tools/${ws.tool}/grants`, {
          method: "POST",
          headers: { ...key, ...json },
          body: JSON.stringify({ email, days: 30 }),
          signal,
        });
      break;
    }
    case "retrieve": {
      const email = granted.at(-1) ?? "nobody@example.com";
      send = () => fetch(`${server.baseUrl}/api/v1/tools/${ws.tool}/customers/${encodeURIComponent(email)}`, { headers: key, signal });
      break;
    }
    case "access":
      send = () => fetch(`${server.baseUrl}/api/client/v1/tools/${ws.tool}/access`, { headers: { authorization: `Bearer ${fixture.deviceToken}` }, signal });
      break;
    case "stripe": {
      acknowledged = stripeId("pi");
      const session = paymentSession({
        email: `buyer-${acknowledged}@example.com`,
        metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" },
        paymentIntent: acknowledged,
        now: Date.now(),
      });
      const payload = JSON.stringify(stripeEvent("checkout.session.completed", session, { now: Date.now() }));
      const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: fixture.stripeSecret });
      send = () =>
        fetch(`${server.baseUrl}/processor/stripe/${ws.slug}`, { method: "POST", headers: { ...json, "stripe-signature": signature }, body: payload, signal });
      break;
    }
    case "event":
      send = () =>
        fetch(`${server.baseUrl}/api/v1/webhooks/examples`, {
          method: "POST",
          headers: { ...key, ...json },
          body: JSON.stringify({ type: "payment.refunded" }),
          signal,
        });
      break;
  }
  try {
    const response = await send();
    const body = await response.text();
    const outcome: Outcome = { op, startedAt, endedAt: Date.now(), status: response.status, body, retryAfter: response.headers.get("retry-after") };
    if (op === "grant" && response.status === 201) {
      outcome.acknowledged = (JSON.parse(body) as { id: string; email: string }).id;
      granted.push((JSON.parse(body) as { email: string }).email);
    }
    if (op === "stripe" && response.status === 200 && acknowledged) outcome.acknowledged = acknowledged;
    return outcome;
  } catch {
    return { op, startedAt, endedAt: Date.now(), status: 0, body: "", retryAfter: null };
  }
}

/** What is wrong with an answer given while the database was away. */
/**
 * A retrieve or an access check answered from memory needs no statement: the process trusts
 * what it keeps (keys, blocked addresses, kept answers) for 2 s from the start of its last
 * read of the access-change feed (src/auth/key-watch.ts), and that read cannot have begun
 * after the database went away. So until `downAt` + 2 s such a read may still answer 200
 * (README, "When PostgreSQL goes away"); after it, it must be refused like every request
 * that needs the database.
 */
const KEPT_TRUST_MS = 2_000;

function outageProblem(o: Outcome, downAt: number): string | null {
  if (o.status === 0) return "no answer within 5 s";
  if (o.endedAt - o.startedAt >= 2_000) return `answered in ${o.endedAt - o.startedAt} ms`;
  const read = o.op === "access" || o.op === "retrieve";
  if (read && o.status === 200 && o.startedAt < downAt + KEPT_TRUST_MS) return null;
  if (o.status !== 503) return `status ${o.status}${read ? ` ${o.startedAt - downAt} ms after the database went` : ""}`;
  if (o.retryAfter === null) return "no Retry-After";
  const error = (JSON.parse(o.body) as { error?: { type?: string; message?: string } }).error;
  if (!error?.type || !ERROR_TYPES.has(error.type) || error.type !== "api_error") return `error type ${error?.type}`;
  if (!/database is unreachable/.test(error.message ?? "")) return `message ${error.message}`;
  return null;
}

const logLines = (server: BuiltWarden, message: string) =>
  server
    .log()
    .split("\n")
    .filter((line) => line.includes(`"msg":"${message}`)).length;

describe("PostgreSQL outages (postgres, a cluster of the test's own)", { skip: CAN_RUN ? false : "needs root and Debian's pg_createcluster" }, () => {
  let cluster: PgCluster;
  let services: Services;
  let receiver: Receiver;

  before(async () => {
    cluster = await PgCluster.create();
    // Migrated here, before the servers start.
    const config = parseConfig({ ...ENV, DATABASE_URL: cluster.url, WARDEN_DELIVERY_WORKER: "0" });
    services = await createServices(config, { clock: systemClock });
    receiver = await startReceiver();
  });
  after(async () => {
    await services?.close();
    await cluster?.drop();
  });

  test(`stopped for ${OUTAGE_MS / 1000} s under a mixed load of ${LANES} requests in flight across ${PROCESSES} processes, and started again`, async () => {
    const fixture = await seed(services);
    const env = { ...ENV, DATABASE_URL: cluster.url };
    const servers = await Promise.all(Array.from({ length: PROCESSES }, () => startBuiltWarden(env)));
    const first = servers[0] as BuiltWarden;
    const endpoint = await http(first.baseUrl, "POST", "/api/v1/webhooks/endpoints", { key: fixture.ws.testKey, body: { url: receiver.url } });
    assert.equal(endpoint.status, 201, endpoint.body);

    const outcomes: Outcome[] = [];
    const granted: string[] = [];
    const operations: Operation[] = ["grant", "retrieve", "access", "stripe", "event"];
    let loading = true;
    let sent = 0;
    const lanes = Array.from({ length: LANES }, async (_, lane) => {
      while (loading) {
        const n = sent++;
        const server = servers[(n + lane) % servers.length] as BuiltWarden;
        outcomes.push(await request(operations[n % operations.length] as Operation, server, fixture, granted));
        // Bounded: a few hundred requests a second at most, on a machine shared with others.
        await sleep(20);
      }
    });

    await sleep(3_000);
    const stopping = Date.now();
    await cluster.stop();
    const downAt = Date.now();
    const probes: { readyz: number; healthz: number }[] = [];
    await sleep(OUTAGE_MS / 2);
    for (const server of servers) {
      // A process that died answers nothing (0): the check of exits below says so.
      const status = (path: string) =>
        fetch(`${server.baseUrl}${path}`).then(
          (r) => r.status,
          () => 0,
        );
      probes.push({ readyz: await status("/readyz"), healthz: await status("/healthz") });
    }
    await sleep(OUTAGE_MS / 2);
    const starting = Date.now();
    await cluster.start();
    const upAt = Date.now();
    await sleep(8_000);
    loading = false;
    await Promise.all(lanes);

    // Stripe sends again what it was not told 200 about: so does the test, now that the database is back.
    const unacknowledged = outcomes.filter((o) => o.op === "stripe" && o.status !== 200).length;

    const exited = servers.filter((s) => s.child.exitCode !== null || s.child.signalCode !== null).length;
    const during = outcomes.filter((o) => o.startedAt >= downAt && o.endedAt <= starting);
    const wrong = during.map((o) => ({ o, problem: outageProblem(o, downAt) })).filter((w) => w.problem !== null);
    const writes = outcomes.filter((o) => o.op === "grant" || o.op === "stripe" || o.op === "event");
    const firstWriteBack = writes.find((o) => o.startedAt >= upAt && o.status >= 200 && o.status < 300);
    const failedLate = writes.filter((o) => o.startedAt >= upAt + 5_000 && !(o.status >= 200 && o.status < 300));
    const serverErrors = outcomes.filter((o) => o.status >= 500 && o.status !== 503);
    const metrics = await Promise.all(
      servers.map(async (server) => {
        const text = await fetch(`${server.baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }).then(
          (r) => r.text(),
          () => "",
        );
        return Number(/^warden_db_unavailable_total (\d+)$/m.exec(text)?.[1] ?? 0);
      }),
    );
    const warnings = servers.map((server) => ({
      gone: logLines(server, "the database is unreachable"),
      back: logLines(server, "the database answers again"),
      errors: server
        .log()
        .split("\n")
        .filter((line) => line.includes('"level":50')).length,
    }));

    // Nothing acknowledged is lost.
    const grantIds = outcomes.filter((o) => o.op === "grant" && o.acknowledged).map((o) => o.acknowledged as string);
    const storedGrants = new Set(
      (await services.db.selectFrom("grants").select("id").where("workspace_id", "=", fixture.ws.workspaceId).execute()).map((r) => r.id),
    );
    const payments = outcomes.filter((o) => o.op === "stripe" && o.acknowledged).map((o) => o.acknowledged as string);
    const licensed = new Set(
      (await services.db.selectFrom("licences").select("payment_intent").where("workspace_id", "=", fixture.ws.workspaceId).execute()).map(
        (r) => r.payment_intent,
      ),
    );
    const events = (await services.db.selectFrom("events").select("id").where("workspace_id", "=", fixture.ws.workspaceId).execute()).map((r) => r.id);
    const arrived = () => new Set(receiver.ids());
    try {
      await receiver.waitFor(() => events.every((id) => arrived().has(id)), 60_000);
    } catch {
      // Counted below.
    }
    const undelivered = events.filter((id) => !arrived().has(id));
    for (const server of servers) await server.kill();

    const figures = {
      requests: outcomes.length,
      duringOutage: during.length,
      wrongDuringOutage: wrong.length,
      slowestDuringOutageMs: Math.max(0, ...during.map((o) => o.endedAt - o.startedAt)),
      stopTookMs: downAt - stopping,
      startTookMs: upAt - starting,
      firstWriteBackMs: firstWriteBack ? firstWriteBack.endedAt - upAt : null,
      writesFailedAfter5s: failedLate.length,
      serverErrors: serverErrors.length,
      exited,
      unavailableCounted: metrics,
      warnings,
      grants: grantIds.length,
      grantsLost: grantIds.filter((id) => !storedGrants.has(id)).length,
      stripeAcknowledged: payments.length,
      stripeUnacknowledged: unacknowledged,
      licencesLost: payments.filter((p) => !licensed.has(p)).length,
      events: events.length,
      undelivered: undelivered.length,
    };
    recordFigures("pg-outage", figures);

    assert.equal(exited, 0, "no process exits");
    assert.ok(during.length >= LANES * 4, `requests answered during the outage: ${during.length}`);
    assert.deepEqual(
      wrong.slice(0, 5).map((w) => `${w.problem} <- ${w.o.op} ${w.o.body.slice(0, 200)}`),
      [],
      `${wrong.length} of ${during.length} answers during the outage broke a promise (first 5)`,
    );
    assert.deepEqual(
      serverErrors.slice(0, 5).map((o) => `${o.op} ${o.status} ${o.body.slice(0, 200)}`),
      [],
      "no 5xx but the database's 503",
    );
    for (const probe of probes) assert.deepEqual(probe, { readyz: 503, healthz: 200 });
    assert.ok(firstWriteBack && firstWriteBack.endedAt - upAt < 5_000, `a write succeeded ${figures.firstWriteBackMs} ms after the database was back`);
    assert.deepEqual(
      failedLate.slice(0, 5).map((o) => `${o.op} ${o.status} ${o.body.slice(0, 200)}`),
      [],
      "writes fail 5 s after the database is back",
    );
    for (const [i, w] of warnings.entries()) assert.deepEqual(w, { gone: 1, back: 1, errors: 0 }, `process ${i}'s log: ${servers[i]?.log().slice(0, 3000)}`);
    for (const counted of metrics) assert.ok(counted > 0, "warden_db_unavailable_total counts the failures");
    assert.ok(grantIds.length > 0 && payments.length > 0 && events.length > 0, "the load wrote before and after the outage");
    assert.equal(figures.grantsLost, 0, "grants answered 201 and not stored");
    assert.equal(figures.licencesLost, 0, "Stripe events answered 200 without their licence");
    assert.deepEqual(undelivered.slice(0, 5), [], `${undelivered.length} of ${events.length} events never reached the endpoint`);
  });

  test("`warden serve` started while the database is down keeps trying, one line a try, and serves once it is up; gives up in one line after WARDEN_DB_WAIT_SECONDS", async () => {
    await cluster.stop();
    const before = await cluster.state();
    const waiting = serve({ ...ENV, DATABASE_URL: cluster.url, WARDEN_DB_WAIT_SECONDS: "60" });
    // Node's start takes seconds on a loaded machine; then a try every 2 s.
    for (const until = Date.now() + 20_000; waiting.lines().length < 2 && Date.now() < until; ) await sleep(200);
    assert.equal(waiting.child.exitCode, null, "still trying");
    const triesWhileDown = waiting.lines().length;
    await cluster.start();
    const ready = await waiting.healthy(30_000);
    const lines = waiting.lines();
    const clusters = ready ? "" : (await run("pg_lsclusters")).stdout;
    await waiting.stop();

    await cluster.stop();
    const givingUp = serve({ ...ENV, DATABASE_URL: cluster.url, WARDEN_DB_WAIT_SECONDS: "3" });
    const code = await givingUp.exited(30_000);
    const gaveUp = givingUp.lines();
    await cluster.start();
    recordFigures("pg-outage-start", { triesWhileDown, linesBeforeServing: lines.length, gaveUpAfterLines: gaveUp.length, exitCode: code });

    assert.ok(triesWhileDown >= 2, `one line a try while down: ${JSON.stringify(lines)}, ready ${ready}, the cluster before: ${before} (${clusters})`);
    assert.match(lines[0] ?? "", /^warden: PostgreSQL at 127\.0\.0\.1:\d+\/postgres does not answer \(ECONNREFUSED\)/);
    for (const line of lines) assert.match(line, /^warden: .*\(try \d+; trying again for \d+ s more: WARDEN_DB_WAIT_SECONDS\)$/);
    assert.ok(ready, `serves once the database is up, without a restart (${clusters})`);
    assert.equal(code, 1);
    assert.match(
      gaveUp.at(-1) ?? "",
      /^warden: PostgreSQL at 127\.0\.0\.1:\d+\/postgres does not answer \(ECONNREFUSED\): is it running, and is DATABASE_URL right\?$/,
    );
    assert.ok(gaveUp.length >= 2 && gaveUp.length <= 4, `a line a try, then one to give up: ${JSON.stringify(gaveUp)}`);
  });
});

/** `warden serve` from dist/, its stderr's lines kept: it may never listen. */
function serve(env: Record<string, string>) {
  let stderr = "";
  let port = 0;
  let child: ChildProcess | null = null;
  const started = freePort().then((free) => {
    port = free;
    child = spawn(process.execPath, [join(import.meta.dirname, "..", "bin", "warden.js"), "serve"], {
      env: { ...process.env, LOG_LEVEL: "warn", ...env, PORT: String(port) },
      stdio: ["ignore", "ignore", "pipe"],
    });
    child.stderr?.on("data", (chunk) => {
      stderr += String(chunk);
    });
    return child;
  });
  const handle = {
    get child(): { exitCode: number | null } {
      return child ?? { exitCode: null };
    },
    lines: () => stderr.split("\n").filter((line) => line.length > 0),
    async healthy(withinMs: number): Promise<boolean> {
      await started;
      for (const until = Date.now() + withinMs; Date.now() < until; await sleep(200)) {
        try {
          if ((await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200) return true;
        } catch {
          // Not listening yet.
        }
      }
      return false;
    },
    async exited(withinMs: number): Promise<number | null> {
      const proc = await started;
      if (proc.exitCode !== null) return proc.exitCode;
      return Promise.race([new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code))), sleep(withinMs).then(() => null)]);
    },
    async stop(): Promise<void> {
      const proc = await started;
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const gone = new Promise((resolve) => proc.once("exit", resolve));
      proc.kill("SIGTERM");
      await gone;
    },
  };
  after(() => void child?.kill("SIGKILL"));
  return handle;
}
