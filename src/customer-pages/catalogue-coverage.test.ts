// Every word a customer reads on the hosted pages comes from the catalogue: each page is
// rendered in the pseudo-locale (en-XA), where every message is wrapped in ⟦…⟧ and every
// value Intl formatted in ⟪…⟫, and no visible text, nor any aria-label, placeholder or
// title, may be left outside them but the vendor's and the person's own (names, addresses,
// plans) and the picker's language names. Then the same pages in German and Japanese:
// their words, `lang`, prices and dates in the locale's format. SQLite and PostgreSQL.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { openDeviceSession } from "../client/client.service.js";
import { DAY_MS } from "../clock.js";
import { ensurePerson } from "../customers/person.store.js";
import type { Dialect } from "../db/database.js";
import { LANGUAGE_NAMES } from "../i18n/locales.js";
import { pagesOf, signInOnPages } from "../test-support/customer-pages.js";
import { dashboardServices, readCodeMail, TestBrowser } from "../test-support/dashboard.js";
import { DIALECTS, seedCatalogue, testApi } from "../test-support/harness.js";
import { connectTestStripe, deliver, paymentSession, stripeEvent, stripeId, subscriptionObject } from "../test-support/stripe.js";

const ENTITIES: Record<string, string> = { "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#39;": "'" };
const decode = (text: string) => text.replace(/&(amp|lt|gt|quot|#39);/g, (e) => ENTITIES[e] ?? e);

/**
 * The text of a page that no message holds: the markup with every ⟦…⟧ and ⟪…⟫ taken out
 * (nested ones too), then the visible attributes' values and the text between tags, less
 * `data` (what the vendor and the person named) and punctuation.
 */
export function bareText(page: string, data: readonly string[]): string[] {
  let kept = "";
  let depth = 0;
  for (const ch of page) {
    if (ch === "⟦" || ch === "⟪") depth++;
    else if (ch === "⟧" || ch === "⟫") depth--;
    else if (depth === 0) kept += ch;
  }
  const body = kept.replace(/<script[\s\S]*?<\/script>|<style[\s\S]*?<\/style>/g, "");
  const attributes = [...body.matchAll(/\s(?:aria-label|placeholder|title|alt)="([^"]*)"/g)].map((m) => m[1] ?? "");
  const texts = body
    .replace(/<!doctype[^>]*>/i, "")
    .split(/<[^>]*>/)
    .map((text) => text);
  const sorted = [...data].sort((a, b) => b.length - a.length);
  return [...attributes, ...texts]
    .map((text) => {
      let rest = decode(text);
      for (const value of sorted) rest = rest.replaceAll(value, "");
      return rest.replace(/[\s·:,.()\-–]+/g, " ").trim();
    })
    .filter((text) => text !== "");
}

async function setUp(dialect: Dialect) {
  const env = await dashboardServices(dialect, { WARDEN_PUBLIC_URL: "https://warden.example.com" });
  const { services, clock } = env;
  const api = await testApi(services);
  const ws = await seedCatalogue(services);
  const secret = await connectTestStripe(services, ws, "test", "sk_test_coverageStandIn");
  const send = (type: string, object: Record<string, unknown>) => deliver(api, ws, secret, stripeEvent(type, object, { now: clock.now() }), clock.now());
  const email = "ada@example.com";
  const now = clock.now();
  const account = (await ensurePerson(services.db, ws.workspaceId, "test", email, now)).id;
  await send("checkout.session.completed", paymentSession({ email, metadata: { warden_tool: "tabmaster", warden_plan: "lifetime" }, now }));
  await send(
    "checkout.session.completed",
    paymentSession({ email, metadata: { warden_tool: "tabmaster", warden_plan: "lifetime", warden_seats: "3", warden_account: account }, now: now - 1000 }),
  );
  const subscription = stripeId("sub");
  const metadata = { warden_tool: "tabmaster", warden_plan: "monthly", warden_account: account };
  await send(
    "customer.subscription.created",
    subscriptionObject({ id: subscription, startedAt: now, periodStart: now, periodEnd: now + 30 * DAY_MS, status: "active", metadata }),
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
  const browser = new TestBrowser(api.app);
  const base = pagesOf(ws);
  await signInOnPages(browser, env.dataDir, base, email);
  // What the vendor and the person named, shown as they wrote it in every language.
  const data = [
    "Test workspace",
    "Tab Master",
    "Link Keeper",
    "Suite for life",
    "Suite",
    "Lifetime",
    "Monthly",
    email,
    "Work laptop",
    "chrome-mac",
    ...Object.values(LANGUAGE_NAMES),
    "T",
    "W",
    "123456",
    "Warden",
  ];
  return { ...env, api, ws, base, browser, subscription, data };
}

for (const dialect of DIALECTS) {
  describe(`hosted pages in the buyer's language (${dialect})`, () => {
    test("the scan finds text outside the catalogue (it can fail)", () => {
      assert.deepEqual(bareText(`<p>⟦Hello <strong>ada@example.com</strong>⟧ there</p><nav aria-label="Pages"></nav>`, ["ada@example.com"]), [
        "Pages",
        "there",
      ]);
      assert.deepEqual(bareText(`<p>⟦Bought ⟪€49.00⟫⟧ · Tab Master</p>`, ["Tab Master"]), []);
    });

    test("every page's words are the catalogue's: nothing bare in the pseudo-locale, signed out and signed in", async () => {
      const { api, base, browser, subscription, data } = await setUp(dialect);
      {
        const out = new TestBrowser(api.app);
        const pages = [
          [out, `${base}/sign-in?lang=en-XA`],
          [out, `${base}/plans?lang=en-XA`],
          [out, `${base}/trial?lang=en-XA`],
          [out, `${base}/nowhere?lang=en-XA`],
          [out, `/c/no-such-workspace/test/x/plans?lang=en-XA`],
          [browser, `${base}/plans?lang=en-XA`],
          [browser, `${base}/manage?lang=en-XA`],
          [browser, `${base}/manage?done=cancelled&lang=en-XA`],
          [browser, `${base}/trial?lang=en-XA`],
          [browser, `${base}/manage/subscriptions/${subscription}/cancel?lang=en-XA`],
          [browser, `${base}/checkout/success?session_id=nonsense&lang=en-XA`],
        ] as const;
        for (const [who, path] of pages) {
          const page = await who.get(path);
          assert.ok(page.body.includes("⟦"), `${path} is in the pseudo-locale`);
          assert.deepEqual(bareText(page.body, data), [], `${path} has text outside the catalogue`);
        }
        // A form from another site, refused before the page runs: the refusal's words too.
        const refused = await out.post(`${base}/sign-in?lang=en-XA`, { email: "x@example.com" }, { "sec-fetch-site": "cross-site" });
        assert.equal(refused.statusCode, 403);
        assert.ok(refused.body.includes("⟦"), "the refusal is in the pseudo-locale");
        assert.deepEqual(bareText(refused.body, data), [], "the cross-site refusal has text outside the catalogue");
      }
    });

    test("German and Japanese pages: lang, the language's words, prices and dates in its format; ?lang= is kept in a cookie", async () => {
      const { api, base, browser, dataDir } = await setUp(dialect);
      {
        const out = new TestBrowser(api.app);
        const plans = await out.get(`${base}/plans?lang=de`);
        assert.match(plans.body, /<html lang="de">/);
        assert.match(plans.body, /<h1>Tarife für Tab Master<\/h1>/);
        assert.match(plans.body, /<option value="de" lang="de" selected>Deutsch<\/option>/);
        assert.equal(plans.headers["content-language"], "de");
        assert.match(String(plans.headers["set-cookie"]), /warden_lang=de; Path=\/c;/);
        // seedCatalogue's lifetime plan is €49.00: 49,00 € in German.
        assert.match(plans.body, /<span class="offer-amount">49,00\u00a0€<\/span>/);
        // The cookie keeps the choice on the next page, whatever the browser says.
        const next = await out.get(`${base}/trial`, { "accept-language": "fr" });
        assert.match(next.body, /<html lang="de">/);
        const manage = await browser.get(`${base}/manage`, { "accept-language": "ja, en;q=0.5" });
        assert.match(manage.body, /<html lang="ja">/);
        assert.match(manage.body, /<h1>ご購入内容<\/h1>/);
        assert.match(manage.body, /年.*月.*日/);
        // The sign-in mail speaks the language of the page that asked for it (the cookie's German here).
        const signIn = await out.get(`${base}/sign-in`);
        assert.match(signIn.body, /<h1>Bei Tab Master anmelden<\/h1>/);
        const asked = await out.post(`${base}/sign-in`, { email: "bea@example.com" });
        assert.equal(asked.statusCode, 303);
        const mail = await readCodeMail(dataDir, "bea@example.com");
        assert.match(mail ?? "", /Subject: \d{6} ist Ihr Anmeldecode für Tab Master\n/);
        assert.match(mail ?? "", /Ihr Anmeldecode für Tab Master lautet \d{6}\.\nEr gilt einmal, 10 Minuten lang\./);
        const arabic = await out.get(`${base}/plans?lang=ar`);
        assert.match(arabic.body, /<html lang="en" dir="rtl">/);
      }
    });
  });
}
