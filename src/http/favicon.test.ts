// No page of Warden's makes a browser log an error for its icon: the dashboard names
// Warden's mark, a hosted page its workspace's logo (or none), and /favicon.ico, which a
// browser asks for when a page names none, answers 204. Checked in process and, for the
// console, in Chromium.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { test } from "node:test";
import { CHROMIUM, servedInBrowser } from "../test-support/browser.js";
import { pagesOf } from "../test-support/customer-pages.js";
import { seedWorkspace, testApi, testServices } from "../test-support/harness.js";
import { MARK } from "./mark.js";

test("/favicon.ico answers 204 with nothing to show; the dashboard's pages name Warden's mark as their icon, served as SVG", async () => {
  const { services } = await testServices("sqlite");
  const api = await testApi(services);

  const ico = await api.request({ url: "/favicon.ico" });
  assert.equal(ico.statusCode, 204);
  assert.equal(ico.body, "");
  assert.equal(ico.headers["cache-control"], "public, max-age=86400");

  const signIn = await api.request({ url: "/dashboard/sign-in" });
  assert.match(signIn.body, /<link rel="icon" href="\/dashboard\/assets\/warden\.svg" type="image\/svg\+xml">/);
  const icon = await api.request({ url: "/dashboard/assets/warden.svg" });
  assert.equal(icon.statusCode, 200);
  assert.equal(icon.headers["content-type"], "image/svg+xml");
  assert.equal(icon.body, MARK);
});

const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed`;

test("in Chromium, the dashboard's sign-in, a hosted page without a logo and the API reference log nothing in the console", {
  skip,
  timeout: 90_000,
}, async () => {
  const { services } = await testServices("sqlite");
  const ws = await seedWorkspace(services);
  const { origin, browser, close } = await servedInBrowser(services);
  try {
    for (const path of ["/dashboard/sign-in", `${pagesOf(ws)}/plans`, "/api/v1/docs"]) {
      const page = await browser.newPage();
      const complaints: string[] = [];
      page.on("console", (message) => {
        if (message.type() === "error" || message.type() === "warning") complaints.push(`${message.type()}: ${message.text()}`);
      });
      page.on("pageerror", (error) => complaints.push(`pageerror: ${error.message}`));
      const failed: string[] = [];
      page.on("response", (response) => {
        if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
      });
      await page.goto(`${origin}${path}`, { waitUntil: "networkidle" });
      if (path === "/api/v1/docs") await page.locator(".opblock").first().waitFor({ timeout: 20_000 });
      assert.deepEqual(failed, [], path);
      assert.deepEqual(complaints, [], path);
      await page.close();
    }
  } finally {
    await close();
  }
});
