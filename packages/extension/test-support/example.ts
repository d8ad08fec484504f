// The example extension as a test loads it: a copy of example/ in a folder of its own, the
// library compiled into its warden/ (as `npm run example` does for a developer), and a
// config.js pointing at the test's Warden; and Chromium launched with it, its popup opened.
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { CHROMIUM } from "../../../src/test-support/browser.js";

const PACKAGE = join(import.meta.dirname, "..");

/** Compiles the library once per test file; answers the folder of its .js files. */
export function compileLibrary(): string {
  const out = mkdtempSync(join(tmpdir(), "warden-extension-lib-"));
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const result = spawnSync(process.execPath, [tsc, "-p", join(PACKAGE, "tsconfig.build.json"), "--outDir", out, "--declaration", "false"], {
    encoding: "utf8",
  });
  if (result.status !== 0) throw new Error(`tsc failed: ${result.stdout}${result.stderr}`);
  return out;
}

export interface ExampleConfig {
  url: string;
  workspace: string;
  tool: string;
  env: "test" | "live";
  successUrl: string;
  /** The meter the popup's "Use one" button spends; absent: no button. */
  meter?: string;
}

/** A loadable copy of the example extension; answers its folder. */
export function exampleCopy(library: string, config: ExampleConfig): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), "warden-extension-example-"));
  // Without example/warden/ (a developer's copy of the library), but with warden-signed-in.html.
  cpSync(join(PACKAGE, "example"), dir, { recursive: true, filter: (source) => source !== join(PACKAGE, "example", "warden") });
  cpSync(library, join(dir, "warden"), { recursive: true });
  writeFileSync(join(dir, "config.js"), `export const config = ${JSON.stringify(config, null, 2)};\n`);
  if (!readdirSync(join(dir, "warden")).includes("index.js")) throw new Error("the compiled library has no index.js");
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The example extension loaded unpacked in Debian's Chromium, with a profile of its own. */
export interface LaunchedExample {
  context: BrowserContext;
  extensionId: string;
  /** Opens the popup as a tab and waits for its first state; its script errors go to `errors`. */
  openPopup(errors: string[]): Promise<Page>;
  /** Closes the browser and removes its profile. */
  close(): Promise<void>;
}

/**
 * Launches Chromium with the extension in `dir` (and no other). `withoutIdentity` drops the
 * identity permission, so the hosted sign-in page comes back to the extension's own page
 * in its tab, where a test can follow it (chrome.identity's window is out of its reach).
 */
export async function launchExample(
  dir: string,
  options: { viewport: { width: number; height: number }; withoutIdentity?: boolean },
): Promise<LaunchedExample> {
  if (options.withoutIdentity) {
    const manifestFile = join(dir, "manifest.json");
    const manifest = JSON.parse(readFileSync(manifestFile, "utf8")) as { permissions: string[] };
    manifest.permissions = manifest.permissions.filter((p) => p !== "identity");
    writeFileSync(manifestFile, JSON.stringify(manifest));
  }
  const profile = mkdtempSync(join(tmpdir(), "warden-chromium-"));
  const close = async (context: BrowserContext | null) => {
    await context?.close();
    rmSync(profile, { recursive: true, force: true });
  };
  let context: BrowserContext | null = null;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: options.viewport,
      args: [
        `--disable-extensions-except=${dir}`,
        `--load-extension=${dir}`,
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-sync",
        "--disable-component-update",
      ],
    });
    const launched = context;
    const worker = launched.serviceWorkers()[0] ?? (await launched.waitForEvent("serviceworker"));
    const extensionId = new URL(worker.url()).host;
    return {
      context: launched,
      extensionId,
      async openPopup(errors) {
        const popup = await launched.newPage();
        popup.on("pageerror", (error) => errors.push(error.message));
        await popup.goto(`chrome-extension://${extensionId}/popup.html`);
        await popup.waitForSelector("body[data-state]", { state: "attached" });
        return popup;
      },
      close: () => close(launched),
    };
  } catch (error) {
    await close(context);
    throw error;
  }
}

/** Waits until the popup shows `state` (signed-out, code, locked, unlocked). */
export async function waitForState(page: Page, state: string, timeoutMs = 10_000): Promise<void> {
  await page.waitForSelector(`body[data-state="${state}"]`, { timeout: timeoutMs });
}
