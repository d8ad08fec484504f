// Where the library finds its storage, alarms and messaging: chrome.* in Chromium,
// browser.* in Firefox, memory elsewhere; and whether it runs as a content script.
import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";
import { defaultStorage, extensionApi, isContentScript, memoryStorage } from "./platform.js";

type Global = { chrome?: unknown; browser?: unknown; location?: unknown };
const g = globalThis as Global;

/** chrome.storage.local with Chromium's promise API and its onChanged (area "local"). */
function fakeExtensionApi(id = "abcdefghijklmnop") {
  const values: Record<string, unknown> = {};
  const listeners: ((changes: Record<string, unknown>, area: string) => void)[] = [];
  return {
    values,
    api: {
      runtime: { id, sendMessage: async () => null, onMessage: { addListener() {} } },
      storage: {
        local: {
          get: async (key: string) => (key in values ? { [key]: values[key] } : {}),
          set: async (items: Record<string, unknown>) => {
            Object.assign(values, items);
            for (const l of listeners) l(Object.fromEntries(Object.keys(items).map((k) => [k, { newValue: items[k] }])), "local");
          },
          remove: async (key: string) => {
            delete values[key];
            for (const l of listeners) l({ [key]: {} }, "local");
          },
        },
        onChanged: {
          addListener: (l: (changes: Record<string, unknown>, area: string) => void) => listeners.push(l),
          removeListener: (l: (changes: Record<string, unknown>, area: string) => void) => listeners.splice(listeners.indexOf(l), 1),
        },
      },
      alarms: { create() {}, clear() {}, onAlarm: { addListener() {} } },
    },
    /** Another storage area changing (sync, session) is none of the library's business. */
    changeOtherArea(key: string) {
      for (const l of listeners) l({ [key]: {} }, "sync");
    },
  };
}

afterEach(() => {
  delete g.chrome;
  delete g.browser;
  delete g.location;
});

describe("the platform", () => {
  test("outside an extension: no API, memory storage, not a content script", async () => {
    assert.equal(extensionApi(), null);
    const storage = defaultStorage(null);
    await storage.set("k", { a: 1 });
    assert.deepEqual(await storage.get("k"), { a: 1 });
    assert.equal(storage.onChanged, undefined);
    assert.equal(isContentScript(null), false);
  });

  test("chrome.storage.local in Chromium, with its changes in the local area only", async () => {
    const chrome = fakeExtensionApi();
    g.chrome = chrome.api;
    const api = extensionApi();
    assert.equal(api, chrome.api);
    const storage = defaultStorage(api);
    const changed: string[] = [];
    const stop = storage.onChanged?.((key) => changed.push(key));
    await storage.set("warden:x", { token: "t" });
    assert.deepEqual(chrome.values, { "warden:x": { token: "t" } });
    assert.deepEqual(await storage.get("warden:x"), { token: "t" });
    chrome.changeOtherArea("warden:x");
    await storage.remove("warden:x");
    assert.equal(await storage.get("warden:x"), undefined);
    assert.deepEqual(changed, ["warden:x", "warden:x"]);
    stop?.();
    await storage.set("warden:y", 1);
    assert.equal(changed.length, 2, "no more changes once stopped");
  });

  test("browser.* in Firefox comes first; a chrome object without a runtime id (a web page) is no extension", () => {
    const firefox = fakeExtensionApi();
    g.browser = firefox.api;
    g.chrome = fakeExtensionApi().api;
    assert.equal(extensionApi(), firefox.api);
    delete g.browser;
    g.chrome = { runtime: {} };
    assert.equal(extensionApi(), null);
  });

  test("a content script is an extension's script on a page that is not the extension's", () => {
    const api = fakeExtensionApi().api;
    g.location = { protocol: "https:" };
    assert.equal(isContentScript(api), true);
    for (const protocol of ["chrome-extension:", "moz-extension:", "safari-web-extension:"]) {
      g.location = { protocol };
      assert.equal(isContentScript(api), false, protocol);
    }
    delete g.location;
    assert.equal(isContentScript(api), false, "a service worker has no page");
  });

  test("memory storage hands out copies", async () => {
    const storage = memoryStorage();
    const value = { n: 1 };
    await storage.set("k", value);
    value.n = 2;
    assert.deepEqual(await storage.get("k"), { n: 1 });
  });
});
