import assert from "node:assert/strict";
import { describe, test } from "node:test";
// No database here: a chart is a pure function of its series, the same over either engine.
import { axisDate, type ChartPoint, type ChartSpec, changeOf, chartPanel, formatAxis, formatValue, fullDate, niceTicks, xLabels } from "./charts.js";

const days = (first: string, values: number[]): ChartPoint[] =>
  values.map((value, i) => ({ date: new Date(Date.parse(`${first}T00:00:00Z`) + i * 86_400_000).toISOString().slice(0, 10), value }));

const spec = (over: Partial<ChartSpec> = {}): ChartSpec => ({
  id: "net",
  title: "Net revenue",
  unit: { kind: "money", currency: "eur" },
  grain: "day",
  lines: [{ name: "Net", points: days("2026-11-01", [4900, 0, 9800]) }],
  previous: days("2026-10-29", [0, 4900, 0]),
  headline: { value: 14700, previous: 4900, kind: "total" },
  empty: "Connect Stripe to see revenue.",
  ...over,
});

/** The attributes of every element named `tag` in the markup. */
const elements = (markup: string, tag: string) => [...markup.matchAll(new RegExp(`<${tag}\\b([^>]*)>`, "g"))].map((m) => m[1] as string);

describe("chart axes", () => {
  test("ticks are round steps that include zero and cover the values", () => {
    assert.deepEqual(niceTicks(0, 97, 5, true), [0, 20, 40, 60, 80, 100]);
    assert.deepEqual(niceTicks(0, 3, 4, true), [0, 1, 2, 3]);
    assert.deepEqual(niceTicks(0, 0, 4, true), [0, 1], "all zero: an axis from 0 to 1");
    assert.deepEqual(niceTicks(0, 0.98, 4, false), [0, 0.5, 1], "euros: steps below one are fine");
    assert.deepEqual(niceTicks(-49, 98, 5, false), [-50, 0, 50, 100], "a negative net: the axis goes below zero");
    assert.deepEqual(niceTicks(12, 12, 4, true), [0, 5, 10, 15], "one value: from zero to above it");
    for (const [lo, hi] of [
      [0, 1234567],
      [-5, 5],
      [0, 0.07],
    ] as const) {
      const ticks = niceTicks(lo, hi, 5, false);
      assert.ok(ticks.includes(0), `${lo}..${hi}: zero is a tick`);
      assert.ok((ticks[0] as number) <= lo && (ticks[ticks.length - 1] as number) >= hi, `${lo}..${hi}: covered by ${ticks}`);
      assert.ok(ticks.length >= 3 && ticks.length <= 12, `${lo}..${hi}: ${ticks.length} ticks`);
    }
    assert.ok(
      niceTicks(0, 3, 5, true).every((t) => Number.isInteger(t)),
      "a count's ticks are whole",
    );
  });

  test("values on the axis are short, in the table in full, in the currency's own format", () => {
    assert.equal(formatAxis({ kind: "money", currency: "eur" }, 1200), "€1.2K");
    assert.equal(formatAxis({ kind: "money", currency: "usd" }, 49), "$49");
    assert.equal(formatAxis({ kind: "money", currency: "jpy" }, 500), "¥500");
    assert.equal(formatAxis({ kind: "count", label: "people" }, 12500), "12.5K");
    assert.equal(formatValue({ kind: "money", currency: "eur" }, 4900), "€49.00");
    assert.equal(formatValue({ kind: "money", currency: "jpy" }, 500), "¥500", "no minor unit to divide by");
    assert.equal(formatValue({ kind: "money", currency: "eur" }, -4900), "-€49.00");
    assert.equal(formatValue({ kind: "count", label: "people" }, 1234), "1,234");
  });

  test("dates: a day or a month, on the axis and in full", () => {
    assert.equal(axisDate("2026-11-03", "day"), "3 Nov");
    assert.equal(axisDate("2026-11", "month"), "Nov");
    assert.equal(fullDate("2026-11-03", "day"), "3 Nov 2026");
    assert.equal(fullDate("2026-11", "month"), "November 2026");
  });

  test("the change from the previous period, never a percentage of zero", () => {
    assert.equal(changeOf(112, 100), "+12%");
    assert.equal(changeOf(95, 100), "−5%");
    assert.equal(changeOf(100, 100), "no change");
    assert.equal(changeOf(5, 0), "up from none");
    assert.equal(changeOf(-5, 10), "−150%");
    assert.equal(changeOf(1001, 1000), "+<1%");
  });

  test("date labels never overlap, whatever the number of points; the first and the last stay inside the drawing", () => {
    for (const fontSize of [13, 14]) {
      for (const width of [300, 760]) {
        for (const n of [1, 2, 7, 30, 31, 90, 365]) {
          const dates = days("2026-01-01", new Array(n).fill(0)).map((p) => p.date);
          const x = (i: number) => (n === 1 ? width / 2 : (i * width) / (n - 1));
          const labels = xLabels(dates, "day", x, fontSize);
          assert.ok(labels.length >= 1, `${n} points: a label`);
          assert.equal(labels[0]?.index, 0, "the first point is labelled");
          const spans = labels.map((l) =>
            l.anchor === "start" ? [l.x, l.x + l.width] : l.anchor === "end" ? [l.x - l.width, l.x] : [l.x - l.width / 2, l.x + l.width / 2],
          );
          for (let k = 1; k < spans.length; k++) {
            assert.ok((spans[k - 1]?.[1] as number) < (spans[k]?.[0] as number), `${n} points at ${width}: labels ${k - 1} and ${k} overlap`);
          }
          if (n > 1) for (const [a, b] of spans) assert.ok((a as number) >= 0 && (b as number) <= width, `${n} points at ${width}: a label outside`);
          if (n <= 7 && width === 760) assert.equal(labels.length, n, `${n} days fit every label on a wide screen`);
        }
      }
    }
    const months = ["2026-01", "2026-02", "2026-03", "2026-04", "2026-05", "2026-06", "2026-07", "2026-08", "2026-09", "2026-10", "2026-11", "2026-12"];
    const labels = xLabels(months, "month", (i) => (i * 700) / 11, 13);
    assert.equal(labels.length, 12, "twelve months fit on a wide screen");
    assert.deepEqual(
      labels.map((l) => l.year),
      ["2026", null, null, null, null, null, null, null, null, null, null, null],
      "the first names its year, on a line of its own",
    );
    const turn = xLabels(["2026-11", "2026-12", "2027-01", "2027-02"], "month", (i) => i * 200, 13);
    assert.deepEqual(
      turn.map((l) => `${l.text} ${l.year ?? ""}`.trim()),
      ["Nov 2026", "Dec", "Jan 2027", "Feb"],
    );
  });
});

describe("chart panel", () => {
  test("draws the lines, the previous period dashed, a legend, and the figures in a table", () => {
    const markup = chartPanel(spec()).markup;
    const svgs = elements(markup, "svg").filter((a) => a.includes("chart-svg"));
    assert.equal(svgs.length, 2, "a wide and a narrow drawing");
    for (const a of svgs) assert.match(a, /role="img" aria-labelledby="net-(wide|narrow)-title net-\1-desc"/);
    assert.match(markup, /<title id="net-wide-title">Net revenue<\/title>/);
    assert.match(markup, /<desc id="net-wide-desc">1 Nov 2026 to 3 Nov 2026, by day\. €147\.00 in the range, \+200% on the previous period \(€49\.00\)\./);
    const lines = elements(markup, "polyline");
    assert.equal(lines.length, 4, "the line and the previous period's, in each drawing");
    assert.equal(lines.filter((a) => a.includes('stroke="#6c757d"') && a.includes("stroke-dasharray")).length, 2, "the previous period grey and dashed");
    assert.match(markup, /<li><svg class="legend-swatch"[\s\S]*?<\/svg>Net, previous period \(29 Oct 2026 to 31 Oct 2026\)<\/li>/);
    // The table: one row per day, the value, the previous period's day and value.
    assert.match(markup, /<tr><th scope="row">1 Nov 2026<\/th><td class="num">€49\.00<\/td><td>29 Oct 2026<\/td><td class="num">€0\.00<\/td><\/tr>/);
    assert.match(markup, /<tr><th scope="row">3 Nov 2026<\/th><td class="num">€98\.00<\/td><td>31 Oct 2026<\/td><td class="num">€0\.00<\/td><\/tr>/);
    assert.match(markup, /<details class="chart-figures" open>/, "a short table is open");
    assert.match(markup, /<strong>€147\.00<\/strong> <span class="chart-change">\+200%<\/span>/);
    // The y axis is in euros with the currency's sign, the x axis in dates.
    assert.match(markup, /text-anchor="end">€100<\/text>/);
    assert.match(markup, /text-anchor="start">1 Nov<\/text>/);
    assert.doesNotMatch(markup, /style=|<script/, "nothing the policy forbids");
  });

  test("nothing in the range or the one before: no empty frame, but what to do", () => {
    const quiet = chartPanel(spec({ lines: [{ name: "Net", points: days("2026-11-01", [0, 0, 0]) }], previous: days("2026-10-29", [0, 0, 0]) })).markup;
    assert.match(quiet, /Nothing yet in this range/);
    assert.match(quiet, /Connect Stripe to see revenue\./);
    assert.doesNotMatch(quiet, /<svg class="chart-svg|<table/);
    assert.match(chartPanel(spec({ lines: [{ name: "Net", points: [] }], previous: [] })).markup, /Nothing yet in this range/);
    // Quiet now but not before: the fall to zero is worth drawing.
    assert.match(chartPanel(spec({ lines: [{ name: "Net", points: days("2026-11-01", [0, 0, 0]) }] })).markup, /<svg class="chart-svg/);
  });

  test("a negative net goes below a zero line drawn darker than the grid", () => {
    const markup = chartPanel(spec({ lines: [{ name: "Net", points: days("2026-11-01", [4900, -9800, 0]) }] })).markup;
    assert.match(markup, /text-anchor="end">-€100<\/text>/);
    const zero = /<line x1="\d+" x2="\d+" y1="([\d.]+)" y2="\1" stroke="#5f6b78" stroke-width="1"\/><text [^>]*>€0<\/text>/.exec(markup);
    assert.ok(zero, "the zero line");
    assert.match(markup, /<td class="num">-€98\.00<\/td>/);
  });

  test("one point: a dot and a note to widen the range; one day with figures: a note that the line fills in", () => {
    const one = chartPanel(spec({ lines: [{ name: "Net", points: days("2026-11-01", [4900]) }], previous: days("2026-10-31", [0]) })).markup;
    assert.match(one, /One day only: choose a longer range/);
    assert.ok(elements(one, "circle").length >= 2, "a dot in each drawing");
    const sparse = chartPanel(
      spec({ lines: [{ name: "Net", points: days("2026-11-01", [0, 0, 4900, 0]) }], previous: days("2026-10-28", [0, 0, 0, 0]) }),
    ).markup;
    assert.match(sparse, /Only one day of this range has figures so far/);
  });

  test("many points: no dots, fewer date labels on the phone than on the laptop, the table folded", () => {
    const values = Array.from({ length: 90 }, (_, i) => (i * 37) % 11);
    const markup = chartPanel(
      spec({ unit: { kind: "count", label: "people" }, lines: [{ name: "Active", points: days("2026-08-01", values) }], previous: days("2026-05-03", values) }),
    ).markup;
    assert.equal(elements(markup, "circle").length, 0);
    const [wide, narrow] = markup.split('<svg class="chart-svg chart-narrow"') as [string, string];
    const dateLabels = (part: string) => [...part.matchAll(/<text [^>]*y="2\d\d(?:\.\d)?" text-anchor="(?:start|middle|end)">\d+ \w{3}<\/text>/g)].length;
    assert.ok(dateLabels(wide) > dateLabels(narrow), `${dateLabels(wide)} labels wide, ${dateLabels(narrow)} narrow`);
    assert.ok(dateLabels(narrow) >= 2);
    assert.match(markup, /<details class="chart-figures">\n<summary>The figures, day by day \(90 rows\)<\/summary>/);
    assert.equal([...markup.matchAll(/<tr><th scope="row">/g)].length, 90);
  });

  test("several lines: each its colour and dashes, each its column; titles and names are escaped", () => {
    const markup = chartPanel(
      spec({
        title: "Revenue <b>",
        lines: [
          { name: "Gross", points: days("2026-11-01", [4900, 0]) },
          { name: "Refunds", points: days("2026-11-01", [0, 4900]) },
        ],
        previous: undefined,
        headline: undefined,
        csvHref: "/x.csv?a=1&b=2",
      }),
    ).markup;
    assert.match(markup, /<th scope="col" class="num">Gross<\/th><th scope="col" class="num">Refunds<\/th><\/tr>/);
    assert.match(markup, /<tr><th scope="row">2 Nov 2026<\/th><td class="num">€0\.00<\/td><td class="num">€49\.00<\/td><\/tr>/);
    assert.ok(markup.includes("Revenue &lt;b&gt;"));
    assert.ok(markup.includes('href="/x.csv?a=1&amp;b=2"'));
    const strokes = new Set(elements(markup, "polyline").map((a) => /stroke="([^"]+)"/.exec(a)?.[1]));
    assert.equal(strokes.size, 2);
    assert.equal(elements(markup, "polyline").filter((a) => a.includes("stroke-dasharray")).length, 2, "the second line dashed in both drawings");
  });
});

/** The laptop's drawing alone (not the legend's swatches, not the phone's). */
const wideDrawing = (markup: string) => (markup.split('<svg class="chart-svg chart-wide"')[1] ?? "").split('<svg class="chart-svg chart-narrow"')[0] as string;

describe("bar charts (flows)", () => {
  // Gross €49 on the 1st and €98 on the 3rd, a refund of €49 on the 2nd; net in the table only.
  const flows = () =>
    chartPanel(
      spec({
        shape: "bars",
        lines: [
          { name: "Net", points: days("2026-11-01", [4900, -4900, 9800]), drawn: false },
          { name: "Gross", points: days("2026-11-01", [4900, 0, 9800]) },
          { name: "Refunds", points: days("2026-11-01", [0, 4900, 0]), below: true },
        ],
      }),
    ).markup;

  test("a bar per day with a figure, an outflow below the zero line, no line and no previous period drawn", () => {
    const markup = flows();
    const wide = wideDrawing(markup);
    assert.equal(elements(markup, "polyline").length, 0, "no line");
    // The axis runs from −€50 to €100 over 225 units (y 10 to 235): zero at y 160, €49 at 86.5, −€49 at 233.5, €98 at 13.
    const bars = elements(wide, "rect").filter((a) => !a.includes('width="6"'));
    assert.equal(bars.length, 3, "gross twice, the refund once; a zero draws nothing, net is not drawn");
    const ys = bars.map((a) => [/ y="([^"]+)"/.exec(a)?.[1], /height="([^"]+)"/.exec(a)?.[1]]);
    assert.deepEqual(ys, [
      ["86.5", "73.5"],
      ["13", "147"],
      ["160", "73.5"],
    ]);
    assert.match(wide, /<text x="35" y="235" dy="0.35em" text-anchor="end">-€50<\/text>/, "a tick below zero");
    assert.match(markup, /<li><svg class="legend-swatch"[^>]*>[\s\S]*?<\/svg>Refunds \(below zero\)<\/li>/);
    assert.doesNotMatch(markup, /<li>[\s\S]{0,400}?Net<\/li>/, "the legend names only what is drawn");
    assert.doesNotMatch(markup, /stroke="#6c757d"/, "bars draw no previous period");
    assert.doesNotMatch((markup.split('<ul class="chart-legend"')[1] ?? "").split("</ul>")[0] as string, /previous period/, "nor name it in the legend");
  });

  test("the table keeps every line, net included, and each figure as it is (a refund is not negated)", () => {
    const markup = flows();
    assert.match(
      markup,
      /<th scope="col" class="num">Net<\/th><th scope="col" class="num">Gross<\/th><th scope="col" class="num">Refunds<\/th><th scope="col">Previous period<\/th>/,
    );
    assert.match(markup, /<tr><th scope="row">2 Nov 2026<\/th><td class="num">-€49\.00<\/td><td class="num">€0\.00<\/td><td class="num">€49\.00<\/td>/);
  });

  test("bars are told apart by more than colour: solid, hatched, outlined", () => {
    const markup = chartPanel(
      spec({
        shape: "bars",
        lines: ["New", "Expansion", "Contraction"].map((name) => ({ name, points: days("2026-11-01", [500, 500, 500]) })),
      }),
    ).markup;
    const wide = wideDrawing(markup);
    const fills = new Set(elements(wide, "rect").map((a) => /fill="([^"]+)"/.exec(a)?.[1]));
    assert.ok(fills.has("#3b5bdb"), "the first solid");
    assert.ok(fills.has("url(#net-wide-bar-1)"), "the second hatched");
    assert.ok(fills.has("#ffffff"), "the third outlined");
    assert.match(wide, /<pattern id="net-wide-bar-1"/);
  });
});
