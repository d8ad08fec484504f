// The hosted pages in the buyer's language, in a real browser (Debian's chromium driven
// by playwright-core) at 390 px: sign-in, Manage and Plans walked in Japanese and in
// German (long words: nothing may be wider than the screen, nor spill out of its box),
// and in Arabic, laid out right to left (its text is English until its catalogue comes)
// with nothing in the top bar or on a card overlapping; then the same three pages in
// every language with a catalogue, each opened once by its `?lang=`, to the same checks.
// WARDEN_SCREENSHOTS=<folder> saves every screen.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Page } from "playwright-core";
import { openDeviceSession } from "../client/client.service.js";
import { DAY_MS } from "../clock.js";
import { ensurePerson } from "../customers/person.store.js";
import { CATALOGUES } from "../i18n/catalogues/index.js";
import type { Language } from "../i18n/locales.js";
import { messagesFor } from "../i18n/messages.js";
import { assertFitsAndPasses, shoot, watchPolicy } from "../test-support/browser.js";
import { DIALECTS } from "../test-support/harness.js";
import { hostedPagesInBrowser, signInOnHostedPage } from "../test-support/hosted-browser.js";
import { paymentSession, stripeId, subscriptionObject } from "../test-support/stripe.js";
import { seedUsageCatalogue } from "../test-support/usage.js";

// Nine pages with axe-core on each, on a machine shared with other tests.
const JOURNEY_TIMEOUT_MS = 240_000;
// Three pages a language with axe-core on each, some forty pages, on a shared machine.
const EVERY_LANGUAGE_TIMEOUT_MS = 600_000;
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

// SQLite only: what this checks is drawn by the catalogues, the templates and the
// stylesheet, the same over either engine; the journey above walks both.
describe(`every language's sign-in, Manage and Plans in a browser at ${WIDTH} px`, () => {
  test("each language with a catalogue fits the screen and its boxes, passes axe-core and says its language", {
    timeout: EVERY_LANGUAGE_TIMEOUT_MS,
  }, async () => {
    const { services, clock, dataDir, ws, pages: base, send, browser, close } = await hostedPagesInBrowser("sqlite", { seed: seedUsageCatalogue });
    try {
      // A tool that sells usage (Plans lists features, allowances and a credit pack), and a
      // buyer with one of everything Manage shows: a meter, a licence, a team's seats to
      // hand out, a subscription to cancel, a device to sign out.
      const email = `every-${ws.slug}@example.com`;
      const now = clock.now();
      const account = (await ensurePerson(services.db, ws.workspaceId, "test", email, now)).id;
      await send(
        "checkout.session.completed",
        paymentSession({ email, metadata: { warden_tool: "tabmaster", warden_plan: "lifetime", warden_account: account }, now }),
      );
      await send(
        "checkout.session.completed",
        paymentSession({ email, metadata: { warden_tool: "tabmaster", warden_plan: "lifetime", warden_seats: "3", warden_account: account }, now }),
      );
      await send(
        "customer.subscription.created",
        subscriptionObject({
          id: stripeId("sub"),
          status: "active",
          metadata: { warden_tool: "tabmaster", warden_plan: "monthly", warden_account: account },
          startedAt: now,
          periodStart: now,
          periodEnd: now + 30 * DAY_MS,
        }),
      );
      await services.db.transaction().execute((trx) =>
        openDeviceSession(trx, {
          workspaceId: ws.workspaceId,
          env: "test",
          toolId: "tabmaster",
          personId: account,
          licenceId: null,
          device: { name: "Work laptop", platform: "chrome-mac" },
          now,
        }),
      );
      const viewport = { width: WIDTH, height: 800 };
      const signedOut = await (await browser.newContext({ viewport })).newPage();
      const signedIn = await (await browser.newContext({ viewport })).newPage();
      const violations = watchPolicy(signedOut, watchPolicy(signedIn));
      await signedIn.goto(`${base}/sign-in`);
      await signInOnHostedPage(signedIn, dataDir, email);
      await signedIn.waitForURL(`${base}/manage`);

      const languages = Object.keys(CATALOGUES) as Language[];
      assert.ok(languages.length >= 2, "the catalogues are read");
      for (const lang of languages) {
        // Each page is known by its own heading in the language asked for: a page left in English would not show it.
        const text = messagesFor(lang);
        const tool = "Tab Master";
        await signedOut.goto(`${base}/sign-in?lang=${lang}`);
        await signedOut.getByRole("heading", { level: 1, name: text.text("signIn.heading", { tool }), exact: true }).waitFor();
        await check(signedOut, `every-${lang}-sign-in-${WIDTH}`, lang, "ltr");
        await signedIn.goto(`${base}/manage?lang=${lang}`);
        await signedIn.getByRole("heading", { level: 1, name: text.text("manage.heading"), exact: true }).waitFor();
        await check(signedIn, `every-${lang}-manage-${WIDTH}`, lang, "ltr");
        await signedIn.goto(`${base}/plans?lang=${lang}`);
        await signedIn.getByRole("heading", { level: 1, name: text.text("plans.title", { tool }), exact: true }).waitFor();
        await check(signedIn, `every-${lang}-plans-${WIDTH}`, lang, "ltr");
      }
      assert.deepEqual(violations, []);
    } finally {
      await close();
    }
  });
});
