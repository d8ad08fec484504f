// What the library needs from where it runs, each with a default found at run time:
// chrome.* (Chromium) or browser.* (Firefox) inside an extension, plain memory and timers
// elsewhere. Tests pass their own.

/** Time, injected so tests move it instead of waiting. */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => globalThis.setTimeout(callback, ms),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof globalThis.setTimeout>),
};

/** A key-value store shared by every part of the extension (service worker, popup, content scripts). */
export interface Storage {
  get(key: string): Promise<unknown>;
  set(key: string, value: unknown): Promise<void>;
  remove(key: string): Promise<void>;
  /** Changes made by any part of the extension; answers a function that stops listening. */
  onChanged?(listener: (key: string) => void): () => void;
}

/** The part of chrome.alarms / browser.alarms the library uses. */
export interface Alarms {
  create(name: string, info: { when: number }): unknown;
  clear(name: string): unknown;
  onAlarm: { addListener(listener: (alarm: { name: string }) => void): void };
}

/** The part of chrome.runtime / browser.runtime the library uses to let content scripts ask the service worker. */
export interface Runtime {
  sendMessage(message: unknown): Promise<unknown>;
  /** The extension's own page at this path (chrome-extension://<id>/…): where the sign-in page comes back to without chrome.identity. */
  getURL?(path: string): string;
  onMessage: { addListener(listener: (message: unknown, sender: unknown, respond: (answer: unknown) => void) => boolean | undefined): void };
}

/** The part of chrome.tabs / browser.tabs the library uses to open Warden's pages (no permission needed). */
export interface Tabs {
  create(properties: { url: string }): unknown;
}

/**
 * The part of chrome.identity / browser.identity the library uses for the sign-in page's
 * hand-off (the manifest's "identity" permission).
 */
export interface Identity {
  getRedirectURL(path?: string): string;
  launchWebAuthFlow(details: { url: string; interactive: boolean }): Promise<string | undefined>;
}

/** The part of chrome.i18n / browser.i18n the library uses: the browser's language, for Warden's pages. */
export interface I18n {
  getUILanguage(): string;
}

interface StorageChange {
  [key: string]: unknown;
}
interface ExtensionApi {
  storage?: {
    local?: {
      get(key: string): Promise<Record<string, unknown>>;
      set(items: Record<string, unknown>): Promise<void>;
      remove(key: string): Promise<void>;
    };
    onChanged?: {
      addListener(l: (changes: StorageChange, area: string) => void): void;
      removeListener(l: (changes: StorageChange, area: string) => void): void;
    };
  };
  alarms?: Alarms;
  runtime?: Runtime & { id?: string };
  tabs?: Tabs;
  identity?: Identity;
  i18n?: I18n;
}

/** browser.* where it exists (Firefox, with promises), else chrome.* (Chromium's promise-returning MV3 API). */
export function extensionApi(): ExtensionApi | null {
  const g = globalThis as { browser?: ExtensionApi; chrome?: ExtensionApi };
  const api = g.browser?.runtime?.id ? g.browser : g.chrome;
  return api?.runtime?.id ? api : null;
}

export function memoryStorage(): Storage {
  const values = new Map<string, unknown>();
  return {
    get: async (key) => structuredClone(values.get(key)),
    set: async (key, value) => {
      values.set(key, structuredClone(value));
    },
    remove: async (key) => {
      values.delete(key);
    },
  };
}

export function defaultStorage(api: ExtensionApi | null): Storage {
  const local = api?.storage?.local;
  const changed = api?.storage?.onChanged;
  if (!local) return memoryStorage();
  return {
    get: async (key) => (await local.get(key))[key],
    set: (key, value) => local.set({ [key]: value }),
    remove: (key) => local.remove(key),
    onChanged: changed
      ? (listener) => {
          const onChange = (changes: StorageChange, area: string) => {
            if (area !== "local") return;
            for (const key of Object.keys(changes)) listener(key);
          };
          changed.addListener(onChange);
          return () => changed.removeListener(onChange);
        }
      : undefined,
  };
}

/**
 * A content script runs in a web page: its requests are the page's (CORS) and it has no
 * alarms, so it reads the shared storage and asks the service worker for fresh checks.
 */
export function isContentScript(api: ExtensionApi | null): boolean {
  const protocol = (globalThis as { location?: { protocol?: string } }).location?.protocol;
  return api !== null && typeof protocol === "string" && !protocol.endsWith("-extension:");
}
