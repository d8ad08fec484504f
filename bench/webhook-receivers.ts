// Scenario 5's receivers: N webhook endpoints on loopback, as a vendor's would be, each
// a node:http server that verifies every request's signature with the `standardwebhooks`
// package (what the vendor's docs tell them to use) and answers 200, or 500 when told to
// play a failing endpoint. All N live in this one process, pinned to the load core: the
// receivers share that core whatever their number of processes, and one event loop
// spends nothing on switching between ten processes and gives the orchestrator one
// channel for secrets and results. Its CPU is reported, to show when it was the limit.
//
//   node --import tsx bench/webhook-receivers.ts COUNT
//
// Commands arrive as JSON lines on stdin, answers leave as JSON lines on stdout:
//   → {"event":"listening","urls":[…]}                         once listening
//   ← {"cmd":"configure","secrets":[…],"failing":[9],"expect":N}  forget what was received
//   → {"event":"configured"}
//   → {"event":"complete","at":ms}                              every healthy one has N distinct events
//   ← {"cmd":"stats"}          → {"event":"stats",…ReceiverStats}
//   ← {"cmd":"dump","file":F}  → {"event":"dumped"}             F: ReceiverRecords as JSON

import { writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { createInterface } from "node:readline";
import { Webhook } from "standardwebhooks";

export interface ReceiverStats {
  /** Distinct events answered 2xx, per receiver. */
  ok: number[];
  /** Requests answered 2xx again for an event already received (a retry or a duplicate). */
  duplicates: number[];
  /** Requests answered 500 by a failing receiver. */
  failed: number[];
  /** Requests whose signature did not verify (answered 400). */
  badSignatures: number[];
  badExamples: string[];
  /** CPU of this process since it started, in seconds. */
  cpuSeconds: number;
}

/** Per receiver, each event id answered 2xx and when (Date.now() when the answer was written). */
export type ReceiverRecords = [string, number][][];

type Command = { cmd: "configure"; secrets: string[]; failing: number[]; expect: number } | { cmd: "stats" } | { cmd: "dump"; file: string };

const count = Number(process.argv[2]);
const emit = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);

interface State {
  verifiers: Webhook[];
  failing: Set<number>;
  expect: number;
  complete: boolean;
  received: Map<string, number>[];
  stats: ReceiverStats;
}

const fresh = (secrets: string[], failing: number[], expect: number): State => ({
  verifiers: secrets.map((secret) => new Webhook(secret)),
  failing: new Set(failing),
  expect,
  complete: false,
  received: Array.from({ length: count }, () => new Map()),
  stats: {
    ok: Array(count).fill(0),
    duplicates: Array(count).fill(0),
    failed: Array(count).fill(0),
    badSignatures: Array(count).fill(0),
    badExamples: [],
    cpuSeconds: 0,
  },
});

let state = fresh([], [], 0);

function checkComplete(): void {
  if (state.complete || state.expect === 0) return;
  for (let i = 0; i < count; i++) if (!state.failing.has(i) && state.stats.ok[i] !== state.expect) return;
  state.complete = true;
  emit({ event: "complete", at: Date.now() });
}

function verify(index: number, body: string, headers: IncomingHttpHeaders): boolean {
  const verifier = state.verifiers[index];
  if (!verifier) return false;
  try {
    verifier.verify(body, {
      "webhook-id": String(headers["webhook-id"]),
      "webhook-timestamp": String(headers["webhook-timestamp"]),
      "webhook-signature": String(headers["webhook-signature"]),
    });
    return true;
  } catch (error) {
    if (state.stats.badExamples.length < 5) state.stats.badExamples.push(`receiver ${index}: ${error instanceof Error ? error.message : String(error)}`);
    return false;
  }
}

const urls: string[] = [];
for (let index = 0; index < count; index++) {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const { stats, received } = state;
      if (!verify(index, Buffer.concat(chunks).toString("utf8"), request.headers)) {
        stats.badSignatures[index] = (stats.badSignatures[index] ?? 0) + 1;
        response.writeHead(400, { "content-length": "0" }).end();
        return;
      }
      if (state.failing.has(index)) {
        stats.failed[index] = (stats.failed[index] ?? 0) + 1;
        response.writeHead(500, { "content-length": "0" }).end();
        return;
      }
      const id = String(request.headers["webhook-id"]);
      const seen = received[index] as Map<string, number>;
      if (seen.has(id)) stats.duplicates[index] = (stats.duplicates[index] ?? 0) + 1;
      else {
        seen.set(id, Date.now());
        stats.ok[index] = seen.size;
      }
      response.writeHead(200, { "content-length": "0" }).end();
      checkComplete();
    });
  });
  server.keepAliveTimeout = 72_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  urls.push(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/${index}`);
}
emit({ event: "listening", urls });

const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const command = JSON.parse(line) as Command;
  if (command.cmd === "configure") {
    state = fresh(command.secrets, command.failing, command.expect);
    emit({ event: "configured" });
  } else if (command.cmd === "stats") {
    const usage = process.cpuUsage();
    emit({ event: "stats", ...state.stats, cpuSeconds: (usage.user + usage.system) / 1e6 });
  } else {
    const records: ReceiverRecords = state.received.map((seen) => [...seen]);
    writeFileSync(command.file, JSON.stringify(records));
    emit({ event: "dumped" });
  }
});
lines.on("close", () => process.exit(0));
