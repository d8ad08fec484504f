// The page shells (signed out: a centred card; signed in: top bar, side navigation,
// content) and the few components every screen uses.
import type { Env } from "../../db/schema.js";
import type { Workspace } from "../../workspaces/workspace.types.js";
import { Html, html } from "./html.js";
import { currencyFormat } from "./money.js";
import { labelTableCells } from "./tables.js";

export const DASHBOARD = "/dashboard";
export const CSS_PATH = `${DASHBOARD}/assets/dashboard.css`;
/** The one script: Copy buttons (see assets/copy.js); only pages with one load it. */
const COPY_SCRIPT_PATH = `${DASHBOARD}/assets/copy.js`;
/** Warden's mark (http/mark.ts), the dashboard's icon: named in every head, so no browser asks for /favicon.ico. */
export const ICON_PATH = `${DASHBOARD}/assets/warden.svg`;

export type Section =
  | "overview"
  | "customers"
  | "insights"
  | "tools"
  | "bundles"
  | "stripe"
  | "keys"
  | "webhooks"
  | "events"
  | "owners"
  | "branding"
  | "audit"
  | AccountSection;
/** Pages about the owner, not about a workspace environment. */
export type AccountSection = "account-audit" | "sessions";
const inWorkspace = (section: Section): Exclude<Section, AccountSection> => (section === "account-audit" || section === "sessions" ? "overview" : section);

/** Everything a signed-in page's frame needs. */
export interface Frame {
  email: string;
  csrf: string;
  workspaces: Workspace[];
  /** The workspace and environment on screen; null on pages about the owner (audit). */
  current: { workspace: Workspace; env: Env } | null;
  section: Section;
}

/** The address of a section in a workspace environment. */
export function sectionPath(workspace: string, env: Env, section: Exclude<Section, AccountSection>): string {
  const base = `${DASHBOARD}/w/${encodeURIComponent(workspace)}/${env}`;
  return section === "overview" ? base : `${base}/${section}`;
}

/**
 * The query of an account page (Sessions, All workspaces' log) opened from a workspace
 * environment: it names that environment, so the page keeps its navigation, switchers and
 * test banner instead of dropping the owner out of where they were; `extra` adds to it.
 */
export function accountQuery(from: Frame["current"], extra: Record<string, string> = {}): string {
  const query = new URLSearchParams({ ...(from ? { workspace: from.workspace.slug, env: from.env } : {}), ...extra }).toString();
  return query ? `?${query}` : "";
}

/** The address of an account page, from the workspace environment on screen (none: `from` null). */
export function accountPath(section: AccountSection, from: Frame["current"]): string {
  return `${DASHBOARD}/${section === "sessions" ? "sessions" : "audit"}${accountQuery(from)}`;
}

/** Where a switcher's choice leads: the same account page, or the section's page of a workspace environment. */
const switchPath = (frame: Frame, workspace: Workspace, env: Env) =>
  frame.section === "account-audit" || frame.section === "sessions"
    ? accountPath(frame.section, { workspace, env })
    : sectionPath(workspace.slug, env, inWorkspace(frame.section));

/** The path of a section of the workspace environment a page is in; only such a page may ask. */
export function currentSectionPath(frame: Frame, section: Exclude<Section, AccountSection>): string {
  const here = frame.current;
  if (!here) throw new Error(`a ${section} page has a workspace`);
  return sectionPath(here.workspace.slug, here.env, section);
}

/**
 * The document's start to the end of its head; `site` ends the title (the hosted pages name
 * the workspace); `icon` is Warden's mark unless given, null for none.
 */
export function head(
  title: string,
  options: {
    copyButtons?: boolean;
    site?: string;
    brandStylesheet?: string | null;
    icon?: string | null;
    /** The page's language and direction (the hosted pages': the buyer's); English, left to right, unless given. */
    lang?: string;
    dir?: "ltr" | "rtl";
    /** The whole title as given, rather than `title · site` (the hosted pages' is their catalogue's). */
    fullTitle?: string;
  } = {},
): Html {
  const icon = options.icon === undefined ? ICON_PATH : options.icon;
  return html`<!doctype html>
<html lang="${options.lang ?? "en"}"${options.dir === "rtl" ? html` dir="rtl"` : ""}>
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.fullTitle ?? `${title} · ${options.site ?? "Warden"}`}</title>
${
  icon === null
    ? ""
    : html`<link rel="icon" href="${icon}"${icon === ICON_PATH ? html` type="image/svg+xml"` : ""}>
`
}<link rel="stylesheet" href="${CSS_PATH}">
${
  options.brandStylesheet
    ? html`<link rel="stylesheet" href="${options.brandStylesheet}">
`
    : ""
}${
  options.copyButtons
    ? html`<script src="${COPY_SCRIPT_PATH}" defer></script>
`
    : ""
}</head>`;
}

/**
 * The first stop of every page's keyboard order: without it, 13 tabs through the top bar
 * and the side navigation came before the content (WCAG 2.4.1). Hidden until focused.
 */
export const skipLink = html`<a class="skip-link" href="#content">Skip to content</a>`;

const brand = html`<span class="brand"><span class="brand-mark" aria-hidden="true">W</span> Warden</span>`;

/** A signed-out page: one card in the middle of the screen. */
export function cardPage(title: string, body: Html): Html {
  return html`${head(title)}
<body class="signed-out">
${skipLink}
<main class="card-page" id="content">
<div class="card-brand">${brand}</div>
<section class="card">
${body}
</section>
<p class="card-foot">Warden · entitlement and access for your tools</p>
</main>
</body>
</html>`;
}

function workspaceSwitcher(frame: Frame): Html {
  const { current, workspaces } = frame;
  const label = current ? current.workspace.name : "Choose one";
  const env = current?.env ?? "test";
  return html`<details class="switcher">
<summary><span class="switcher-label">Workspace</span> <strong>${label}</strong></summary>
<ul>
${workspaces.map(
  (w) =>
    html`<li><a href="${switchPath(frame, w, env)}"${current?.workspace.id === w.id ? html` aria-current="true"` : ""}>${w.name} <span class="muted">${w.slug}</span></a></li>`,
)}
</ul>
</details>`;
}

function envSwitch(frame: Frame): Html {
  if (!frame.current) return html``;
  const { workspace, env } = frame.current;
  const link = (target: Env, label: string) =>
    target === env
      ? html`<span class="env-option env-${target}" aria-current="true">${label}</span>`
      : html`<a class="env-option" href="${switchPath(frame, workspace, target)}">${label}</a>`;
  return html`<nav class="env-switch" aria-label="Environment">${link("test", "Test")}${link("live", "Live")}</nav>`;
}

const SECTION_LABELS: Record<Section, string> = {
  overview: "Overview",
  customers: "Customers",
  insights: "Insights",
  tools: "Tools and plans",
  bundles: "Bundles",
  stripe: "Payments",
  keys: "API keys",
  webhooks: "Webhooks",
  events: "Events",
  owners: "Owners",
  branding: "Branding",
  audit: "Audit log",
  "account-audit": "All workspaces' log",
  sessions: "Sessions",
};

/*
 * The side navigation inside a <details>: on a phone it folds behind a "Menu" button (it
 * filled the whole first screen), with no script; on a wider screen the stylesheet hides
 * the button and shows the navigation whether the <details> is open or not
 * (`::details-content`; a browser without it shows the button there too, which still works).
 */
function sideNav(frame: Frame): Html {
  return html`<details class="nav-menu">
<summary><span class="nav-menu-label">Menu</span> <span class="nav-menu-here">${SECTION_LABELS[frame.section]}</span></summary>
${sideNavList(frame)}
</details>`;
}

function sideNavList(frame: Frame): Html {
  const item = (section: Section, href: string) =>
    html`<li><a href="${href}"${frame.section === section ? html` aria-current="page"` : ""}>${SECTION_LABELS[section]}</a></li>`;
  const here = frame.current;
  return html`<nav class="side" aria-label="Dashboard">
<ul>
${item("overview", here ? sectionPath(here.workspace.slug, here.env, "overview") : DASHBOARD)}
${here ? item("customers", sectionPath(here.workspace.slug, here.env, "customers")) : ""}
${here ? item("insights", `${sectionPath(here.workspace.slug, here.env, "insights")}/revenue`) : ""}
</ul>
${
  here
    ? html`<p class="side-heading">Catalogue</p><ul>${item("tools", sectionPath(here.workspace.slug, here.env, "tools"))}${item("bundles", sectionPath(here.workspace.slug, here.env, "bundles"))}</ul>
<p class="side-heading">Configure</p><ul>${item("stripe", sectionPath(here.workspace.slug, here.env, "stripe"))}${item("keys", sectionPath(here.workspace.slug, here.env, "keys"))}${item("webhooks", sectionPath(here.workspace.slug, here.env, "webhooks"))}${item("events", sectionPath(here.workspace.slug, here.env, "events"))}${item("owners", sectionPath(here.workspace.slug, here.env, "owners"))}${item("branding", sectionPath(here.workspace.slug, here.env, "branding"))}${item("audit", sectionPath(here.workspace.slug, here.env, "audit"))}</ul>`
    : ""
}
<p class="side-heading">Account</p>
<ul>${item("account-audit", accountPath("account-audit", here))}${item("sessions", accountPath("sessions", here))}</ul>
<p class="side-who">Signed in as ${frame.email}</p>
</nav>`;
}

/** A step of a page's breadcrumb trail; the page's own (the last) has no link. */
export interface Crumb {
  label: string;
  href?: string;
}

/**
 * Where a page sits: workspace › environment › section, then the page's own steps
 * (`trail`; by default its title, when it is not the section's own page). None on a
 * section's own page at the top (a workspace's overview), where the navigation says it all.
 */
function breadcrumbs(title: string, frame: Frame, trail: Crumb[] | undefined): Html {
  const here = frame.current;
  const section = SECTION_LABELS[frame.section];
  const own = trail ?? (title === section ? [] : [{ label: title }]);
  const account = frame.section === "account-audit" || frame.section === "sessions" ? frame.section : null;
  const base: Crumb[] = account
    ? [{ label: "Account" }, { label: section, href: accountPath(account, here) }]
    : here
      ? [
          { label: here.workspace.name, href: sectionPath(here.workspace.slug, here.env, "overview") },
          { label: here.env === "test" ? "Test" : "Live", href: sectionPath(here.workspace.slug, here.env, "overview") },
          ...(frame.section === "overview" ? [] : [{ label: section, href: sectionPath(here.workspace.slug, here.env, inWorkspace(frame.section)) }]),
        ]
      : [];
  if (here && frame.section === "overview" && own.length === 0) return html``;
  const steps = [...base, ...own];
  return html`<nav class="breadcrumbs" aria-label="Breadcrumb"><ol>${steps.map((step, i) =>
    i === steps.length - 1
      ? html`<li><span aria-current="page">${step.label}</span></li>`
      : html`<li>${step.href ? html`<a href="${step.href}">${step.label}</a>` : step.label}</li>`,
  )}</ol></nav>`;
}

/**
 * A signed-in page: the frame around a screen's content; `copyButtons` loads the script
 * behind copyField's button; `trail` names the page's steps below its section (breadcrumbs).
 */
export function appPage(title: string, frame: Frame, content: Html, options: { copyButtons?: boolean; trail?: Crumb[] } = {}): Html {
  const testMode = frame.current?.env === "test";
  return html`${head(title, options)}
<body class="${testMode ? "signed-in env-is-test" : "signed-in"}">
${skipLink}
${testMode ? html`<div class="test-banner" role="status"><strong>Test data</strong> · You are looking at the test environment. Nothing here touches live customers or live keys.</div>` : ""}
<header class="top">
${brand}
${workspaceSwitcher(frame)}
${envSwitch(frame)}
<div class="top-end">
<span class="who">${frame.email}</span>
<form method="post" action="${DASHBOARD}/sign-out">${csrfField(frame.csrf)}<button class="link-button" type="submit">Sign out</button></form>
</div>
</header>
<div class="shell">
${sideNav(frame)}
<main class="content" id="content">
${breadcrumbs(title, frame, options.trail)}
${new Html(labelTableCells(content.markup))}
</main>
</div>
</body>
</html>`;
}

/**
 * A value to paste elsewhere: a read-only field anyone can select, and a Copy button that
 * assets/copy.js shows and wires (the page must load it: appPage's `copyButtons`).
 */
export function copyField(id: string, label: string, value: string, words?: { copy: string; copied: string }): Html {
  // A page in another language names its button's two words (assets/copy.js reads data-copied); the dashboard's are English.
  const copied = words ? html` data-copied="${words.copied}"` : "";
  return html`<label for="${id}">${label}</label>
<div class="copy-row"><input id="${id}" class="key-reveal" readonly value="${value}"><button type="button" class="button" data-copy="${id}"${copied} hidden>${words?.copy ?? "Copy"}</button></div>`;
}

/**
 * The attributes of a table's box, which scrolls sideways when the table is wider than a
 * phone: a keyboard reaches and scrolls it (tabindex), and a screen reader names the stop
 * (WCAG 2.1.1; axe-core's scrollable-region-focusable).
 */
export const scrollBox = (label: string) => html` tabindex="0" role="region" aria-label="${label}"`;

/**
 * Under a form's date fields: a date field is the browser's own (its picker, a phone's
 * wheel), drawn in the browser's locale, which a page cannot set (mm/dd/yyyy in a US
 * browser), so the hint says so and how the pages write a day (issue 50; docs/decisions.md).
 */
export const dateFieldsHint = html`<p class="hint">Dates are typed in your browser's own format (month first, mm/dd/yyyy, in a US browser); the pages write them as 31 Oct 2026.</p>`;

export const csrfField = (token: string) => html`<input type="hidden" name="_csrf" value="${token}">`;

/** A page's title row, with an optional line under it. */
export function pageHeading(title: string, lede?: Html | string): Html {
  return html`<header class="page-head"><h1>${title}</h1>${lede ? html`<p class="lede">${lede}</p>` : ""}</header>`;
}

export function notice(kind: "success" | "error" | "info", body: Html | string, id?: string): Html {
  return html`<div class="notice notice-${kind}"${id ? html` id="${id}"` : ""} role="${kind === "error" ? "alert" : "status"}">${body}</div>`;
}

/*
 * A field's error is tied to its field, as GOV.UK's design system does it: the message
 * has an id, the field names it in aria-describedby and says aria-invalid, so a screen
 * reader reads the error with the field. `autofocus` moves focus to the field when the
 * page opens again with its error: the policy forbids inline script, and needs none.
 */
const errorIdOf = (fieldId: string) => `${fieldId}-error`;

/** The error message of the field `fieldId`, or nothing when it has none. */
export function fieldErrorNotice(fieldId: string, error: string | null | undefined): Html {
  return error ? notice("error", error, errorIdOf(fieldId)) : html``;
}

/** The attributes of a field with an error (its own `autofocus` too, when the field always takes focus). */
export function fieldErrorAttributes(fieldId: string, error: string | null | undefined, options: { autofocus?: boolean } = {}): Html {
  const focus = error || options.autofocus ? html` autofocus` : "";
  return error ? html` aria-invalid="true" aria-describedby="${errorIdOf(fieldId)}"${focus}` : html`${focus}`;
}

/**
 * A form's refusal, tied to the field it names: `fieldIds` maps the use case's `param`
 * (the error catalogue's, as the API answers it) to the id of the form's field. A refusal
 * naming no field of the form is a notice at its top, as before.
 */
export function formError(error: string | undefined, param: string | undefined, fieldIds: Record<string, string>) {
  const field = error && param !== undefined ? (fieldIds[param] ?? null) : null;
  return {
    notice: !error ? html`` : field ? fieldErrorNotice(field, error) : notice("error", error),
    /** The attributes of the field `id`: marked, described and focused when it is the one refused. */
    on: (id: string) => fieldErrorAttributes(id, id === field ? error : null),
  };
}

/** A limit that refused: which, with its figure, and when it resets (issue 35: never a bare "Slow down"). */
export function limitNotice(limited: { message: string; until: number }): Html {
  return notice("error", html`<strong>Limit reached:</strong> ${limited.message}. It resets ${time(limited.until)}.`);
}

export function emptyState(title: string, body: Html | string): Html {
  return html`<div class="empty"><p class="empty-title">${title}</p><p>${body}</p></div>`;
}

export function envBadge(env: Env): Html {
  return html`<span class="badge badge-${env}">${env === "test" ? "Test" : "Live"}</span>`;
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** `21 Nov 2026, 12:00 UTC`: one unambiguous form for every reader, whatever their locale. */
export function formatTime(ms: number): string {
  const d = new Date(ms);
  const hh = String(d.getUTCHours()).padStart(2, "0");
  const mm = String(d.getUTCMinutes()).padStart(2, "0");
  return `${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()}, ${hh}:${mm} UTC`;
}

export function time(ms: number): Html {
  return html`<time datetime="${new Date(ms).toISOString()}">${formatTime(ms)}</time>`;
}

export const formatCount = (n: number) => n.toLocaleString("en-GB");

/**
 * An amount in minor units in its currency's own format: 4900 eur is €49.00, 500 jpy is
 * ¥500 (a currency without decimals has no minor unit to divide by). A code Intl does not
 * know is shown as it is stored.
 */
export function formatMoney(minorUnits: number, currency: string): string {
  const format = currencyFormat(currency);
  if (format === null) return `${minorUnits} ${currency} (minor units)`;
  return format.full.format(minorUnits / 10 ** format.digits);
}
