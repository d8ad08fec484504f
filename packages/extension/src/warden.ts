// createWarden: everything between Warden's client API and an extension. State lives in
// the extension's shared storage (the device token, the last signed access answer, the
// key set), so the service worker, the popup and every content script see one answer,
// and the service worker may be stopped and started at any time without losing it.
import { WardenError } from "./errors.js";
import { relayedFetch, relayedRequest, request, sendRelayed } from "./http.js";
import { challengeOf, fragmentOf, randomToken } from "./pkce.js";
import {
  type Alarms,
  type Clock,
  defaultStorage,
  extensionApi,
  type I18n,
  type Identity,
  isContentScript,
  type Runtime,
  type Storage,
  systemClock,
  type Tabs,
} from "./platform.js";
import { type AccessClaims, type Jwk, KeySet, lifetimeMs, type Via } from "./token.js";
import type { Device, DeviceInfo, Grant, MeterUsage, Purchase, SeatChange, SeatList, SignedIn, SignInSent, Spent } from "./types.js";

export interface WardenOptions {
  /** Warden's address, e.g. https://acme.warden.example.com (without /api/…). */
  url: string;
  /** The workspace's slug. */
  workspace: string;
  /** The tool's id. */
  tool: string;
  /** "live" (the default) for a published extension, "test" for a development build. */
  env?: "test" | "live";
  /** Where Stripe sends a buyer after paying, unless checkout() is told. */
  successUrl?: string;
  /** Where Stripe sends a buyer who gives up, unless checkout() is told. */
  cancelUrl?: string;
  /** How this device is named in the person's device list (default: browser and system, e.g. "Chrome on macOS"). */
  device?: DeviceInfo;
  /** Seconds between tries while Warden cannot be reached (default 60). */
  retrySeconds?: number;
  /** Default: chrome.storage.local or browser.storage.local, else memory. */
  storage?: Storage;
  /** Default: chrome.alarms or browser.alarms, else timers. null: timers. */
  alarms?: Alarms | null;
  /** Default: chrome.runtime or browser.runtime. */
  runtime?: Runtime | null;
  /** Default: chrome.tabs or browser.tabs: where Warden's hosted pages open. */
  tabs?: Tabs | null;
  /**
   * Default: chrome.identity or browser.identity, present when the manifest asks for the
   * "identity" permission: the sign-in page returns to the extension through it. null (or
   * no permission): the page returns, in its tab, to `callbackPage`.
   */
  identity?: Identity | null;
  /** The extension's own page the sign-in page returns to without chrome.identity (default "warden-signed-in.html"): it calls completeSignIn(). */
  callbackPage?: string;
  /**
   * Default: chrome.i18n or browser.i18n: Warden's pages open in the browser's language
   * (`?lang=` from getUILanguage(); the page speaks English where it has no catalogue). null: the page chooses by the browser's Accept-Language.
   */
  i18n?: I18n | null;
  /** Minutes the library waits on Warden for an access change after it opened a page (default 30). */
  pageWatchMinutes?: number;
  /** Whether this runs in a content script, which asks the service worker instead of Warden (default: found from location). */
  contentScript?: boolean;
  clock?: Clock;
  fetch?: typeof fetch;
}

/** What the extension may do now, from the last access token that verified. */
export interface AccessState {
  signedIn: boolean;
  /** Unlock the tool's features when true. */
  entitled: boolean;
  via: Via | null;
  /** The plan's id. */
  plan: string | null;
  /** The tool's features the person holds (their ids, sorted); [] when none. */
  features: string[];
  /** Epoch milliseconds. */
  trialEndsAt: number | null;
  /** The signed-in address; null signed out, and on a device activated with a licence key. */
  email: string | null;
  /** Epoch milliseconds (this device's clock) until which this answer holds; null when none is held. */
  expiresAt: number | null;
  /** The last try to reach Warden failed: the answer is the last one that verified, and locked once it expired. */
  offline: boolean;
  /**
   * Warden's fingerprint of the answer (its `state`): another one when anything above
   * changes, and when the person's credits are added or taken back (a credit pack bought,
   * refunded or disputed; credits added or removed by hand), though no field here shows
   * them: read them with usage(). Not signed: a sign of change, never a reason to unlock.
   * null when no answer is held.
   */
  version: string | null;
}

export interface SpendOptions {
  /**
   * Repeats the spend safely for 24 hours: the same key and spend answer the first spend
   * again and spend nothing more. Default: a new random key for this call, so that the
   * library's own retry of a rate-limited request counts once.
   */
  idempotencyKey?: string;
}

export interface CheckoutOptions {
  /** A team purchase: seats to hand out. */
  seats?: number;
  /** Pre-fills the checkout's address (a signed-in buyer's own by default). */
  email?: string;
  successUrl?: string;
  cancelUrl?: string;
}

export interface PaymentPageOptions {
  /** A plan's id: the plan chosen on the page when it opens. */
  plan?: string;
}

export interface Warden {
  /**
   * Opens Warden's sign-in page (address, then the mailed code). With chrome.identity
   * (the "identity" permission) it opens in the browser's sign-in window and resolves
   * once this device is signed in; without, it opens in a tab that comes back to
   * `callbackPage`, whose completeSignIn() signs in, and resolves null at once.
   */
  openSignInPage(): Promise<SignedIn | null>;
  /** In the page the sign-in page came back to (`callbackPage`): signs this device in with the code in its address. */
  completeSignIn(url?: string): Promise<SignedIn>;
  /** Opens Warden's plans page (signed in when this device is); the purchase unlocks within seconds while the extension runs. */
  openPaymentPage(options?: PaymentPageOptions): Promise<void>;
  /** Opens Warden's trial page; a trial started there unlocks within seconds. */
  openTrialPage(): Promise<void>;
  /** Opens Warden's page where the person manages licences, subscriptions, seats and devices. */
  openManagePage(): Promise<void>;
  /** Mails a 6-digit code to the address. */
  signIn(email: string): Promise<SignInSent>;
  /** The address a code was last mailed to by signIn, until verify succeeds: a popup opened again asks for the code. */
  pendingEmail(): Promise<string | null>;
  /** Signs in with the mailed code (to the address of the last signIn, even from another popup), then checks access. */
  verify(code: string, device?: DeviceInfo): Promise<SignedIn>;
  /** Signs this device out, here at once and at Warden. */
  signOut(): Promise<void>;
  /** The person's signed-in devices. */
  devices(): Promise<Device[]>;
  /** Signs out one of the person's devices (this one included). */
  signOutDevice(id: string): Promise<void>;
  /** The held answer while its token is valid, else a fresh check; `{ fresh: true }` always asks Warden. */
  access(options?: { fresh?: boolean }): Promise<AccessState>;
  /** Whether the person holds the tool's feature now (the held answer, as access() gives it). */
  hasFeature(name: string): Promise<boolean>;
  /** The person's meters of the tool: allowances this period, credits, and what a spend may take. Signed in by email only. */
  usage(): Promise<MeterUsage[]>;
  /** One meter; a meter the tool does not declare rejects with an invalid_request_error (param "meter"). */
  usage(meter: string): Promise<MeterUsage>;
  /**
   * Spends `quantity` (1 by default) whole units of a meter: the allowances first, then
   * credits. All or nothing: more than is left rejects with a UsageLimitError, which says
   * what is left, and spends nothing.
   */
  spend(meter: string, quantity?: number, options?: SpendOptions): Promise<Spent>;
  /** Called whenever the access state changes, in any part of the extension; answers a function that stops it. */
  onAccessChange(listener: (state: AccessState) => void): () => void;
  /**
   * Call once, synchronously, at the top level of the background service worker: the
   * recheck before the token expires (an alarm, so it survives the worker being stopped),
   * and the checks content scripts ask for.
   */
  startBackground(): void;
  /** Starts the tool's trial (once per person), then checks access. */
  startTrial(): Promise<Grant>;
  /** The person's licences (with their keys), seats and subscriptions. */
  purchases(): Promise<Purchase[]>;
  /** Registers this device with a licence key instead of a sign-in, then checks access. */
  activate(licenceKey: string, device?: DeviceInfo): Promise<SignedIn>;
  /** A Stripe Checkout page for one of the tool's plans: the URL to open. */
  checkout(plan: string, options?: CheckoutOptions): Promise<string>;
  /** A team purchase's seats (its buyer only). */
  seats(purchaseId: string): Promise<SeatList>;
  assignSeat(purchaseId: string, email: string): Promise<SeatChange>;
  unassignSeat(purchaseId: string, seatId: string): Promise<SeatChange>;
}

interface StoredSession {
  token: string;
  /** null for a device activated with a licence key: it is not its holder signed in. */
  email: string | null;
  deviceId: string;
}

/** The last signed answer, and when a try to renew it failed. Times are this device's clock. */
interface StoredAccess {
  token: string | null;
  receivedAt: number;
  /** receivedAt + the token's exp - iat, or the answer's recheck_after when shorter: never longer than Warden signed it for, whatever the date on this device. */
  expiresAt: number;
  failedAt: number | null;
  /** The answer's state, which GET …/access/changes compares with (absent from a Warden older than it). */
  state?: string;
}

/** A sign-in page opened and not yet come back: what proves the code that comes back is this extension's. */
interface StoredHandOff {
  verifier: string;
  state: string;
  redirectUri: string;
  startedAt: number;
}

// The sign-in page's mailed code lives 10 minutes; a hand-off older than that cannot end well.
const HAND_OFF_MS = 15 * 60_000;
// chrome.alarms fire at most every 30 s: how often a stopped service worker is woken to wait on again while a page is open.
const WATCH_ALARM_MS = 30_000;
const QUICK_ANSWER_MS = 5_000;

const SIGNED_OUT: AccessState = Object.freeze({
  signedIn: false,
  entitled: false,
  via: null,
  plan: null,
  features: Object.freeze([]) as unknown as string[],
  trialEndsAt: null,
  email: null,
  expiresAt: null,
  offline: false,
  version: null,
});

/** Warden could not answer: keep the last valid answer and try again later. */
const unreachable = (error: unknown) => error instanceof WardenError && (error.type === "network_error" || error.status === 429 || error.status >= 500);

function defaultDevice(): DeviceInfo {
  const ua = (globalThis as { navigator?: { userAgent?: string } }).navigator?.userAgent ?? "";
  const browser = /Firefox\//.test(ua) ? "Firefox" : /Edg\//.test(ua) ? "Edge" : /Chrom(e|ium)\//.test(ua) ? "Chrome" : "Browser";
  const system = /Windows/.test(ua)
    ? "Windows"
    : /Mac OS X/.test(ua)
      ? "macOS"
      : /CrOS/.test(ua)
        ? "ChromeOS"
        : /Android/.test(ua)
          ? "Android"
          : /Linux/.test(ua)
            ? "Linux"
            : "";
  return { name: system ? `${browser} on ${system}` : browser, platform: `${browser}-${system || "other"}`.toLowerCase() };
}

export function createWarden(options: WardenOptions): Warden {
  const api = extensionApi();
  const env = options.env ?? "live";
  const base = options.url.replace(/\/+$/, "");
  const clock = options.clock ?? systemClock;
  const storage = options.storage ?? defaultStorage(api);
  const alarms = options.alarms === undefined ? (api?.alarms ?? null) : options.alarms;
  const runtime = options.runtime === undefined ? (api?.runtime ?? null) : options.runtime;
  const contentScript = options.contentScript ?? isContentScript(api);
  const retryMs = (options.retrySeconds ?? 60) * 1000;
  const ownFetch = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => globalThis.fetch(input, init));
  const expected = { workspace: options.workspace, env, tool: options.tool };
  const prefix = `warden:${options.workspace}:${env}:${options.tool}`;
  // A content script's requests would be the page's (its origin, under its CORS): the service worker sends them.
  const http = { fetch: contentScript && runtime ? relayedFetch(runtime, prefix) : ownFetch, clock };
  const SESSION = `${prefix}:session`;
  const ACCESS = `${prefix}:access`;
  const PENDING = `${prefix}:pending`;
  const HAND_OFF = `${prefix}:hand-off`;
  const WATCH = `${prefix}:watch`;
  const WATCH_ALARM = `${prefix}:watch`;
  const tabs = options.tabs === undefined ? (api?.tabs ?? null) : options.tabs;
  const identity = options.identity === undefined ? (api?.identity ?? null) : options.identity;
  const i18n = options.i18n === undefined ? (api?.i18n ?? null) : options.i18n;
  const watchMs = (options.pageWatchMinutes ?? 30) * 60_000;
  const toolPath = `/tools/${encodeURIComponent(options.tool)}`;
  const clientUrl = (path: string) => `${base}/api/client/v1${path}`;
  /** Below `base` once resolved: `…/warden/../x` is not, whatever its text starts with. */
  const isWardenAddress = (url: string): boolean => {
    try {
      const resolved = new URL(url);
      const root = new URL(`${base}/`);
      return resolved.origin === root.origin && resolved.pathname.startsWith(root.pathname);
    } catch {
      return false;
    }
  };
  const keys = new KeySet(storage, `warden:jwks:${base}`, clock, async () => (await request<{ keys: Jwk[] }>(http, `${base}/.well-known/jwks.json`)).keys);

  const listeners = new Set<(state: AccessState) => void>();
  let published: string | null = null;
  let expiryTimer: unknown = null;
  let recheckTimer: unknown = null;
  let inflight: Promise<AccessState> | null = null;
  let background = false;
  let unwatch: (() => void) | null = null;
  let verified: { token: string; claims: Promise<AccessClaims> } | null = null;
  let watching: Promise<void> | null = null;

  const session = async () => ((await storage.get(SESSION)) as StoredSession | undefined) ?? null;

  async function forget(): Promise<void> {
    await storage.remove(SESSION);
    await storage.remove(ACCESS);
    await storage.remove(PENDING);
    await storage.remove(WATCH);
  }

  function claimsOf(token: string): Promise<AccessClaims> {
    if (verified?.token === token) return verified.claims;
    const claims = keys.verify(token, expected);
    verified = { token, claims };
    // A failure to fetch the key set is not the token's: try again next time.
    claims.catch(() => {
      if (verified?.claims === claims) verified = null;
    });
    return claims;
  }

  /** The state from storage alone, without asking Warden; `held` when a valid answer is kept. */
  async function derive(): Promise<{ state: AccessState; held: boolean }> {
    const current = await session();
    if (!current) return { state: SIGNED_OUT, held: false };
    const kept = (await storage.get(ACCESS)) as StoredAccess | undefined;
    const now = clock.now();
    const offline = kept?.failedAt != null;
    // A clock set back before the answer arrived could otherwise stretch it: such an answer is not held.
    if (kept?.token && kept.receivedAt <= now && now < kept.expiresAt) {
      try {
        const claims = await claimsOf(kept.token);
        const state: AccessState = {
          signedIn: true,
          entitled: claims.entitled,
          via: claims.via,
          plan: claims.plan,
          features: claims.features,
          trialEndsAt: claims.trial_ends_at === null ? null : claims.trial_ends_at * 1000,
          email: claims.email,
          expiresAt: kept.expiresAt,
          offline,
          version: kept.state ?? null,
        };
        return { state, held: true };
      } catch {
        // Not verifiable now (no key set offline, or not Warden's): not an answer to keep.
      }
    }
    return { state: { ...SIGNED_OUT, signedIn: true, email: current.email, offline }, held: false };
  }

  function publish(state: AccessState): AccessState {
    if (expiryTimer !== null) clock.clearTimeout(expiryTimer);
    expiryTimer = null;
    // Parts that listen lock when the answer runs out, even with no service worker to recheck.
    if (listeners.size > 0 && state.expiresAt !== null) {
      expiryTimer = clock.setTimeout(() => void access().catch(() => {}), Math.max(0, state.expiresAt - clock.now()));
    }
    const { expiresAt: _renewed, ...meaning } = state;
    const key = JSON.stringify(meaning);
    if (key !== published) {
      published = key;
      for (const listener of listeners) listener(state);
    }
    return state;
  }

  async function reschedule(): Promise<void> {
    const current = await session();
    const kept = (await storage.get(ACCESS)) as StoredAccess | undefined;
    const name = prefix;
    if (recheckTimer !== null) clock.clearTimeout(recheckTimer);
    recheckTimer = null;
    if (!current) {
      await alarms?.clear(name);
      return;
    }
    const now = clock.now();
    let at = now;
    if (kept?.failedAt != null) {
      at = kept.failedAt + retryMs;
      if (kept.token && kept.expiresAt > now) at = Math.min(at, kept.expiresAt);
    } else if (kept?.token) {
      // Renewed before it runs out, so no part of the extension sees a gap between two answers.
      at = kept.receivedAt + (kept.expiresAt - kept.receivedAt) * 0.9;
    }
    if (alarms) await alarms.create(name, { when: Math.max(at, now) });
    else recheckTimer = clock.setTimeout(() => void check().catch(() => {}), Math.max(0, at - now));
  }

  /** Keeps an access answer once its token verifies. */
  async function keep(answer: { token?: unknown; state?: unknown; recheck_after?: unknown } | null | undefined, receivedAt: number): Promise<void> {
    if (typeof answer?.token !== "string") throw new WardenError("invalid_token", "Warden's access answer has no token: Warden is older than this library.");
    const claims = await claimsOf(answer.token);
    // Warden sends a token again while more than half its life is left: then less than its
    // exp - iat remains, and the answer's recheck_after says how much. Unsigned, it is
    // trusted only to shorten the hold, never to lengthen it.
    const told = typeof answer.recheck_after === "number" && answer.recheck_after > 0 ? answer.recheck_after * 1000 : Number.POSITIVE_INFINITY;
    const kept: StoredAccess = { token: answer.token, receivedAt, expiresAt: receivedAt + Math.min(lifetimeMs(claims), told), failedAt: null };
    if (typeof answer.state === "string") kept.state = answer.state;
    await storage.set(ACCESS, kept);
  }

  async function askWarden(): Promise<AccessState> {
    const current = await session();
    if (!current) return publish(SIGNED_OUT);
    const now = clock.now();
    try {
      await keep(await request<{ token?: unknown }>(http, clientUrl(`${toolPath}/access`), { bearer: current.token }), now);
    } catch (error) {
      if (error instanceof WardenError && error.status === 401) {
        // Signed out from another device, or the token is gone: this device is signed out.
        if ((await session())?.token === current.token) await forget();
      } else if (unreachable(error)) {
        const kept = (await storage.get(ACCESS)) as StoredAccess | undefined;
        await storage.set(ACCESS, { ...(kept ?? { token: null, receivedAt: now, expiresAt: now }), failedAt: now } satisfies StoredAccess);
      } else {
        throw error;
      }
    }
    if (background) await reschedule();
    return publish((await derive()).state);
  }

  /** A fresh answer; concurrent callers share one request. A content script asks the service worker. */
  function check(): Promise<AccessState> {
    inflight ??= (contentScript ? askBackground(true) : askWarden()).finally(() => {
      inflight = null;
    });
    return inflight;
  }

  async function askBackground(fresh: boolean): Promise<AccessState> {
    try {
      const answer = (await runtime?.sendMessage({ warden: prefix, fresh })) as AccessState | null | undefined;
      if (answer && typeof answer.entitled === "boolean") return publish(answer);
    } catch {}
    // No service worker answered: what the shared storage holds is all there is.
    return publish((await derive()).state);
  }

  async function access(opts: { fresh?: boolean } = {}): Promise<AccessState> {
    if (!opts.fresh) {
      const { state, held } = await derive();
      if (held || !state.signedIn) return publish(state);
    }
    return check();
  }

  /** Another part of the extension changed the session or the answer: follow it. */
  function watch(): void {
    if (unwatch || !storage.onChanged) return;
    unwatch = storage.onChanged((key) => {
      if (key !== SESSION && key !== ACCESS) return;
      void derive()
        .then(({ state }) => publish(state))
        .catch(() => {});
      if (background) void reschedule().catch(() => {});
    });
  }

  async function refreshQuietly(): Promise<void> {
    try {
      await check();
    } catch (error) {
      if (!unreachable(error)) throw error;
    }
  }

  /** A call that needs the device token. */
  async function authed<T>(path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<T> {
    const current = await session();
    if (!current) throw new WardenError("authentication_error", "Sign in first: signIn(email), then verify(code).", { status: 401 });
    try {
      return await request<T>(http, clientUrl(path), { ...init, bearer: current.token });
    } catch (error) {
      // A 401 is a signed-out device, or one activated with a key asking for what only a
      // sign-in may: the access check tells which, and forgets a signed-out device.
      if (error instanceof WardenError && error.status === 401) await refreshQuietly().catch(() => {});
      throw error;
    }
  }

  /** A new device session; an activation's answer carries its first access answer, a sign-in's is asked for. */
  async function openSession(answer: { token: string; email: string; device: Device; access?: { token?: unknown } }, byKey: boolean): Promise<SignedIn> {
    const receivedAt = clock.now();
    await storage.set(SESSION, { token: answer.token, email: byKey ? null : answer.email, deviceId: answer.device.id } satisfies StoredSession);
    await storage.remove(ACCESS);
    await storage.remove(PENDING);
    try {
      await keep(answer.access, receivedAt);
      if (background) await reschedule();
      publish((await derive()).state);
    } catch {
      await refreshQuietly();
    }
    return { email: answer.email, device: answer.device };
  }

  /**
   * While a page this library opened may still change access (WATCH, for pageWatchMinutes),
   * waits on Warden's long poll: Warden answers within about a second of a purchase, a
   * trial, a seat, a grant or a revocation, and the new answer is kept and published to
   * every part of the extension. One wait at a time per extension: the service worker
   * holds it when there is one. Otherwise nothing waits, and the usual recheck applies.
   */
  function holdWatch(): Promise<void> {
    watching ??= (async () => {
      for (;;) {
        const pending = (await storage.get(WATCH)) as { until: number } | undefined;
        const current = await session();
        if (!pending || !current || clock.now() >= pending.until) break;
        if (background && alarms) await alarms.create(WATCH_ALARM, { when: clock.now() + WATCH_ALARM_MS });
        const kept = (await storage.get(ACCESS)) as StoredAccess | undefined;
        const receivedAt = clock.now();
        try {
          const answer = await request<{ token?: unknown; state?: unknown } | null>(
            http,
            clientUrl(`${toolPath}/access/changes?state=${encodeURIComponent(kept?.state ?? "none")}`),
            { bearer: current.token },
          );
          if (answer === null) {
            // A wait answered "no change" long before its time (a Warden closing, or one
            // that lost its database) is not asked again at once: no loop of requests. The
            // pause is 5 to 10 s, drawn for each device, so that every device Warden let go
            // at the same moment does not come back at the same moment.
            if (clock.now() - receivedAt < QUICK_ANSWER_MS) {
              const pause = QUICK_ANSWER_MS + Math.floor(Math.random() * QUICK_ANSWER_MS);
              await new Promise<void>((resolve) => clock.setTimeout(resolve, pause));
            }
            continue;
          }
          await keep(answer, receivedAt);
          if (background) await reschedule();
          publish((await derive()).state);
        } catch (error) {
          if (error instanceof WardenError && error.status === 401) {
            if ((await session())?.token === current.token) await forget();
            publish((await derive()).state);
            break;
          }
          // A Warden older than the long poll: the usual rechecks are all there is.
          if (error instanceof WardenError && error.status === 404) break;
          const wait = error instanceof WardenError && error.retryAfter !== null ? error.retryAfter * 1000 : retryMs;
          await new Promise<void>((resolve) => clock.setTimeout(resolve, wait));
        }
      }
      if (background) await alarms?.clear(WATCH_ALARM);
    })().finally(() => {
      watching = null;
    });
    return watching;
  }

  /** Starts waiting for changes after a page opened: in the service worker if one answers, else here, for as long as this part lives. */
  async function watchAfterPage(): Promise<void> {
    await storage.set(WATCH, { until: clock.now() + watchMs });
    if (background) {
      void holdWatch().catch(() => {});
      return;
    }
    let held = false;
    try {
      held = (await runtime?.sendMessage({ warden: prefix, watch: true })) === true;
    } catch {}
    if (!held) void holdWatch().catch(() => {});
  }

  /** The browser's language, so a page (and a sign-in mail) speaks it; a getUILanguage that throws names none. */
  const uiLanguage = (): string | undefined => {
    try {
      return i18n?.getUILanguage() || undefined;
    } catch {
      return undefined;
    }
  };

  const languageField = (): { lang?: string } => {
    const lang = uiLanguage();
    return lang !== undefined && lang.length <= 35 && /^[A-Za-z]{2,8}([_-][A-Za-z0-9]{1,8})*$/.test(lang) ? { lang } : {};
  };

  const pageUrl = (page: string, params: Record<string, string | undefined>) => {
    const lang = uiLanguage();
    const query = new URLSearchParams(Object.entries({ ...params, lang }).filter((entry): entry is [string, string] => entry[1] !== undefined));
    const path = `/c/${encodeURIComponent(options.workspace)}/${env}/${encodeURIComponent(options.tool)}/${page}`;
    return `${base}${path}${query.size > 0 ? `?${query}` : ""}`;
  };

  async function openTab(url: string): Promise<void> {
    if (tabs) await tabs.create({ url });
    else if (typeof (globalThis as { open?: unknown }).open === "function") (globalThis as unknown as { open(url: string): unknown }).open(url);
    else throw new WardenError("invalid_request_error", "No way to open a page here: pass `tabs` (chrome.tabs) to createWarden.");
  }

  /**
   * Opens one of Warden's pages for this device's person: through a page ticket (single
   * use, 60 s) when this device is signed in, so the person types no address again (a
   * browser not signed in there as this person is asked "Continue as …?" by the page).
   */
  async function openPage(page: string, params: Record<string, string | undefined> = {}): Promise<void> {
    const current = await session();
    let ticket: string | undefined;
    if (current) {
      try {
        ticket = (await request<{ ticket: string }>(http, clientUrl(`${toolPath}/page-tickets`), { method: "POST", bearer: current.token })).ticket;
      } catch (error) {
        // Signed out meanwhile: the page asks the person to sign in. A Warden without tickets: the same.
        if (error instanceof WardenError && error.status === 401) await refreshQuietly().catch(() => {});
        else if (!(error instanceof WardenError && error.status === 404)) throw error;
      }
    }
    await openTab(pageUrl(page, { ...params, ticket }));
    if (current) await watchAfterPage();
  }

  async function completeSignIn(url: string): Promise<SignedIn> {
    const handOff = (await storage.get(HAND_OFF)) as StoredHandOff | undefined;
    const back = fragmentOf(url);
    if (!handOff || back.state !== handOff.state || clock.now() - handOff.startedAt > HAND_OFF_MS) {
      throw new WardenError("invalid_request_error", "This sign-in was not started here, or is finished or too old: open the sign-in page again.", {
        param: "state",
      });
    }
    if (!back.code)
      throw new WardenError("invalid_request_error", back.error ?? "The sign-in page came back without a code: open it again.", { param: "code" });
    // One try: a code that failed is not tried again with the same verifier.
    await storage.remove(HAND_OFF);
    const answer = await request<{ token: string; email: string; device: Device }>(http, clientUrl(`${toolPath}/sign-in/exchange`), {
      method: "POST",
      body: { workspace: options.workspace, env, code: back.code, code_verifier: handOff.verifier, device: options.device ?? defaultDevice() },
    });
    return openSession(answer, false);
  }

  async function openSignIn(): Promise<SignedIn | null> {
    const redirectUri = identity ? identity.getRedirectURL("warden") : (runtime?.getURL?.(options.callbackPage ?? "warden-signed-in.html") ?? null);
    if (!redirectUri)
      throw new WardenError("invalid_request_error", "No page to come back to: run in an extension, or pass `identity` (chrome.identity) to createWarden.");
    const handOff: StoredHandOff = { verifier: randomToken(), state: randomToken(), redirectUri, startedAt: clock.now() };
    await storage.set(HAND_OFF, handOff);
    const url = pageUrl("sign-in", {
      redirect_uri: redirectUri,
      state: handOff.state,
      code_challenge: await challengeOf(handOff.verifier),
      code_challenge_method: "S256",
    });
    if (!identity) {
      await openTab(url);
      return null;
    }
    const back = await identity.launchWebAuthFlow({ url, interactive: true });
    if (!back) throw new WardenError("invalid_request_error", "The sign-in window closed before the person signed in.");
    return completeSignIn(back);
  }

  return {
    async openSignInPage() {
      // A popup closes when the sign-in window takes the focus, and its promise with it:
      // the service worker, which outlives it, runs the hand-off when there is one.
      if (!background && runtime) {
        let answer: { done?: SignedIn | null; failed?: string } | undefined;
        try {
          answer = (await runtime.sendMessage({ warden: prefix, openSignIn: true })) as typeof answer;
        } catch {}
        if (answer?.failed !== undefined) throw new WardenError("invalid_request_error", answer.failed);
        if (answer && "done" in answer) return answer.done ?? null;
      }
      return openSignIn();
    },

    completeSignIn(url) {
      return completeSignIn(url ?? String((globalThis as { location?: { href?: string } }).location?.href ?? ""));
    },

    openPaymentPage(opts = {}) {
      return openPage("plans", { plan: opts.plan });
    },

    openTrialPage() {
      return openPage("trial");
    },

    openManagePage() {
      return openPage("manage");
    },

    async signIn(email) {
      const sent = await request<SignInSent>(http, clientUrl("/sign-in"), {
        method: "POST",
        // The code's mail in the browser's language, as the sign-in page's would be (a tag Warden would refuse is not sent).
        body: { workspace: options.workspace, tool: options.tool, env, email, ...languageField() },
      });
      await storage.set(PENDING, { email });
      return sent;
    },

    async pendingEmail() {
      return (((await storage.get(PENDING)) as { email: string } | undefined) ?? null)?.email ?? null;
    },

    async verify(code, device) {
      const pending = (await storage.get(PENDING)) as { email: string } | undefined;
      if (!pending) throw new WardenError("invalid_request_error", "Ask for a code with signIn(email) first.", { param: "email" });
      const answer = await request<{ token: string; email: string; device: Device }>(http, clientUrl("/sign-in/verify"), {
        method: "POST",
        body: { workspace: options.workspace, tool: options.tool, env, email: pending.email, code, device: device ?? options.device ?? defaultDevice() },
      });
      return openSession(answer, false);
    },

    async activate(licenceKey, device) {
      const answer = await request<{ token: string; email: string; device: Device; access?: { token?: unknown } }>(http, clientUrl(`${toolPath}/activate`), {
        method: "POST",
        body: { workspace: options.workspace, key: licenceKey, device: device ?? options.device ?? defaultDevice() },
      });
      return openSession(answer, true);
    },

    async signOut() {
      const current = await session();
      await forget();
      publish(SIGNED_OUT);
      if (!current) return;
      try {
        await request(http, clientUrl(`/devices/${encodeURIComponent(current.deviceId)}`), { method: "DELETE", bearer: current.token });
      } catch (error) {
        // Already signed out at Warden: nothing left to do.
        if (!(error instanceof WardenError && (error.status === 401 || error.status === 404))) throw error;
      }
    },

    async devices() {
      return (await authed<{ data: Device[] }>("/devices")).data;
    },

    async signOutDevice(id) {
      const current = await session();
      await authed(`/devices/${encodeURIComponent(id)}`, { method: "DELETE" });
      if (current?.deviceId === id) {
        await forget();
        publish(SIGNED_OUT);
      }
    },

    access,

    async hasFeature(name) {
      return (await access()).features.includes(name);
    },

    usage: (async (meter?: string) => {
      const meters = (await authed<{ data: MeterUsage[] }>(`${toolPath}/usage`)).data;
      if (meter === undefined) return meters;
      const found = meters.find((m) => m.meter === meter);
      if (!found) {
        throw new WardenError("invalid_request_error", `Tool "${options.tool}" has no meter "${meter}".`, { param: "meter" });
      }
      return found;
    }) as Warden["usage"],

    spend(meter, quantity = 1, opts = {}) {
      return authed<Spent>(`${toolPath}/usage`, {
        method: "POST",
        body: { meter, quantity },
        headers: { "idempotency-key": opts.idempotencyKey ?? randomToken() },
      });
    },

    onAccessChange(listener) {
      listeners.add(listener);
      watch();
      return () => {
        listeners.delete(listener);
      };
    },

    startBackground() {
      if (background) return;
      background = true;
      // Registered in the worker's first turn: an alarm that wakes a stopped worker is only delivered to listeners added then.
      alarms?.onAlarm.addListener((alarm) => {
        if (alarm.name === prefix) void check().catch(() => {});
        else if (alarm.name === WATCH_ALARM) void holdWatch().catch(() => {});
      });
      runtime?.onMessage.addListener((message, _sender, respond) => {
        const asked = message as { warden?: unknown; fresh?: unknown; watch?: unknown; openSignIn?: unknown; relay?: unknown } | null;
        if (asked?.warden !== prefix) return undefined;
        if (asked.openSignIn === true) {
          openSignIn().then(
            (done) => respond({ done }),
            (error: unknown) => respond({ failed: error instanceof Error ? error.message : String(error) }),
          );
          return true;
        }
        const relayed = relayedRequest(asked);
        if (relayed) {
          // Warden's own addresses only: the worker sends a content script's calls to Warden, nothing else.
          if (isWardenAddress(relayed.url)) sendRelayed(ownFetch, relayed).then(respond);
          else respond({ failed: `not a Warden address: ${relayed.url}` });
          return true;
        }
        if (asked.watch === true) {
          void holdWatch().catch(() => {});
          respond(true);
          return true;
        }
        access({ fresh: asked.fresh === true }).then(respond, () => respond(null));
        return true;
      });
      watch();
      void reschedule().catch(() => {});
      // A worker stopped while a page was open waits on again when it starts.
      void holdWatch().catch(() => {});
    },

    async startTrial() {
      const grant = await authed<Grant>(`${toolPath}/trial`, { method: "POST" });
      await refreshQuietly();
      return grant;
    },

    async purchases() {
      return (await authed<{ data: Purchase[] }>("/purchases")).data;
    },

    async checkout(plan, opts = {}) {
      const successUrl = opts.successUrl ?? options.successUrl;
      if (!successUrl) throw new WardenError("invalid_request_error", "Say where Stripe sends the buyer: successUrl.", { param: "success_url" });
      const cancelUrl = opts.cancelUrl ?? options.cancelUrl;
      const body = {
        workspace: options.workspace,
        plan,
        livemode: env === "live",
        success_url: successUrl,
        ...(cancelUrl ? { cancel_url: cancelUrl } : {}),
        ...(opts.seats === undefined ? {} : { seats: opts.seats }),
        ...(opts.email === undefined ? {} : { email: opts.email }),
      };
      const current = await session();
      const path = `${toolPath}/checkout`;
      const answer = current
        ? await authed<{ url: string }>(path, { method: "POST", body })
        : await request<{ url: string }>(http, clientUrl(path), { method: "POST", body });
      return answer.url;
    },

    seats(purchaseId) {
      return authed<SeatList>(`/purchases/${encodeURIComponent(purchaseId)}/seats`);
    },

    assignSeat(purchaseId, email) {
      return authed<SeatChange>(`/purchases/${encodeURIComponent(purchaseId)}/seats`, { method: "POST", body: { email } });
    },

    unassignSeat(purchaseId, seatId) {
      return authed<SeatChange>(`/purchases/${encodeURIComponent(purchaseId)}/seats/${encodeURIComponent(seatId)}`, { method: "DELETE" });
    },
  };
}
