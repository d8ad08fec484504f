import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { IntlMessageFormat } from "intl-messageformat";
import { CATALOGUES } from "./catalogues/index.js";
import { LANGUAGES, stripeLocaleOf } from "./locales.js";
import { messagesFor } from "./messages.js";
import { acceptedTags, matchLocale, negotiate } from "./negotiate.js";

/** An element of a parsed message: an argument, select or plural (by `value`, its name), a tag (its name and `children`), text. */
interface Element {
  type: number;
  value?: unknown;
  options?: Record<string, { value: Element[] }>;
  children?: Element[];
}

/** The arguments and tags a message uses, by name (literal text and `#` name none). */
function namesIn(elements: Element[], names = new Set<string>()): Set<string> {
  for (const element of elements) {
    // 0 is literal text, 7 a plural's `#`: neither names anything.
    if (element.type !== 0 && element.type !== 7 && typeof element.value === "string") names.add(element.value);
    for (const option of Object.values(element.options ?? {})) namesIn(option.value, names);
    namesIn(element.children ?? [], names);
  }
  return names;
}

/**
 * What is wrong with a message's plurals in `language`: each one's forms (`=0` and the
 * like aside) are to be exactly the categories CLDR gives the language (Polish
 * one/few/many/other, Japanese other only), none missing and none it never picks.
 */
function pluralFaults(language: string, message: string): string[] {
  const categories = [...new Intl.PluralRules(language).resolvedOptions().pluralCategories].sort();
  const faults: string[] = [];
  const walk = (elements: Element[]) => {
    for (const element of elements) {
      // 6 is a plural (cardinal or ordinal).
      if (element.type === 6) {
        const forms = Object.keys(element.options ?? {})
          .filter((form) => !form.startsWith("="))
          .sort();
        if (forms.join() !== categories.join()) faults.push(`{${String(element.value)}} has ${forms.join("/")}, CLDR ${categories.join("/")}`);
      }
      for (const option of Object.values(element.options ?? {})) walk(option.value);
      walk(element.children ?? []);
    }
  };
  walk(new IntlMessageFormat(message, language).getAst() as Element[]);
  return faults;
}

describe("catalogues", () => {
  const english = Object.keys(CATALOGUES.en);

  for (const [language, catalogue] of Object.entries(CATALOGUES)) {
    test(`${language}: every key English has, no other, and every message parses`, () => {
      assert.deepEqual(Object.keys(catalogue).sort(), [...english].sort(), `${language} lacks or adds keys`);
      for (const [key, message] of Object.entries(catalogue)) {
        assert.doesNotThrow(() => new IntlMessageFormat(message, language), `${language} ${key} does not parse: ${message}`);
      }
    });

    test(`${language}: each message takes the arguments English's takes`, () => {
      const argumentsOf = (message: string) => [...namesIn(new IntlMessageFormat(message, "en").getAst() as Element[])].sort();
      for (const key of english) {
        const en = CATALOGUES.en[key as keyof typeof CATALOGUES.en];
        const other = catalogue[key as keyof typeof catalogue];
        assert.deepEqual(argumentsOf(other), argumentsOf(en), `${language} ${key}`);
      }
    });

    test(`${language}: each plural has the forms CLDR gives the language, and no other`, () => {
      for (const [key, message] of Object.entries(catalogue)) assert.deepEqual(pluralFaults(language, message), [], `${language} ${key}`);
    });
  }

  test("a message that does not parse is caught (the check can fail)", () => {
    assert.throws(() => new IntlMessageFormat("{days, plural, one {# day}", "en"));
  });

  test("a plural with English's forms in Polish or Japanese is caught, even nested (the check can fail)", () => {
    assert.equal(pluralFaults("pl", "{n, plural, one {# dzień} other {# dni}}").length, 1);
    assert.equal(pluralFaults("ja", "{n, plural, =0 {} one {# 日} other {# 日}}").length, 1);
    assert.equal(pluralFaults("fr", "{s, select, yes {{n, plural, one {# jour} other {# jours}}} other {}}").length, 1);
    assert.deepEqual(pluralFaults("pl", "{n, plural, =0 {} one {# dzień} few {# dni} many {# dni} other {# dnia}}"), []);
    assert.deepEqual(pluralFaults("ja", "{n, plural, =0 {} other {# 日}}"), []);
  });
});

describe("negotiate: ?lang=, the cookie, Accept-Language, the workspace's default, English", () => {
  test("each source wins over the ones after it", () => {
    const all = { query: "ja", cookie: "de", acceptLanguage: "fr-FR,fr;q=0.9", workspaceDefault: "es" as const };
    assert.equal(negotiate(all), "ja");
    assert.equal(negotiate({ ...all, query: undefined }), "de");
    assert.equal(negotiate({ ...all, query: undefined, cookie: undefined }), "fr");
    assert.equal(negotiate({ workspaceDefault: "es" }), "es");
    assert.equal(negotiate({}), "en");
  });

  test("a tag Warden does not speak is passed over, not an error", () => {
    assert.equal(negotiate({ query: "xx", cookie: "<script>", acceptLanguage: "sw, de;q=0.5" }), "de");
    assert.equal(negotiate({ query: "x".repeat(5000) }), "en");
  });

  test("Accept-Language by weight: q=0 refuses, * names none, order breaks ties", () => {
    assert.deepEqual(acceptedTags("de;q=0.5, ja, fr;q=0, *;q=0.1, ko;q=0.5"), ["ja", "de", "ko"]);
    assert.equal(negotiate({ acceptLanguage: "fr;q=0, nl;q=0.3, ko;q=0.8" }), "ko");
  });

  test("regions and scripts: de-AT reads German, pt-PT Brazilian Portuguese, zh-Hans Simplified; zh-TW is passed over", () => {
    assert.equal(matchLocale("de-AT"), "de");
    assert.equal(matchLocale("pt-PT"), "pt-BR");
    assert.equal(matchLocale("pt_br"), "pt-BR");
    assert.equal(matchLocale("zh-Hans-CN"), "zh-CN");
    assert.equal(matchLocale("zh"), "zh-CN");
    assert.equal(matchLocale("zh-TW"), null);
    assert.equal(negotiate({ acceptLanguage: "zh-TW, en;q=0.5" }), "en");
  });

  test("Arabic and Hebrew lay out right to left with English text until their catalogues; the pseudo-locale only when asked by name", () => {
    assert.equal(matchLocale("ar-EG"), "ar");
    const arabic = messagesFor("ar");
    assert.equal(arabic.dir, "rtl");
    assert.equal(arabic.lang, "en");
    assert.equal(messagesFor("he").dir, "rtl");
    assert.equal(messagesFor("de").dir, "ltr");
    assert.equal(negotiate({ query: "en-XA" }), "en-XA");
    assert.equal(negotiate({ acceptLanguage: "en-XA" }), "en");
  });
});

describe("messages", () => {
  test("plurals, and values placed, in English", () => {
    const en = messagesFor("en");
    assert.equal(en.text("plans.creditsExpire", { days: 1 }), "Credits last 1 day from purchase.");
    assert.equal(en.text("plans.creditsExpire", { days: 30 }), "Credits last 30 days from purchase.");
    assert.equal(en.text("mail.signIn.subject", { code: "123456", tool: "Summarise" }), "123456 is your Summarise sign-in code");
  });

  test("money and dates in the locale's format: 1.234,56 € in German, €1,234.56 in English, ¥1,235 in Japanese", () => {
    assert.equal(messagesFor("de").money(123456, "eur"), "1.234,56\u00a0€");
    assert.equal(messagesFor("en").money(123456, "eur"), "€1,234.56");
    assert.equal(messagesFor("ja").money(1235, "jpy"), "￥1,235");
    assert.equal(messagesFor("en").money(4800, "usd"), "$48.00");
    assert.equal(messagesFor("en").money(5, "zzzz"), "5 zzzz (minor units)");
    const moment = Date.UTC(2026, 10, 21, 12, 5);
    assert.equal(messagesFor("en").dateTime(moment), "21 Nov 2026, 12:05 UTC");
    assert.equal(messagesFor("de").dateTime(moment), "21. Nov. 2026, 12:05 UTC");
    assert.equal(messagesFor("de").count(1234567), "1.234.567");
  });

  test("the pseudo-locale marks every message and every formatted value", () => {
    const pseudo = messagesFor("en-XA");
    assert.equal(pseudo.text("shell.plans"), "⟦Plans⟧");
    assert.equal(pseudo.count(5), "⟪5⟫");
  });

  test("a locale's messages are built once and kept", () => {
    assert.equal(messagesFor("de"), messagesFor("de"));
  });

  test("Stripe Checkout's locale for each language: zh for Simplified Chinese, auto where Stripe has none", () => {
    assert.equal(stripeLocaleOf("zh-CN"), "zh");
    assert.equal(stripeLocaleOf("pt-BR"), "pt-BR");
    assert.equal(stripeLocaleOf("de"), "de");
    assert.equal(stripeLocaleOf("ar"), "auto");
    for (const language of LANGUAGES) assert.match(stripeLocaleOf(language), /^[a-z]{2}(-[A-Z]{2})?$/);
  });
});
