import { type Brand, brandPaths, MAX_LOGO_BYTES, MIN_ACCENT_CONTRAST } from "../../customer-pages/branding.service.js";
import { LANGUAGE_NAMES, LANGUAGES } from "../../i18n/locales.js";
import { type Html, html } from "../shared/html.js";
import { appPage, csrfField, currentSectionPath, type Frame, fieldErrorAttributes, fieldErrorNotice, notice, pageHeading } from "../shared/layout.js";

export const brandingPath = (frame: Frame) => currentSectionPath(frame, "branding");

export type BrandingFlash = "accent" | "logo" | "logo-removed" | "language";

export interface BrandingForm {
  field: "accent" | "logo" | "language";
  error: string;
  /** The colour as typed, shown again with its error. */
  accent?: string;
}

const FLASH: Record<BrandingFlash, string> = {
  accent: "The accent colour is saved. Your customer pages show it from their next load.",
  logo: "The logo is saved. Your customer pages show it from their next load.",
  "logo-removed": "The logo is removed. Your customer pages show the workspace's name alone.",
  language: "The default language is saved. Buyers whose browser asks for no language your pages speak see this one.",
};

/**
 * A colour's sample: an SVG rectangle whose `fill` is a presentation attribute, not an
 * inline style, so the content-security policy needs no exception. The value is a
 * checked `#rrggbb`.
 */
const swatch = (colour: string) =>
  html`<svg class="swatch" width="28" height="28" viewBox="0 0 28 28" aria-hidden="true"><rect width="28" height="28" rx="6" fill="${colour}"/></svg>`;

/** The customer pages' colour when the workspace sets none: the stylesheet's `--brand`. */
const WARDEN_BLUE = "#3b5bdb";

/**
 * How the customer pages look with what is saved: their top bar (the logo and the
 * workspace's name), a link and a primary button, drawn as SVG, so the accent is a `fill`
 * attribute and the policy needs no inline style or script. From the saved values, not
 * from what is being typed: a preview that followed the field would need a script.
 */
function preview(name: string, accent: string, logo: string | null): Html {
  const textX = logo ? 64 : 16;
  return html`<svg class="brand-preview" viewBox="0 0 360 150" role="img" aria-labelledby="brand-preview-title">
<title id="brand-preview-title">Your customer pages with this branding: the top bar${logo ? ", your logo" : ""} and ${name}, a link and a button in ${accent}</title>
<rect width="360" height="150" rx="8" fill="#ffffff" stroke="#dee2e6"/>
<rect x="0.5" y="0.5" width="359" height="44" rx="8" fill="#f8f9fa" stroke="#dee2e6"/>
${logo ? html`<image href="${logo}" x="14" y="8" width="40" height="28" preserveAspectRatio="xMidYMid meet"/>` : ""}
<text x="${textX}" y="27" font-size="15" font-weight="600" fill="#1b2733">${name}</text>
<text x="16" y="74" font-size="13" fill="${accent}" text-decoration="underline">Manage your purchases</text>
<rect x="16" y="94" width="120" height="40" rx="6" fill="${accent}"/>
<text x="76" y="119" font-size="14" font-weight="600" fill="#ffffff" text-anchor="middle">Buy</text>
</svg>`;
}

export function brandingView(frame: Frame, input: { brand: Brand | null; flash?: BrandingFlash; form?: BrandingForm }): Html {
  const { brand, form } = input;
  const slug = frame.current?.workspace.slug ?? "";
  const paths = brand ? brandPaths(slug, brand) : { stylesheet: null, logo: null };
  const accentError = form?.field === "accent" ? form.error : undefined;
  const logoError = form?.field === "logo" ? form.error : undefined;
  const languageError = form?.field === "language" ? form.error : undefined;
  const accentValue = form?.accent ?? brand?.accent ?? "";
  const base = brandingPath(frame);
  return appPage(
    "Branding",
    frame,
    html`${pageHeading("Branding", "How your customer pages (sign in, plans, trial, manage) look: your workspace's name, and optionally a logo, an accent colour and the language they speak by default. One branding for both environments.")}
${input.flash ? notice("success", FLASH[input.flash]) : ""}
<section class="panel">
<div class="panel-head"><h2>Preview</h2></div>
<p class="panel-text">Your customer pages as saved now; save a change to see it here.</p>
${preview(frame.current?.workspace.name ?? "", brand?.accent ?? WARDEN_BLUE, paths.logo)}
</section>
<section class="panel">
<div class="panel-head"><h2>Accent colour</h2></div>
<p class="panel-text">Buttons, links and the top bar of your customer pages. Buttons carry white text, so the colour must have a contrast of at least ${MIN_ACCENT_CONTRAST}:1 with white (WCAG AA): a darker colour.</p>
<p class="panel-text">Now: ${brand?.accent ? html`${swatch(brand.accent)} <code>${brand.accent}</code>` : html`<span class="muted">Warden's blue (none set)</span>`}</p>
<form method="post" action="${base}/accent" class="inline-form">
${csrfField(frame.csrf)}
<div class="field"><label for="accent">Colour in hex</label>
<input id="accent" name="accent" maxlength="7" spellcheck="false" autocomplete="off" placeholder="#3b5bdb" value="${accentValue}"${fieldErrorAttributes("accent", accentError)}>
</div>
<button class="button primary" type="submit">Save colour</button>
</form>
<p class="hint">Leave it empty and save to go back to Warden's blue.</p>
${fieldErrorNotice("accent", accentError)}
</section>
<section class="panel">
<div class="panel-head"><h2>Logo</h2></div>
<p class="panel-text">Shown beside your workspace's name. PNG, JPEG or WebP, at most ${MAX_LOGO_BYTES / 1024} KiB; about 64 px high looks best. SVG is refused: it can carry script.</p>
${paths.logo ? html`<p class="logo-preview"><img src="${paths.logo}" alt="Your current logo" height="48"></p>` : html`<p class="panel-text muted">No logo: your pages show the workspace's name alone.</p>`}
<form method="post" action="${base}/logo" enctype="multipart/form-data" class="inline-form">
${csrfField(frame.csrf)}
<div class="field"><label for="logo">Image file</label>
<input id="logo" name="logo" type="file" accept="image/png,image/jpeg,image/webp" required${fieldErrorAttributes("logo", logoError)}>
</div>
<button class="button primary" type="submit">Upload logo</button>
</form>
${fieldErrorNotice("logo", logoError)}
${
  paths.logo
    ? html`<form method="post" action="${base}/logo/remove" class="row logo-remove">${csrfField(frame.csrf)}<button class="button danger-outline" type="submit">Remove the logo</button></form>`
    : ""
}
</section>
<section class="panel">
<div class="panel-head"><h2>Default language</h2></div>
<p class="panel-text">Your customer pages speak the language the buyer's extension or browser asks for. When it asks for none of theirs, they speak this one; with none set, English.</p>
<form method="post" action="${base}/language" class="inline-form">
${csrfField(frame.csrf)}
<div class="field"><label for="language">Language</label>
<select id="language" name="language"${fieldErrorAttributes("language", languageError)}>
<option value=""${brand?.language ? "" : html` selected`}>None (English)</option>
${LANGUAGES.map((tag) => html`<option value="${tag}" lang="${tag}"${brand?.language === tag ? html` selected` : ""}>${LANGUAGE_NAMES[tag]} (${tag})</option>`)}
</select>
</div>
<button class="button primary" type="submit">Save language</button>
</form>
${fieldErrorNotice("language", languageError)}
</section>`,
  );
}
