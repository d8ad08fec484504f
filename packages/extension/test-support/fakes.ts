// Test doubles for the library: a clock that moves only when told (and runs the timers
// it passes), storage shared by several instances as chrome.storage.local is by the
// parts of an extension, chrome.alarms and chrome.runtime messaging, and tokens signed
// with node:crypto in Warden's format.
import { createHash, generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import type { Alarms, Clock, MeterUsage, Runtime, Storage } from "../src/index.js";

/** Lets pending promise chains run (several turns of the event loop). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * Returns once the condition holds: for work the library starts on its own (an alarm, a
 * change in storage), which includes WebCrypto's verification on the thread pool, so no
 * fixed number of turns is enough. Fails after 5 s of real time.
 */
export async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = performance.now() + 5_000;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

export class FakeClock implements Clock {
  #now: number;
  #timers = new Map<number, { at: number; callback: () => void }>();
  #next = 1;

  constructor(start = Date.parse("2026-11-21T12:00:00.000Z")) {
    this.#now = start;
  }
  now(): number {
    return this.#now;
  }
  set(ms: number): void {
    this.#now = ms;
  }
  setTimeout(callback: () => void, ms: number): unknown {
    const id = this.#next++;
    this.#timers.set(id, { at: this.#now + Math.max(0, ms), callback });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.#timers.delete(handle as number);
  }
  get pendingTimers(): number {
    return this.#timers.size;
  }
  /** Moves time on by ms, running each timer that falls due on the way, in order, and what they start. */
  async advance(ms: number): Promise<void> {
    const end = this.#now + ms;
    await settle();
    for (;;) {
      const due = [...this.#timers.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.#timers.delete(due[0]);
      this.#now = Math.max(this.#now, due[1].at);
      due[1].callback();
      await settle();
    }
    this.#now = end;
    await settle();
  }
}

/** One storage area seen by several instances (service worker, popup, content script), with change events. */
export function sharedStorage() {
  const values = new Map<string, string>();
  const listeners = new Set<(key: string) => void>();
  const changed = (key: string) => {
    for (const listener of listeners) listener(key);
  };
  const area: Storage = {
    get: async (key) => (values.has(key) ? JSON.parse(values.get(key) as string) : undefined),
    set: async (key, value) => {
      values.set(key, JSON.stringify(value));
      changed(key);
    },
    remove: async (key) => {
      if (values.delete(key)) changed(key);
    },
    onChanged: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  return { area, values };
}

/** chrome.alarms: one alarm per name, fired by the test. */
export function fakeAlarms() {
  const alarms = new Map<string, number>();
  let listeners: ((alarm: { name: string }) => void)[] = [];
  const api: Alarms = {
    create: (name, info) => {
      alarms.set(name, info.when);
    },
    clear: (name) => alarms.delete(name),
    onAlarm: { addListener: (listener) => listeners.push(listener) },
  };
  return {
    api,
    alarms,
    listenerCount: () => listeners.length,
    /** The browser stops the service worker: its listeners are gone, its alarms stay. */
    stopWorker() {
      listeners = [];
    },
    /** Fires the named alarm as the browser would when it falls due. */
    fire(name: string) {
      alarms.delete(name);
      for (const listener of listeners) listener({ name });
    },
  };
}

/** chrome.runtime messaging between the parts of one extension: a message reaches every other part's listeners. */
export function fakeRuntime() {
  const listeners: Parameters<Runtime["onMessage"]["addListener"]>[0][] = [];
  const api: Runtime = {
    sendMessage: (message) =>
      new Promise((resolve, reject) => {
        for (const listener of listeners) if (listener(message, {}, resolve) === true) return;
        reject(new Error("Could not establish connection. Receiving end does not exist."));
      }),
    onMessage: { addListener: (listener) => listeners.push(listener) },
  };
  return api;
}

const b64url = (value: string | Buffer) => Buffer.from(value).toString("base64url");

export interface TestSigner {
  kid: string;
  jwk: Record<string, unknown>;
  sign(claims: Record<string, unknown>, header?: Record<string, unknown>): string;
}

/** An Ed25519 key signing tokens the way Warden does. */
export function testSigner(kid: string): TestSigner {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  return {
    kid,
    jwk: { ...publicKey.export({ format: "jwk" }), kid, alg: "EdDSA", use: "sig" },
    sign: (claims, header = { alg: "EdDSA", typ: "JWT", kid }) => signWith(privateKey, header, claims),
  };
}

function signWith(key: KeyObject, header: Record<string, unknown>, claims: Record<string, unknown>): string {
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
  return `${input}.${b64url(sign(null, Buffer.from(input), key))}`;
}

export const TARGET = { workspace: "acme", env: "test" as const, tool: "tabmaster" };

interface Answer {
  entitled: boolean;
  via: string | null;
  plan: string | null;
  trial_ends_at: number | null;
  recheck_after: number;
}

/**
 * Warden's client API as far as the library's caching needs it: the key set, sign-in
 * (code 123456), the access check answering a token signed by `signer` (with
 * `overrides` to its claims), and signing a device out. `down` makes every request fail
 * as an unreachable server's does; `calls` lists what was asked.
 */
export interface FakeWarden {
  signer: TestSigner;
  published: TestSigner[];
  answer: Answer;
  overrides: Record<string, unknown>;
  down: boolean;
  queued: Response[];
  calls: string[];
  signedOut: boolean;
  deviceToken: string;
  /** The person's one meter: spends draw from its `remaining` (the allowance first, then credits). */
  meter: MeterUsage;
  /** The person's credits changed by something other than a spend (a pack bought): in the answer's state, not its claims, as at Warden. */
  creditsVersion: number;
  /** Each spend's Idempotency-Key as sent, in order, retries included; a key applied before replays. */
  spendKeys: string[];
  /** Sign-in hand-off codes the hosted page gave, with the PKCE challenge each is bound to. */
  codes: Map<string, string>;
  /** Long polls waiting on GET …/access/changes, with the state each holds. */
  waits: { state: string; answer(response: Response): void }[];
  /** Changes the answer (as a purchase would) and answers the waiting long polls. */
  change(update: Partial<Answer>): void;
  /** Ends the waiting long polls with 204 (their time is up). */
  timeOut(): void;
  claims(): Record<string, unknown>;
  fetch: typeof fetch;
}

const stateOf = (answer: Answer, creditsVersion: number) => {
  const { recheck_after: _r, ...meaning } = answer;
  return createHash("sha256")
    .update(JSON.stringify([meaning, creditsVersion]))
    .digest("hex")
    .slice(0, 16);
};

export function fakeWarden(clock: { now(): number }): FakeWarden {
  const deviceToken = "wdt_0123456789012345678901234567890123456789abc";
  const applied = new Set<string>();
  const fake: FakeWarden = {
    signer: testSigner("k1"),
    published: [],
    answer: { entitled: false, via: null, plan: null, trial_ends_at: null, recheck_after: 900 },
    overrides: {},
    down: false,
    /** Answers the next requests with these, in order, before the usual answer. */
    queued: [],
    calls: [],
    signedOut: false,
    deviceToken,
    codes: new Map(),
    meter: {
      meter: "summaries",
      unit: "summaries",
      used: 0,
      allowance: 10,
      allowance_remaining: 10,
      credits: 0,
      remaining: 10,
      resets_at: "2026-12-01T00:00:00.000Z",
      period_start: "2026-11-01T00:00:00.000Z",
      buckets: [],
    },
    creditsVersion: 0,
    spendKeys: [],
    waits: [],
    change(update) {
      Object.assign(fake.answer, update);
      for (const wait of fake.waits.splice(0)) wait.answer(accessAnswer());
    },
    timeOut() {
      for (const wait of fake.waits.splice(0)) wait.answer(new Response(null, { status: 204 }));
    },
    claims() {
      const iat = Math.floor(clock.now() / 1000);
      const { recheck_after, ...answer } = fake.answer;
      return {
        iss: "http://warden.test",
        aud: `${TARGET.workspace}:${TARGET.env}`,
        sub: "per_1",
        email: "ada@example.com",
        workspace: TARGET.workspace,
        env: TARGET.env,
        tool: TARGET.tool,
        ...answer,
        iat,
        exp: iat + recheck_after,
        ...fake.overrides,
      };
    },
    fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
      const url = new URL(String(input));
      const method = init?.method ?? "GET";
      fake.calls.push(`${method} ${url.pathname}`);
      const idempotencyKey = (init?.headers as Record<string, string> | undefined)?.["idempotency-key"];
      if (idempotencyKey !== undefined) fake.spendKeys.push(idempotencyKey);
      if (init?.cache !== "no-store") throw new Error(`${method} ${url.pathname} could be answered from the browser's HTTP cache`);
      if (fake.down) throw new TypeError("fetch failed");
      const queued = fake.queued.shift();
      if (queued) return queued;
      const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
      const authed = (init?.headers as Record<string, string> | undefined)?.authorization === `Bearer ${deviceToken}` && !fake.signedOut;
      const unauthenticated = () =>
        json(401, { error: { type: "authentication_error", message: "This device token is unknown or signed out: sign in again." } });
      switch (`${method} ${url.pathname}`) {
        case `GET /api/client/v1/tools/${TARGET.tool}/access/changes`: {
          if (!authed) return unauthenticated();
          const held = url.searchParams.get("state") ?? "";
          if (held !== stateOf(fake.answer, fake.creditsVersion)) return accessAnswer();
          return new Promise<Response>((resolve) => fake.waits.push({ state: held, answer: resolve }));
        }
        case `POST /api/client/v1/tools/${TARGET.tool}/page-tickets`:
          if (!authed) return unauthenticated();
          return json(200, { ticket: "wpt_fake", expires_at: new Date(clock.now() + 60_000).toISOString() });
        case `POST /api/client/v1/tools/${TARGET.tool}/sign-in/exchange`: {
          const body = JSON.parse(String(init?.body));
          const challenge = fake.codes.get(body.code);
          fake.codes.delete(body.code);
          if (!challenge || createHash("sha256").update(body.code_verifier).digest("base64url") !== challenge) {
            return json(400, {
              error: { type: "invalid_request_error", message: "That code is unknown, used, expired, or not this verifier's.", param: "code" },
            });
          }
          fake.signedOut = false;
          const device = {
            id: "dev_1",
            tool: TARGET.tool,
            name: body.device.name,
            platform: body.device.platform,
            created_at: "",
            last_active_at: null,
            current: true,
          };
          return json(200, { token: deviceToken, email: "ada@example.com", device });
        }
        case "GET /.well-known/jwks.json":
          return json(200, { keys: (fake.published.length > 0 ? fake.published : [fake.signer]).map((s) => s.jwk) });
        case "POST /api/client/v1/sign-in":
          return json(200, { sent: true, expires_at: new Date(clock.now() + 600_000).toISOString() });
        case "POST /api/client/v1/sign-in/verify": {
          const body = JSON.parse(String(init?.body));
          if (body.code !== "123456") return json(400, { error: { type: "invalid_request_error", message: "That code is not right.", param: "code" } });
          fake.signedOut = false;
          const device = {
            id: "dev_1",
            tool: TARGET.tool,
            name: body.device.name,
            platform: body.device.platform,
            created_at: "",
            last_active_at: null,
            current: true,
          };
          return json(200, { token: deviceToken, email: body.email, device });
        }
        case `GET /api/client/v1/tools/${TARGET.tool}/usage`:
          if (!authed) return unauthenticated();
          return json(200, { data: [fake.meter] });
        case `POST /api/client/v1/tools/${TARGET.tool}/usage`: {
          if (!authed) return unauthenticated();
          const replayed = idempotencyKey !== undefined && applied.has(idempotencyKey);
          if (idempotencyKey !== undefined) applied.add(idempotencyKey);
          const { meter, quantity } = JSON.parse(String(init?.body)) as { meter: string; quantity: number };
          if (meter !== fake.meter.meter) return json(400, { error: { type: "invalid_request_error", message: `No meter "${meter}".`, param: "meter" } });
          if (replayed) return json(200, { quantity, allowed: true, ...fake.meter });
          if (quantity > fake.meter.remaining) {
            const message = `Only ${fake.meter.remaining} summaries are left of meter "summaries" and this use needs ${quantity}. Nothing was spent.`;
            return json(402, { error: { type: "usage_limit_error", message, usage: fake.meter } });
          }
          const fromAllowance = Math.min(quantity, fake.meter.allowance_remaining);
          const m = fake.meter;
          fake.meter = {
            ...m,
            used: m.used + fromAllowance,
            allowance_remaining: m.allowance_remaining - fromAllowance,
            credits: m.credits - (quantity - fromAllowance),
          };
          fake.meter.remaining = fake.meter.allowance_remaining + fake.meter.credits;
          return json(200, { quantity, allowed: true, ...fake.meter });
        }
        case `GET /api/client/v1/tools/${TARGET.tool}/access`:
          if (!authed) return unauthenticated();
          return accessAnswer();
        case "DELETE /api/client/v1/devices/dev_1":
          if (!authed) return unauthenticated();
          fake.signedOut = true;
          return json(200, { id: "dev_1", signed_out_at: new Date(clock.now()).toISOString() });
        default:
          return json(404, { error: { type: "not_found", message: `No route ${method} ${url.pathname}` } });
      }
    },
  };
  function accessAnswer(): Response {
    const { trial_ends_at: _t, ...answer } = fake.answer;
    const body = { ...answer, trial: null, subscription: null, state: stateOf(fake.answer, fake.creditsVersion), token: fake.signer.sign(fake.claims()) };
    return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });
  }
  return fake;
}
