// The shell of every hosted page: the vendor's workspace name (not Warden's) in a top
// bar, Plans and Manage, the person's address and Sign out when signed in; the content in
// one column that reads at 390 px; a language picker at the foot. The head and form
// pieces are the dashboard's. Every word is the catalogue's (../i18n), in the page's
// language, through `PageText`: messages as escaped markup, their rich text's tags
// rendered here, dates, counts and prices formatted by the locale.
import { escapeHtml, Html, html } from "../dashboard/shared/html.js";
import { csrfField, head } from "../dashboard/shared/layout.js";
import type { Env } from "../db/schema.js";
import type { MessageKey } from "../i18n/catalogues/index.js";
import { LANGUAGE_NAMES, LANGUAGES, type PageLocale } from "../i18n/locales.js";
import type { Messages, MessageValues } from "../i18n/messages.js";

export type CustomerSection = "plans" | "manage" | "trial" | "sign-in";

/** A page's words: a catalogue's messages in the page's locale, as markup or text. */
export interface PageText {
  messages: Messages;
  /** A message as markup: string values escaped, Html values kept, tags rendered (`strong`, `code`, `hidden`, `muted`, or a function given). */
  t(key: MessageKey, values?: MessageValues): Html;
  /** A message as text: a title, an attribute, a notice's words. */
  s(key: MessageKey, values?: MessageValues): string;
  /** A moment in the locale's format, in a `<time>`. */
  date(ms: number): Html;
  count(n: number): string;
  money(minorUnits: number, currency: string): string;
}

type Tag = (inner: Html) => Html;

/** The tags every message may use; a message's own (a link) come as function values. */
const TAGS: Record<string, Tag> = {
  strong: (inner) => html`<strong>${inner}</strong>`,
  code: (inner) => html`<code class="extension-id">${inner}</code>`,
  hidden: (inner) => html`<span class="sr-only">${inner}</span>`,
  muted: (inner) => html`<span class="muted">${inner}</span>`,
  amount: (inner) => html`<span class="offer-amount">${inner}</span>`,
  per: (inner) => html`<span class="offer-per">${inner}</span>`,
};

/** The parts of a formatted message as markup, written straight into one string: strings escaped, markup kept. */
function markupOf(parts: unknown[]): Html {
  let out = "";
  for (const part of parts) out += Array.isArray(part) ? markupOf(part).markup : part instanceof Html ? part.markup : escapeHtml(String(part));
  return new Html(out);
}

/** The tags as intl-messageformat calls them: with the parts they enclose (made once, not per message). */
const TAG_VALUES: MessageValues = Object.fromEntries(Object.entries(TAGS).map(([name, tag]) => [name, (chunks: unknown[]) => tag(markupOf(chunks))]));

// The kept outputs of one locale's messages, by message and plain values (strings and
// numbers: the same ones always give the same words). Most of a page's messages repeat
// from page to page (a plan's price, its billing, the tool's title), and formatting one
// is most of its cost. Bounded: emptied whole when full, so values read from anywhere (an
// address) cannot grow it.
const KEPT_MAX = 2_000;

/** The key of a message's output with these values, or null when a value is not plain (markup, a tag's function). */
function keptKeyOf(key: MessageKey, values: MessageValues | undefined): string | null {
  if (values === undefined) return key;
  let out = key;
  for (const name in values) {
    const value = values[name];
    if (typeof value !== "string" && typeof value !== "number") return null;
    // A string's length goes before it, so that no value can spell another value's key (`a\u0000b…`).
    out += typeof value === "number" ? `\u0000${name}\u0001n${value}` : `\u0000${name}\u0001s${value.length}:${value}`;
  }
  return out;
}

function keptIn<T>(kept: Map<string, T>, key: string, make: () => T): T {
  let value = kept.get(key);
  if (value === undefined) {
    value = make();
    if (kept.size >= KEPT_MAX) kept.clear();
    kept.set(key, value);
  }
  return value;
}

const texts = new WeakMap<Messages, PageText>();

/** The page words of a locale's messages (one per locale, kept). */
export function pageText(messages: Messages): PageText {
  let text = texts.get(messages);
  if (text) return text;
  const markups = new Map<string, Html>();
  const strings = new Map<string, string>();
  // The message's markup: without tags and markup values its text escaped (its parts, by far the slower way, are not
  // needed); else its parts, markup kept and each tag rendered. `plain`: every value a string or a number.
  const markupOfMessage = (key: MessageKey, values: MessageValues | undefined, plain: boolean): Html => {
    if (plain && !messages.hasTags(key)) return new Html(escapeHtml(messages.text(key, values)));
    if (values === undefined) return markupOf(messages.parts(key, TAG_VALUES));
    const given: MessageValues = { ...TAG_VALUES };
    for (const [name, value] of Object.entries(values)) {
      given[name] = typeof value === "function" ? (chunks: unknown[]) => (value as Tag)(markupOf(chunks)) : value;
    }
    return markupOf(messages.parts(key, given));
  };
  const t = (key: MessageKey, values?: MessageValues): Html => {
    const kept = keptKeyOf(key, values);
    return kept === null ? markupOfMessage(key, values, false) : keptIn(markups, kept, () => markupOfMessage(key, values, true));
  };
  const s = (key: MessageKey, values?: MessageValues): string => {
    const kept = keptKeyOf(key, values);
    return kept === null ? messages.text(key, values) : keptIn(strings, kept, () => messages.text(key, values));
  };
  text = {
    messages,
    t,
    s,
    date: (ms) => html`<time datetime="${new Date(ms).toISOString()}">${messages.dateTime(ms)}</time>`,
    count: (n) => messages.count(n),
    money: (minorUnits, currency) => messages.money(minorUnits, currency),
  };
  texts.set(messages, text);
  return text;
}

/** A link tag for a message: `<link>…</link>` around the words it encloses. */
export const linkTo =
  (href: string): Tag =>
  (inner) =>
    html`<a href="${href}">${inner}</a>`;

/** Everything the shell needs; `base` is the page's `/c/{workspace}/{env}/{tool}`, null on a page of no known tool. */
export interface CustomerFrame {
  workspaceName: string | null;
  env: Env | null;
  base: string | null;
  /** The signed-in person: their address (null for a key-activated device's session) and the session's form token. */
  customer: { email: string | null; csrf: string } | null;
  section?: CustomerSection;
  /** The workspace's branding (branding.service.ts): its stylesheet (the accent) and logo, by versioned address. */
  brand?: { stylesheet: string | null; logo: string | null };
  /** The page's words, in its language. */
  text: PageText;
  /** The page's own address, for the language picker to ask for it again: its path, and its query but `lang`. */
  here: { path: string; query: [string, string][] };
}

function nav(frame: CustomerFrame): Html {
  if (frame.base === null) return html``;
  const { t } = frame.text;
  const link = (section: CustomerSection, label: Html) =>
    html`<a class="customer-nav-link" href="${frame.base}/${section}"${frame.section === section ? html` aria-current="page"` : ""}>${label}</a>`;
  return html`<nav class="customer-nav" aria-label="${frame.text.s("shell.nav")}">${link("plans", t("shell.plans"))}${link("manage", t("shell.manage"))}</nav>`;
}

function account(frame: CustomerFrame): Html {
  if (frame.base === null) return html``;
  const { t } = frame.text;
  if (frame.customer === null) {
    return frame.section === "sign-in" ? html`` : html`<div class="top-end"><a href="${frame.base}/sign-in">${t("shell.signIn")}</a></div>`;
  }
  return html`<div class="top-end">
${frame.customer.email ? html`<span class="who">${frame.customer.email}</span>` : html`<span class="who">${t("shell.licenceSession")}</span>`}
<form method="post" action="${frame.base}/sign-out">${csrfField(frame.customer.csrf)}<button class="link-button" type="submit">${t("shell.signOut")}</button></form>
</div>`;
}

// The picker's options depend on the page's locale alone: made once per locale, not on every page.
const optionsByLocale = new Map<PageLocale, Html>();
function languageOptions(current: PageLocale): Html {
  let options = optionsByLocale.get(current);
  if (options === undefined) {
    options = html`${LANGUAGES.map(
      (tag) => html`<option value="${tag}" lang="${tag}"${tag === current ? html` selected` : ""}>${LANGUAGE_NAMES[tag]}</option>`,
    )}`;
    optionsByLocale.set(current, options);
  }
  return options;
}

/**
 * The language picker: a plain form asking for the same page with `?lang=` (which sets
 * the cookie that keeps the choice), no script. Each language is named in itself.
 */
function languagePicker(frame: CustomerFrame): Html {
  return html`<form class="language-picker" method="get" action="${frame.here.path}">
${frame.here.query.map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
<label for="language">${frame.text.t("shell.language")}</label>
<select id="language" name="lang">${languageOptions(frame.text.messages.locale)}</select>
<button class="button small" type="submit">${frame.text.t("shell.languageChange")}</button>
</form>`;
}

/** A hosted page: the shell around one column of content; `copyButtons` loads the script behind copyField's button. */
export function customerPage(title: string, frame: CustomerFrame, content: Html, options: { copyButtons?: boolean } = {}): Html {
  const site = frame.workspaceName ?? "Warden";
  const logo = frame.brand?.logo;
  const { messages, t } = frame.text;
  // The vendor's logo is the tab's icon; without one, none (Warden's mark is the dashboard's, and these pages are the vendor's).
  return html`${head(title, {
    site,
    brandStylesheet: frame.brand?.stylesheet ?? null,
    icon: logo ?? null,
    lang: messages.lang,
    dir: messages.dir,
    fullTitle: messages.text("shell.title", { title, site }),
    ...options,
  })}
<body class="customer">
<a class="skip-link" href="#content">${t("shell.skip")}</a>
${frame.env === "test" ? html`<div class="test-banner" role="status">${t("shell.testMode")}</div>` : ""}
<header class="top customer-top">
<span class="brand customer-brand">${logo ? html`<img class="customer-logo" src="${logo}" alt="" height="32">` : html`<span class="brand-mark" aria-hidden="true">${site.slice(0, 1).toUpperCase()}</span>`} ${site}</span>
${nav(frame)}
${account(frame)}
</header>
<main class="customer-main" id="content">
${content}
</main>
<footer class="customer-foot"><p>${t("shell.footer", { site })}</p>
${languagePicker(frame)}</footer>
</body>
</html>`;
}
