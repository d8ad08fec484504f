// Charts drawn on the server as SVG: no script, no inline style (the policy forbids both;
// SVG presentation attributes are markup, not style), and the numbers of every chart in a
// table under it, which is also what a screen reader reads. Pure functions of the series.
//
// Each chart is drawn twice, for a wide screen and for a phone, and the stylesheet shows
// one: an SVG scales its text with its width, and one drawing 800 units wide shrank its
// 13-unit labels to 5 px on a 390 px phone. The phone's has fewer date labels instead.
import { type Html, html } from "./html.js";
import { formatCount, formatMoney, scrollBox } from "./layout.js";
import { currencyDigits, currencyFormat } from "./money.js";

export type ChartGrain = "day" | "month";
/** One value at a date: a day `YYYY-MM-DD` or a month `YYYY-MM`, UTC. */
export interface ChartPoint {
  date: string;
  value: number;
}
/** What a chart's values count: things, or an amount in a currency's minor unit. */
export type ChartUnit = { kind: "count"; label: string } | { kind: "money"; currency: string };

/** Line colours and dash patterns: told apart by their dashes too, never by colour alone (WCAG 1.4.1). */
const TONES = [
  { stroke: "#3b5bdb", dash: "" },
  { stroke: "#c92a2a", dash: "2 3" },
  { stroke: "#1e7b34", dash: "8 3" },
  { stroke: "#c2410c", dash: "8 3 2 3" },
  { stroke: "#7048e8", dash: "1 2" },
] as const;
/** The previous period: grey and dashed, under the lines of this one. */
const PREVIOUS = { stroke: "#6c757d", dash: "5 4" } as const;

export interface ChartLine {
  name: string;
  points: readonly ChartPoint[];
  /** Bars only: drawn below the zero line (an outflow: contraction, churn, refunds); the table keeps the figure as it is. */
  below?: boolean;
  /** False: in the table only, not drawn (net beside its gross and refunds, which the bars show). */
  drawn?: boolean;
}

export interface ChartSpec {
  /** Unique on the page: the ids of the drawing's title and of the table derive from it. */
  id: string;
  title: string;
  unit: ChartUnit;
  grain: ChartGrain;
  /** The first is the chart's measure; the previous period is of it. */
  lines: readonly ChartLine[];
  /**
   * Lines for a level (MRR, active subscriptions: a value at each date), bars for a flow (what
   * happened in each day or month: one sale is a bar, not a spike between two zeros). Bars
   * draw no previous period; its figures stay in the table.
   */
  shape?: "lines" | "bars";
  /** The first line's measure over the period of equal length just before, point for point. */
  previous?: readonly ChartPoint[];
  /** The headline figure: the range's total (a flow) or its last value (a level), against the previous period's. */
  headline?: { value: number; previous: number; kind: "total" | "last" };
  /** What to do when there is nothing to draw yet. */
  empty: Html | string;
  /** The table as CSV. */
  csvHref?: string;
}

// ---------------------------------------------------------------------------------------
// Numbers and dates

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const MONTH_NAMES = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

function dateParts(date: string): { year: number; month: number; day: number | null } {
  const [y, m, d] = date.split("-");
  return { year: Number(y), month: Number(m) - 1, day: d === undefined ? null : Number(d) };
}

/** A point's date on the axis: `3 Nov` or `Nov` (the year is a line of its own, see `xLabels`). */
export function axisDate(date: string, grain: ChartGrain): string {
  const { month, day } = dateParts(date);
  return grain === "month" ? `${MONTHS[month]}` : `${day} ${MONTHS[month]}`;
}

/** A point's date in full: `3 Nov 2026` or `November 2026`. */
export function fullDate(date: string, grain: ChartGrain): string {
  const { year, month, day } = dateParts(date);
  return grain === "month" ? `${MONTH_NAMES[month]} ${year}` : `${day} ${MONTHS[month]} ${year}`;
}

/** A value in full, as the table shows it: `1,234` or `€1,234.00`. */
export function formatValue(unit: ChartUnit, value: number): string {
  return unit.kind === "money" ? formatMoney(value, unit.currency) : formatCount(value);
}

const COMPACT = new Intl.NumberFormat("en", { notation: "compact", maximumFractionDigits: 1 });

/** A value on the axis, short: `1.2K`, `€1.2K`, `€49`. Takes the unit's major value (see `toAxis`). */
export function formatAxis(unit: ChartUnit, major: number): string {
  if (unit.kind === "count") return COMPACT.format(major);
  return currencyFormat(unit.currency)?.compact.format(major) ?? `${COMPACT.format(major)} ${unit.currency}`;
}

/** A value in the unit the axis counts in: whole things, or the currency's major unit (euros, not cents). */
const toAxis = (unit: ChartUnit, value: number) => (unit.kind === "money" ? value / 10 ** (currencyDigits(unit.currency) ?? 2) : value);

/**
 * The change from the previous period, in words: `+12%`, `−5%`, `no change`, or `new` when
 * there was nothing before (no percentage of zero).
 */
export function changeOf(value: number, previous: number): string {
  if (value === previous) return "no change";
  if (previous === 0) return value > 0 ? "up from none" : "down from none";
  const percent = Math.round(((value - previous) / Math.abs(previous)) * 100);
  if (percent === 0) return value > previous ? "+<1%" : "−<1%";
  return percent > 0 ? `+${formatCount(percent)}%` : `−${formatCount(-percent)}%`;
}

/**
 * Round steps for an axis from `min` to `max` (both in the axis's unit), zero always
 * among them: about `target` steps of 1, 2 or 5 times a power of ten; whole numbers when
 * the unit counts things.
 */
export function niceTicks(min: number, max: number, target: number, whole: boolean): number[] {
  const lo = Math.min(0, min);
  let hi = Math.max(0, max);
  if (hi === lo) hi = lo + 1;
  const rough = (hi - lo) / target;
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const norm = rough / magnitude;
  let step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * magnitude;
  if (whole) step = Math.max(1, Math.round(step));
  const first = Math.floor(lo / step + 1e-9);
  const last = Math.ceil(hi / step - 1e-9);
  const ticks: number[] = [];
  for (let k = first; k <= last; k++) ticks.push(Number((k * step).toPrecision(12)));
  return ticks;
}

/** A date label on the x axis: where it is drawn, how it is anchored, how wide it is estimated, and the year under it. */
export interface XLabel {
  index: number;
  x: number;
  text: string;
  anchor: "start" | "middle" | "end";
  width: number;
  /** The year, under the first label and under the first of each new year. */
  year: string | null;
}

/** The width of a label in the drawing's units: system-ui's digits and lower case are about 0.6 em. */
const textWidth = (text: string, fontSize: number) => text.length * fontSize * 0.62;

/**
 * The date labels of an x axis that fit with a gap between each (`x` of point i given): the
 * first point's, then every `step`-th, the step the smallest whose labels do not overlap.
 * A label near an end is anchored at that end, so none is cut off. The year goes on a line
 * of its own, under the first label and the first of a new year, so it widens none.
 */
export function xLabels(dates: readonly string[], grain: ChartGrain, x: (i: number) => number, fontSize: number): XLabel[] {
  const n = dates.length;
  const gap = fontSize;
  const label = (i: number): XLabel => {
    const text = axisDate(dates[i] as string, grain);
    // As wide as the year that may go under it ("Dec" over "2025").
    const width = textWidth(text.length < 4 ? "0000" : text, fontSize);
    const at = x(i);
    const anchor = n === 1 ? "middle" : i === 0 || at - width / 2 < x(0) ? "start" : i === n - 1 || at + width / 2 > x(n - 1) ? "end" : "middle";
    return { index: i, x: at, text, anchor, width, year: null };
  };
  const span = (l: XLabel): [number, number] =>
    l.anchor === "start" ? [l.x, l.x + l.width] : l.anchor === "end" ? [l.x - l.width, l.x] : [l.x - l.width / 2, l.x + l.width / 2];
  for (let step = 1; step <= Math.max(1, n); step++) {
    const picked: XLabel[] = [];
    for (let i = 0; i < n; i += step) picked.push(label(i));
    const fits = picked.every((l, k) => k === 0 || span(picked[k - 1] as XLabel)[1] + gap <= span(l)[0]);
    if (!fits) continue;
    let year = "";
    for (const l of picked) {
      const y = (dates[l.index] as string).slice(0, 4);
      if (y !== year) l.year = y;
      year = y;
    }
    return picked;
  }
  return [];
}

// ---------------------------------------------------------------------------------------
// The drawing

interface Geometry {
  width: number;
  height: number;
  fontSize: number;
  yTicks: number;
}
/** The laptop's drawing is shown about 930 px wide (1.16 ×), the phone's about 310 px (0.86 ×): both draw text at 12 to 15 px. */
const WIDE: Geometry = { width: 800, height: 280, fontSize: 13, yTicks: 5 };
const NARROW: Geometry = { width: 360, height: 250, fontSize: 14, yTicks: 4 };

const round = (n: number) => Math.round(n * 10) / 10;

/** A bar's fill: the tone's colour, solid, hatched or outlined, so bars too are told apart by more than colour. */
const BAR_FILLS = ["solid", "hatched", "outline", "solid", "hatched"] as const;

function barFill(patternId: string, k: number): { defs: Html; fill: string; stroke: string } {
  const tone = TONES[k % TONES.length] as (typeof TONES)[number];
  const kind = BAR_FILLS[k % BAR_FILLS.length];
  if (kind === "solid") return { defs: html``, fill: tone.stroke, stroke: tone.stroke };
  if (kind === "outline") return { defs: html``, fill: "#ffffff", stroke: tone.stroke };
  return {
    defs: html`<pattern id="${patternId}" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="${tone.stroke}"/><line x1="0" y1="0" x2="0" y2="6" stroke="#ffffff" stroke-width="2.5"/></pattern>`,
    fill: `url(#${patternId})`,
    stroke: tone.stroke,
  };
}

/** The drawn lines of a chart: all of them, but those in its table only. */
const drawnLines = (spec: ChartSpec) => spec.lines.map((line, k) => ({ line, k })).filter(({ line }) => line.drawn !== false);

function drawing(spec: ChartSpec, g: Geometry, variant: "wide" | "narrow"): Html {
  const { unit } = spec;
  const bars = spec.shape === "bars";
  const dates = (spec.lines[0]?.points ?? []).map((p) => p.date);
  const n = dates.length;
  // A bar below zero is its figure negated; bars draw no previous period.
  const sign = (line: ChartLine) => (bars && line.below ? -1 : 1);
  const series = bars
    ? drawnLines(spec).map(({ line }) => line.points.map((p) => ({ ...p, value: sign(line) * p.value })))
    : [...spec.lines.map((l) => l.points), ...(spec.previous ? [spec.previous] : [])];
  const values = series.flatMap((points) => points.map((p) => toAxis(unit, p.value)));
  const ticks = niceTicks(Math.min(0, ...values), Math.max(0, ...values), g.yTicks, unit.kind === "count");
  const lo = ticks[0] as number;
  const hi = ticks[ticks.length - 1] as number;
  const tickTexts = ticks.map((t) => formatAxis(unit, t));
  const left = Math.ceil(Math.max(...tickTexts.map((t) => textWidth(t, g.fontSize)))) + 10;
  const right = 12;
  const top = 10;
  // Two lines under the plot: the dates, and the years under some of them.
  const bottom = g.fontSize * 3 + 6;
  const plotW = g.width - left - right;
  const plotH = g.height - top - bottom;
  // Bars sit in the middle of their day's slot; a line's points run from edge to edge.
  const x = (i: number) => round(bars ? left + ((i + 0.5) * plotW) / Math.max(1, n) : n <= 1 ? left + plotW / 2 : left + (i * plotW) / (n - 1));
  const y = (v: number) => round(top + plotH - ((v - lo) / (hi - lo)) * plotH);
  const id = `${spec.id}-${variant}`;
  const path = (points: readonly ChartPoint[]) => points.map((p, i) => `${x(i)},${y(toAxis(unit, p.value))}`).join(" ");
  const dots = n <= 14;
  const line = (points: readonly ChartPoint[], tone: { stroke: string; dash: string }, width: number) =>
    html`<polyline points="${path(points)}" fill="none" stroke="${tone.stroke}" stroke-width="${width}" stroke-linejoin="round" stroke-linecap="round"${tone.dash ? html` stroke-dasharray="${tone.dash}"` : ""}/>${
      dots || points.length === 1 ? points.map((p, i) => html`<circle cx="${x(i)}" cy="${y(toAxis(unit, p.value))}" r="3.5" fill="${tone.stroke}"/>`) : ""
    }`;
  const grid = ticks.map(
    (t, k) =>
      html`<line x1="${left}" x2="${g.width - right}" y1="${y(t)}" y2="${y(t)}" stroke="${t === 0 ? "#5f6b78" : "#e3e8ee"}" stroke-width="1"/><text x="${left - 8}" y="${y(t)}" dy="0.35em" text-anchor="end">${tickTexts[k]}</text>`,
  );
  const labels = xLabels(dates, spec.grain, x, g.fontSize).map(
    (l) =>
      html`<line x1="${l.x}" x2="${l.x}" y1="${top + plotH}" y2="${top + plotH + 4}" stroke="#5f6b78"/><text x="${l.x}" y="${top + plotH + g.fontSize + 6}" text-anchor="${l.anchor}">${l.text}</text>${
        l.year ? html`<text x="${l.x}" y="${top + plotH + g.fontSize * 2 + 8}" text-anchor="${l.anchor}">${l.year}</text>` : ""
      }`,
  );
  return html`<svg class="chart-svg chart-${variant}" viewBox="0 0 ${g.width} ${g.height}" role="img" aria-labelledby="${id}-title ${id}-desc" font-size="${g.fontSize}" fill="#5f6b78">
<title id="${id}-title">${spec.title}</title>
<desc id="${id}-desc">${describe(spec)}</desc>
${grid}
${labels}
${
  bars
    ? barGroups(spec, id, x, y, unit, plotW / Math.max(1, n))
    : html`${spec.previous && spec.previous.length > 0 ? line(spec.previous, PREVIOUS, 1.5) : ""}
${spec.lines.map((l, k) => line(l.points, TONES[k % TONES.length] as (typeof TONES)[number], k === 0 ? 2.5 : 2))}`
}
${bars ? html`<line x1="${left}" x2="${g.width - right}" y1="${y(0)}" y2="${y(0)}" stroke="#5f6b78" stroke-width="1"/>` /* the zero line again, over the bars that start on it */ : ""}
</svg>`;
}

/** Each date's bars side by side in its slot (80% of it), from the zero line up, or down for an outflow. */
function barGroups(spec: ChartSpec, id: string, x: (i: number) => number, y: (v: number) => number, unit: ChartUnit, slot: number): Html {
  const drawn = drawnLines(spec);
  const group = slot * 0.8;
  const width = group / Math.max(1, drawn.length);
  const gap = width > 4 ? 1 : 0;
  return html`${drawn.map(({ line, k }, j) => {
    const fill = barFill(`${id}-bar-${k}`, k);
    return html`${fill.defs}${line.points.map((p, i) => {
      if (p.value === 0) return "";
      const top = y(toAxis(unit, line.below ? -p.value : p.value));
      const zero = y(0);
      return html`<rect x="${round(x(i) - group / 2 + j * width)}" y="${Math.min(top, zero)}" width="${round(Math.max(0.5, width - gap))}" height="${round(Math.max(0.5, Math.abs(zero - top)))}" fill="${fill.fill}" stroke="${fill.stroke}" stroke-width="1"/>`;
    })}`;
  })}`;
}

/** What the drawing shows, in a sentence: its range, its headline and the change. */
function describe(spec: ChartSpec): string {
  const points = spec.lines[0]?.points ?? [];
  const first = points[0];
  const last = points[points.length - 1];
  if (!first || !last) return "No figures.";
  const range = first === last ? fullDate(first.date, spec.grain) : `${fullDate(first.date, spec.grain)} to ${fullDate(last.date, spec.grain)}`;
  const headline = spec.headline ? ` ${headlineText(spec)}.` : "";
  return `${range}, by ${spec.grain}.${headline} The figures are in the table below.`;
}

function headlineText(spec: ChartSpec): string {
  const h = spec.headline;
  if (!h) return "";
  const what = h.kind === "total" ? "in the range" : "at the end of the range";
  return `${formatValue(spec.unit, h.value)} ${what}, ${changeOf(h.value, h.previous)} on the previous period (${formatValue(spec.unit, h.previous)})`;
}

/** A small sample of a line, for the legend. */
function swatch(tone: { stroke: string; dash: string }): Html {
  return html`<svg class="legend-swatch" viewBox="0 0 28 10" width="28" height="10" aria-hidden="true"><line x1="1" x2="27" y1="5" y2="5" stroke="${tone.stroke}" stroke-width="2.5"${tone.dash ? html` stroke-dasharray="${tone.dash}"` : ""}/></svg>`;
}

/** A small sample of a bar, for the legend. */
function barSwatch(spec: ChartSpec, k: number): Html {
  const fill = barFill(`${spec.id}-legend-${k}`, k);
  return html`<svg class="legend-swatch" viewBox="0 0 14 14" width="14" height="14" aria-hidden="true">${fill.defs}<rect x="1" y="1" width="12" height="12" fill="${fill.fill}" stroke="${fill.stroke}" stroke-width="1.5"/></svg>`;
}

function legend(spec: ChartSpec): Html {
  if (spec.shape === "bars") {
    return html`<ul class="chart-legend" aria-hidden="true">
${drawnLines(spec).map(({ line, k }) => html`<li>${barSwatch(spec, k)}${line.name}${line.below ? " (below zero)" : ""}</li>`)}
</ul>`;
  }
  const prev = spec.previous;
  const prevRange =
    prev && prev.length > 0
      ? ` (${fullDate((prev[0] as ChartPoint).date, spec.grain)} to ${fullDate((prev[prev.length - 1] as ChartPoint).date, spec.grain)})`
      : "";
  return html`<ul class="chart-legend" aria-hidden="true">
${spec.lines.map((l, k) => html`<li>${swatch(TONES[k % TONES.length] as (typeof TONES)[number])}${l.name}</li>`)}
${prev && prev.length > 0 ? html`<li>${swatch(PREVIOUS)}${spec.lines[0]?.name ?? ""}, previous period${prevRange}</li>` : ""}
</ul>`;
}

/** Rows beyond which the table folds behind its summary: a 90-day table is a long scroll past the next chart. */
const OPEN_ROWS = 14;

/** The chart's numbers: a row per date, a column per line, then the previous period's date and value. */
export function chartTable(spec: ChartSpec): Html {
  const points = spec.lines[0]?.points ?? [];
  const prev = spec.previous ?? [];
  const main = spec.lines[0]?.name ?? "";
  const table = html`<div class="table-wrap"${scrollBox(`${spec.title}: the figures`)}><table class="figures-table">
<caption class="sr-only">${spec.title}, by ${spec.grain}</caption>
<thead><tr><th scope="col">${spec.grain === "month" ? "Month" : "Day"}</th>${spec.lines.map((l) => html`<th scope="col" class="num">${l.name}</th>`)}${
    prev.length > 0 ? html`<th scope="col">Previous period</th><th scope="col" class="num">${main}, then</th>` : ""
  }</tr></thead>
<tbody>${points.map((p, i) => {
    const before = prev[i];
    return html`<tr><th scope="row">${fullDate(p.date, spec.grain)}</th>${spec.lines.map((l) => html`<td class="num">${formatValue(spec.unit, l.points[i]?.value ?? 0)}</td>`)}${
      prev.length > 0
        ? html`<td>${before ? fullDate(before.date, spec.grain) : ""}</td><td class="num">${before ? formatValue(spec.unit, before.value) : ""}</td>`
        : ""
    }</tr>`;
  })}</tbody>
</table></div>`;
  const rows = points.length;
  return html`<details class="chart-figures"${rows <= OPEN_ROWS ? html` open` : ""}>
<summary>The figures, ${spec.grain} by ${spec.grain} (${formatCount(rows)} ${rows === 1 ? "row" : "rows"})</summary>
${table}
</details>`;
}

const isQuiet = (points: readonly ChartPoint[] | undefined) => (points ?? []).every((p) => p.value === 0);

/**
 * A chart in its panel: the title and headline (with the change from the previous period),
 * the legend, the drawing at two widths, a note when there are too few figures to show a
 * trend, the table and its CSV. With nothing in this period or the one before, the panel
 * says what to do instead of drawing an empty frame.
 */
export function chartPanel(spec: ChartSpec): Html {
  const points = spec.lines[0]?.points ?? [];
  const head = html`<div class="panel-head"><h2 id="${spec.id}">${spec.title}</h2>${spec.csvHref ? html`<a class="button small" href="${spec.csvHref}" download>Download CSV<span class="sr-only"> of ${spec.title}</span></a>` : ""}</div>`;
  if (points.length === 0 || (spec.lines.every((l) => isQuiet(l.points)) && isQuiet(spec.previous))) {
    return html`<section class="panel chart" aria-labelledby="${spec.id}">${head}<div class="empty"><p class="empty-title">Nothing yet in this range</p><p>${spec.empty}</p></div></section>`;
  }
  const withFigures = points.filter((_, i) => spec.lines.some((l) => (l.points[i]?.value ?? 0) !== 0)).length;
  const few =
    points.length === 1
      ? html`<p class="chart-note">One ${spec.grain} only: choose a longer range to see a trend.</p>`
      : withFigures === 1
        ? html`<p class="chart-note">Only one ${spec.grain} of this range has figures so far; the ${spec.shape === "bars" ? "bars fill" : "line fills"} in as they come.</p>`
        : "";
  const headline = spec.headline
    ? html`<p class="chart-headline"><strong>${formatValue(spec.unit, spec.headline.value)}</strong> <span class="chart-change">${changeOf(spec.headline.value, spec.headline.previous)}</span> <span class="muted">${spec.headline.kind === "total" ? "in the range" : "at its end"}, against ${formatValue(spec.unit, spec.headline.previous)} in the previous period</span></p>`
    : "";
  return html`<section class="panel chart" aria-labelledby="${spec.id}">${head}
${headline}
${legend(spec)}
<div class="chart-frame">${drawing(spec, WIDE, "wide")}${drawing(spec, NARROW, "narrow")}</div>
${few}
${chartTable(spec)}
</section>`;
}
