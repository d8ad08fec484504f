// A page's or a mail's words in its locale: ICU MessageFormat messages from the
// catalogues (FormatJS's intl-messageformat: plurals, numbers), compiled once per
// language and message and kept (a page renders in the time it took in English only),
// and dates, counts and money through Intl in the locale's own format. Pure: no I/O.
import { IntlMessageFormat } from "intl-messageformat";
import { CATALOGUES, type MessageKey } from "./catalogues/index.js";
import { directionOf, FORMAT_LOCALE, moneyLocaleOf, type PageLocale, PSEUDO, textLanguageOf } from "./locales.js";

/** What a message is given: its arguments, and rich text's tags as functions of what they enclose. */
export type MessageValues = Record<string, unknown>;

export interface Messages {
  locale: PageLocale;
  /** The locale's `lang` attribute: the language its text is in (English for an RTL language without its catalogue yet). */
  lang: string;
  dir: "ltr" | "rtl";
  /** A message as text (titles, attributes, mails). */
  text(key: MessageKey, values?: MessageValues): string;
  /** A message's parts, for rich text: strings, and the values and tags' results as given. */
  parts(key: MessageKey, values: MessageValues): unknown[];
  /** Whether the message has rich text's tags (`<strong>…</strong>`): one without is formatted as plain text, some twenty times faster. */
  hasTags(key: MessageKey): boolean;
  /** `21 Nov 2026, 12:00 UTC`, `21. Nov. 2026, 12:00 UTC`: a moment in the locale's format, always in UTC and saying so. */
  dateTime(ms: number): string;
  count(n: number): string;
  /** An amount in minor units in its currency, in the locale's format (`1.234,56 €` in German); a code Intl does not know is shown as stored. */
  money(minorUnits: number, currency: string): string;
}

const cache = new Map<PageLocale, Messages>();
// The prices and the minutes kept per locale, at most, each.
const KEPT = 1_000;

/** The messages of a locale, built once and kept. */
export function messagesFor(locale: PageLocale): Messages {
  let messages = cache.get(locale);
  if (!messages) {
    messages = build(locale);
    cache.set(locale, messages);
  }
  return messages;
}

function build(locale: PageLocale): Messages {
  // Arabic and Hebrew, laid out before their catalogues, read English (and say so in `lang`).
  const language = textLanguageOf(locale);
  const catalogue = CATALOGUES[language];
  const formatLocale = FORMAT_LOCALE[locale];
  const compiled = new Map<MessageKey, IntlMessageFormat>();
  const compile = (key: MessageKey) => {
    let format = compiled.get(key);
    if (!format) {
      format = new IntlMessageFormat(catalogue[key], formatLocale);
      compiled.set(key, format);
    }
    return format;
  };
  const tagged = new Map<MessageKey, boolean>();
  const pseudo = locale === PSEUDO;
  // The pseudo-locale marks what Intl formatted too (⟪…⟫), which is the locale's by construction, not the catalogue's.
  const formatted = (text: string) => (pseudo ? `⟪${text}⟫` : text);
  const dates = new Intl.DateTimeFormat(formatLocale, {
    day: "numeric",
    month: "short",
    year: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
    timeZone: "UTC",
    timeZoneName: "short",
  });
  const counts = new Intl.NumberFormat(formatLocale);
  // Each currency's format with its number of decimals (resolvedOptions is slow enough to matter on a page of prices).
  const currencies = new Map<string, { format: Intl.NumberFormat; digits: number } | null>();
  const currencyFormat = (currency: string) => {
    const code = currency.toUpperCase();
    if (!currencies.has(code)) {
      let format: { format: Intl.NumberFormat; digits: number } | null = null;
      try {
        const made = new Intl.NumberFormat(moneyLocaleOf(locale), { style: "currency", currency: code });
        format = { format: made, digits: made.resolvedOptions().maximumFractionDigits ?? 2 };
      } catch {}
      // Only three-letter codes are kept, so a code read from anywhere cannot grow the map.
      if (!/^[A-Z]{3}$/.test(code)) return format;
      currencies.set(code, format);
    }
    return currencies.get(code) ?? null;
  };
  const prices = new Map<string, string>();
  const minutes = new Map<number, string>();
  return {
    locale,
    lang: language,
    dir: directionOf(locale),
    text(key, values) {
      const out = String(compile(key).format(values as never));
      return pseudo ? `⟦${out}⟧` : out;
    },
    hasTags(key) {
      let has = tagged.get(key);
      if (has === undefined) {
        has = containsTag(compile(key).getAst() as unknown as Element[]);
        tagged.set(key, has);
      }
      return has;
    },
    parts(key, values) {
      const out = compile(key).format(values as never);
      const list = Array.isArray(out) ? out : [out];
      return pseudo ? ["⟦", ...list, "⟧"] : list;
    },
    dateTime(ms) {
      // Shown to the minute: every moment of one minute has the same words, kept (a Manage page shows a dozen).
      const minute = Math.floor(ms / 60_000);
      let out = minutes.get(minute);
      if (out === undefined) {
        out = formatted(dates.format(ms));
        if (minutes.size >= KEPT) minutes.clear();
        minutes.set(minute, out);
      }
      return out;
    },
    count: (n) => formatted(counts.format(n)),
    money(minorUnits, currency) {
      // A page's prices are the same few from page to page: each one's words kept, the map bounded (emptied whole when full).
      const key = `${currency}\u0000${minorUnits}`;
      let out = prices.get(key);
      if (out === undefined) {
        const known = currencyFormat(currency);
        out = formatted(known === null ? `${minorUnits} ${currency} (minor units)` : known.format.format(minorUnits / 10 ** known.digits));
        if (prices.size >= KEPT) prices.clear();
        prices.set(key, out);
      }
      return out;
    },
  };
}

/** A parsed message's element as far as finding tags needs (the parser's own types are not a dependency of ours). */
type Element = { type: number; options?: Record<string, { value: Element[] }>; children?: Element[] };
// The parser's element types (@formatjs/icu-messageformat-parser's TYPE): a choice, a plural, a tag.
const SELECT = 5;
const PLURAL = 6;
const TAG = 8;

/** Whether a parsed message holds a tag anywhere, a plural's or a choice's branches included. */
function containsTag(elements: readonly Element[]): boolean {
  return elements.some(
    (element) =>
      element.type === TAG ||
      ((element.type === PLURAL || element.type === SELECT) && Object.values(element.options ?? {}).some((option) => containsTag(option.value))),
  );
}
