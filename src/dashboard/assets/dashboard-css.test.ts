import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

// No database here: the stylesheet is the same file whichever one the server runs on.
const CSS = readFileSync(join(import.meta.dirname, "dashboard.css"), "utf8");
const PROPERTIES = new Map([...CSS.matchAll(/(--[a-z0-9-]+):\s*(#[0-9a-f]{3,6});/gi)].map((m) => [m[1] as string, m[2] as string]));

/** A colour as the stylesheet writes it (`var(--ink-3)` or `#fff`), resolved to its hex. */
function resolve(colour: string): string {
  const name = /^var\((--[a-z0-9-]+)\)$/.exec(colour)?.[1];
  const hex = name ? PROPERTIES.get(name) : colour;
  assert.ok(hex && /^#[0-9a-f]{3}([0-9a-f]{3})?$/i.test(hex), `${colour} is a colour of the stylesheet`);
  return hex;
}

/** WCAG 2.2's relative luminance and contrast ratio. */
function luminance(hex: string): number {
  const digits = hex.length === 4 ? [...hex.slice(1)].map((d) => d + d).join("") : hex.slice(1);
  const [r, g, b] = [0, 2, 4].map((i) => {
    const c = Number.parseInt(digits.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
function contrast(a: string, b: string): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

/** Each text colour of the stylesheet on each background it is shown on: [text, background, where]. */
const PAIRS: [string, string, string][] = [
  ["var(--ink)", "var(--panel)", "text in panels and cards"],
  ["var(--ink)", "var(--bg)", "text on the page"],
  ["var(--ink)", "#f1f3f5", "code, a button under the pointer"],
  ["var(--ink)", "var(--brand-soft)", "the workspace on screen in the switcher"],
  ["var(--ink-2)", "var(--panel)", "ledes, panel text, stat labels"],
  ["var(--ink-2)", "var(--bg)", "the empty state"],
  ["var(--ink-2)", "#fbfcfd", "side navigation"],
  ["var(--ink-2)", "#f1f3f5", "a disabled endpoint's badge, a side link under the pointer"],
  ["var(--ink-2)", "#f8f9fa", "read-only fields"],
  ["var(--ink-3)", "var(--panel)", "muted text, hints, table headings"],
  ["var(--ink-3)", "var(--bg)", "the card's foot line"],
  ["var(--ink-3)", "#fbfcfd", "side navigation headings"],
  ["var(--ink-3)", "#fafbfc", "muted text in a row under the pointer"],
  ["var(--ink-3)", "#f1f3f5", "a revoked key's badge"],
  ["var(--ink-3)", "#f8f9fa", "muted text in an attempt"],
  ["var(--ink-3)", "var(--brand-soft)", "a workspace's slug in the switcher"],
  ["var(--brand)", "var(--panel)", "links"],
  ["var(--brand)", "var(--bg)", "links on the page"],
  ["var(--brand)", "#fbfcfd", "links in the side navigation"],
  ["var(--brand)", "var(--brand-soft)", "the side link of this page, a pending badge"],
  ["var(--brand-ink)", "var(--brand)", "a primary button"],
  ["#fff", "#364fc7", "a primary button under the pointer"],
  ["#fff", "var(--brand)", "the brand mark"],
  ["#fff", "var(--danger)", "a dangerous button"],
  ["#fff", "var(--test)", "the test banner, Test chosen in the environment switch"],
  ["#fff", "var(--ok)", "Live chosen in the environment switch"],
  ["var(--danger)", "var(--panel)", "an outlined dangerous button, a tool lost"],
  ["var(--danger)", "var(--danger-soft)", "a failing endpoint's badge"],
  ["var(--ok)", "var(--panel)", "a tool gained"],
  ["var(--ok)", "var(--ok-soft)", "the live badge, a healthy endpoint's badge"],
  ["var(--ok)", "var(--brand-soft)", "the lightest background of all, as a margin"],
  ["var(--test)", "var(--test-soft)", "the test badge"],
  ["#862e2e", "var(--danger-soft)", "an error notice"],
];

test("every text colour on every background it is shown on is at least 4.5:1", () => {
  const failures = PAIRS.map(([text, background, where]) => ({ where, text, background, ratio: contrast(resolve(text), resolve(background)) })).filter(
    (pair) => pair.ratio < 4.5,
  );
  assert.deepEqual(
    failures.map((f) => `${f.text} on ${f.background} (${f.where}): ${f.ratio.toFixed(2)}`),
    [],
  );
});

test("every text colour the stylesheet uses is in the list of pairs, so a new one is checked too", () => {
  const used = new Set([...CSS.matchAll(/(?:^|[\s;{])color:\s*([^;]+);/g)].map((m) => (m[1] as string).trim()));
  const listed = new Set(PAIRS.map(([text]) => text));
  assert.deepEqual(
    [...used].filter((colour) => !listed.has(colour)),
    [],
  );
});

test("the contrast formula agrees with WCAG's published figures", () => {
  assert.equal(contrast("#000", "#fff").toFixed(2), "21.00");
  assert.equal(contrast("#777", "#fff").toFixed(2), "4.48");
  assert.equal(contrast("#7a8794", "#fff").toFixed(2), "3.67", "the old muted grey the issue measured");
});
