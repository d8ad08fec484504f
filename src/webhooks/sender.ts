import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { type ClientRequest, Agent as HttpAgent, request as httpRequest } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import { isPrivateAddress, privateHostReason } from "./private-address.js";

// Every address a name resolves to is checked as the connection is made, so a DNS
// answer (or one that changed since the endpoint was registered) cannot bring a private
// address in. node:net looks up no IP address: those are checked before the request.
const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, "", 0);
    const allowed = addresses.filter((a) => !isPrivateAddress(a.address));
    if (allowed.length === 0) {
      return callback(Object.assign(new Error(`${hostname} resolves only to private addresses`), { code: "EPRIVATE" }), "", 0);
    }
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, allowed);
    const first = allowed[0] as LookupAddress;
    callback(null, first.address, first.family);
  });
};

export interface SendResult {
  statusCode: number | null;
  /** The first 4 KiB of the answer, as text. */
  responseBody: string | null;
  error: string | null;
  durationMs: number;
  /** From Retry-After on a 429 or 503. */
  retryAfterMs: number | null;
}

export interface SendOptions {
  timeoutMs: number;
  allowPrivate: boolean;
  now: () => number;
}

export const RESPONSE_BODY_LIMIT = 4096;

// Connections are kept alive between attempts to the same receiver: a new TCP (and TLS)
// connection per attempt cost the benchmark's plain client 31-52% of its throughput.
// Idle sockets close after 4 s, or sooner when the receiver's Keep-Alive header says so
// (Node reads its timeout hint); a receiver that closes one just as it is reused is
// handled by sendOnce's retry below. Addresses are checked when a connection is made
// (the lookup), so a reused connection was checked when it was opened.
const IDLE_SOCKET_MS = 4_000;
const agents = {
  "http:": new HttpAgent({ keepAlive: true, timeout: IDLE_SOCKET_MS, scheduling: "lifo" }),
  "https:": new HttpsAgent({ keepAlive: true, timeout: IDLE_SOCKET_MS, scheduling: "lifo" }),
};

/** Where a request goes: a URL's parts as node:http takes them. */
interface Target {
  request: RequestTarget;
  /** Why its host may not be reached unless private addresses are allowed, or null. */
  privateHost: string | null;
}

interface RequestTarget {
  protocol: string;
  /** An IPv6 address without its brackets, as node:http wants it (and isIP reads it). */
  hostname: string;
  port: string;
  path: string;
  auth?: string;
}

// An endpoint's URL is parsed once, not per attempt: parsing it and turning it into
// request options was 1.5% of the worker's time in scenario 5. Bounded like the opened
// secrets (an endpoint's URL can change, so entries are by URL, never by endpoint).
const PARSED_URLS = 10_000;
const targets = new Map<string, Target | null>();

function targetOf(url: string): Target | null {
  let target = targets.get(url);
  if (target !== undefined) return target;
  target = null;
  try {
    const parsed = new URL(url);
    const auth = parsed.username || parsed.password ? `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}` : undefined;
    const hostname = parsed.hostname.replace(/^\[|\]$/g, "");
    target = {
      request: { protocol: parsed.protocol, hostname, port: parsed.port, path: `${parsed.pathname}${parsed.search}`, ...(auth === undefined ? {} : { auth }) },
      privateHost: privateHostReason(hostname),
    };
  } catch {
    // An invalid URL is remembered as such: it fails every attempt the same way.
  }
  if (targets.size >= PARSED_URLS) targets.clear();
  targets.set(url, target);
  return target;
}

function parseRetryAfter(value: string | undefined, now: number): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/**
 * One POST of a signed body. Never throws: every outcome, including a refused address,
 * a timeout or a reset, comes back as a result to record. Redirects are not followed
 * (a 3xx is a failure), and at most 4 KiB of the answer is read.
 */
export function postWebhook(url: string, headers: Record<string, string>, body: string, options: SendOptions): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (result: Omit<SendResult, "durationMs">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...result, durationMs: elapsed() });
    };
    const fail = (error: string) => finish({ statusCode: null, responseBody: null, error, retryAfterMs: null });

    const target = targetOf(url);
    if (target === null) return fail("invalid endpoint URL");
    if (!options.allowPrivate && target.privateHost !== null) {
      return fail(`refused: ${target.privateHost} (set WARDEN_ALLOW_PRIVATE_WEBHOOKS=1 to allow)`);
    }
    const payload = Buffer.from(body, "utf8");
    const sendOnce = (agent: HttpAgent | false): ClientRequest => {
      const send = target.request.protocol === "https:" ? httpsRequest : httpRequest;
      const request = send(
        {
          ...target.request,
          method: "POST",
          headers: { ...headers, "content-length": String(payload.length), "user-agent": "Warden-Webhooks/1" },
          agent,
          ...(options.allowPrivate ? {} : { lookup: guardedLookup }),
        },
        (response) => {
          const chunks: Buffer[] = [];
          let size = 0;
          const done = () => {
            const statusCode = response.statusCode ?? 0;
            const retryAfterMs = statusCode === 429 || statusCode === 503 ? parseRetryAfter(response.headers["retry-after"], options.now()) : null;
            finish({ statusCode, responseBody: Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT).toString("utf8"), error: null, retryAfterMs });
          };
          response.on("data", (chunk: Buffer) => {
            if (size < RESPONSE_BODY_LIMIT) chunks.push(chunk);
            size += chunk.length;
            if (size >= RESPONSE_BODY_LIMIT) {
              done();
              response.destroy();
            }
          });
          response.on("end", done);
          response.on("error", done);
        },
      );
      request.on("error", (error: NodeJS.ErrnoException) => {
        // A kept-alive socket the receiver closed just as it was reused fails before any
        // answer: the attempt never reached it, so it is made again on a new connection.
        if (request.reusedSocket && (error.code === "ECONNRESET" || error.code === "EPIPE") && !settled) {
          current = sendOnce(false);
          return;
        }
        fail(error.code ? `${error.code}: ${error.message}` : error.message);
      });
      request.end(payload);
      return request;
    };
    let current = sendOnce(target.request.protocol === "https:" ? agents["https:"] : agents["http:"]);
    // The whole attempt is bounded by the timeout, one timer for it: a socket timeout on
    // each request as well cost a listener and a timer reset per attempt, for nothing.
    timer = setTimeout(() => {
      current.destroy();
      fail(`timeout after ${options.timeoutMs} ms`);
    }, options.timeoutMs);
  });
}
