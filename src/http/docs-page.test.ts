import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { networkInterfaces } from "node:os";
import { test } from "node:test";
import { CHROMIUM, servedInBrowser } from "../test-support/browser.js";
import { testApi, testServices } from "../test-support/harness.js";

// The reference page must be Warden's and must render when served over plain HTTP to
// another machine.

test("the docs page is titled Warden API, carries Warden's mark and no framework logo, reads /api/v1/openapi.json, and its CSP upgrades nothing", async () => {
  const { services } = await testServices("sqlite");
  const api = await testApi(services);

  const page = await api.request({ url: "/api/v1/docs" });
  assert.equal(page.statusCode, 200);
  assert.match(page.body, /<title>Warden API<\/title>/);
  assert.match(page.body, /rel="icon" type="image\/svg\+xml" href="[^"]*\/theme\/warden\.svg"/);
  assert.doesNotMatch(page.body, /favicon-(16|32)x/);
  const csp = String(page.headers["content-security-policy"]);
  assert.doesNotMatch(csp, /upgrade-insecure-requests/);
  assert.doesNotMatch(csp, /https:|swagger\.io/, "the page needs no outside host");
  assert.match(csp, /script-src 'self';/);

  const initializer = await api.request({ url: "/api/v1/docs/static/swagger-initializer.js" });
  assert.equal(initializer.statusCode, 200);
  assert.match(initializer.body, /"url":"\/api\/v1\/openapi\.json"/);
  const logo = /img\.src = 'data:image\/svg\+xml;base64,([^']+)'/.exec(initializer.body);
  assert.ok(logo, "the top bar's logo is replaced (else Swagger UI shows its own)");
  const svg = Buffer.from(logo[1] as string, "base64").toString("utf8");
  assert.match(svg, /Warden API/);
  assert.doesNotMatch(svg, /fastify|swagger/i);

  const icon = await api.request({ url: "/api/v1/docs/static/theme/warden.svg" });
  assert.equal(icon.statusCode, 200);
  assert.equal(icon.headers["content-type"], "image/svg+xml");

  const document = await api.request({ url: "/api/v1/openapi.json" });
  assert.equal(document.json().info.title, "Warden API");
});

/** An IPv4 address of this machine other than loopback: what another machine would browse to. */
function outsideAddress(): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find((a) => a?.family === "IPv4" && !a.internal)?.address;
}

const address = outsideAddress();
const skip = !existsSync(CHROMIUM) ? `${CHROMIUM} is not installed` : address === undefined ? "no non-loopback IPv4 address" : false;

test("in Chromium, over plain HTTP on a non-loopback address, the page renders the operations", { skip, timeout: 60_000 }, async () => {
  const { services } = await testServices("sqlite");
  // On every interface, so that the page is opened at an address another machine would use.
  const { origin, browser, close } = await servedInBrowser(services, { host: "0.0.0.0" });
  const port = new URL(origin).port;
  try {
    const page = await browser.newPage();
    const requested: string[] = [];
    page.on("request", (request) => requested.push(request.url()));
    // A CSP violation, a failed fetch (a 404 for /favicon.ico) or a script error shows in the console.
    const complaints: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error" || message.type() === "warning") complaints.push(`${message.type()}: ${message.text()}`);
    });
    page.on("pageerror", (error) => complaints.push(`pageerror: ${error.message}`));
    await page.goto(`http://${address}:${port}/api/v1/docs`, { timeout: 20_000 });
    await page.locator(".opblock").first().waitFor({ timeout: 20_000 });
    assert.equal(await page.title(), "Warden API");
    assert.equal((await page.locator(".info .title").first().innerText()).split("\n")[0]?.trim(), "Warden API");
    assert.ok((await page.locator(".opblock").count()) >= 5);
    assert.ok(requested.includes(`http://${address}:${port}/api/v1/openapi.json`), requested.join("\n"));
    assert.deepEqual(
      requested.filter((url) => !url.startsWith(`http://${address}:${port}/`) && !url.startsWith("data:")),
      [],
      "nothing fetched elsewhere or over https",
    );
    assert.deepEqual(complaints, [], "the console stays clean: no CSP violation, no missing favicon");
  } finally {
    await close();
  }
});
