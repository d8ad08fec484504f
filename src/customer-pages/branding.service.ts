// A workspace's branding on its hosted customer pages: an accent colour, a logo and the
// pages' default language, set by an owner under Configure (or by `warden admin workspace
// update --accent --logo --language`). What is
// refused, and why: a colour under 4.5:1 with the white text of buttons on it (WCAG 2.2
// AA, 1.4.3; links in the accent on white have the same ratio), and any logo but PNG,
// JPEG or WebP, recognised by its bytes, not by its name or declared type. SVG above all:
// it is a document that can carry script and links, served from Warden's own origin.
import { type Actor, recordAction } from "../audit/audit.service.js";
import { invalidParameter } from "../errors/errors.js";
import { LANGUAGES, type Language } from "../i18n/locales.js";
import type { Services } from "../services.js";
import { findWorkspaceBySlug } from "../workspaces/workspace.store.js";
import type { Workspace } from "../workspaces/workspace.types.js";
import { requireWorkspace } from "../workspaces/workspace-lookup.service.js";
import { type Brand, findBrand, findLogo, type LogoType, type StoredLogo, saveBrand } from "./branding.store.js";

export type { Brand, StoredLogo };

/** Bigger than any logo a top bar needs (a 512 px PNG is some tens of kilobytes), small enough to keep in a row. */
export const MAX_LOGO_BYTES = 256 * 1024;
export const MIN_ACCENT_CONTRAST = 4.5;

const channel = (value: number) => {
  const c = value / 255;
  return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
};
const luminance = (hex: string) => {
  const n = Number.parseInt(hex.slice(1), 16);
  return 0.2126 * channel((n >> 16) & 255) + 0.7152 * channel((n >> 8) & 255) + 0.0722 * channel(n & 255);
};

/** WCAG's contrast ratio of two `#rrggbb` colours, 1 to 21. */
export function contrastRatio(a: string, b: string): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

/** `#3b5bdb`, `3B5BDB` or `#35d` as `#3b5bdb`; "" clears the accent (null). */
export function parseAccent(raw: string): string | null {
  const text = raw.trim().toLowerCase().replace(/^#/, "");
  if (text === "") return null;
  const full = /^[0-9a-f]{3}$/.test(text) ? [...text].map((c) => c + c).join("") : text;
  if (!/^[0-9a-f]{6}$/.test(full)) throw invalidParameter("accent", "The accent must be a colour in hex, such as #3b5bdb.");
  const accent = `#${full}`;
  const ratio = contrastRatio(accent, "#ffffff");
  if (ratio < MIN_ACCENT_CONTRAST) {
    throw invalidParameter(
      "accent",
      `White text on ${accent} has a contrast of ${ratio.toFixed(2)}:1, under the ${MIN_ACCENT_CONTRAST}:1 that people with low vision need (WCAG AA); choose a darker colour.`,
    );
  }
  return accent;
}

/** The image's type from its first bytes (its signature), or a refusal saying what is accepted. */
export function logoTypeOf(bytes: Buffer): LogoType {
  if (bytes.length === 0) throw invalidParameter("logo", "Choose an image file for the logo.");
  if (bytes.length > MAX_LOGO_BYTES) {
    throw invalidParameter("logo", `The logo is ${Math.ceil(bytes.length / 1024)} KiB; it may be ${MAX_LOGO_BYTES / 1024} KiB at most.`);
  }
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return "image/png";
  if (bytes.subarray(0, 3).equals(Buffer.from([0xff, 0xd8, 0xff]))) return "image/jpeg";
  if (bytes.subarray(0, 4).toString("latin1") === "RIFF" && bytes.subarray(8, 12).toString("latin1") === "WEBP") return "image/webp";
  if (/^\s*(<\?xml|<svg|<!doctype svg)/i.test(bytes.subarray(0, 256).toString("latin1"))) {
    throw invalidParameter("logo", "SVG logos are refused: an SVG can carry script. Upload a PNG, JPEG or WebP image.");
  }
  throw invalidParameter("logo", "The logo must be a PNG, JPEG or WebP image.");
}

/**
 * `de`, `pt-BR` (any case) as the language's tag; "" clears it (null: English). Only a
 * language with its place in the picker: a default is a promise to every buyer whose
 * browser names none Warden speaks, so it is refused rather than read loosely (`de-AT`).
 */
export function parseLanguage(raw: string): Language | null {
  const text = raw.trim();
  if (text === "") return null;
  const found = LANGUAGES.find((tag) => tag.toLowerCase() === text.toLowerCase());
  if (!found) throw invalidParameter("language", `The language must be one of ${LANGUAGES.join(", ")}; "${text.slice(0, 40)}" is not one.`);
  return found;
}

export interface BrandingChange {
  workspace: string;
  /** The colour as typed ("" clears it); undefined keeps it. */
  accent?: string;
  /** The image's bytes, or null to remove it; undefined keeps it. */
  logo?: Buffer | null;
  /** The pages' default language as a tag ("" clears it: English); undefined keeps it. */
  language?: string;
}

/** Changes the accent, the logo or the language (each checked first, nothing written on a refusal), audited when an owner does it. */
export async function updateBranding(services: Services, change: BrandingChange, actor?: Actor): Promise<Brand> {
  const { db, clock } = services;
  const workspace = await requireWorkspace(db, change.workspace);
  if (change.accent === undefined && change.logo === undefined && change.language === undefined) {
    throw invalidParameter("accent", "Nothing to change: give an accent colour, a logo or a language.");
  }
  const accent = change.accent === undefined ? undefined : parseAccent(change.accent);
  const language = change.language === undefined ? undefined : parseLanguage(change.language);
  const logo = change.logo === undefined || change.logo === null ? change.logo : { bytes: change.logo, type: logoTypeOf(change.logo) };
  return db.transaction().execute(async (trx) => {
    const now = clock.now();
    const before = await findBrand(trx, workspace.id);
    // Newer than any earlier version even when the clock has not moved: the addresses that carry it must change.
    const version = Math.max(now, (before?.version ?? 0) + 1);
    await saveBrand(
      trx,
      workspace.id,
      { ...(accent === undefined ? {} : { accent }), ...(logo === undefined ? {} : { logo }), ...(language === undefined ? {} : { language }) },
      { version, now },
    );
    if (actor) {
      const subject = [accent === undefined ? null : "accent", logo === undefined ? null : "logo", language === undefined ? null : "language"]
        .filter((s) => s !== null)
        .join(",");
      await recordAction(trx, actor, { action: "workspace.branding_changed", workspaceId: workspace.id, env: null, subject }, now);
    }
    return {
      accent: accent === undefined ? (before?.accent ?? null) : accent,
      logoType: logo === undefined ? (before?.logoType ?? null) : (logo?.type ?? null),
      version,
      language: language === undefined ? (before?.language ?? null) : language,
    };
  });
}

/** The branding of a workspace, or none set. */
export async function brandOf(services: Services, workspace: Pick<Workspace, "id">): Promise<Brand | null> {
  return findBrand(services.db, workspace.id);
}

/** The branding of the workspace with this slug, for its stylesheet's route; null for none or no such workspace. */
export async function brandOfSlug(services: Services, slug: string): Promise<Brand | null> {
  const workspace = await findWorkspaceBySlug(services.db, slug);
  return workspace ? findBrand(services.db, workspace.id) : null;
}

/** The logo's bytes, for its route only; null for none or no such workspace. */
export async function logoOfSlug(services: Services, slug: string): Promise<StoredLogo | null> {
  const workspace = await findWorkspaceBySlug(services.db, slug);
  return workspace ? findLogo(services.db, workspace.id) : null;
}

/** Where a workspace's pages find its branding; the version in the query lets browsers keep both for good. */
export const brandPaths = (slug: string, brand: Brand) => ({
  stylesheet: brand.accent === null ? null : `/c/${encodeURIComponent(slug)}/brand.css?v=${brand.version}`,
  logo: brand.logoType === null ? null : `/c/${encodeURIComponent(slug)}/logo?v=${brand.version}`,
});

/** A light tint of the accent that the accent as text still reads on (4.5:1), for highlighted rows; white when none does. */
function softTint(accent: string): string {
  const n = Number.parseInt(accent.slice(1), 16);
  for (const share of [0.1, 0.07, 0.04]) {
    const mix = (shift: number) => Math.round(255 - (255 - ((n >> shift) & 255)) * share);
    const tint = `#${[16, 8, 0].map((shift) => mix(shift).toString(16).padStart(2, "0")).join("")}`;
    if (contrastRatio(accent, tint) >= MIN_ACCENT_CONTRAST) return tint;
  }
  return "#ffffff";
}

/** The per-workspace stylesheet: the accent overrides the pages' brand colours, so no inline style is needed. */
export function brandStylesheet(brand: Brand): string {
  if (brand.accent === null) return "/* no accent set */\n";
  // Hovered, a primary button darkens: darker only raises its contrast with the white text.
  const n = Number.parseInt(brand.accent.slice(1), 16);
  const darker = `#${[16, 8, 0]
    .map((shift) =>
      Math.round(((n >> shift) & 255) * 0.85)
        .toString(16)
        .padStart(2, "0"),
    )
    .join("")}`;
  return `:root {\n  --brand: ${brand.accent};\n  --brand-ink: #fff;\n  --brand-soft: ${softTint(brand.accent)};\n}\n.button.primary:hover {\n  background: ${darker};\n}\n`;
}
