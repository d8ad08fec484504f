// Calls to Warden: JSON in and out, the API's errors as WardenErrors, a 429 waited out.
import { errorFromBody, WardenError } from "./errors.js";
import type { Clock, Runtime } from "./platform.js";

/** A 429 asking for a longer wait than this is handed to the caller instead of waited out. */
const MAX_RETRY_WAIT_S = 60;
const MAX_RETRIES = 2;

export interface HttpOptions {
  fetch: typeof fetch;
  clock: Clock;
}

function retryAfterSeconds(header: string | null, now: number): number | null {
  if (header === null) return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - now) / 1000));
}

export async function request<T>(
  http: HttpOptions,
  url: string,
  options: { method?: string; body?: unknown; bearer?: string | null; headers?: Record<string, string> } = {},
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    let response: Response;
    try {
      response = await http.fetch(url, {
        method: options.method ?? "GET",
        // Warden's access answer says Cache-Control: private, max-age=<recheck_after>: a
        // browser would answer a fresh check from its HTTP cache. The library keeps answers itself.
        cache: "no-store",
        headers: {
          accept: "application/json",
          ...(options.body === undefined ? {} : { "content-type": "application/json" }),
          ...(options.bearer ? { authorization: `Bearer ${options.bearer}` } : {}),
          // The same headers on every try: a spend's Idempotency-Key makes a retried 429 count once.
          ...options.headers,
        },
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
      });
    } catch (cause) {
      throw new WardenError("network_error", `Warden could not be reached: ${(cause as Error)?.message ?? cause}`);
    }
    let body: unknown = null;
    try {
      body = await response.json();
    } catch {}
    if (response.ok) return body as T;
    const retryAfter = retryAfterSeconds(response.headers.get("retry-after"), http.clock.now());
    if (response.status === 429 && retryAfter !== null && retryAfter <= MAX_RETRY_WAIT_S && attempt < MAX_RETRIES) {
      await new Promise<void>((resolve) => http.clock.setTimeout(resolve, retryAfter * 1000));
      continue;
    }
    throw errorFromBody(response.status, body, retryAfter);
  }
}

/** A request a content script hands to the service worker. */
interface Relayed {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | null;
}

/** What the service worker answers for it: Warden's answer, or why none came. */
type RelayAnswer = { status: number; retryAfter: string | null; body: string } | { failed: string };

/**
 * A fetch for a content script: the service worker sends the request (startBackground)
 * and answers what Warden answered. Without a worker to answer, a network error.
 */
export function relayedFetch(runtime: Runtime, prefix: string): typeof fetch {
  return async (input, init) => {
    const relay: Relayed = {
      url: String(input),
      method: init?.method ?? "GET",
      headers: { ...(init?.headers as Record<string, string> | undefined) },
      body: typeof init?.body === "string" ? init.body : null,
    };
    const answer = (await runtime.sendMessage({ warden: prefix, relay })) as RelayAnswer | null | undefined;
    if (!answer || "failed" in answer) throw new TypeError(answer?.failed ?? "the service worker did not answer");
    return new Response(answer.body === "" ? null : answer.body, {
      status: answer.status,
      headers: answer.retryAfter === null ? {} : { "retry-after": answer.retryAfter },
    });
  };
}

/** The request a message relays, or null when it relays none. */
export function relayedRequest(message: { relay?: unknown } | null): Relayed | null {
  const relay = message?.relay as Partial<Relayed> | undefined;
  if (!relay || typeof relay.url !== "string" || typeof relay.method !== "string") return null;
  return { url: relay.url, method: relay.method, headers: relay.headers ?? {}, body: typeof relay.body === "string" ? relay.body : null };
}

/** The service worker's side: sends a relayed request as is and answers what came back. */
export async function sendRelayed(fetcher: typeof fetch, relay: Relayed): Promise<RelayAnswer> {
  try {
    const response = await fetcher(relay.url, { method: relay.method, headers: relay.headers, body: relay.body ?? undefined, cache: "no-store" });
    return { status: response.status, retryAfter: response.headers.get("retry-after"), body: await response.text() };
  } catch (cause) {
    return { failed: (cause as Error)?.message ?? String(cause) };
  }
}
