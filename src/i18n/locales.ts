// The languages of the hosted pages and of the mails sent to customers: their tags (as
// `?lang=`, the picker's cookie and `Accept-Language` name them), the locale each formats
// dates and money in, its writing direction, its name in itself, and Stripe Checkout's
// locale for it. Pure data, no I/O.

/** A language with a catalogue of its own, in the picker's order. */
export const LANGUAGES = ["en", "de", "fr", "es", "pt-BR", "it", "nl", "pl", "tr", "ru", "id", "ja", "ko", "zh-CN"] as const;
export type Language = (typeof LANGUAGES)[number];

/**
 * Right-to-left languages whose layout is ready (`dir="rtl"`) before their catalogue: a
 * page asked for in one is laid out right to left, with the English catalogue's text.
 */
export const RTL_WITHOUT_CATALOGUE = ["ar", "he"] as const;

/**
 * The pseudo-locale (the tag Android and Chrome use for theirs): English with every
 * message wrapped in ⟦…⟧, so that text which bypasses the catalogue shows bare. Asked
 * for only by `?lang=en-XA` (or its cookie); never offered by the picker.
 */
export const PSEUDO = "en-XA";

/** What a page is shown in: one of the languages, an RTL language without its catalogue yet, or the pseudo-locale. */
export type PageLocale = Language | (typeof RTL_WITHOUT_CATALOGUE)[number] | typeof PSEUDO;

/** Each language's name in itself, for the picker (a reader looks for their own language by its own name). */
export const LANGUAGE_NAMES: Record<Language, string> = {
  en: "English",
  de: "Deutsch",
  fr: "Français",
  es: "Español",
  "pt-BR": "Português (Brasil)",
  it: "Italiano",
  nl: "Nederlands",
  pl: "Polski",
  tr: "Türkçe",
  ru: "Русский",
  id: "Bahasa Indonesia",
  ja: "日本語",
  ko: "한국어",
  "zh-CN": "简体中文",
};

/**
 * The locale dates, numbers and money are formatted in. English keeps the pages' format
 * of before (`21 Nov 2026, 12:00 UTC`, `€1,234.56`): en-GB, day first, read the same in
 * every English-speaking country.
 */
export const FORMAT_LOCALE: Record<PageLocale, string> = {
  en: "en-GB",
  de: "de-DE",
  fr: "fr-FR",
  es: "es-ES",
  "pt-BR": "pt-BR",
  it: "it-IT",
  nl: "nl-NL",
  pl: "pl-PL",
  tr: "tr-TR",
  ru: "ru-RU",
  id: "id-ID",
  ja: "ja-JP",
  ko: "ko-KR",
  "zh-CN": "zh-CN",
  // Their text is English until their catalogues come: so are their dates and numbers.
  ar: "en-GB",
  he: "en-GB",
  [PSEUDO]: "en-GB",
};

/**
 * The locale prices are formatted in: the page's, but English's money is plain `en`'s
 * (`$48.00`, as the dashboard writes it) rather than en-GB's `US$48.00`.
 */
export const moneyLocaleOf = (locale: PageLocale): string => (FORMAT_LOCALE[locale] === "en-GB" ? "en" : FORMAT_LOCALE[locale]);

/** The language of a page's text: its own catalogue's, or English for the others. */
export const textLanguageOf = (locale: PageLocale): Language => ((LANGUAGES as readonly string[]).includes(locale) ? (locale as Language) : "en");

export const directionOf = (locale: PageLocale): "ltr" | "rtl" => ((RTL_WITHOUT_CATALOGUE as readonly string[]).includes(locale) ? "rtl" : "ltr");

/**
 * Stripe Checkout's `locale` for a page's (Stripe takes a fixed list: `zh` is its
 * Simplified Chinese, `pt-BR` its Brazilian Portuguese); `auto` lets Stripe choose by
 * the browser where it has no match (Arabic, Hebrew).
 */
export function stripeLocaleOf(locale: PageLocale): string {
  if (locale === "zh-CN") return "zh";
  if (locale === PSEUDO) return "en";
  if (locale === "ar" || locale === "he") return "auto";
  return locale;
}
