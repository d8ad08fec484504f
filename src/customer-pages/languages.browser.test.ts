// The hosted pages in the buyer's language, in a real browser (Debian's chromium driven
// by playwright-core) at 390 px: sign-in, Manage and Plans walked in Japanese and in
// German (long words: nothing may be wider than the screen, nor spill out of its box),
// and in Arabic, laid out right to left (its text is English until its catalogue comes)
// with nothing in the top bar or on a card overlapping. WARDEN_SCREENSHOTS=<folder>
// saves every screen.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Page } from "playwright-core";
import { ensurePerson } from "../customers/person.store.js";
import { assertFitsAndPasses, shoot, watchPolicy } from "../test-support/browser.js";
import { DIALECTS } from "../test-support/harness.js";
import { hostedPagesInBrowser, signInOnHostedPage } from "../test-support/hosted-browser.js";
import { paymentSession } from "../test-support/stripe.js";

// Nine pages with axe-core on each, on a machine shared with other tests.
const JOURNEY_TIMEOUT_MS = 240_000;
const WIDTH = 390;

/**
 * What the eye would catch: an element whose text runs past its own box or the screen's
 * edge, and two items side by side (the top bar's, a card's buttons) that overlap.
 */
async function layoutFaults(page: Page): Promise<string[]> {
  // Run in the page: the test's own types know no DOM, hence a script as text and the declared shape.
  return (await page.evaluate(`(() => {
    const faults = [];
    const width = document.documentElement.clientWidth;
    for (const el of document.querySelectorAll("body *")) {
      const box = el.getBoundingClientRect();
      if (box.width === 0 || getComputedStyle(el).visibility === "hidden" || el.closest(".sr-only, .skip-link")) continue;
      if (box.right > width + 1 || box.left < -1) faults.push("outside the screen: " + el.outerHTML.slice(0, 120));
      if (["A", "BUTTON", "H1", "H2", "H3", "P", "LABEL", "DT", "DD"].includes(el.tagName) && el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX === "visible")
        faults.push("text wider than its box: " + el.outerHTML.slice(0, 120));
    }
    const groups = [document.querySelectorAll(".customer-top > *"), ...[...document.querySelectorAll(".row, .card-actions, .customer-nav")].map((g) => g.children)];
    for (const group of groups) {
      const boxes = [...group].map((el) => [el, el.getBoundingClientRect()]).filter(([, b]) => b.width > 0);
      for (let i = 0; i < boxes.length; i++)
        for (let j = i + 1; j < boxes.length; j++) {
          const [a, ab] = boxes[i], [b, bb] = boxes[j];
          if (ab.left < bb.right - 1 && bb.left < ab.right - 1 && ab.top < bb.bottom - 1 && bb.top < ab.bottom - 1)
            faults.push("overlap: " + a.outerHTML.slice(0, 60) + " / " + b.outerHTML.slice(0, 60));
        }
    }
    return faults;
  })()`)) as string[];
}

async function check(page: Page, label: string, lang: string, dir: string): Promise<void> {
  const root = (await page.evaluate(`[document.documentElement.lang, document.documentElement.dir || "ltr"]`)) as [string, string];
  assert.deepEqual(root, [lang, dir], `${label}: lang and dir`);
  await assertFitsAndPasses(page, label);
  assert.deepEqual(await layoutFaults(page), [], `${label}: nothing outside its box or overlapping`);
  await shoot(page, `hosted-${label}`);
}

for (const dialect of DIALECTS) {
  describe(`hosted pages in the buyer's language, in a browser at ${WIDTH} px (${dialect})`, () => {
    test("Japanese, German and Arabic: sign-in, Manage and Plans fit, say their language, and Arabic runs right to left", {
      timeout: JOURNEY_TIMEOUT_MS,
    }, async () => {
      const { services, clock, dataDir, ws, pages: base, send, browser, close } = await hostedPagesInBrowser(dialect);
      try {
        const journeys = [
          { lang: "ja", dir: "ltr", words: { signIn: "サインイン", manage: "ご購入内容", plans: "のプラン" } },
          { lang: "de", dir: "ltr", words: { signIn: "anmelden", manage: "Ihre Käufe", plans: "Tarife für" } },
          { lang: "ar", dir: "rtl", text: "en", words: { signIn: "Sign in", manage: "Your purchases", plans: "plans" } },
        ];
        for (const journey of journeys) {
          const email = `${journey.lang}-${ws.slug}@example.com`;
          const now = clock.now();
          const account = (await ensurePerson(services.db, ws.workspaceId, "test", email, now)).id;
          await send(
            "checkout.session.completed",
            paymentSession({ email, metadata: { warden_tool: "tabmaster", warden_plan: "lifetime", warden_account: account }, now }),
          );
          const page = await (await browser.newContext({ viewport: { width: WIDTH, height: 800 } })).newPage();
          const violations = watchPolicy(page);
          const lang = journey.text ?? journey.lang;
          // As the extension library opens it: ?lang= from chrome.i18n.getUILanguage(), kept by the cookie after.
          await page.goto(`${base}/sign-in?lang=${journey.lang}`);
          await page.getByRole("heading", { level: 1, name: new RegExp(journey.words.signIn) }).waitFor();
          await check(page, `${journey.lang}-sign-in-${WIDTH}`, lang, journey.dir);
          await signInOnHostedPage(page, dataDir, email);
          await page.waitForURL(`${base}/manage`);
          await page.getByRole("heading", { level: 1, name: journey.words.manage }).waitFor();
          await check(page, `${journey.lang}-manage-${WIDTH}`, lang, journey.dir);
          await page.goto(`${base}/plans`);
          await page.getByRole("heading", { level: 1, name: new RegExp(journey.words.plans) }).waitFor();
          await check(page, `${journey.lang}-plans-${WIDTH}`, lang, journey.dir);
          assert.deepEqual(violations, []);
          await page.context().close();
        }
      } finally {
        await close();
      }
    });
  });
}
