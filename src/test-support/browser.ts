// The real-browser tests' harness: Debian's chromium driven by playwright-core (no browser
// download). WARDEN_SCREENSHOTS=<folder> saves a picture of every screen a test shoots.
import assert from "node:assert/strict";
import { mkdir, readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { AxeResults } from "axe-core";
import type { FastifyInstance } from "fastify";
import { type Browser, chromium, type Page } from "playwright-core";
import { type AppOptions, buildApp } from "../app.js";
import type { Services } from "../services.js";
import { readCode } from "./dashboard.js";

export const CHROMIUM = "/usr/bin/chromium";
/** Flags for a headless chromium in a container, with none of its own traffic. */
const CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync"];
// The only reader of process.env outside config.ts: a developer's switch of the tests themselves.
const SCREENSHOTS = process.env.WARDEN_SCREENSHOTS;

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}

/** Warden listening on 127.0.0.1, for a browser (or an extension) to open. */
export interface Listening {
  app: FastifyInstance;
  /** `http://127.0.0.1:<port>` */
  origin: string;
  close(): Promise<void>;
}

/** Warden listening and a chromium to open it: every browser test's set-up. */
export interface ServedInBrowser extends Listening {
  browser: Browser;
  /** Closes the browser, then Warden. */
  close(): Promise<void>;
}

interface ListenOptions {
  port?: number;
  host?: string;
  logger?: AppOptions["logger"];
}

/**
 * Builds Warden over `services` (no log unless `logger` asks) and listens on `port` (any
 * free one by default) of `host` (127.0.0.1 unless another machine must reach it: "0.0.0.0").
 */
export async function listening(services: Services, options: ListenOptions = {}): Promise<Listening> {
  const app = await buildApp(services, { logger: options.logger ?? false });
  await app.listen({ host: options.host ?? "127.0.0.1", port: options.port ?? 0 });
  return { app, origin: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, close: () => app.close() };
}

/** `listening`, and chromium launched. */
export async function servedInBrowser(services: Services, options: ListenOptions = {}): Promise<ServedInBrowser> {
  return withChromium(await listening(services, options));
}

/** `served` with chromium launched beside it; `close` closes the browser, then `served`. */
export async function withChromium<T extends { close(): Promise<void> }>(served: T): Promise<T & { browser: Browser }> {
  const browser = await launchChromium();
  return {
    ...served,
    browser,
    close: async () => {
      await browser.close();
      await served.close();
    },
  };
}

/** Saves the page as `<name>.png` when WARDEN_SCREENSHOTS names a folder; else nothing. */
export async function shoot(page: Page, name: string, options: { fullPage?: boolean } = { fullPage: true }): Promise<void> {
  if (!SCREENSHOTS) return;
  await mkdir(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: options.fullPage ?? true });
}

const AXE_SOURCE = readFile(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** axe-core's serious and critical violations of the page (WCAG 2.2 AA and its best practices), one line each. */
export async function axeViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's policy (no inline script) does not govern.
  await page.evaluate(await AXE_SOURCE);
  const results = await page.evaluate(() => (globalThis as unknown as { axe: { run(): Promise<AxeResults> } }).axe.run());
  return results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.help}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

/** Nothing wider than the viewport (a page that scrolls sideways at 390 px fails WCAG's reflow), and no serious or critical axe-core violation. */
export async function assertFitsAndPasses(page: Page, label: string): Promise<void> {
  // Read in the page: the test's own types know no DOM, hence the declared shape.
  const widths = await page.evaluate(() => {
    const root = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }).document.documentElement;
    return [root.scrollWidth, root.clientWidth];
  });
  assert.ok((widths[0] ?? 0) <= (widths[1] ?? 0), `${label}: the page is ${widths[0]} px wide in a ${widths[1]} px viewport`);
  assert.deepEqual(await axeViolations(page), [], `${label}: no serious or critical axe-core violation`);
}

/** Collects what the page reports of breaches of the content-security policy (into `violations`, shared by several pages if given). */
export function watchPolicy(page: Page, violations: string[] = []): string[] {
  page.on("console", (m) => {
    if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
  });
  return violations;
}

/** Signs in to the dashboard as `email` with the code mailed to the outbox of `dataDir`; where it lands is the caller's to check. */
export async function signInToDashboard(page: Page, base: string, dataDir: string, email: string): Promise<void> {
  await page.goto(`${base}/dashboard/sign-in`);
  await page.fill("#email", email);
  await page.click("button[type=submit]");
  await page.waitForURL(`${base}/dashboard/sign-in/code`);
  await page.fill("#code", await readCode(dataDir, email));
  await page.click("form.stack button[type=submit]");
}
