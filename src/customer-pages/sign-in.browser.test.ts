// The hosted sign-in in a real browser (Debian's chromium driven by playwright-core)
// against Warden listening on 127.0.0.1: an extension's hand-off request, the mailed code,
// and the 303 to the extension's redirect, which the page's policy must let the form
// follow (browsers apply form-action to a post's redirect). At 1280 and 390 px wide, with
// the checks a person with a screen reader or a phone needs. WARDEN_SCREENSHOTS=<folder>
// saves every screen.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Page } from "playwright-core";
import { axeViolations, servedInBrowser, shoot, watchPolicy } from "../test-support/browser.js";
import { handOffQuery, pkcePair } from "../test-support/customer-pages.js";
import { dashboardServices, readCode } from "../test-support/dashboard.js";
import { DIALECTS, seedWorkspace } from "../test-support/harness.js";

const JOURNEY_TIMEOUT_MS = 60_000;
const REDIRECT = "https://abcdefghijklmnopabcdefghijklmnop.chromiumapp.org/cb";

/** What an automated check can tell of a page's accessibility: language, one h1, every field named, nothing wider than the screen. */
async function checkPage(page: Page, width: number): Promise<void> {
  // Run in the page: the test's own types know no DOM, hence a script as text and the declared shape.
  const facts = (await page.evaluate(`(() => ({
    lang: document.documentElement.lang,
    h1: document.querySelectorAll("h1").length,
    unnamed: [...document.querySelectorAll("input:not([type=hidden]), button, select, textarea")]
      .filter((el) => !(el.id && document.querySelector('label[for="' + el.id + '"]')) && el.textContent.trim() === "" && !el.getAttribute("aria-label"))
      .map((el) => el.outerHTML),
    scrollWidth: document.documentElement.scrollWidth,
    firstTab: document.querySelector("a, button, input:not([type=hidden])").className,
  }))()`)) as { lang: string; h1: number; unnamed: string[]; scrollWidth: number; firstTab: string };
  assert.equal(facts.lang, "en");
  assert.equal(facts.h1, 1, "one h1");
  assert.deepEqual(facts.unnamed, [], "every field and button has a name");
  assert.ok(facts.scrollWidth <= width, `no sideways scroll at ${width} px (${facts.scrollWidth})`);
  assert.equal(facts.firstTab, "skip-link");
  assert.deepEqual(await axeViolations(page), [], "no serious or critical axe-core violation");
}

for (const dialect of DIALECTS) {
  describe(`hosted sign-in in a browser (${dialect})`, () => {
    for (const width of [1280, 390]) {
      test(`at ${width} px: an extension's sign-in ends at its redirect with a code, nothing typed into the extension`, {
        timeout: JOURNEY_TIMEOUT_MS,
      }, async () => {
        const env = await dashboardServices(dialect);
        const ws = await seedWorkspace(env.services);
        const { app, origin, browser, close } = await servedInBrowser(env.services);
        const base = `${origin}/c/${ws.slug}/test/${ws.tool}`;
        try {
          const page = await (await browser.newContext({ viewport: { width, height: 800 } })).newPage();
          const violations = watchPolicy(page);
          // The extension's redirect: chrome.identity would catch it; here the test does.
          let reached = "";
          await page.route(`${REDIRECT}**`, async (route) => {
            reached = route.request().url();
            await route.fulfill({ status: 200, contentType: "text/html", body: "<!doctype html><title>extension</title>" });
          });
          const { verifier, challenge } = pkcePair();
          const query = handOffQuery(challenge, "xyz", REDIRECT);
          const email = `ada-${ws.slug}@example.com`;

          await page.goto(`${base}/sign-in${query}`);
          await checkPage(page, width);
          await shoot(page, `hosted-sign-in-${width}`);
          await page.getByLabel("Email address").fill("not an address");
          // The browser's own check of type=email would stop the form first: the server's answer is what is tested.
          await page.evaluate(`document.querySelector("form.stack").setAttribute("novalidate", "")`);
          await page.click("form.stack button[type=submit]");
          await page.waitForSelector("#email-error");
          await checkPage(page, width);
          await shoot(page, `hosted-sign-in-error-${width}`);
          await page.getByLabel("Email address").fill(email);
          await page.click("form.stack button[type=submit]");
          await page.waitForURL(/\/sign-in\/code\?/);
          await checkPage(page, width);
          await shoot(page, `hosted-code-${width}`);
          await page.getByLabel("Sign-in code").fill((await readCode(env.dataDir, email)) === "000000" ? "111111" : "000000");
          await page.click("form.stack button[type=submit]");
          await page.waitForSelector("#code-error");
          await shoot(page, `hosted-code-error-${width}`);
          await page.getByLabel("Sign-in code").fill(await readCode(env.dataDir, email));
          await page.click("form.stack button[type=submit]");
          await page.waitForURL(`${REDIRECT}**`);
          assert.ok(reached.startsWith(`${REDIRECT}`), reached);
          const fragment = new URLSearchParams(new URL(page.url()).hash.slice(1));
          assert.equal(fragment.get("state"), "xyz");
          const exchanged = await app.inject({
            method: "POST",
            url: `/api/client/v1/tools/${ws.tool}/sign-in/exchange`,
            payload: {
              workspace: ws.slug,
              env: "test",
              code: fragment.get("code"),
              code_verifier: verifier,
              device: { name: "Chromium", platform: "chrome-linux" },
            },
          });
          assert.equal(exchanged.statusCode, 200, exchanged.body);
          assert.equal(exchanged.json().email, email);
          assert.equal(new URL(reached).hash, "", "the fragment never reaches a server");

          // Signed in now: a second request of an extension asks first, naming it.
          await page.goto(`${base}/sign-in${handOffQuery(pkcePair().challenge, "again", REDIRECT)}`);
          await page.getByRole("button", { name: `Continue as ${email}` }).waitFor();
          await checkPage(page, width);
          await shoot(page, `hosted-continue-${width}`);

          await page.goto(`${origin}/c/${ws.slug}/test/no-such-tool/sign-in`);
          await checkPage(page, width);
          await shoot(page, `hosted-not-found-${width}`);
          assert.deepEqual(violations, []);
        } finally {
          await close();
        }
      });
    }
  });
}
