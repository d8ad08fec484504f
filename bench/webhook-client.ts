// Scenario 5's baseline: a plain node:http client that posts the same event bodies to
// the same receivers as Warden's delivery worker, with the same concurrency (one request
// in flight per endpoint, every endpoint at once: the worker sends each endpoint's
// deliveries one at a time in order, up to 32 endpoints at once) and the same Standard
// Webhooks signature (Warden's own signing function, so that signing costs the same).
// It reads nothing from a database and records nothing: the machine's limit for this
// traffic. Run in its own process, pinned to the core Warden runs on.
//
//   node --import tsx bench/webhook-client.ts SPEC_FILE
//
// SPEC_FILE is a ClientSpec as JSON. Prints {"event":"sending"} when it starts posting and
// {"event":"done",…ClientResult} at the end.

import { readFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { webhookHeaders } from "../src/webhooks/signature.js";

export interface ClientSpec {
  urls: string[];
  secrets: string[];
  /** The events, in order: each goes to every receiver. */
  events: { id: string; body: string }[];
  /** true: one kept-alive connection per receiver; false: a new connection per request, as Warden's sender made before it kept connections alive. */
  keepAlive: boolean;
}

export interface ClientResult {
  ok: number;
  failed: number;
  errors: string[];
  seconds: number;
  cpuSeconds: number;
}

function post(url: string, agent: Agent | false, headers: Record<string, string>, payload: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: "POST", agent, headers: { ...headers, "content-length": String(payload.length), "user-agent": "bench-plain-client" } },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

async function run(spec: ClientSpec): Promise<ClientResult> {
  const result: ClientResult = { ok: 0, failed: 0, errors: [], seconds: 0, cpuSeconds: 0 };
  const payloads = spec.events.map((e) => Buffer.from(e.body, "utf8"));
  process.stdout.write(`${JSON.stringify({ event: "sending" })}\n`);
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    spec.urls.map(async (url, index) => {
      const secret = spec.secrets[index] as string;
      const agent = spec.keepAlive ? new Agent({ keepAlive: true, maxSockets: 1 }) : false;
      for (const [n, event] of spec.events.entries()) {
        const headers = webhookHeaders(secret, event.id, Math.floor(Date.now() / 1000), event.body);
        try {
          const status = await post(url, agent, headers, payloads[n] as Buffer);
          if (status >= 200 && status < 300) result.ok++;
          else result.failed++;
        } catch (error) {
          result.failed++;
          if (result.errors.length < 5) result.errors.push(error instanceof Error ? error.message : String(error));
        }
      }
      if (agent) agent.destroy();
    }),
  );
  result.seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  result.cpuSeconds = (used.user + used.system) / 1e6;
  return result;
}

const file = process.argv[2];
if (file !== undefined) {
  run(JSON.parse(readFileSync(file, "utf8")) as ClientSpec).then(
    (result) => process.stdout.write(`${JSON.stringify({ event: "done", ...result })}\n`),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
