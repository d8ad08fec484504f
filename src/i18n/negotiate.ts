// Which language a hosted page (and the mail it asks for) speaks, in order: `?lang=`
// (the extension library passes chrome.i18n.getUILanguage()), the picker's cookie, the
// browser's Accept-Language, the workspace's default language, English. Pure.
import { LANGUAGES, type Language, type PageLocale, PSEUDO, RTL_WITHOUT_CATALOGUE } from "./locales.js";

/** The cookie the language picker sets (a `?lang=` naming a known language sets it too). */
export const LANGUAGE_COOKIE = "warden_lang";

const ALL: readonly PageLocale[] = [...LANGUAGES, ...RTL_WITHOUT_CATALOGUE, PSEUDO];
const BY_LOWER = new Map<string, PageLocale>(ALL.map((tag) => [tag.toLowerCase(), tag]));

/**
 * The page locale a BCP 47 tag asks for, or null: the tag itself, else its language
 * (`de-AT` → `de`). Portuguese of anywhere reads Brazilian Portuguese, which Stripe
 * Checkout speaks too; Chinese only in its Simplified script (`zh`, `zh-CN`, `zh-SG`,
 * `zh-Hans…`): a reader of Traditional Chinese (`zh-TW`, `zh-HK`, `zh-Hant`) goes on to
 * the next choice rather than reading a script that is not theirs.
 */
export function matchLocale(tag: string | undefined | null): PageLocale | null {
  if (typeof tag !== "string" || tag.length === 0 || tag.length > 35) return null;
  const lower = tag.trim().toLowerCase().replaceAll("_", "-");
  const exact = BY_LOWER.get(lower);
  if (exact) return exact;
  const [language, ...rest] = lower.split("-");
  if (language === "zh") {
    const subtags = rest.join("-");
    return subtags === "" || subtags === "cn" || subtags === "sg" || subtags.startsWith("hans") ? "zh-CN" : null;
  }
  if (language === "pt") return "pt-BR";
  if (language === PSEUDO.toLowerCase()) return null;
  const base = BY_LOWER.get(language ?? "");
  return base === undefined || base === PSEUDO ? null : base;
}

/** An Accept-Language header's tags, most wanted first (q=0 means "not this one"; `*` names none). */
export function acceptedTags(header: string | undefined): string[] {
  if (!header) return [];
  return header
    .slice(0, 1000)
    .split(",")
    .map((part, index) => {
      const [tag = "", ...params] = part.trim().split(";");
      const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
      return { tag: tag.trim(), q: q === undefined ? 1 : Number(q), index };
    })
    .filter((entry) => entry.tag !== "" && entry.tag !== "*" && entry.q > 0 && Number.isFinite(entry.q))
    .sort((a, b) => b.q - a.q || a.index - b.index)
    .map((entry) => entry.tag);
}

export interface LanguageAsked {
  /** `?lang=` of the page's address. */
  query?: string | undefined;
  /** The picker's cookie. */
  cookie?: string | undefined;
  /** The browser's Accept-Language header. */
  acceptLanguage?: string | undefined;
  /** The workspace's default language (Configure › Branding), null when it set none. */
  workspaceDefault?: Language | null | undefined;
}

/** The page's locale: the first of the four that names one Warden speaks, else English. */
export function negotiate(asked: LanguageAsked): PageLocale {
  return (
    matchLocale(asked.query) ??
    matchLocale(asked.cookie) ??
    acceptedTags(asked.acceptLanguage)
      .map(matchLocale)
      .find((l) => l !== null && l !== PSEUDO) ??
    asked.workspaceDefault ??
    "en"
  );
}
