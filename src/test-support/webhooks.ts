// A real webhook receiver on loopback for delivery tests: it records every request with
// its raw body, answers through a handler the test swaps, counts connections (so a test
// can tell that nothing connected), and can stop listening and listen again on the same
// port (connection refused, then back).
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after } from "node:test";
import type { FastifyBaseLogger } from "fastify";
import { emitEvent } from "../events/event.service.js";
import type { EventType } from "../events/event-types.js";
import { exampleEvent } from "../events/examples.js";
import type { Services } from "../services.js";
import { DEFAULT_WORKER_OPTIONS, DeliveryWorker, type DeliveryWorkerOptions } from "../webhooks/delivery.worker.js";

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body, as the bytes arrived. */
  body: Buffer;
  /** performance.now() when the request finished arriving. */
  at: number;
}

export type Handler = (request: ReceivedRequest, response: ServerResponse) => void | Promise<void>;

export interface Receiver {
  url: string;
  port: number;
  received: ReceivedRequest[];
  /** TCP connections accepted so far. */
  connections: number;
  /** How the next requests are answered; 200 "ok" until changed. */
  handle: Handler;
  /** Stops listening (the port then refuses connections) and drops open connections. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  restart(): Promise<void>;
  /** Waits until `predicate` holds, polling; throws after `timeoutMs`. */
  waitFor(predicate: () => boolean, timeoutMs?: number): Promise<void>;
  /** The webhook-id header of every request so far. */
  ids(): string[];
}

const open: Server[] = [];
after(async () => {
  for (const server of open) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

export const answer =
  (status: number, body = "", headers: Record<string, string> = {}): Handler =>
  (_request, response) => {
    response.writeHead(status, headers).end(body);
  };

export async function startReceiver(handle: Handler = answer(200, "ok")): Promise<Receiver> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const received: ReceivedRequest = {
        method: request.method ?? "",
        path: request.url ?? "",
        headers: request.headers,
        body: Buffer.concat(chunks),
        at: performance.now(),
      };
      receiver.received.push(received);
      Promise.resolve(receiver.handle(received, response)).catch(() => response.destroy());
    });
  });
  server.on("connection", () => receiver.connections++);
  // A response the test never ends (a timeout) must not keep the server from closing.
  server.on("clientError", (_error, socket) => socket.destroy());
  open.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const receiver: Receiver = {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received: [],
    connections: 0,
    handle,
    async stop() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
    async restart() {
      await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    },
    async waitFor(predicate, timeoutMs = 5_000) {
      const deadline = performance.now() + timeoutMs;
      while (!predicate()) {
        if (performance.now() > deadline) throw new Error(`receiver: condition not met in ${timeoutMs} ms (${receiver.received.length} requests so far)`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    ids: () => receiver.received.map((r) => String(r.headers["webhook-id"])),
  };
  return receiver;
}

/** A logger that keeps what the worker logs, so a test can assert it logged no error. */
export interface RecordingLogger {
  logger: FastifyBaseLogger;
  errors: unknown[];
}

export function recordingLogger(): RecordingLogger {
  const errors: unknown[] = [];
  const noop = () => {};
  const logger = {
    level: "silent",
    fatal: (...args: unknown[]) => errors.push(args),
    error: (...args: unknown[]) => errors.push(args),
    warn: noop,
    info: noop,
    debug: noop,
    trace: noop,
    silent: noop,
    child: () => logger,
  } as unknown as FastifyBaseLogger;
  return { logger, errors };
}

/** A delivery worker as `warden serve` runs it, allowed to reach loopback receivers. */
export function testWorker(services: Services, options: Partial<DeliveryWorkerOptions> = {}): DeliveryWorker & { errors: unknown[] } {
  const { logger, errors } = recordingLogger();
  // Jitter fixed at a tenth of each delay: with Math.random, one run in about 2,000 had a
  // first retry due at exactly 5 s, the instant a failing endpoint's pause ends.
  const worker = new DeliveryWorker(services, logger, { ...DEFAULT_WORKER_OPTIONS, allowPrivate: true, random: () => 0.5, ...options });
  return Object.assign(worker, { errors });
}

/**
 * Emits an example event of `type` (payment.refunded) in the workspace's test environment
 * (its facts overridden by `data`) at the clock's now, in its own transaction, to the environment's enabled endpoints
 * (`endpointIds` [] writes it with no delivery); answers its id.
 */
export async function emitExample(
  services: Services,
  ws: { workspaceId: string },
  options: { type?: EventType; data?: Record<string, unknown>; endpointIds?: string[] } = {},
): Promise<string> {
  const type = options.type ?? "payment.refunded";
  const example = exampleEvent(type, { livemode: false, now: services.clock.now() });
  await services.db.transaction().execute((trx) =>
    emitEvent(trx, {
      workspaceId: ws.workspaceId,
      env: "test",
      id: example.id,
      type,
      data: { ...example.data, ...options.data },
      createdAt: services.clock.now(),
      ...(options.endpointIds ? { endpointIds: options.endpointIds } : {}),
    }),
  );
  return example.id;
}
